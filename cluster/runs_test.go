package cluster

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/executor"
	"github.com/gnomon-sched/gnomon/job"
)

func enqueue(t *testing.T, r *Registry, at time.Time, ws ...job.Launch) {
	t.Helper()
	if err := r.Enqueue(context.Background(), ws, at); err != nil {
		t.Fatal(err)
	}
}

func claim(t *testing.T, r *Registry, worker string, machines []string, n int, at time.Time) []Claim {
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

func outcomes(t *testing.T, r *Registry, runs ...int64) map[int64]job.Exit {
	t.Helper()
	es, err := r.Outcomes(context.Background(), runs)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int64]job.Exit{}
	for _, e := range es {
		out[e.RunID] = e
	}
	return out
}

func TestClaimOrderAndMachines(t *testing.T) {
	r := registry(t, Space{Size: 60, Partitions: 4})
	register(t, r, "w1", t0, RoleWorker)
	register(t, r, "w2", t0, RoleWorker)
	enqueue(t, r, t0,
		job.Launch{RunID: 1, Task: "low", Priority: job.Low},
		job.Launch{RunID: 2, Task: "crit", Priority: job.Critical, Scheduled: t0.Add(-time.Minute)},
		job.Launch{RunID: 3, Task: "gpu", Priority: job.Normal, Machine: "gpu"},
		job.Launch{RunID: 4, Task: "tpu", Priority: job.Critical, Machine: "tpu"},
		job.Launch{RunID: 5, Task: "crit-older", Priority: job.Critical, Scheduled: t0.Add(-2 * time.Minute)},
	)
	// Enqueueing again changes nothing.
	enqueue(t, r, t0.Add(time.Second), job.Launch{RunID: 1, Task: "low", Priority: job.Critical})

	// w2 serves no machine: the critical runs first, older first, then the
	// low one; never the gpu or tpu runs.
	if got := runIDs(claim(t, r, "w2", nil, 10, t0)); !slices.Equal(got, []int64{5, 2, 1}) {
		t.Fatalf("w2 claimed %v, want [5 2 1]", got)
	}
	cs := claim(t, r, "w1", []string{"gpu"}, 10, t0)
	if got := runIDs(cs); !slices.Equal(got, []int64{3}) {
		t.Fatalf("w1 claimed %v, want [3]", got)
	}
	if cs[0].Launch.Machine != "gpu" || cs[0].Launch.Task != "gpu" || cs[0].Attempt != 1 || cs[0].State != Claimed {
		t.Fatalf("claim %+v", cs[0])
	}
	st, err := r.Status(context.Background(), t0)
	if err != nil {
		t.Fatal(err)
	}
	if st.Runs.Queued != 1 || st.Runs.Held["w2"] != 3 || st.Runs.Held["w1"] != 1 {
		t.Fatalf("runs status %+v", st.Runs)
	}
	if len(st.Runs.Waiting) != 1 || st.Runs.Waiting[0].Run != 4 || st.Runs.Waiting[0].Machine != "tpu" {
		t.Fatalf("waiting %+v, want run 4 for machine tpu, which no live worker serves", st.Runs.Waiting)
	}
	// A draining worker claims nothing.
	enqueue(t, r, t0, job.Launch{RunID: 6, Task: "any"})
	if err := r.Drain(context.Background(), "w2"); err != nil {
		t.Fatal(err)
	}
	if got := claim(t, r, "w2", nil, 10, t0); len(got) != 0 {
		t.Fatalf("draining w2 claimed %v", runIDs(got))
	}
}

// TestClaimSkipLocked has workers claim concurrently: every run is claimed
// exactly once.
func TestClaimSkipLocked(t *testing.T) {
	r := registry(t, Space{Size: 60, Partitions: 4})
	const runs, workers = 200, 4
	var ws []job.Launch
	for i := range runs {
		ws = append(ws, job.Launch{RunID: int64(i + 1), Task: fmt.Sprintf("t%d", i%7), Priority: job.Priority(i % 4)})
	}
	enqueue(t, r, t0, ws...)
	claimed := make([][]int64, workers)
	var wg sync.WaitGroup
	for w := range workers {
		id := fmt.Sprintf("w%d", w)
		register(t, r, id, t0, RoleWorker)
		wg.Go(func() {
			for {
				cs, err := r.Claim(context.Background(), id, nil, 3, t0)
				if err != nil {
					t.Error(err)
					return
				}
				if len(cs) == 0 {
					return
				}
				claimed[w] = append(claimed[w], runIDs(cs)...)
			}
		})
	}
	wg.Wait()
	var all []int64
	for _, c := range claimed {
		all = append(all, c...)
	}
	slices.Sort(all)
	if len(all) != runs || slices.Compact(all)[len(slices.Compact(all))-1] != runs || len(slices.Compact(all)) != runs {
		t.Fatalf("claimed %d runs (%d distinct), want each of %d once", len(all), len(slices.Compact(all)), runs)
	}
}

