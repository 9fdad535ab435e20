package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/clock"
	"github.com/gnomon-sched/gnomon/executor"
	"github.com/gnomon-sched/gnomon/job"
)

// enqueue queues runs at at as the director dir, which takes the
// assignment lease if it does not hold it.
func enqueue(t *testing.T, r Registry, at time.Time, ws ...job.Launch) {
	t.Helper()
	if err := r.Enqueue(context.Background(), "dir", directorEpoch(t, r, "dir", at), ws, at); err != nil {
		t.Fatal(err)
	}
}

func claim(t *testing.T, r Registry, worker string, machines []string, n int, at time.Time) []Claim {
	t.Helper()
	cs, err := r.Claim(context.Background(), worker, machines, n, at)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func runIDs(cs []Claim) []int64 {
	out := make([]int64, len(cs))
	for i, c := range cs {
		out[i] = c.Launch.RunID
	}
	return out
}

// TestDispatchToWorker runs the director's runner and a worker node with
// the local executor (functions only: no supervisor process) against
// one database: runs queued by the dispatch are run by the worker, their
// outcomes come back, an abort kills a running function, and a run for a
// machine the worker does not serve waits.
func TestDispatchToWorker(t *testing.T) {
	r := registry(t, Space{Size: 60, Partitions: 4})
	block := make(chan struct{})
	funcs := map[string]executor.Func{
		"ok": func(ctx context.Context, c *executor.Call) error { return nil },
		"fail": func(ctx context.Context, c *executor.Call) error {
			return fmt.Errorf("failed at %s", c.Scheduled.Format(time.RFC3339))
		},
		"block": func(ctx context.Context, c *executor.Call) error {
			select {
			case <-block:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		},
	}
	x, err := executor.NewLocal(executor.LocalConfig{Dir: t.TempDir(), Functions: func(n string) executor.Func { return funcs[n] }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	nodeDone := make(chan error, 1)
	go func() {
		nodeDone <- runNode(ctx, Config{Registry: r, Node: Node{ID: "w1", Roles: []string{RoleWorker}}, Executor: x, Slots: 2})
	}()
	d := NewDispatch(Config{Registry: r, Node: Node{ID: "dir"}, Epoch: directorEpoch(t, r, "dir", time.Now())}, clock.Wall)
	exits := make(chan job.Exit, 10)
	report := func(e job.Exit) { exits <- e }
	d.Start(job.Launch{RunID: 1, Task: "ok", Function: "ok"}, report)
	d.Start(job.Launch{RunID: 2, Task: "fail", Function: "fail", Scheduled: t0}, report)
	d.Start(job.Launch{RunID: 3, Task: "block", Function: "block"}, report)
	d.Start(job.Launch{RunID: 4, Task: "elsewhere", Function: "ok", Machine: "gpu"}, report)
	got := map[int64]job.Exit{}
	for len(got) < 2 {
		e := <-exits
		got[e.RunID] = e
	}
	if got[1].Result != job.ResultNormal || got[1].Code != 0 {
		t.Errorf("run 1: %+v", got[1])
	}
	// The worker's executor measured where the run wrote (it has no log
	// files: nothing), and the span names the worker.
	if want := (job.LogSpan{Node: "w1"}); got[1].Log == nil || *got[1].Log != want {
		t.Errorf("run 1's log span %+v, want %+v", got[1].Log, want)
	}
	if got[2].Code == 0 || got[2].Message != "failed at 2026-11-24T09:00:00Z" {
		t.Errorf("run 2: %+v", got[2])
	}
	d.Forget(1)
	d.Forget(2)
	// Run 3 blocks in its function until aborted.
	waitFor(t, func() bool {
		held, err := r.Held(context.Background(), "w1")
		return err == nil && len(held) == 1 && held[0].State == Started
	})
	d.Kill(3)
	e := <-exits
	if e.RunID != 3 || e.Result != job.ResultKilled {
		t.Fatalf("aborted run: %+v", e)
	}
	if n := d.Running(); n != 1 {
		t.Fatalf("running %d, want 1: the run for machine gpu waits", n)
	}
	st, err := r.Status(context.Background(), time.Now())
	if err != nil || len(st.Runs.Waiting) != 1 || st.Runs.Waiting[0].Run != 4 {
		t.Fatalf("waiting %+v %v", st.Runs, err)
	}
	cancel()
	if err := <-nodeDone; err != nil {
		t.Fatal(err)
	}
	d.Stop(context.Background())
	close(block)
}

// waitFor polls cond until it holds, failing the test after a while.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for range 500 {
		if cond() {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("condition never held")
}

// channel returns the rows of cluster_runs, one line each, to compare
// them before and after writes.
func channel(t *testing.T, r Registry) string {
	t.Helper()
	db, _ := databases.Load(r)
	s, err := db.(TestDB).QueryString(context.Background(), `SELECT coalesce(string_agg(
			format('%s %s %s %s %s %s %s', run_id, state, worker, attempt, abort, result, ended_at), E'\n' ORDER BY run_id), '')
		FROM cluster_runs`)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestDispatchDeposed: the dispatch of a director another took the
// cluster over from queues nothing: it drops the run it was given and
// reports the director deposed, as its node would, and stops at once.
func TestDispatchDeposed(t *testing.T) {
	ctx := context.Background()
	r := registry(t, Space{Size: 60, Partitions: 4})
	e1 := directorEpoch(t, r, "d1", t0)
	e2, err := r.TakeDirector(ctx, Node{ID: "d2"}, t0.Add(6*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	deposed := make(chan error, 1)
	d := NewDispatch(Config{Registry: r, Node: Node{ID: "d1"}, Epoch: e1, Deposed: func(err error) { deposed <- err }},
		clock.Func(func() time.Time { return t0.Add(7 * time.Second) }))
	d.Start(job.Launch{RunID: 1, Task: "a"}, func(job.Exit) {})
	var dep *DeposedError
	select {
	case err := <-deposed:
		if !errors.As(err, &dep) || dep.Holder != "d2" || dep.Epoch != e2 {
			t.Fatalf("reported %v, want d1 deposed by d2 at epoch %d", err, e2)
		}
	case <-time.After(time.Minute):
		t.Fatal("the dispatch never reported its director deposed")
	}
	sctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	d.Stop(sctx)
	if sctx.Err() != nil {
		t.Error("Stop waited to write what a deposed director gathered")
	}
	if got := channel(t, r); got != "" {
		t.Errorf("a deposed director's dispatch queued runs:\n%s", got)
	}
}

// TestReclaimDeposedNode: a director node whose reclaim is refused,
// another director having taken the cluster over since its rebalance,
// journals nothing, not even the death it found, and returns who
// deposed it, for its heartbeat to stop it as when its rebalance finds
// it deposed.
func TestReclaimDeposedNode(t *testing.T) {
	ctx := context.Background()
	r := registry(t, Space{Size: 60, Partitions: 4})
	register(t, r, "w1", t0, RoleWorker)
	e1 := directorEpoch(t, r, "d1", t0)
	b, err := r.Rebalance(ctx, "d1", e1, t0.Add(6*time.Second), time.Time{})
	if err != nil || !slices.Equal(b.Dead, []string{"w1"}) {
		t.Fatalf("d1's rebalance: %+v %v", b, err)
	}
	e2, err := r.TakeDirector(ctx, Node{ID: "d2"}, t0.Add(12*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	var gone []Gone
	n := &node{log: slog.New(slog.DiscardHandler), cfg: Config{Registry: r, Node: Node{ID: "d1", Roles: []string{RoleDirector}}, Epoch: e1,
		Clock: clock.Func(func() time.Time { return t0.Add(12 * time.Second) }),
		Gone:  func(_ context.Context, g Gone) error { gone = append(gone, g); return nil }}}
	d := n.reclaim(ctx, b.Dead)
	if d == nil || d.Holder != "d2" || d.Epoch != e2 {
		t.Errorf("the reclaim of a deposed director returned %v, want it deposed by d2 at epoch %d", d, e2)
	}
	if len(gone) != 0 {
		t.Errorf("a deposed director journaled %+v", gone)
	}
}

// TestDispatchAttachReportsRecorded: a director that starts (after a
// crash, or taking the cluster over) attaches the runs its engine had in
// flight. The outcome a worker recorded meanwhile is reported before
// Attach returns, so that the engine takes it in before it decides any
// fire; a run still in flight on its worker is watched, and reported
// once its worker records its end.
func TestDispatchAttachReportsRecorded(t *testing.T) {
	ctx := context.Background()
	r := registry(t, Space{Size: 60, Partitions: 4})
	register(t, r, "w1", t0, RoleWorker)
	enqueue(t, r, t0, job.Launch{RunID: 1, Task: "a"}, job.Launch{RunID: 2, Task: "b"})
	cs := claim(t, r, "w1", nil, 2, t0)
	if len(cs) != 2 {
		t.Fatalf("claimed %v, want runs 1 and 2", runIDs(cs))
	}
	for _, c := range cs {
		if ok, err := r.MarkStarted(ctx, "w1", c, t0); !ok || err != nil {
			t.Fatalf("start run %d: %v %v", c.Launch.RunID, ok, err)
		}
	}
	attempt := map[int64]int{}
	for _, c := range cs {
		attempt[c.Launch.RunID] = c.Attempt
	}
	if ok, err := r.End(ctx, "w1", attempt[1], job.Exit{RunID: 1, Code: 3, Result: job.ResultNormal, Message: "exit status 3", End: t0.Add(time.Second)}); !ok || err != nil {
		t.Fatalf("end run 1: %v %v", ok, err)
	}

	// Another director takes the cluster over.
	e2, err := r.TakeDirector(ctx, Node{ID: "d2"}, t0.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	d := NewDispatch(Config{Registry: r, Node: Node{ID: "d2"}, Epoch: e2}, clock.Wall)
	defer d.Stop(ctx)
	var mu sync.Mutex
	var reported []job.Exit
	report := func(e job.Exit) {
		mu.Lock()
		defer mu.Unlock()
		reported = append(reported, e)
	}
	d.Attach(job.Launch{RunID: 1, Task: "a"}, report)
	d.Attach(job.Launch{RunID: 2, Task: "b"}, report)
	mu.Lock()
	got := slices.Clone(reported)
	mu.Unlock()
	if len(got) != 1 || got[0].RunID != 1 || got[0].Code != 3 || got[0].Message != "exit status 3" || !got[0].End.Equal(t0.Add(time.Second)) {
		t.Fatalf("reported while attaching: %+v; want run 1's recorded outcome, and only it", got)
	}
	if n := d.Running(); n != 1 {
		t.Errorf("running %d, want 1: run 2, still on its worker", n)
	}
	if ok, err := r.End(ctx, "w1", attempt[2], job.Exit{RunID: 2, Result: job.ResultNormal, End: t0.Add(2 * time.Minute)}); !ok || err != nil {
		t.Fatalf("end run 2: %v %v", ok, err)
	}
	waitFor(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(reported) == 2 && reported[1].RunID == 2
	})
}
