package cli

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/api"
	"github.com/gnomon-sched/gnomon/cluster"
)

// TestClusterStandby starts a second director with --standby beside the
// director: it waits as a standby, answering 503 and naming the director,
// while it plays its other roles (a clock node's partitions, a worker's
// runs). When the director is killed, the standby takes the cluster over:
// it answers the cluster's tokens, the run in flight on its worker across
// the switch ends with its output, and the every-second task's ledger
// holds each occurrence once.
func TestClusterStandby(t *testing.T) {
	db, c, nodes := startNodes(t, nodeSpec{name: "dir", roles: "director,clock,worker"})
	ctx := context.Background()
	slow := newHeldTask(t, "spare")
	defs := tickDef + "\n" + slow.def
	if _, err := c.Define(ctx, "standby.def", defs, false); err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	addr := freePort(t)
	sb := &clusterNode{t: t, name: "sb", log: filepath.Join(dir, "sb.log"), args: []string{"server", "--data", filepath.Join(dir, "sb"),
		"--db", db, "--listen", addr, "--timezone", "UTC", "--roles", "director,clock,worker", "--machines", "spare",
		"--node", "sb", "--node-timeout", "1s", "--standby"}}
	sb.start()
	t.Cleanup(func() { sb.signal(syscall.SIGKILL) })
	defer func() {
		if t.Failed() {
			b, _ := os.ReadFile(sb.log)
			t.Logf("log of the standby:\n%s", tail(string(b), 40))
		}
	}()
	// health is the standby's answer to /healthz.
	health := func() (int, map[string]string) {
		resp, err := http.Get("http://" + addr + "/healthz")
		if err != nil {
			return 0, nil
		}
		defer resp.Body.Close()
		var body map[string]string
		json.NewDecoder(resp.Body).Decode(&body)
		return resp.StatusCode, body
	}
	waitUntil(t, "sb answers as a standby", func() bool {
		select {
		case <-sb.done:
			b, _ := os.ReadFile(sb.log)
			t.Fatalf("the standby exited:\n%s", tail(string(b), 30))
		default:
		}
		code, _ := health()
		return code != 0
	})
	code, body := health()
	if code != http.StatusServiceUnavailable || body["status"] != "standby" || body["director"] != "dir" ||
		!strings.Contains(body["error"], "the cluster's director is dir at 127.0.0.1:") {
		t.Fatalf("the standby's /healthz: %d %v", code, body)
	}
	b := &api.Client{Base: "http://" + addr, Token: c.Token}
	if _, err := b.Tasks(ctx); err == nil || !strings.Contains(err.Error(), "standby: node sb directs nothing until it takes the cluster over") {
		t.Fatalf("a request to the standby: %v, want it refused naming the director", err)
	}
	waitUntil(t, "sb is a standby that owns partitions", func() bool {
		st, err := c.Cluster(ctx)
		if err != nil || st.Director.ID != "dir" {
			return false
		}
		i := slices.IndexFunc(st.Nodes, func(n cluster.Node) bool { return n.ID == "sb" })
		return i >= 0 && st.Nodes[i].State == cluster.Live && st.Nodes[i].Has(cluster.RoleDirector) && len(st.Nodes[i].Partitions) > 0
	})
	var text strings.Builder
	st, err := c.Cluster(ctx)
	if err != nil {
		t.Fatal(err)
	}
	writeCluster(&text, st, timeFormat{time.UTC})
	if !strings.Contains(text.String(), "director dir at epoch 1; standby sb\n") {
		t.Errorf("gnomon cluster does not show sb as dir's standby:\n%s", text.String())
	}

	// A run on the standby's worker, in flight when the director dies.
	pid := slow.start(c, "sb")
	waitTicked(t, c, time.Time{}) // ticks under dir
	nodes["dir"].signal(syscall.SIGKILL)
	waitUntil(t, "sb took the cluster over", func() bool { return b.Health(ctx) == nil })
	took := time.Now()
	if syscall.Kill(pid, 0) != nil {
		t.Fatalf("slow's command (pid %d) ended as its node took the cluster over", pid)
	}
	slow.finish(b, "in flight on the standby as it took over")
	if _, err := b.Define(ctx, "after.def", taskDef("after"), false); err != nil {
		t.Fatalf("a definition sent to the new director: %v", err)
	}
	st, err = b.Cluster(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Director.ID != "sb" || st.Director.Epoch < 2 {
		t.Errorf("the director after the takeover: %+v, want sb at a later epoch", st.Director)
	}
	waitTicked(t, b, took) // ticks under sb
	checkFencing(t, db, b)

	// A standby drained leaves the cluster and exits cleanly.
	sb2 := &clusterNode{t: t, name: "sb2", log: filepath.Join(dir, "sb2.log"), args: []string{"server", "--data", filepath.Join(dir, "sb2"),
		"--db", db, "--listen", freePort(t), "--timezone", "UTC", "--roles", "director", "--node", "sb2", "--node-timeout", "1s", "--standby"}}
	sb2.start()
	t.Cleanup(func() { sb2.signal(syscall.SIGKILL) })
	waitUntil(t, "sb2 is sb's standby", func() bool {
		st, err := b.Cluster(ctx)
		return err == nil && slices.ContainsFunc(st.Nodes, func(n cluster.Node) bool { return n.ID == "sb2" && n.State == cluster.Live })
	})
	if err := b.Drain(ctx, "sb2"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-sb2.done:
	case <-time.After(30 * time.Second):
		t.Fatal("the drained standby did not exit")
	}
	if code := sb2.cmd.ProcessState.ExitCode(); code != 0 {
		b, _ := os.ReadFile(sb2.log)
		t.Fatalf("the drained standby exited %d:\n%s", code, tail(string(b), 20))
	}
}
