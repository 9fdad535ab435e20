package cli

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/gnomon-sched/gnomon/api"
)

// taskDef defines a task without a trigger.
func taskDef(name string) string {
	return "insert_task: " + name + "\ntype: callable\ncommand: true\nout_log_file: /dev/null\nerr_log_file: /dev/null\n"
}

// TestClusterDirectorPaused pauses the director past its lease (SIGSTOP)
// and starts a standby, which takes the cluster over (once the lease
// expired, or at once under the same name, as a restart of the director
// would), and takes a definition. When the paused director resumes, the
// request it was sent meanwhile is refused, nothing it decided is stored,
// and it exits non-zero, saying another director holds the cluster.
func TestClusterDirectorPaused(t *testing.T) {
	for _, tc := range []struct {
		name, standby string
		request       bool // a request waits for the paused director
	}{
		{"standby", "standby", true}, // waits until the lease expired
		{"same name", "dir", true},   // a new process under the director's name
		{"idle", "standby", false},   // its heartbeat finds it deposed
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			db, c, nodes := startNodes(t, nodeSpec{name: "dir", roles: "director"})
			paused := nodes["dir"]
			if _, err := c.Define(ctx, "before.def", taskDef("before"), false); err != nil {
				t.Fatal(err)
			}
			conn, err := pgx.Connect(ctx, db)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(ctx)

			paused.signal(syscall.SIGSTOP)
			if tc.standby != "dir" {
				waitUntil(t, "the paused director's lease expired", func() bool {
					var expires int64
					err := conn.QueryRow(ctx, `SELECT expires_at FROM cluster_leases WHERE partition = -1`).Scan(&expires)
					return err == nil && expires < time.Now().UnixNano()
				})
			}
			dir := t.TempDir()
			addr := freePort(t)
			standby := &clusterNode{t: t, name: tc.standby, log: filepath.Join(dir, "standby.log"), args: []string{"server",
				"--data", filepath.Join(dir, "data"), "--db", db, "--listen", addr, "--timezone", "UTC", "--roles", "director",
				"--node", tc.standby, "--node-timeout", "1s"}}
			standby.start()
			t.Cleanup(func() { standby.signal(syscall.SIGKILL) })
			b := &api.Client{Base: "http://" + addr, Token: c.Token} // the tokens are the cluster's
			waitUntil(t, "the standby is ready", func() bool {
				select {
				case <-standby.done:
					out, _ := os.ReadFile(standby.log)
					t.Fatalf("the standby exited:\n%s", tail(string(out), 30))
				default:
				}
				return b.Health(ctx) == nil
			})
			if _, err := b.Define(ctx, "after.def", taskDef("after"), false); err != nil {
				t.Fatal(err)
			}

			// A request reaches the paused director; it resumes.
			answered := make(chan error, 1)
			if tc.request {
				go func() {
					_, err := c.Define(ctx, "late.def", taskDef("late"), false)
					answered <- err
				}()
			}
			paused.signal(syscall.SIGCONT)
			if tc.request {
				if err := <-answered; err == nil {
					t.Error("the deposed director acknowledged a definition")
				}
			}
			select {
			case <-paused.done:
			case <-time.After(60 * time.Second):
				t.Fatal("the deposed director did not exit")
			}
			out, _ := os.ReadFile(paused.log)
			log := string(out)
			if code := paused.cmd.ProcessState.ExitCode(); code == 0 {
				t.Errorf("the deposed director exited %d, want non-zero:\n%s", code, tail(log, 30))
			}
			fenced := strings.Contains(log, "fenced: another director holds the cluster ("+tc.standby+" at epoch 2; this director, dir, held epoch 1)")
			deposed := strings.Contains(log, "deposed: another director took the cluster over: "+tc.standby+" holds it at epoch 2; this director (dir) held epoch 1")
			if !fenced && !deposed {
				t.Errorf("the deposed director's log does not say another director holds the cluster:\n%s", tail(log, 30))
			}
			t.Logf("the deposed director stopped: its commit refused by the fence %v, found deposed by its heartbeat %v", fenced, deposed)

			// The standby carries on, with what the first director
			// committed before the takeover and nothing after.
			if _, err := b.Define(ctx, "next.def", taskDef("next"), false); err != nil {
				t.Fatalf("the standby after the deposed director exited: %v", err)
			}
			rows, err := conn.Query(ctx, `SELECT name FROM tasks ORDER BY name`)
			if err != nil {
				t.Fatal(err)
			}
			names, err := pgx.CollectRows(rows, pgx.RowTo[string])
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(names, ",") != "after,before,next" {
				t.Errorf("tasks %v, want after, before and next", names)
			}
			var late, after int
			if err := conn.QueryRow(ctx, `SELECT count(*) FILTER (WHERE strpos(body, 'late.def') > 0),
					count(*) FILTER (WHERE strpos(body, 'after.def') > 0) FROM journal`).Scan(&late, &after); err != nil {
				t.Fatal(err)
			}
			if late != 0 || after == 0 {
				t.Errorf("%d journal entries of the definition sent to the deposed director, %d of the standby's", late, after)
			}
			var holder string
			var epoch int64
			if err := conn.QueryRow(ctx, `SELECT node, epoch FROM cluster_leases WHERE partition = -1`).Scan(&holder, &epoch); err != nil {
				t.Fatal(err)
			}
			if holder != tc.standby || epoch != 2 {
				t.Errorf("the assignment lease is %s's at epoch %d, want %s's at 2", holder, epoch, tc.standby)
			}
			if t.Failed() {
				t.Logf("log of the standby:\n%s", func() string { b, _ := os.ReadFile(standby.log); return tail(string(b), 50) }())
			}
		})
	}
}

// TestClusterNodeSettings starts a clock node with another zone and space
// than the director's: it is refused, exits non-zero at once, and says
// which flags to give it.
//
// So is a standby director with other settings: it would impose them on
// taking the cluster over.
func TestClusterNodeSettings(t *testing.T) {
	db, c, _ := startNodes(t, nodeSpec{name: "dir", roles: "director"})
	dir := t.TempDir()
	for _, roles := range []string{"clock", "director,worker"} {
		n := &clusterNode{t: t, name: "c1", log: filepath.Join(dir, "c1.log"), args: []string{"server", "--data", filepath.Join(dir, "c1"),
			"--db", db, "--listen", freePort(t), "--timezone", "Europe/Paris", "--space", "120", "--roles", roles, "--node", "c1",
			"--node-timeout", "1s", "--standby=" + strconv.FormatBool(roles != "clock")}}
		os.Remove(n.log)
		n.start()
		t.Cleanup(func() { n.signal(syscall.SIGKILL) })
		select {
		case <-n.done:
		case <-time.After(60 * time.Second):
			t.Fatalf("the node (%s) with other settings did not exit", roles)
		}
		out, _ := os.ReadFile(n.log)
		if code := n.cmd.ProcessState.ExitCode(); code == 0 {
			t.Errorf("the refused node (%s) exited %d, want non-zero", roles, code)
		}
		for _, want := range []string{
			"node c1 runs with --timezone Europe/Paris but the director (dir) with --timezone UTC: start it with the director's --timezone",
			"node c1 runs with --space 120 but the director (dir) with --space 60: start it with the director's --space",
		} {
			if !strings.Contains(string(out), want) {
				t.Errorf("the refused node's (%s) log does not say %q:\n%s", roles, want, tail(string(out), 20))
			}
		}
		st, err := c.Cluster(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, node := range st.Nodes {
			if node.ID == "c1" && node.State == "live" {
				t.Errorf("the refused node (%s) is registered: %+v", roles, node)
			}
		}
	}
}
