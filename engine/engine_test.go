package engine

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/job"
)

type harness struct {
	t       *testing.T
	e       *Engine
	now     time.Time
	started map[string]int64 // task → run id of its last StartRun
	effects []Effect
	runs    map[int64]job.Run
}

func setup(t *testing.T, workers int, definitions string) *harness {
	t.Helper()
	h := &harness{t: t, e: New(Config{Workers: workers}), now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC),
		started: map[string]int64{}, runs: map[int64]job.Run{}}
	h.apply(file{"t.def", definitions})
	return h
}

func (h *harness) apply(ev Event) *Output {
	h.t.Helper()
	out, err := apply(h.e, ev, h.now)
	if err != nil {
		h.t.Fatalf("Apply(%#v): %v", ev, err)
	}
	h.record(out)
	return out
}

func (h *harness) record(out *Output) {
	for _, r := range out.Runs {
		h.runs[r.ID] = *r
	}
	for _, ef := range out.Effects {
		h.effects = append(h.effects, ef)
		if s, ok := ef.(StartRun); ok {
			h.started[s.Run.Task] = s.Run.ID
		}
	}
}

func (h *harness) act(task string, a job.Action) { h.t.Helper(); h.apply(Act{Task: task, Action: a}) }

// exit ends the running run of task with an exit code.
func (h *harness) exit(task string, code int) {
	h.t.Helper()
	_, st, _ := h.e.Task(task)
	if st.RunID == 0 {
		h.t.Fatalf("%s has no run", task)
	}
	h.now = h.now.Add(time.Minute)
	h.apply(RunExited{RunID: st.RunID, ExitCode: code, Result: job.ResultNormal})
}

func (h *harness) want(pairs ...string) {
	h.t.Helper()
	for i := 0; i < len(pairs); i += 2 {
		_, st, ok := h.e.Task(pairs[i])
		if !ok {
			h.t.Fatalf("no task %s", pairs[i])
		}
		if st.Status.String() != pairs[i+1] {
			h.t.Errorf("%s is %s, want %s", pairs[i], st.Status, pairs[i+1])
		}
	}
}

func callable(name, extra string) string {
	return fmt.Sprintf("insert_task: %s\ntype: callable\ncommand: run %s\nout_log_file: /tmp/o\nerr_log_file: /tmp/e\n%s\n", name, name, extra)
}

func TestRunLifecycle(t *testing.T) {
	t.Parallel()
	h := setup(t, 10, callable("a", ""))
	h.want("a", "idle")
	h.act("a", job.ActStart)
	h.want("a", "running")
	h.exit("a", 0)
	h.want("a", "success")
	h.act("a", job.ActStart)
	h.exit("a", 3)
	h.want("a", "failure")
	r := h.runs[h.started["a"]]
	if r.Status != job.Failure || r.ExitCode != 3 || !r.End.After(r.Start) {
		t.Errorf("run = %+v", r)
	}
}

func TestEvents(t *testing.T) {
	t.Parallel()
	h := setup(t, 10, callable("a", "")+callable("b", "condition: su(a)"))
	refuse := func(task string, a job.Action, msg string) {
		t.Helper()
		_, err := h.e.Apply(Act{Task: task, Action: a}, h.now)
		if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s %s: err = %v, want %q", a, task, err, msg)
		}
	}
	refuse("a", job.ActAbort, "event abort is not effective on inactive task")
	if _, err := h.e.Apply(Act{Task: "zz", Action: job.ActStart}, h.now); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown task: %v", err)
	}
	h.act("a", job.ActStart)
	for _, a := range []job.Action{job.ActStart, job.ActFreeze, job.ActReset, job.ActGreen, job.ActRed} {
		refuse("a", a, fmt.Sprintf("event %s is not effective on active task", a))
	}
	h.act("a", job.ActAbort)
	h.want("a", "aborted", "b", "idle")
	if _, ok := h.effects[len(h.effects)-1].(KillRun); !ok {
		t.Errorf("abort of a running task did not kill it: %v", h.effects)
	}
	h.exit("a", -1)
	if r := h.runs[h.started["a"]]; r.Status != job.Aborted || r.Result != job.ResultKilled {
		t.Errorf("aborted run recorded as %+v", r)
	}
	h.act("a", job.ActFreeze) // a frozen task satisfies su(a): b starts (AutoSys ON_ICE)
	h.want("a", "frozen", "b", "running")
	h.exit("b", 0)
	h.act("a", job.ActFreeze) // no-op
	h.act("a", job.ActReset)
	h.want("a", "idle", "b", "success")
	h.act("a", job.ActRed)
	h.want("a", "failure", "b", "success")
	h.act("a", job.ActGreen) // failure → success turns su(a) true: b is condition-triggered
	h.want("a", "success", "b", "running")
}

