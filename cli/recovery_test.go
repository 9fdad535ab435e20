package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/gnomon-sched/gnomon/api"
	"github.com/gnomon-sched/gnomon/cluster"
	"github.com/gnomon-sched/gnomon/executor"
	"github.com/gnomon-sched/gnomon/job"
)

// TestOutcomeWhileDownBeforeOverdueFires kills the server (SIGKILL) just
// after a run of an every-second task starts; the run's command ends
// while the server is down, and its supervisor records the outcome. The
// restarted server takes that outcome in before it decides the
// occurrences that fell due meanwhile: the run is recorded with its real
// outcome, the first of those occurrences runs late (within the misfire
// grace), the others are skipped as the task is ready for that late run
// (overlap skip), and none is skipped for the run that had ended.
func TestOutcomeWhileDownBeforeOverdueFires(t *testing.T) {
	t.Parallel()
	singleServer(t, killedProcess)
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	addr := freePort(t)
	p := startProcess(t, data, addr)
	ctx := context.Background()

	tick := newHoldingTick(t, dir)
	if _, err := p.client.Define(ctx, "tick.def", tick.def, false); err != nil {
		t.Fatal(err)
	}
	n := tick.hold()
	time.Sleep(100 * time.Millisecond) // the scenario: killed 0.1 s after the run started
	p.kill()
	killed := time.Now()

	// The command ends while the server is down; its supervisor records
	// the outcome.
	tick.release()
	runFile := filepath.Join(data, "runs", strconv.FormatInt(n, 10))
	waitUntil(t, fmt.Sprintf("the outcome of run %d is recorded", n), func() bool {
		rec, _ := executor.ReadRecord(runFile)
		return rec.Exit != nil
	})
	// Down 5 s: occurrences fall due meanwhile.
	if d := 5*time.Second - time.Since(killed); d > 0 {
		time.Sleep(d)
	}

	restarted := time.Now()
	p = startProcess(t, data, addr)
	var run job.Run
	waitUntil(t, fmt.Sprintf("run %d is recorded ended", n), func() bool {
		runs, err := p.client.Runs(ctx, "tick", 1000, "")
		if err != nil {
			return false
		}
		i := slices.IndexFunc(runs.Runs, func(r api.RunView) bool { return r.ID == n })
		if i < 0 {
			return false
		}
		run = runs.Runs[i].Run
		return run.Done()
	})
	if run.Status != job.Success || run.Result != job.ResultNormal {
		t.Fatalf("run %d after the restart: %+v; want its real outcome, a success", n, run)
	}

	// The occurrences decided by the restarted server that fell due
	// before it started, earliest first.
	var overdue []job.Fire
	waitUntil(t, "the restarted server decided the overdue occurrences", func() bool {
		fs, err := p.client.Fires(ctx, "tick", 1000, "")
		if err != nil {
			return false
		}
		overdue = overdue[:0]
		for _, f := range fs.Fires {
			if !f.At.Before(restarted) && f.Scheduled.Before(restarted) {
				overdue = append(overdue, f)
			}
		}
		slices.SortFunc(overdue, func(a, b job.Fire) int { return a.Scheduled.Compare(b.Scheduled) })
		// One tick decides them all: one runs, the others are skipped.
		return len(overdue) >= 2
	})
	ended := fmt.Sprintf("with run %d ", n)
	for _, f := range overdue {
		if strings.Contains(f.Reason, ended) {
			t.Errorf("occurrence %s: %s %q, though run %d had ended before the restart", f.Scheduled.Format(time.RFC3339Nano), f.Fate, f.Reason, n)
		}
	}
	first := overdue[0]
	if first.Fate != job.FateRan || first.RunID == 0 || first.RunID == n {
		t.Fatalf("the first overdue occurrence: %+v; want it run late, by a new run", first)
	}
	// One tick decides them all: the task the first made ready is still
	// ready for the others.
	for _, f := range overdue[1:] {
		if f.Fate != job.FateSkipped || f.Reason != "the task is ready (overlap skip)" {
			t.Errorf("overdue occurrence %s: %s %q; want skipped as the task is ready", f.Scheduled.Format(time.RFC3339Nano), f.Fate, f.Reason)
		}
	}
}

