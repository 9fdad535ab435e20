package engine

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/gnomon-sched/gnomon/job"
)

// TestTickInPartsIsOneTick: a tick handled in parts of a few occurrences
// (Config.FireBatch), with a restart between two parts or not, records
// the same fires and leaves every task and run as the same tick handled
// at once: decided and released in dispatch order, a task on its own
// released as soon as every task before it is. The tasks have
// priorities, conditions on each other (so that the order of release
// matters), bundles, frozen and running members. Only which ready tasks
// hold the slots may differ, when they are fewer than the ready tasks.
func TestTickInPartsIsOneTick(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.IntRange(2, 24).Draw(rt, "tasks")
		workers := rapid.SampledFrom([]int{1, 2, 4, n + 2}).Draw(rt, "workers")
		var text strings.Builder
		text.WriteString("insert_task: box\ntype: bundle\ncron: * * * * *\n\n")
		for i := range n {
			extra := fmt.Sprintf("priority: %d\n", rapid.IntRange(0, 3).Draw(rt, "priority"))
			switch rapid.IntRange(0, 3).Draw(rt, "kind") {
			case 0:
				extra += "parent: box\n"
			default:
				extra += "cron: * * * * *\n"
			}
			// nr may name any other task (two that exclude each other are
			// the case where the order of release decides); su and fa only
			// earlier ones (fa too), as cycles are refused.
			switch c := rapid.IntRange(0, 3).Draw(rt, "condition"); {
			case c == 1:
				other := (i + rapid.IntRange(1, n-1).Draw(rt, "other")) % n
				extra += fmt.Sprintf("condition: nr(t%02d)\n", other)
			case c > 1 && i > 0:
				other := rapid.IntRange(0, i-1).Draw(rt, "other")
				extra += fmt.Sprintf("condition: %s(t%02d)\n", []string{"", "", "su", "fa"}[c], other)
			}
			text.WriteString(callable(fmt.Sprintf("t%02d", i), extra))
		}
		// Before the instant: some tasks run, some are frozen.
		var acts []Act
		for i := range n {
			switch rapid.IntRange(0, 4).Draw(rt, "before") {
			case 0:
				acts = append(acts, Act{Task: fmt.Sprintf("t%02d", i), Action: job.ActStart})
			case 1:
				acts = append(acts, Act{Task: fmt.Sprintf("t%02d", i), Action: job.ActFreeze})
			}
		}
		t0 := time.Date(2026, 3, 1, 11, 59, 30, 0, time.UTC)
		at := t0.Add(30 * time.Second)
		build := func(batch int) *Engine {
			e := New(Config{Workers: workers, FireBatch: batch})
			if _, err := apply(e, file{"t.def", text.String()}, t0); err != nil {
				rt.Fatal(err)
			}
			for _, a := range acts {
				e.Apply(a, t0) // a refusal (a waiting task started) is the same for all
			}
			return e
		}
		once := build(0)
		out, err := once.Apply(Tick{}, at)
		if err != nil {
			rt.Fatal(err)
		}
		want := out.Fires
		if once.Ticking() {
			rt.Fatal("a tick without a limit is still in progress")
		}

		batch := rapid.IntRange(1, 5).Draw(rt, "batch")
		restartAfter := rapid.IntRange(-1, 6).Draw(rt, "restart after part")
		parts := build(batch)
		var got []job.Fire
		for part := 0; ; part++ {
			if part > 4*n+10 {
				rt.Fatalf("the tick did not complete in %d parts", part)
			}
			out, err := parts.Apply(Tick{}, at)
			if err != nil {
				rt.Fatal(err)
			}
			got = append(got, out.Fires...)
			checkInvariants(t, parts)
			if !parts.Ticking() {
				break
			}
			if parts.NextWake().After(at) {
				rt.Fatalf("a tick in progress wakes at %s, not at once", parts.NextWake())
			}
			deciding := len(parts.firing.todo) > 0 || parts.dueAt(parts.firing.at)
			for name, en := range parts.tasks {
				if deciding && en.st.Status == job.Running && en.st.Start.Equal(at) && !parts.alone(en) {
					rt.Fatalf("%s started before every occurrence of the tick was decided, though conditions see it", name)
				}
			}
			if part == restartAfter {
				parts = restarted(rt, parts, batch)
			}
		}
		if !reflect.DeepEqual(got, want) {
			rt.Fatalf("fires in parts:\n%v\nat once:\n%v", got, want)
		}
		// With fewer slots than ready tasks, which of them took the slots
		// may differ: in parts, dispatch runs between two parts, so a
		// task released early may take a slot that, at once, a bundle's
		// child released later with a higher priority would have taken.
		scarce := workers <= n
		if a, b := readyOrder(once), readyOrder(parts); !scarce && !slices.Equal(a, b) {
			rt.Fatalf("ready in parts %v, at once %v", b, a)
		}
		for _, name := range once.Names() {
			_, a, _ := once.Task(name)
			_, b, _ := parts.Task(name)
			// A restart takes up the order of readiness from the tasks
			// ready: the same order, not the same numbers. Runs are
			// numbered as they start: a callable released before a
			// bundle starts before it in parts, after it at once.
			a.ReadySeq, b.ReadySeq, a.RunID, b.RunID, a.BundleRun, b.BundleRun = 0, 0, 0, 0, 0, 0
			if scarce && (a.Status == job.Running && b.Status == job.Ready || a.Status == job.Ready && b.Status == job.Running) {
				// A start takes the trigger and its identity to the run.
				a.Status, a.Start, a.Trigger, a.By = b.Status, b.Start, b.Trigger, b.By
			}
			if !reflect.DeepEqual(a, b) {
				rt.Fatalf("%s after the tick in parts:\n%+v\nat once:\n%+v", name, b, a)
			}
		}
		if a, b := runsByTask(once), runsByTask(parts); !scarce && !slices.Equal(a, b) || len(a) != len(b) {
			rt.Fatalf("runs in parts %v, at once %v", b, a)
		}
	})
}