func TestConditionTrigger(t *testing.T) {
	t.Parallel()
	h := setup(t, 10, callable("a", "")+callable("ok", "condition: su(a)")+callable("bad", "condition: fa(a)")+
		callable("both", "condition: su(a) | fa(a)"))
	h.act("a", job.ActStart)
	h.exit("a", 0)
	h.want("ok", "running", "bad", "idle", "both", "running")
	if a, ok := h.runs[h.started["a"]], h.runs[h.started["ok"]]; a.Trigger != "start" || ok.Trigger != "condition" {
		t.Errorf("triggers: a %q, ok %q; want start, condition", a.Trigger, ok.Trigger)
	}
	var ns []string
	for _, ef := range h.effects {
		if n, ok := ef.(NotStarted); ok {
			ns = append(ns, n.Task)
		}
	}
	if !slices.Equal(ns, []string{"bad"}) {
		t.Errorf("not started = %v, want [bad]", ns)
	}
	h.exit("ok", 0)
	h.exit("both", 0)
	// green on a task that is already success is no edge: nothing starts.
	h.act("a", job.ActGreen)
	h.want("ok", "success", "both", "success")
	h.act("a", job.ActStart)
	h.exit("a", 1)
	h.want("ok", "success", "bad", "running", "both", "running")
}

func TestStartDelay(t *testing.T) {
	t.Parallel()
	h := setup(t, 10, callable("a", "")+callable("b", "condition: su(a)\nstart_delay: 10s"))
	h.act("a", job.ActStart)
	h.exit("a", 0)
	h.want("b", "staged")
	due := h.now.Add(10 * time.Second)
	if w := h.e.NextWake(); !w.Equal(due) {
		t.Fatalf("NextWake = %v, want %v", w, due)
	}
	h.now = due.Add(-time.Millisecond)
	h.apply(Tick{})
	h.want("b", "staged")
	h.now = due
	h.apply(Tick{})
	h.want("b", "running")
	if !h.e.NextWake().IsZero() {
		t.Error("NextWake after the delay passed")
	}
}

func TestPriorityDispatch(t *testing.T) {
	t.Parallel()
	h := setup(t, 1, callable("blocker", "")+callable("low", "priority: low")+callable("crit", "priority: critical")+
		callable("norm1", "priority: normal")+callable("norm2", "priority: normal"))
	h.act("blocker", job.ActStart)
	for _, n := range []string{"norm2", "low", "norm1", "crit"} {
		h.act(n, job.ActStart)
	}
	h.want("low", "ready", "crit", "ready")
	// One worker: each exit lets exactly the next in priority, then ready order, run.
	for _, want := range []string{"blocker", "crit", "norm2", "norm1", "low"} {
		h.want(want, "running")
		h.exit(want, 0)
	}
}

func TestWaitingReevaluatedOnAnyChange(t *testing.T) {
	t.Parallel()
	h := setup(t, 10, callable("a", "")+"insert_task: box\ntype: bundle\n\n"+callable("k", "parent: box\ncondition: su(a)"))
	h.act("box", job.ActStart)
	h.want("k", "waiting", "box", "running") // a is outside the bundle: box keeps running
	h.act("a", job.ActGreen)                 // a status event wakes dependents
	h.want("k", "running")
	h.exit("k", 0)
	h.want("box", "success")
}

const bundleDefs = `
insert_task: box
type: bundle
` + "\n"