// TestReclaimDeadWorker: a run its dead worker never started is queued
// again, one it started is lost, and the dead worker can write nothing
// more about either.
func TestReclaimDeadWorker(t *testing.T) {
	ctx := context.Background()
	r := registry(t, Space{Size: 60, Partitions: 4})
	register(t, r, "dir", t0, RoleDirector)
	register(t, r, "w1", t0, RoleWorker)
	enqueue(t, r, t0, job.Launch{RunID: 1, Task: "a"}, job.Launch{RunID: 2, Task: "b"})
	cs := claim(t, r, "w1", nil, 2, t0)
	if len(cs) != 2 {
		t.Fatalf("claimed %v", runIDs(cs))
	}
	started, notStarted := cs[0], cs[1]
	if ok, err := r.MarkStarted(ctx, "w1", started, t0); err != nil || !ok {
		t.Fatalf("mark started: %v %v", ok, err)
	}
	// Before the timeout nothing is taken back.
	if rc, err := r.Reclaim(ctx, t0.Add(time.Second)); err != nil || len(rc.Runs) != 0 {
		t.Fatalf("reclaim of a live worker: %+v %v", rc, err)
	}
	if _, err := r.Heartbeat(ctx, "dir", t0.Add(6*time.Second)); err != nil {
		t.Fatal(err)
	}
	if b := rebalance(t, r, "dir", t0.Add(6*time.Second)); !slices.Equal(b.Dead, []string{"w1"}) {
		t.Fatalf("dead %v", b.Dead)
	}
	rc, err := r.Reclaim(ctx, t0.Add(6*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	want := []Taken{{Run: started.Launch.RunID, Worker: "w1", State: Dead, Lost: true}, {Run: notStarted.Launch.RunID, Worker: "w1", State: Dead}}
	slices.SortFunc(want, func(a, b Taken) int { return int(a.Run - b.Run) })
	if !slices.Equal(rc.Runs, want) {
		t.Fatalf("reclaimed %+v, want %+v", rc.Runs, want)
	}
	// Again: nothing more.
	if rc, err := r.Reclaim(ctx, t0.Add(7*time.Second)); err != nil || len(rc.Runs) != 0 {
		t.Fatalf("second reclaim: %+v %v", rc, err)
	}
	out := outcomes(t, r, 1, 2)
	lost := out[started.Launch.RunID]
	if len(out) != 1 || lost.Result != job.ResultLost || lost.Code != -1 || !lost.End.Equal(t0.Add(6*time.Second)) {
		t.Fatalf("outcomes %+v, want only run %d lost", out, started.Launch.RunID)
	}
	// The dead worker wakes up: its outcome and its start are refused.
	if ok, err := r.End(ctx, "w1", started.Attempt, job.Exit{RunID: started.Launch.RunID, Result: job.ResultNormal, End: t0.Add(8 * time.Second)}); err != nil || ok {
		t.Fatalf("end by a dead worker: %v %v", ok, err)
	}
	if ok, err := r.MarkStarted(ctx, "w1", notStarted, t0.Add(8*time.Second)); err != nil || ok {
		t.Fatalf("start by a dead worker: %v %v", ok, err)
	}
	// Registered again, it claims the queued run at the next attempt.
	register(t, r, "w1", t0.Add(9*time.Second), RoleWorker)
	again := claim(t, r, "w1", nil, 5, t0.Add(9*time.Second))
	if len(again) != 1 || again[0].Launch.RunID != notStarted.Launch.RunID || again[0].Attempt != notStarted.Attempt+1 {
		t.Fatalf("claimed again %+v", again)
	}
	// The stale attempt still cannot start it.
	if ok, _ := r.MarkStarted(ctx, "w1", notStarted, t0.Add(9*time.Second)); ok {
		t.Fatal("a stale attempt started the run")
	}
}

// TestReclaimLeftWorker: a worker that stopped cleanly keeps its runs for
// a node timeout, for a restart to take up; then they are taken back.
func TestReclaimLeftWorker(t *testing.T) {
	ctx := context.Background()
	r := registry(t, Space{Size: 60, Partitions: 4})
	register(t, r, "w1", t0, RoleWorker)
	enqueue(t, r, t0, job.Launch{RunID: 1, Task: "a"})
	c := claim(t, r, "w1", nil, 1, t0)[0]
	if ok, err := r.MarkStarted(ctx, "w1", c, t0); err != nil || !ok {
		t.Fatal(ok, err)
	}
	if err := r.Leave(ctx, "w1", 0, t0.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if rc, err := r.Reclaim(ctx, t0.Add(5*time.Second)); err != nil || len(rc.Runs) != 0 {
		t.Fatalf("reclaimed within the timeout: %+v %v", rc, err)
	}
	held, err := r.Held(ctx, "w1")
	if err != nil || len(held) != 1 || held[0].State != Started || held[0].Attempt != c.Attempt {
		t.Fatalf("held %+v %v", held, err)
	}
	rc, err := r.Reclaim(ctx, t0.Add(7*time.Second))
	if err != nil || !slices.Equal(rc.Runs, []Taken{{Run: 1, Worker: "w1", State: Left, Lost: true}}) {
		t.Fatalf("reclaimed %+v %v", rc, err)
	}
}

// TestOutcomeLogSpan: where a run wrote in its task's log files, as its
// worker measured them, comes back with its outcome, naming the worker;
// a run ended without one comes back without.
func TestOutcomeLogSpan(t *testing.T) {
	ctx := context.Background()
	r := registry(t, Space{Size: 60, Partitions: 4})
	register(t, r, "w1", t0, RoleWorker)
	enqueue(t, r, t0, job.Launch{RunID: 1, Task: "a"}, job.Launch{RunID: 2, Task: "b"})
	cs := claim(t, r, "w1", nil, 2, t0)
	for _, c := range cs {
		if ok, err := r.MarkStarted(ctx, "w1", c, t0); err != nil || !ok {
			t.Fatalf("mark started: %v %v", ok, err)
		}
	}
	span := job.LogSpan{OutFrom: 5, OutTo: 17, ErrFrom: -1, ErrTo: 3}
	for _, e := range []job.Exit{
		{RunID: 1, Result: job.ResultNormal, End: t0.Add(time.Second), Log: &span},
		{RunID: 2, Result: job.ResultNormal, End: t0.Add(time.Second)},
	} {
		attempt := cs[slices.IndexFunc(cs, func(c Claim) bool { return c.Launch.RunID == e.RunID })].Attempt
		if ok, err := r.End(ctx, "w1", attempt, e); err != nil || !ok {
			t.Fatalf("end run %d: %v %v", e.RunID, ok, err)
		}
	}
	out := outcomes(t, r, 1, 2)
	want := span
	want.Node = "w1"
	if got := out[1].Log; got == nil || *got != want {
		t.Errorf("run 1's log span %+v, want %+v", got, want)
	}
	if got := out[2].Log; got != nil {
		t.Errorf("run 2 ended without a log span, and came back with %+v", got)
	}
	if span.Node != "" {
		t.Errorf("End changed the span it was given: %+v", span)
	}
}

func TestAbort(t *testing.T) {
	ctx := context.Background()
	r := registry(t, Space{Size: 60, Partitions: 4})
	register(t, r, "w1", t0, RoleWorker)
	enqueue(t, r, t0, job.Launch{RunID: 1, Task: "queued"})
	if err := r.Abort(ctx, 1, t0.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if e := outcomes(t, r, 1)[1]; e.Result != job.ResultKilled || !e.End.Equal(t0.Add(time.Second)) {
		t.Fatalf("aborted while queued: %+v", e)
	}
	if cs := claim(t, r, "w1", nil, 5, t0); len(cs) != 0 {
		t.Fatalf("claimed an aborted run: %v", runIDs(cs))
	}

	enqueue(t, r, t0, job.Launch{RunID: 2, Task: "claimed"}, job.Launch{RunID: 3, Task: "started"})
	cs := claim(t, r, "w1", nil, 5, t0)
	if ok, err := r.MarkStarted(ctx, "w1", cs[1], t0); err != nil || !ok {
		t.Fatal(ok, err)
	}
	for _, run := range []int64{2, 3} {
		if err := r.Abort(ctx, run, t0.Add(2*time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	// The claimed run is not started, and ends killed.
	if ok, err := r.MarkStarted(ctx, "w1", cs[0], t0.Add(3*time.Second)); err != nil || ok {
		t.Fatalf("started an aborted run: %v %v", ok, err)
	}
	// The started run is marked for its worker to kill.
	held, err := r.Held(ctx, "w1")
	if err != nil || len(held) != 1 || held[0].Launch.RunID != 3 || !held[0].Abort {
		t.Fatalf("held %+v %v", held, err)
	}
	out := outcomes(t, r, 2, 3)
	if len(out) != 1 || out[2].Result != job.ResultKilled {
		t.Fatalf("outcomes %+v", out)
	}
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
		nodeDone <- Run(ctx, Config{Registry: r, Node: Node{ID: "w1", Roles: []string{RoleWorker}}, Executor: x, Slots: 2})
	}()
	d := NewDispatch(r, time.Now, nil)
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