// runsByTask lists the runs not yet ended by task, without their numbers.
func runsByTask(e *Engine) []string {
	var out []string
	for _, r := range e.ActiveRuns() {
		out = append(out, fmt.Sprintf("%s %s %s %s", r.Task, r.Trigger, r.Scheduled, r.Start))
	}
	slices.Sort(out)
	return out
}

// readyOrder lists the ready tasks in dispatch order.
func readyOrder(e *Engine) []string {
	q := slices.Clone(e.ready)
	slices.SortFunc(q, func(a, b *entry) int {
		if before(a, b) {
			return -1
		}
		return 1
	})
	var names []string
	for _, en := range q {
		names = append(names, en.def.Name)
	}
	return names
}

// TestStartDuringATickInParts: a task started by hand while a tick is in
// progress starts at once if a slot is free; the tick's tasks that
// conditions see start once every occurrence is decided, after it.
func TestStartDuringATickInParts(t *testing.T) {
	t.Parallel()
	text := callable("guard", "")
	for i := range 6 {
		text += callable(fmt.Sprintf("t%d", i), "cron: * * * * *\npriority: 3\ncondition: nr(guard)")
	}
	text += callable("urgent", "priority: 3")
	e := New(Config{Workers: 2, FireBatch: 2})
	t0 := time.Date(2026, 3, 1, 11, 59, 30, 0, time.UTC)
	if _, err := apply(e, file{"t.def", text}, t0); err != nil {
		t.Fatal(err)
	}
	at := t0.Add(30 * time.Second)
	for range 2 { // four of the six occurrences decided
		if _, err := e.Apply(Tick{}, at); err != nil {
			t.Fatal(err)
		}
	}
	if !e.Ticking() || e.Running() != 0 {
		t.Fatalf("ticking %v, running %d: want a tick in progress, nothing started", e.Ticking(), e.Running())
	}
	if _, err := e.Apply(Act{Task: "urgent", Action: job.ActStart}, at); err != nil {
		t.Fatal(err)
	}
	if _, st, _ := e.Task("urgent"); st.Status != job.Running {
		t.Fatalf("urgent is %s during the tick, want running", st.Status)
	}
	checkInvariants(t, e)
	for e.Ticking() {
		if _, err := e.Apply(Tick{}, at); err != nil {
			t.Fatal(err)
		}
		checkInvariants(t, e)
	}
	if _, st, _ := e.Task("t0"); st.Status != job.Running {
		t.Fatalf("t0 is %s once the tick completed, want running in the slot left", st.Status)
	}
}