func TestBundle(t *testing.T) {
	t.Parallel()
	defs := bundleDefs + callable("k1", "parent: box") + callable("k2", "parent: box\ncondition: su(k1)") +
		callable("k3", "parent: box\ncondition: su(k1) & su(k2)")

	t.Run("success", func(t *testing.T) {
		t.Parallel()
		h := setup(t, 10, defs)
		h.act("box", job.ActStart)
		h.want("box", "running", "k1", "running", "k2", "waiting", "k3", "waiting")
		h.exit("k1", 0)
		h.want("k2", "running", "k3", "waiting")
		h.exit("k2", 0)
		h.exit("k3", 0)
		h.want("box", "success")
		box := h.runs[h.e.lastRun-3]
		if box.Task != "box" || box.Status != job.Success {
			t.Fatalf("bundle run = %+v", box)
		}
		for _, k := range []string{"k1", "k2", "k3"} {
			if r := h.runs[h.started[k]]; r.BundleRun != box.ID || r.Trigger != "bundle" {
				t.Errorf("%s run belongs to bundle run %d, want %d", k, r.BundleRun, box.ID)
			}
		}
	})
	t.Run("stale statuses do not count", func(t *testing.T) {
		t.Parallel()
		h := setup(t, 10, defs)
		h.act("k1", job.ActGreen)
		h.act("k2", job.ActGreen)
		h.act("box", job.ActStart)
		h.want("k1", "running", "k2", "waiting", "k3", "waiting")
	})
	t.Run("failure blocks dependents", func(t *testing.T) {
		t.Parallel()
		h := setup(t, 10, defs)
		h.act("box", job.ActStart)
		h.exit("k1", 1)
		h.want("box", "failure", "k1", "failure", "k2", "idle", "k3", "idle")
	})
	t.Run("failure is final", func(t *testing.T) {
		t.Parallel()
		h := setup(t, 10, bundleDefs+callable("k1", "parent: box")+callable("k2", "parent: box\ncondition: su(k1) | fa(k1)"))
		h.act("box", job.ActStart)
		h.exit("k1", 1)
		h.want("k2", "running")
		h.act("k1", job.ActStart) // re-run while the bundle still runs
		h.exit("k1", 0)
		h.exit("k2", 0)
		h.want("box", "failure")
	})
	t.Run("frozen child skipped", func(t *testing.T) {
		t.Parallel()
		h := setup(t, 10, defs)
		h.act("k1", job.ActFreeze)
		h.act("box", job.ActStart)
		h.want("k1", "frozen", "k2", "running", "k3", "waiting") // frozen satisfies su(k1)
		h.exit("k2", 0)
		h.want("k3", "running")
		h.exit("k3", 0)
		h.want("box", "success")
	})
	t.Run("empty bundle", func(t *testing.T) {
		t.Parallel()
		h := setup(t, 10, bundleDefs)
		h.act("box", job.ActStart)
		h.want("box", "success")
	})
	t.Run("abort", func(t *testing.T) {
		t.Parallel()
		h := setup(t, 10, defs)
		h.act("box", job.ActStart)
		h.act("box", job.ActAbort)
		h.want("box", "aborted", "k1", "aborted", "k2", "aborted", "k3", "aborted")
		h.exit("k1", -1)
		h.want("k1", "aborted")
	})
	t.Run("reset", func(t *testing.T) {
		t.Parallel()
		h := setup(t, 10, defs)
		h.act("box", job.ActStart)
		h.exit("k1", 1)
		h.act("k3", job.ActFreeze)
		h.act("box", job.ActReset)
		h.want("box", "idle", "k1", "idle", "k2", "idle", "k3", "frozen")
	})
	t.Run("adopts an active child", func(t *testing.T) {
		t.Parallel()
		h := setup(t, 10, defs)
		h.act("k1", job.ActStart)
		h.act("box", job.ActStart)
		h.want("k1", "running", "k2", "waiting")
		h.exit("k1", 0)
		h.exit("k2", 0)
		h.exit("k3", 0)
		h.want("box", "success")
		box := h.runs[h.runs[h.started["k2"]].BundleRun]
		if r := h.runs[h.started["k1"]]; r.BundleRun != box.ID || box.Task != "box" {
			t.Errorf("adopted run belongs to %d, want %d", r.BundleRun, box.ID)
		}
	})
	t.Run("forced start of a waiting child counts", func(t *testing.T) {
		t.Parallel()
		h := setup(t, 10, defs)
		h.act("box", job.ActStart)
		h.act("k3", job.ActStart)
		h.want("k3", "running")
		h.exit("k3", 1)
		h.exit("k1", 0)
		h.exit("k2", 0)
		h.want("box", "failure")
	})
}