// TestClusterTakeoverOutcomesFirst kills a cluster's director while a
// run of an every-second task is in flight on a worker; the run ends
// while no director holds the cluster, its worker recording the outcome
// in cluster_runs, and the clock node goes on recording the fires. A
// standby then takes the cluster over: it takes the outcome in before it
// decides the fires recorded meanwhile (within the misfire grace), so the
// first of them runs late, and none is skipped for the run that had
// ended.
func TestClusterTakeoverOutcomesFirst(t *testing.T) {
	db, c, nodes := startNodes(t, nodeSpec{name: "dir", roles: "director"}, nodeSpec{name: "w1", roles: "clock,worker"})
	ctx := context.Background()
	dir := t.TempDir()
	tick := newHoldingTick(t, dir)
	if _, err := c.Define(ctx, "tick.def", tick.def, false); err != nil {
		t.Fatal(err)
	}
	n := tick.hold()
	nodes["dir"].signal(syscall.SIGKILL)
	<-nodes["dir"].done
	tick.release()
	conn, err := pgx.Connect(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	waitUntil(t, fmt.Sprintf("w1 recorded the outcome of run %d", n), func() bool {
		var state string
		err := conn.QueryRow(ctx, `SELECT state FROM cluster_runs WHERE run_id = $1`, n).Scan(&state)
		return err == nil && state == cluster.Ended
	})

	addr := freePort(t)
	sb := &clusterNode{t: t, name: "sb", log: filepath.Join(dir, "sb.log"), args: []string{"server", "--data", filepath.Join(dir, "sb"),
		"--db", db, "--listen", addr, "--timezone", "UTC", "--roles", "director", "--node", "sb", "--node-timeout", "1s", "--standby"}}
	took := time.Now()
	sb.start()
	t.Cleanup(func() { sb.signal(syscall.SIGKILL) })
	defer func() {
		if t.Failed() {
			b, _ := os.ReadFile(sb.log)
			t.Logf("log of the standby:\n%s", tail(string(b), 40))
		}
	}()
	b := &api.Client{Base: "http://" + addr, Token: c.Token}
	waitUntil(t, "sb took the cluster over", func() bool { return b.Health(ctx) == nil })
	up := time.Now()

	// The fires the new director decided of the occurrences before it
	// was up, earliest first: those the clock node recorded while no
	// director held the cluster. They are taken in in order: once one
	// after is decided, they all are.
	var fires []job.Fire
	waitUntil(t, "sb decided the fires recorded before it took over", func() bool {
		fs, err := b.Fires(ctx, "tick", 1000, "")
		if err != nil {
			return false
		}
		fires = fires[:0]
		after := false
		for _, f := range fs.Fires {
			switch {
			case f.At.Before(took):
			case f.Scheduled.Before(up):
				fires = append(fires, f)
			default:
				after = true
			}
		}
		return after
	})
	slices.SortFunc(fires, func(a, b job.Fire) int { return a.Scheduled.Compare(b.Scheduled) })
	if len(fires) == 0 {
		t.Fatal("no fire recorded while no director held the cluster")
	}
	ended := fmt.Sprintf("with run %d ", n)
	for _, f := range fires {
		if strings.Contains(f.Reason, ended) {
			t.Errorf("occurrence %s: %s %q, though run %d had ended before the takeover", f.Scheduled.Format(time.RFC3339), f.Fate, f.Reason, n)
		}
	}
	if first := fires[0]; first.Fate != job.FateRan || first.RunID == n {
		t.Errorf("the first fire sb decided: %+v; want it run late, by a new run", first)
	}
	runs, err := b.Runs(ctx, "tick", 1000, "")
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(runs.Runs, func(r api.RunView) bool { return r.ID == n })
	if i < 0 || runs.Runs[i].Status != job.Success || runs.Runs[i].Result != job.ResultNormal {
		t.Errorf("run %d after the takeover: %+v; want its real outcome, a success", n, runs.Runs)
	}
}

// holdingTick is an every-second task whose runs end at once, except
// while it is held: the run that starts then waits until it is released.
type holdingTick struct {
	t                      *testing.T
	def                    string
	holdFile, held, goFile string
}

func newHoldingTick(t *testing.T, dir string) *holdingTick {
	h := &holdingTick{t: t, holdFile: filepath.Join(dir, "hold"), held: filepath.Join(dir, "held"), goFile: filepath.Join(dir, "go")}
	h.def = fmt.Sprintf(`insert_task: tick
type: callable
command: if [ -e %[1]s ]; then echo $GNOMON_RUN_ID > %[2]s.tmp; mv %[2]s.tmp %[2]s; while [ ! -e %[3]s ]; do sleep 0.02; done; fi
out_log_file: %[4]s/tick.out
err_log_file: %[4]s/tick.err
start_date: 2026-01-01 00:00
interval: 1 second
`, h.holdFile, h.held, h.goFile, dir)
	return h
}

// hold holds the next run and returns its id once it runs.
func (h *holdingTick) hold() int64 {
	h.t.Helper()
	if err := os.WriteFile(h.holdFile, nil, 0o644); err != nil {
		h.t.Fatal(err)
	}
	var n int64
	waitUntil(h.t, "a run of tick holds", func() bool {
		b, err := os.ReadFile(h.held)
		n, _ = strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		return err == nil && n > 0
	})
	return n
}

// release lets the held run end, and the runs after it end at once.
func (h *holdingTick) release() {
	h.t.Helper()
	os.Remove(h.holdFile)
	if err := os.WriteFile(h.goFile, nil, 0o644); err != nil {
		h.t.Fatal(err)
	}
}
