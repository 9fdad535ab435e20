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
// (Config.FireBatch), with a restart between two parts or not, leaves
// every task, run and fire as the same tick handled at once: all queued,
// then released in dispatch order, then dispatched. The tasks have
// priorities, conditions on each other (so that the order of release
// matters), bundles, frozen and running members.
func TestTickInPartsIsOneTick(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.IntRange(2, 24).Draw(rt, "tasks")
		workers := rapid.IntRange(1, 4).Draw(rt, "workers")
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
			if _, err := e.Apply(Define{File: "t.def", Text: text.String()}, t0); err != nil {
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
			for name, en := range parts.tasks {
				if en.st.Status == job.Running && en.def.Type == job.Callable && en.st.Start.Equal(at) {
					rt.Fatalf("%s started while the tick was in progress", name)
				}
			}
			if part == restartAfter {
				parts = restarted(rt, parts, batch)
			}
		}
		if !reflect.DeepEqual(got, want) {
			rt.Fatalf("fires in parts:\n%v\nat once:\n%v", got, want)
		}
		if a, b := readyOrder(once), readyOrder(parts); !slices.Equal(a, b) {
			rt.Fatalf("ready in parts %v, at once %v", b, a)
		}
		for _, name := range once.Names() {
			_, a, _ := once.Task(name)
			_, b, _ := parts.Task(name)
			// A restart takes up the order of readiness from the tasks
			// ready: the same order, not the same numbers.
			a.ReadySeq, b.ReadySeq = 0, 0
			if !reflect.DeepEqual(a, b) {
				rt.Fatalf("%s after the tick in parts:\n%+v\nat once:\n%+v", name, b, a)
			}
		}
		if !reflect.DeepEqual(once.ActiveRuns(), parts.ActiveRuns()) {
			rt.Fatalf("runs in parts %v, at once %v", parts.ActiveRuns(), once.ActiveRuns())
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
	if e.Ticking() != again.Ticking() {
		rt.Fatalf("tick in progress %v before the restart, %v after", e.Ticking(), again.Ticking())
	}
	if again.firing != nil {
		a, b := slices.Sorted(slices.Values(e.firing.names)), slices.Sorted(slices.Values(again.firing.names))
		if e.firing.released && !slices.Equal(a, b) {
			rt.Fatalf("to release %v before the restart, %v after", a, b)
		}
	}
	return again
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
// progress starts at once if a slot is free; the tick's tasks start when
// it completes, after it.
func TestStartDuringATickInParts(t *testing.T) {
	t.Parallel()
	var text strings.Builder
	for i := range 6 {
		text.WriteString(callable(fmt.Sprintf("t%d", i), "cron: * * * * *\npriority: 3"))
	}
	text.WriteString(callable("urgent", "priority: 3"))
	e := New(Config{Workers: 2, FireBatch: 2})
	t0 := time.Date(2026, 3, 1, 11, 59, 30, 0, time.UTC)
	if _, err := e.Apply(Define{File: "t.def", Text: text.String()}, t0); err != nil {
		t.Fatal(err)
	}
	at := t0.Add(30 * time.Second)
	for range 4 { // the occurrences handled, and two of them released
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
	}
	if _, st, _ := e.Task("t0"); st.Status != job.Running {
		t.Fatalf("t0 is %s once the tick completed, want running in the slot left", st.Status)
	}
	checkInvariants(t, e)
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
			text.WriteString(callable(fmt.Sprintf("t%02d", i), fmt.Sprintf("cron: * * * * *\npriority: %d", rapid.IntRange(0, 2).Draw(rt, "priority"))))
		}
		text.WriteString(callable("urgent", "priority: 3"))
		e := New(Config{Workers: rapid.IntRange(1, 4).Draw(rt, "workers"), FireBatch: rapid.IntRange(1, 5).Draw(rt, "batch")})
		t0 := time.Date(2026, 3, 1, 11, 59, 30, 0, time.UTC)
		if _, err := e.Apply(Define{File: "t.def", Text: text.String()}, t0); err != nil {
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
			switch k := rapid.IntRange(0, 4).Draw(rt, "event"); {
			case k == 0 && !started:
				apply(Act{Task: "urgent", Action: job.ActStart})
				started = true
			case k == 1:
				apply(Act{Task: fmt.Sprintf("t%02d", rapid.IntRange(0, n-1).Draw(rt, "freeze")), Action: job.ActFreeze})
			case k == 2 && len(runs) > 0:
				apply(RunExited{RunID: runs[rapid.IntRange(0, len(runs)-1).Draw(rt, "exit")].ID, Result: job.ResultNormal})
			default:
				apply(Tick{})
			}
		}
		if !started {
			apply(Act{Task: "urgent", Action: job.ActStart})
		}
		// Let everything end, within the minute.
		for range 20 * (n + 2) {
			if runs := e.ActiveRuns(); len(runs) > 0 {
				apply(RunExited{RunID: runs[0].ID, Result: job.ResultNormal})
			} else if e.Ticking() {
				apply(Tick{})
			} else {
				break
			}
		}
		if e.Ticking() || len(e.ActiveRuns()) > 0 || e.Ready() > 0 {
			rt.Fatalf("not settled: ticking %v, %d runs, %d ready", e.Ticking(), len(e.ActiveRuns()), e.Ready())
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