func TestDefineRejectsDeletingActive(t *testing.T) {
	t.Parallel()
	h := setup(t, 10, callable("a", ""))
	h.act("a", job.ActStart)
	if _, err := apply(h.e, file{"d", "delete_task: a\n"}, h.now); err == nil ||
		!strings.Contains(err.Error(), "task a is active and cannot be deleted") {
		t.Fatalf("err = %v", err)
	}
	h.want("a", "running")
}

// TestReplay drives random event streams and checks invariants after every
// step, then replays the accepted events on a fresh engine and compares.
// TestReplay applies random streams of events (operator actions, run
// exits, time passing over cron and interval occurrences, data events, and
// definitions that change tasks and configurations mid-stream) and checks
// that replaying the accepted ones, at the same instants, on a new engine
// gives the same state: every task's, the windows of configurations, the
// runs in flight and the next wake.
func TestReplay(t *testing.T) {
	t.Parallel()
	defsText := bundleDefs + callable("k1", "parent: box\npriority: 2") + callable("k2", "parent: box\ncondition: su(k1) | nr(x)\nn_retrys: 1") +
		callable("x", "n_retrys: 2\nretry_delay: 3s\nterm_run_time: 10s\nmax_run_alarm: 5s") + callable("y", "condition: su(x) & nr(k1)\nstart_delay: 5s") + callable("z", "condition: fa(y) | su(k2)") +
		callable("c", "cron: */1 * * * *\noverlap: queue\nmust_start_by: +5s\nmust_complete_by: +20s\nmin_run_alarm: 2s") + callable("iv", "start_date: 2026-03-01 12:00:30\ninterval: 45 seconds\noverlap: allow")
	configs := `[{"name":"d1","dependencies":[{"type":"TABLE","resourceId":"t","lifeDuration":"60"},{"type":"FILE","resourceId":"/in","lifeDuration":"120"}]},
		{"name":"d2","dependencies":[{"type":"TABLE","resourceId":"t","lifeDuration":"30"},{"type":"TIME_BASED","resourceId":"cron","lifeDuration":0}]}]`
	// Definitions sent mid-stream: a condition changed, a trigger changed,
	// a task deleted and added back, a configuration changed and removed.
	redefs := []file{
		{"r1.def", "update_task: z\ncondition: su(x)\n"},
		{"r2.def", "update_task: c\ncron: */2 * * * *\n"},
		{"r3.def", "delete_task: y\n"},
		{"r4.def", callable("y", "condition: su(x) & nr(k1)\nstart_delay: 5s")},
		{"r5.json", `{"name":"d2","dependencies":[{"type":"TABLE","resourceId":"t","lifeDuration":"90"}]}`},
		{"r6.def", "delete_task: d1\n"},
		{"r7.json", `{"name":"d1","dependencies":[{"type":"FILE","resourceId":"/in","lifeDuration":"60"}]}`},
	}
	data := []Data{{Type: job.Table, Resource: "t"}, {Type: job.File, Resource: "/in/a"}, {Type: job.File, Resource: "/in/b"},
		{Type: job.TimeBased, Resource: "cron"}}
	names := []string{"box", "k1", "k2", "x", "y", "z", "c", "iv", "d1", "d2"}
	actions := []job.Action{job.ActStart, job.ActAbort, job.ActFreeze, job.ActReset, job.ActGreen, job.ActRed}
	users := []string{"", "alice", "feed"} // who sent an event, without drawing from the seeded stream
	for seed := range uint64(50) {
		rng := rand.New(rand.NewPCG(seed, 1))
		// The log holds what a journal does: the plans, not the files.
		h := &harness{t: t, e: New(Config{Workers: 2}), now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC),
			started: map[string]int64{}, runs: map[int64]job.Run{}}
		var log []Event
		var times []time.Time
		for _, f := range []file{{"t.def", defsText}, {"c.json", configs}} {
			d, err := plan(h.e, f)
			if err != nil {
				t.Fatal(err)
			}
			h.apply(d)
			log, times = append(log, d), append(times, h.now)
		}
		kinds := map[string]int{}
		for range 300 {
			h.now = h.now.Add(time.Duration(rng.IntN(4000)) * time.Millisecond)
			var ev Event
			switch r := h.e.ActiveRuns(); {
			case len(r) > 0 && rng.IntN(2) == 0:
				ev = RunExited{RunID: r[rng.IntN(len(r))].ID, ExitCode: rng.IntN(2), Result: job.ResultNormal}
			case rng.IntN(5) == 0:
				ev = Tick{}
			case rng.IntN(4) == 0:
				d := data[rng.IntN(len(data))]
				d.At = h.now.Add(-time.Duration(rng.IntN(90)) * time.Second) // late, out of order
				d.By = users[len(log)%len(users)]
				ev = d
			case rng.IntN(12) == 0:
				d, err := plan(h.e, redefs[rng.IntN(len(redefs))])
				if err != nil {
					continue
				}
				ev = d
			default:
				ev = Act{Task: names[rng.IntN(len(names))], Action: actions[rng.IntN(len(actions))], By: users[len(log)%len(users)]}
			}
			out, err := h.e.Apply(ev, h.now)
			if err != nil {
				continue
			}
			kinds[Kind(ev)]++
			h.record(out)
			log, times = append(log, ev), append(times, h.now)
			checkInvariants(t, h.e)
		}
		again := New(Config{Workers: 2})
		for i, ev := range log {
			if _, err := again.Apply(ev, times[i]); err != nil {
				t.Fatalf("seed %d: replay of %#v: %v", seed, ev, err)
			}
		}
		for _, k := range []string{"act", "run_exited", "tick", "data", "define"} {
			if kinds[k] == 0 {
				t.Errorf("seed %d: no %s event was accepted: the stream does not cover it", seed, k)
			}
		}
		if !slices.Equal(h.e.Names(), again.Names()) {
			t.Fatalf("seed %d: tasks %v replayed as %v", seed, h.e.Names(), again.Names())
		}
		for _, n := range h.e.Names() {
			d1, s1, _ := h.e.Task(n)
			d2, s2, _ := again.Task(n)
			if !reflect.DeepEqual(s1, s2) || !reflect.DeepEqual(d1, d2) {
				t.Fatalf("seed %d: %s replayed to %+v %+v, want %+v %+v", seed, n, d2, s2, d1, s1)
			}
			if !reflect.DeepEqual(h.e.StoredEvents(n), again.StoredEvents(n)) {
				t.Fatalf("seed %d: windows of %s replayed to %+v, want %+v", seed, n, again.StoredEvents(n), h.e.StoredEvents(n))
			}
		}
		if !reflect.DeepEqual(h.e.ActiveRuns(), again.ActiveRuns()) || !h.e.NextWake().Equal(again.NextWake()) {
			t.Fatalf("seed %d: runs in flight or next wake differ after the replay", seed)
		}
	}
}