// TestAloneDuringATickInParts: while a tick of many occurrences is in
// progress, a task on its own (no condition, none names it, no bundle)
// of the tick is released as soon as its occurrence is decided, and its
// occurrences of later seconds are handled on time, each its own tick;
// a task every second that a condition names waits for the tick to
// complete, whatever its name, and then has its occurrences decided.
func TestAloneDuringATickInParts(t *testing.T) {
	t.Parallel()
	text := callable("guard", "")
	for i := range 8 {
		text += callable(fmt.Sprintf("t%d", i), "cron: * * * * *\ncondition: nr(guard)")
	}
	// On its own, first in dispatch order; named by a condition, after
	// it in dispatch order but before it in the fire heap.
	text += callable("beat", "cron: * * * * * *\npriority: 3")
	text += callable("aa_watched", "cron: * * * * * *\npriority: 2")
	text += callable("guard2", "condition: nr(aa_watched)")
	e := New(Config{Workers: 2, FireBatch: 2})
	t0 := time.Date(2026, 3, 1, 11, 59, 59, 500_000_000, time.UTC)
	if _, err := apply(e, file{"t.def", text}, t0); err != nil {
		t.Fatal(err)
	}
	at := t0.Add(500 * time.Millisecond) // 12:00:00: ten occurrences
	fates := map[string]job.Fire{}
	tick := func(now time.Time) {
		t.Helper()
		out, err := e.Apply(Tick{}, now)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range out.Fires {
			fates[fmt.Sprintf("%s@%s", f.Task, f.Scheduled.Format("05"))] = f
		}
		checkInvariants(t, e)
	}
	tick(at)
	// Dispatch order: beat, then aa_watched are decided first.
	if _, st, _ := e.Task("beat"); st.Status != job.Running {
		t.Fatalf("beat is %s after the first part of the tick, want running", st.Status)
	}
	if _, st, _ := e.Task("aa_watched"); st.Status != job.Queued {
		t.Fatalf("aa_watched is %s after the first part of the tick, want queued", st.Status)
	}
	if _, err := e.Apply(RunExited{RunID: runningID(t, e, "beat"), Result: job.ResultNormal}, at.Add(100*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 2; i++ {
		now := at.Add(time.Duration(i) * time.Second)
		tick(now)
		if !e.Ticking() || e.firing.at != job.At(at) {
			t.Fatalf("the tick of 12:00:00 completed by %s: make it larger", now.Format(time.TimeOnly))
		}
		f, ok := fates[fmt.Sprintf("beat@%02d", i)]
		if !ok || f.Fate != job.FateRan || !f.At.Equal(now) {
			t.Fatalf("beat's occurrence at 12:00:%02d: %+v (found %v), want ran at once during the tick", i, f, ok)
		}
		if _, st, _ := e.Task("beat"); st.Status != job.Running || st.Scheduled != job.At(now) {
			t.Fatalf("beat is %s for %s, want running for 12:00:%02d", st.Status, st.Scheduled, i)
		}
		if _, ok := fates[fmt.Sprintf("aa_watched@%02d", i)]; ok {
			t.Fatalf("aa_watched's occurrence at 12:00:%02d was decided during the tick of 12:00:00", i)
		}
		if _, err := e.Apply(RunExited{RunID: runningID(t, e, "beat"), Result: job.ResultNormal}, now.Add(100*time.Millisecond)); err != nil {
			t.Fatal(err)
		}
	}
	end := at.Add(2 * time.Second)
	for e.Ticking() {
		tick(end)
	}
	for _, k := range []string{"aa_watched@01", "aa_watched@02"} {
		if f, ok := fates[k]; !ok || !f.At.Equal(end) {
			t.Fatalf("%s: %+v (found %v), want decided once the tick completed", k, f, ok)
		}
	}
}

// runningID returns the run of a running task.
func runningID(t *testing.T, e *Engine, name string) int64 {
	t.Helper()
	_, st, _ := e.Task(name)
	if st.Status != job.Running {
		t.Fatalf("%s is %s, not running", name, st.Status)
	}
	return st.RunID
}

// TestEventsDuringATickInParts: while a tick is handled in parts, runs
// end, a task of the tick is frozen and an unrelated task is started by
// hand, at random moments. Once every run has ended, nothing is left:
// the tick completed, the started task ran, no task is ready with a slot
// free, and the invariants hold after every event.
func TestEventsDuringATickInParts(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.IntRange(2, 30).Draw(rt, "tasks")
		var text strings.Builder
		for i := range n {
			extra := fmt.Sprintf("cron: * * * * *\npriority: %d", rapid.IntRange(0, 2).Draw(rt, "priority"))
			if rapid.Bool().Draw(rt, "seen by conditions") {
				extra += fmt.Sprintf("\ncondition: nr(t%02d)", (i+1)%n)
			}
			text.WriteString(callable(fmt.Sprintf("t%02d", i), extra))
		}
		text.WriteString(callable("urgent", "priority: 3"))
		// Every second, on its own and named by a condition.
		text.WriteString(callable("beat", "cron: * * * * * *"))
		text.WriteString(callable("beat2", "cron: * * * * * *\npriority: 1"))
		text.WriteString(callable("watcher", "condition: su(beat2)"))
		e := New(Config{Workers: rapid.IntRange(1, 4).Draw(rt, "workers"), FireBatch: rapid.IntRange(1, 5).Draw(rt, "batch")})
		t0 := time.Date(2026, 3, 1, 11, 59, 30, 0, time.UTC)
		if _, err := apply(e, file{"t.def", text.String()}, t0); err != nil {
			rt.Fatal(err)
		}
		now := t0.Add(30 * time.Second)
		apply := func(ev Event) {
			if _, err := e.Apply(ev, now); err != nil && !errors.Is(err, ErrRefused) {
				rt.Fatalf("%#v: %v", ev, err)
			}
			checkInvariants(t, e)
		}
		started := false
		for step := 0; step < 10*n+50; step++ {
			runs := e.ActiveRuns()
			switch k := rapid.IntRange(0, 5).Draw(rt, "event"); {
			case k == 0 && !started:
				apply(Act{Task: "urgent", Action: job.ActStart})
				started = true
			case k == 1:
				apply(Act{Task: fmt.Sprintf("t%02d", rapid.IntRange(0, n-1).Draw(rt, "freeze")), Action: job.ActFreeze})
			case k == 2 && len(runs) > 0:
				apply(RunExited{RunID: runs[rapid.IntRange(0, len(runs)-1).Draw(rt, "exit")].ID, Result: job.ResultNormal})
			case k == 3 && now.Second() < 50:
				now = now.Add(time.Second)
				apply(Tick{})
			default:
				apply(Tick{})
			}
		}
		if !started {
			apply(Act{Task: "urgent", Action: job.ActStart})
		}
		// Let everything end, within the minute.
		for range 200 * (n + 2) {
			if runs := e.ActiveRuns(); len(runs) > 0 {
				apply(RunExited{RunID: runs[0].ID, Result: job.ResultNormal})
			} else if e.Ticking() {
				apply(Tick{})
			} else {
				break
			}
		}
		if e.Ticking() || len(e.ActiveRuns()) > 0 || e.Ready() > 0 {
			rt.Fatalf("not settled: ticking %v, %d runs, %d ready: %+v", e.Ticking(), len(e.ActiveRuns()), e.Ready(), *e.ActiveRuns()[0])
		}
		if _, st, _ := e.Task("urgent"); st.Status != job.Success {
			rt.Fatalf("urgent never ran: %+v", st)
		}
		for _, name := range e.Names() {
			if _, st, _ := e.Task(name); st.Status == job.Queued || st.Status == job.Ready {
				rt.Fatalf("%s is left %s", name, st.Status)
			}
		}
	})
}

// restarted is a new engine restored from what e would have stored.
func restarted(rt *rapid.T, e *Engine, batch int) *Engine {
	var recs []job.Record
	for _, name := range e.Names() {
		def, st, _ := e.Task(name)
		recs = append(recs, job.Record{Def: &def, State: st})
	}
	again := New(Config{Workers: e.workers, FireBatch: batch})
	if err := restore(again, recs, e.ActiveRuns(), e.lastRun, nil); err != nil {
		rt.Fatal(err)
	}
	// The tasks queued and not released yet are found again; those not
	// decided yet are found due at the instant by the next Tick.
	if e.firing != nil && len(e.firing.queued) > 0 {
		var b []string
		if again.firing != nil {
			b = slices.Sorted(slices.Values(again.firing.queued))
		}
		if a := slices.Sorted(slices.Values(e.firing.queued)); !slices.Equal(a, b) {
			rt.Fatalf("to release %v before the restart, %v after", a, b)
		}
	}
	return again
}
