package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/cluster"

	"github.com/gnomon-sched/gnomon/job"
)

// enqueue queues runs at at as the director dir, which takes the
// assignment lease if it does not hold it.
func enqueue(t *testing.T, r *Registry, at time.Time, ws ...job.Launch) {
	t.Helper()
	if err := r.Enqueue(context.Background(), "dir", directorEpoch(t, r, "dir", at), ws, at); err != nil {
		t.Fatal(err)
	}
}

// reclaim takes back the runs of workers gone at at as the director dir,
// as enqueue does.
func reclaim(t *testing.T, r *Registry, at time.Time) cluster.Reclaimed {
	t.Helper()
	rc, err := r.Reclaim(context.Background(), "dir", directorEpoch(t, r, "dir", at), at, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	return rc
}

func claim(t *testing.T, r *Registry, worker string, machines []string, n int, at time.Time) []cluster.Claim {
	t.Helper()
	cs, err := r.Claim(context.Background(), worker, machines, n, at)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func runIDs(cs []cluster.Claim) []int64 {
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
	r := registry(t, cluster.Space{Size: 60, Partitions: 4})
	register(t, r, "w1", clusterT0, cluster.RoleWorker)
	register(t, r, "w2", clusterT0, cluster.RoleWorker)
	enqueue(t, r, clusterT0,
		job.Launch{RunID: 1, Task: "low", Priority: job.Low},
		job.Launch{RunID: 2, Task: "crit", Priority: job.Critical, Scheduled: clusterT0.Add(-time.Minute)},
		job.Launch{RunID: 3, Task: "gpu", Priority: job.Normal, Machine: "gpu"},
		job.Launch{RunID: 4, Task: "tpu", Priority: job.Critical, Machine: "tpu"},
		job.Launch{RunID: 5, Task: "crit-older", Priority: job.Critical, Scheduled: clusterT0.Add(-2 * time.Minute)},
	)
	// Enqueueing again changes nothing.
	enqueue(t, r, clusterT0.Add(time.Second), job.Launch{RunID: 1, Task: "low", Priority: job.Critical})

	// w2 serves no machine: the critical runs first, older first, then the
	// low one; never the gpu or tpu runs.
	if got := runIDs(claim(t, r, "w2", nil, 10, clusterT0)); !slices.Equal(got, []int64{5, 2, 1}) {
		t.Fatalf("w2 claimed %v, want [5 2 1]", got)
	}
	cs := claim(t, r, "w1", []string{"gpu"}, 10, clusterT0)
	if got := runIDs(cs); !slices.Equal(got, []int64{3}) {
		t.Fatalf("w1 claimed %v, want [3]", got)
	}
	if cs[0].Launch.Machine != "gpu" || cs[0].Launch.Task != "gpu" || cs[0].Attempt != 1 || cs[0].State != cluster.Claimed {
		t.Fatalf("claim %+v", cs[0])
	}
	st, err := r.Status(context.Background(), clusterT0)
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
	enqueue(t, r, clusterT0, job.Launch{RunID: 6, Task: "any"})
	if err := r.Drain(context.Background(), "w2"); err != nil {
		t.Fatal(err)
	}
	if got := claim(t, r, "w2", nil, 10, clusterT0); len(got) != 0 {
		t.Fatalf("draining w2 claimed %v", runIDs(got))
	}
}

// TestClaimSkipLocked has workers claim concurrently: every run is claimed
// exactly once.
func TestClaimSkipLocked(t *testing.T) {
	r := registry(t, cluster.Space{Size: 60, Partitions: 4})
	const runs, workers = 200, 4
	var ws []job.Launch
	for i := range runs {
		ws = append(ws, job.Launch{RunID: int64(i + 1), Task: fmt.Sprintf("t%d", i%7), Priority: job.Priority(i % 4)})
	}
	enqueue(t, r, clusterT0, ws...)
	claimed := make([][]int64, workers)
	var wg sync.WaitGroup
	for w := range workers {
		id := fmt.Sprintf("w%d", w)
		register(t, r, id, clusterT0, cluster.RoleWorker)
		wg.Go(func() {
			for {
				cs, err := r.Claim(context.Background(), id, nil, 3, clusterT0)
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
	r := registry(t, cluster.Space{Size: 60, Partitions: 4})
	register(t, r, "dir", clusterT0, cluster.RoleDirector)
	register(t, r, "w1", clusterT0, cluster.RoleWorker)
	enqueue(t, r, clusterT0, job.Launch{RunID: 1, Task: "a"}, job.Launch{RunID: 2, Task: "b"})
	cs := claim(t, r, "w1", nil, 2, clusterT0)
	if len(cs) != 2 {
		t.Fatalf("claimed %v", runIDs(cs))
	}
	started, notStarted := cs[0], cs[1]
	if ok, err := r.MarkStarted(ctx, "w1", started, clusterT0); err != nil || !ok {
		t.Fatalf("mark started: %v %v", ok, err)
	}
	// Before the timeout nothing is taken back.
	if rc := reclaim(t, r, clusterT0.Add(time.Second)); len(rc.Runs) != 0 {
		t.Fatalf("reclaim of a live worker: %+v", rc)
	}
	if _, err := r.Heartbeat(ctx, "dir", clusterT0.Add(6*time.Second)); err != nil {
		t.Fatal(err)
	}
	if b := rebalance(t, r, "dir", clusterT0.Add(6*time.Second)); !slices.Equal(b.Dead, []string{"w1"}) {
		t.Fatalf("dead %v", b.Dead)
	}
	rc := reclaim(t, r, clusterT0.Add(6*time.Second))
	want := []cluster.Taken{{Run: started.Launch.RunID, Worker: "w1", State: cluster.Dead, Lost: true}, {Run: notStarted.Launch.RunID, Worker: "w1", State: cluster.Dead}}
	slices.SortFunc(want, func(a, b cluster.Taken) int { return int(a.Run - b.Run) })
	if !slices.Equal(rc.Runs, want) {
		t.Fatalf("reclaimed %+v, want %+v", rc.Runs, want)
	}
	// Again: nothing more.
	if rc := reclaim(t, r, clusterT0.Add(7*time.Second)); len(rc.Runs) != 0 {
		t.Fatalf("second reclaim: %+v", rc)
	}
	out := outcomes(t, r, 1, 2)
	lost := out[started.Launch.RunID]
	if len(out) != 1 || lost.Result != job.ResultLost || lost.Code != -1 || !lost.End.Equal(clusterT0.Add(6*time.Second)) {
		t.Fatalf("outcomes %+v, want only run %d lost", out, started.Launch.RunID)
	}
	// The dead worker wakes up: its outcome and its start are refused.
	if ok, err := r.End(ctx, "w1", started.Attempt, job.Exit{RunID: started.Launch.RunID, Result: job.ResultNormal, End: clusterT0.Add(8 * time.Second)}); err != nil || ok {
		t.Fatalf("end by a dead worker: %v %v", ok, err)
	}
	if ok, err := r.MarkStarted(ctx, "w1", notStarted, clusterT0.Add(8*time.Second)); err != nil || ok {
		t.Fatalf("start by a dead worker: %v %v", ok, err)
	}
	// Registered again, it claims the queued run at the next attempt.
	register(t, r, "w1", clusterT0.Add(9*time.Second), cluster.RoleWorker)
	again := claim(t, r, "w1", nil, 5, clusterT0.Add(9*time.Second))
	if len(again) != 1 || again[0].Launch.RunID != notStarted.Launch.RunID || again[0].Attempt != notStarted.Attempt+1 {
		t.Fatalf("claimed again %+v", again)
	}
	// The stale attempt still cannot start it.
	if ok, _ := r.MarkStarted(ctx, "w1", notStarted, clusterT0.Add(9*time.Second)); ok {
		t.Fatal("a stale attempt started the run")
	}
}

// TestReclaimLeftWorker: a worker that stopped cleanly keeps its runs for
// a node timeout, for a restart to take up; then they are taken back.
func TestReclaimLeftWorker(t *testing.T) {
	ctx := context.Background()
	r := registry(t, cluster.Space{Size: 60, Partitions: 4})
	register(t, r, "w1", clusterT0, cluster.RoleWorker)
	enqueue(t, r, clusterT0, job.Launch{RunID: 1, Task: "a"})
	c := claim(t, r, "w1", nil, 1, clusterT0)[0]
	if ok, err := r.MarkStarted(ctx, "w1", c, clusterT0); err != nil || !ok {
		t.Fatal(ok, err)
	}
	if err := r.Leave(ctx, "w1", 0, clusterT0.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if rc := reclaim(t, r, clusterT0.Add(5*time.Second)); len(rc.Runs) != 0 {
		t.Fatalf("reclaimed within the timeout: %+v", rc)
	}
	held, err := r.Held(ctx, "w1")
	if err != nil || len(held) != 1 || held[0].State != cluster.Started || held[0].Attempt != c.Attempt {
		t.Fatalf("held %+v %v", held, err)
	}
	// A director whose watch began within the timeout (the database was
	// down) takes nothing from a worker that left: it may be restarting.
	e := directorEpoch(t, r, "dir", clusterT0)
	if rc, err := r.Reclaim(ctx, "dir", e, clusterT0.Add(7*time.Second), clusterT0.Add(3*time.Second)); err != nil || len(rc.Runs) != 0 {
		t.Fatalf("reclaimed a timeout after the worker left, but within the timeout of the watch: %+v (%v)", rc, err)
	}
	if rc := reclaim(t, r, clusterT0.Add(7*time.Second)); !slices.Equal(rc.Runs, []cluster.Taken{{Run: 1, Worker: "w1", State: cluster.Left, Lost: true}}) {
		t.Fatalf("reclaimed %+v", rc)
	}
}

// TestOutcomeLogSpan: where a run wrote in its task's log files, as its
// worker measured them, comes back with its outcome, naming the worker;
// a run ended without one comes back without.
func TestOutcomeLogSpan(t *testing.T) {
	ctx := context.Background()
	r := registry(t, cluster.Space{Size: 60, Partitions: 4})
	register(t, r, "w1", clusterT0, cluster.RoleWorker)
	enqueue(t, r, clusterT0, job.Launch{RunID: 1, Task: "a"}, job.Launch{RunID: 2, Task: "b"})
	cs := claim(t, r, "w1", nil, 2, clusterT0)
	for _, c := range cs {
		if ok, err := r.MarkStarted(ctx, "w1", c, clusterT0); err != nil || !ok {
			t.Fatalf("mark started: %v %v", ok, err)
		}
	}
	span := job.LogSpan{OutFrom: 5, OutTo: 17, ErrFrom: -1, ErrTo: 3}
	for _, e := range []job.Exit{
		{RunID: 1, Result: job.ResultNormal, End: clusterT0.Add(time.Second), Log: &span},
		{RunID: 2, Result: job.ResultNormal, End: clusterT0.Add(time.Second)},
	} {
		attempt := cs[slices.IndexFunc(cs, func(c cluster.Claim) bool { return c.Launch.RunID == e.RunID })].Attempt
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
	r := registry(t, cluster.Space{Size: 60, Partitions: 4})
	register(t, r, "w1", clusterT0, cluster.RoleWorker)
	enqueue(t, r, clusterT0, job.Launch{RunID: 1, Task: "queued"})
	epoch := directorEpoch(t, r, "dir", clusterT0)
	if err := r.Abort(ctx, "dir", epoch, 1, clusterT0.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if e := outcomes(t, r, 1)[1]; e.Result != job.ResultKilled || !e.End.Equal(clusterT0.Add(time.Second)) {
		t.Fatalf("aborted while queued: %+v", e)
	}
	if cs := claim(t, r, "w1", nil, 5, clusterT0); len(cs) != 0 {
		t.Fatalf("claimed an aborted run: %v", runIDs(cs))
	}

	enqueue(t, r, clusterT0, job.Launch{RunID: 2, Task: "claimed"}, job.Launch{RunID: 3, Task: "started"})
	cs := claim(t, r, "w1", nil, 5, clusterT0)
	if ok, err := r.MarkStarted(ctx, "w1", cs[1], clusterT0); err != nil || !ok {
		t.Fatal(ok, err)
	}
	for _, run := range []int64{2, 3} {
		if err := r.Abort(ctx, "dir", epoch, run, clusterT0.Add(2*time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	// The claimed run is not started, and ends killed.
	if ok, err := r.MarkStarted(ctx, "w1", cs[0], clusterT0.Add(3*time.Second)); err != nil || ok {
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

// channel returns the rows of cluster_runs, one line each, to compare
// them before and after writes.
func channel(t *testing.T, r *Registry) string {
	t.Helper()
	var s string
	if err := r.pool.QueryRow(context.Background(), `SELECT coalesce(string_agg(
			format('%s %s %s %s %s %s %s', run_id, state, worker, attempt, abort, result, ended_at), E'\n' ORDER BY run_id), '')
		FROM cluster_runs`).Scan(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestDirectorWritesFenced: a director another took the cluster over
// from, paused past its lease, takes back nothing, even when the same
// name holds the lease again at a later epoch, and is told it was
// deposed and by whom; its other writes in cluster_runs (queue, abort,
// delete) are refused alike. The director that holds the lease takes
// the runs back.
func TestDirectorWritesFenced(t *testing.T) {
	ctx := context.Background()
	r := registry(t, cluster.Space{Size: 60, Partitions: 4})
	register(t, r, "w1", clusterT0, cluster.RoleWorker)
	e1 := directorEpoch(t, r, "d1", clusterT0)
	if err := r.Enqueue(ctx, "d1", e1, []job.Launch{{RunID: 1, Task: "a"}, {RunID: 2, Task: "b"}, {RunID: 3, Task: "c"}}, clusterT0); err != nil {
		t.Fatal(err)
	}
	cs := claim(t, r, "w1", nil, 2, clusterT0)
	if ok, err := r.MarkStarted(ctx, "w1", cs[0], clusterT0); err != nil || !ok {
		t.Fatalf("mark started: %v %v", ok, err)
	}
	// w1 falls silent and d1 finds it dead, then d1 is paused past its
	// lease, and d2 takes the cluster over.
	if b, err := r.Rebalance(ctx, "d1", e1, clusterT0.Add(6*time.Second), time.Time{}); err != nil || !b.Leader || !slices.Equal(b.Dead, []string{"w1"}) {
		t.Fatalf("d1's rebalance: %+v %v", b, err)
	}
	e2, err := r.TakeDirector(ctx, cluster.Node{ID: "d2"}, clusterT0.Add(12*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	before := channel(t, r)
	deposed := func(what string, err error, holder string, epoch int64) {
		t.Helper()
		var d *cluster.DeposedError
		if !errors.As(err, &d) || !errors.Is(err, cluster.ErrDeposed) || d.Holder != holder || d.Epoch != epoch || d.Director != "d1" || d.Held != e1 {
			t.Errorf("%s by d1 at epoch %d: %v, want it deposed by %s at epoch %d", what, e1, err, holder, epoch)
		}
	}
	rc, err := r.Reclaim(ctx, "d1", e1, clusterT0.Add(12*time.Second), time.Time{})
	deposed("reclaim", err, "d2", e2)
	if len(rc.Runs) != 0 {
		t.Errorf("a deposed director's reclaim reports runs taken back: %+v", rc.Runs)
	}
	if want := fmt.Sprintf("d2 holds it at epoch %d; this director (d1) held epoch %d", e2, e1); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("the reclaim's error %q does not say %q", err, want)
	}
	deposed("queue", r.Enqueue(ctx, "d1", e1, []job.Launch{{RunID: 4, Task: "d"}}, clusterT0.Add(12*time.Second)), "d2", e2)
	deposed("abort", r.Abort(ctx, "d1", e1, 3, clusterT0.Add(12*time.Second)), "d2", e2)
	deposed("delete", r.Delete(ctx, "d1", e1, []int64{3}), "d2", e2)
	deposed("sweep", r.DeleteExcept(ctx, "d1", e1, nil), "d2", e2)
	if after := channel(t, r); after != before {
		t.Fatalf("a deposed director's writes changed cluster_runs:\n%s\nwant\n%s", after, before)
	}
	// d1 takes the cluster back under its name: its former epoch is
	// still refused.
	e3, err := r.TakeDirector(ctx, cluster.Node{ID: "d1"}, clusterT0.Add(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Reclaim(ctx, "d1", e1, clusterT0.Add(30*time.Second), time.Time{})
	deposed("reclaim", err, "d1", e3)
	if after := channel(t, r); after != before {
		t.Fatalf("a reclaim at a former epoch changed cluster_runs:\n%s\nwant\n%s", after, before)
	}
	// At the epoch it holds, it takes the runs back.
	rc, err = r.Reclaim(ctx, "d1", e3, clusterT0.Add(30*time.Second), time.Time{})
	want := []cluster.Taken{{Run: 1, Worker: "w1", State: cluster.Dead, Lost: true}, {Run: 2, Worker: "w1", State: cluster.Dead}}
	if err != nil || !slices.Equal(rc.Runs, want) {
		t.Fatalf("reclaim at the current epoch: %+v %v, want %+v", rc.Runs, err, want)
	}
	if out := outcomes(t, r, 1); out[1].Result != job.ResultLost {
		t.Errorf("run 1 taken back: %+v, want it lost", out[1])
	}
}

// BenchmarkDirectorWrites is the director's share of a run in the target
// channel: queueing it, then deleting it once its outcome is durable,
// two fenced writes.
func BenchmarkDirectorWrites(b *testing.B) {
	r := registry(b, cluster.DefaultSpace)
	ctx := context.Background()
	epoch := directorEpoch(b, r, "dir", clusterT0)
	var id int64
	for b.Loop() {
		id++
		if err := r.Enqueue(ctx, "dir", epoch, []job.Launch{{RunID: id, Task: "t"}}, clusterT0); err != nil {
			b.Fatal(err)
		}
		if err := r.Delete(ctx, "dir", epoch, []int64{id}); err != nil {
			b.Fatal(err)
		}
	}
}