func checkInvariants(t *testing.T, e *Engine) {
	t.Helper()
	var counts [job.Frozen + 1]int
	for _, en := range e.tasks {
		if en.def.Type != job.Group {
			counts[en.st.Status]++
		}
	}
	if counts != e.counts {
		t.Fatalf("status counts %v, kept %v", counts, e.counts)
	}
	checkSummary(t, e)
	for i, en := range e.ready {
		if en.ridx != i || e.tasks[en.def.Name] != en {
			t.Fatalf("ready queue holds %s at %d, which says %d, or a task deleted", en.def.Name, i, en.ridx)
		}
		if i > 0 && before(en, e.ready[(i-1)/2]) {
			t.Fatalf("ready queue out of order: %s under %s", en.def.Name, e.ready[(i-1)/2].def.Name)
		}
	}
	running := 0
	for _, r := range e.runs {
		if e.tasks[r.Task].def.Type == job.Callable {
			running++
		}
	}
	if running != e.running || running > e.workers {
		t.Fatalf("running = %d, counted %d, workers %d", running, e.running, e.workers)
	}
	for name, en := range e.tasks {
		if en.st.Retrying() {
			if _, ok := e.staged[name]; !ok && en.st.DueAt != 0 {
				t.Fatalf("%s waits to retry at %v but is not staged", name, en.st.DueAt)
			}
			continue
		}
		if en.st.Status == job.Running && (en.st.RunID == 0 || e.runs[en.st.RunID] == nil) {
			t.Fatalf("%s is running without a run", name)
		}
		if ok := en.ridx >= 0 && en.ridx < len(e.ready) && e.ready[en.ridx] == en; ok != (en.st.Status == job.Ready && en.def.Type == job.Callable) {
			t.Fatalf("%s is %s but ready set says %v", name, en.st.Status, ok)
		}
		if en.st.Status == job.Ready && e.running < e.workers && !e.heldByBackfill(name) {
			t.Fatalf("%s is ready with a free worker", name)
		}
		// The identity of a trigger goes to its run: a task that is not
		// waiting to start keeps none for a later one.
		if s := en.st.Status; en.st.By != "" && (!s.Active() || s == job.Running) {
			t.Fatalf("%s is %s and keeps the identity %q", name, s, en.st.By)
		}
	}
}

// restore prepares stored tasks and restores them into e, as a loader
// does.
func restore(e *Engine, recs []job.Record, active []*job.Run, lastRun int64, vals []job.Validation) error {
	tasks := make([]Prepared, len(recs))
	for i, r := range recs {
		p, err := e.Prepare(r)
		if err != nil {
			return err
		}
		tasks[i] = p
	}
	e.Restore(tasks, active, lastRun, vals)
	return nil
}

// checkSummary compares the engine's overview with one made by a pass over
// every task: the same instants in the same order (names may differ among
// tasks at the same instant) and every name in its place.
func checkSummary(t *testing.T, e *Engine) {
	t.Helper()
	const n = 4
	since := e.now.Add(-30 * time.Second)
	sum := e.Summarize(n, since)
	var running, next []job.Instant
	for _, en := range e.tasks {
		if en.st.Status == job.Running {
			running = append(running, en.st.Start)
		}
		if !en.st.NextFire.IsZero() {
			next = append(next, en.st.NextFire)
		}
	}
	slices.Sort(running)
	slices.Sort(next)
	check := func(what string, names []string, want []job.Instant, at func(job.State) job.Instant) {
		t.Helper()
		want = want[:min(n, len(want))]
		var got []job.Instant
		for _, name := range names {
			_, st, _ := e.Task(name)
			got = append(got, at(st))
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%s: %v at %v, want %v", what, names, got, want)
		}
	}
	check("running", sum.Running, running, func(st job.State) job.Instant { return st.Start })
	// Failures are history: each listed once, latest first, since the
	// instant; every task failed now since then that ended later than the
	// last listed is listed.
	listed := map[string]bool{}
	for i, f := range sum.Failed {
		if listed[f.Task] || f.At.Before(since) || (i > 0 && f.At.After(sum.Failed[i-1].At)) || (f.Status != job.Failure && f.Status != job.Aborted) {
			t.Fatalf("failed: %+v", sum.Failed)
		}
		listed[f.Task] = true
	}
	for name, en := range e.tasks {
		if st := en.st; (st.Status == job.Failure || st.Status == job.Aborted) && !st.End.Before(since) && !listed[name] &&
			(len(sum.Failed) < n || st.End.After(sum.Failed[len(sum.Failed)-1].At)) {
			t.Fatalf("failed: %s (%s at %v) is not in %+v", name, st.Status, st.End, sum.Failed)
		}
	}
	check("next", sum.Next, next, func(st job.State) job.Instant { return st.NextFire })
}
