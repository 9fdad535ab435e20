package engine

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	"github.com/gnomon-sched/gnomon/calendar"
	"github.com/gnomon-sched/gnomon/job"
)

// Reason is one link of the chain that says why a task is not running, or
// what will start it. Depth nests the reasons of a task a condition clause
// names under that clause.
type Reason struct {
	Kind   ReasonKind `json:"kind"`
	Task   string     `json:"task"`
	Status job.Status `json:"status"`
	Text   string     `json:"text"`
	Depth  int        `json:"depth"`
}

// ReasonKind tells reasons apart, for programs that read them.
type ReasonKind string

// Kinds of reasons.
const (
	WhyRunning   ReasonKind = "running"   // it runs: nothing holds it
	WhyRetry     ReasonKind = "retry"     // its run failed and it waits to retry
	WhyFrozen    ReasonKind = "frozen"    // frozen: triggers are skipped
	WhyDelay     ReasonKind = "delay"     // staged: its start delay has not passed
	WhyWorker    ReasonKind = "worker"    // ready: every worker slot is busy, or the scheduler drains
	WhyCondition ReasonKind = "condition" // waiting: its condition does not hold
	WhyClause    ReasonKind = "clause"    // one clause of a condition, true or false
	WhyOverlap   ReasonKind = "overlap"   // triggers wait for the active run to end
	WhyTrigger   ReasonKind = "trigger"   // settled: what will start it next
	WhyData      ReasonKind = "data"      // a configuration's dependency and the events it holds
	WhyNothing   ReasonKind = "nothing"   // settled, and nothing starts it by itself
	WhyAbove     ReasonKind = "above"     // a clause names a task already explained above
	// WhyCalendar: outside its calendar. Its next occurrence is on a day
	// of its exclude_calendar (it will be skipped), or today is not a
	// day of its run_calendar.
	WhyCalendar ReasonKind = "calendar"
	WhyBackfill ReasonKind = "backfill" // a backfill under way, and what holds it
	// WhyResource: ready, and waits for a resource it claims, held by
	// other runs or wanted first by tasks before it in dispatch order.
	WhyResource ReasonKind = "resource"
	// WhyWatch: its file watcher waits for a file to land and settle
	// (told by the scheduler, which runs the watchers).
	WhyWatch ReasonKind = "watch"
)

// maxWhyDepth bounds how far the reasons follow condition clauses.
const maxWhyDepth = 8

// Why explains, from the engine's own state, why a task is not running
// now (or that it is), and what will start it: its status, the clauses of
// its condition with the status of each task they name and, for a false
// clause, that task's own reasons, recursively; a worker slot; a start
// delay; overlap; its next time trigger; a configuration's dependencies
// that hold no event. It reports false for an unknown task.
func (e *Engine) Why(name string, now time.Time) ([]Reason, bool) {
	if _, ok := e.tasks[name]; !ok {
		return nil, false
	}
	var out []Reason
	e.why(name, now, 0, map[string]bool{}, &out)
	return out, true
}

func (e *Engine) why(name string, now time.Time, depth int, seen map[string]bool, out *[]Reason) {
	en, ok := e.tasks[name]
	if !ok {
		*out = append(*out, Reason{Kind: WhyNothing, Task: name, Depth: depth, Text: name + " is not defined: a clause naming it reads it as idle"})
		return
	}
	seen[name] = true
	st := en.st
	add := adder(out, name, st.Status, depth)
	at := func(i job.Instant) string { return i.Time().UTC().Format(time.RFC3339) }
	switch st.Status {
	case job.Running:
		if st.Retrying() {
			add(WhyRetry, "%s failed and waits to run again at %s: retry %d of %d of run %d", name, at(st.DueAt), st.Attempt,
				en.def.Extras().RunPolicy().Retries, st.RetryOf)
			break
		}
		add(WhyRunning, "%s is running since %s (run %d)", name, at(st.Start), st.RunID)
	case job.Frozen:
		since := ""
		if e := st.SetBy; e != nil && e.Action == job.ActFreeze {
			since = fmt.Sprintf(" since %s, by %s", at(e.At), cmp.Or(e.By, "the server"))
		}
		add(WhyFrozen, "%s is frozen%s: its triggers are skipped and conditions naming it hold; reset it to release it", name, since)
	case job.Staged:
		add(WhyDelay, "%s waits for its start delay to pass at %s", name, at(st.DueAt))
	case job.Ready:
		if e.heldByBackfill(name) {
			add(WhyBackfill, "%s is ready and waits for its %d backfill run(s) to end: its runs do not overlap (overlap %s)", name, en.backfilling, overlapName(en.def))
		} else if e.held(en) {
			add(WhyResource, "%s", e.whyResource(en))
		} else if e.draining {
			add(WhyWorker, "%s is ready, but the scheduler is draining: it starts no run", name)
		} else {
			add(WhyWorker, "%s is ready and waits for a worker slot: %d of %d are busy (higher priorities and earlier tasks go first)", name, e.running, e.workers)
		}
	case job.Waiting, job.Queued:
		add(WhyCondition, "%s waits for its condition %s", name, en.def.Condition)
		e.whyClauses(en, now, depth, seen, out)
	default:
		e.whyNext(name, en, now, depth, seen, out)
	}
	if n := len(st.Pending); n > 0 {
		add(WhyOverlap, "%d trigger(s) of %s wait for its active run to end (overlap %s)", n, name, overlapName(en.def))
	}
	e.whyBackfill(name, en, add)
}

// whyClauses lists a condition's clauses and follows the false ones.
func (e *Engine) whyClauses(en *entry, now time.Time, depth int, seen map[string]bool, out *[]Reason) {
	if en.cond == nil {
		return
	}
	for _, c := range en.cond.Clauses(e.status) {
		holds := "holds"
		if !c.Holds {
			holds = "does not hold"
		}
		*out = append(*out, Reason{Kind: WhyClause, Task: c.Task, Status: c.Status, Depth: depth + 1,
			Text: fmt.Sprintf("%s %s: %s", c, holds, statusOf(c.Task, c.Status))})
		if c.Holds {
			continue
		}
		switch {
		case seen[c.Task]:
			*out = append(*out, Reason{Kind: WhyAbove, Task: c.Task, Status: c.Status, Depth: depth + 2, Text: c.Task + " is explained above"})
		case depth+2 > maxWhyDepth:
		default:
			e.why(c.Task, now, depth+2, seen, out)
		}
	}
}

// statusOf says in words what a task's status is: "x failed", "x is
// ready".
func statusOf(task string, s job.Status) string {
	switch s {
	case job.Success:
		return task + " succeeded"
	case job.Failure:
		return task + " failed"
	case job.Aborted:
		return task + " was aborted"
	}
	return task + " is " + s.String()
}

// adder returns a function that appends a reason about a task.
func adder(out *[]Reason, task string, status job.Status, depth int) func(k ReasonKind, format string, args ...any) {
	return func(k ReasonKind, format string, args ...any) {
		*out = append(*out, Reason{Kind: k, Task: task, Status: status, Depth: depth, Text: fmt.Sprintf(format, args...)})
	}
}

// whyNext says what will start a settled task.
func (e *Engine) whyNext(name string, en *entry, now time.Time, depth int, seen map[string]bool, out *[]Reason) {
	st := en.st
	add := adder(out, name, st.Status, depth)
	started := false
	if nf := st.NextFire.Time(); !nf.IsZero() {
		started = true
		add(WhyTrigger, "%s; its time trigger next fires at %s (in %s)", statusOf(name, st.Status), nf.UTC().Format(time.RFC3339), nf.Sub(now).Round(time.Second))
	}
	e.whyCalendars(name, en, now, add)
	if en.def.Type == job.Configuration {
		started = true
		add(WhyTrigger, "%s; it runs when each of its dependencies holds an event in its window", statusOf(name, st.Status))
		for i, s := range e.StoredEvents(name) {
			d := en.def.Extras().Deps[i]
			text := fmt.Sprintf("%s %s: no event in its window (%s)", d.Type, d.Resource, time.Duration(d.Life)*time.Second)
			if s.Count > 0 {
				text = fmt.Sprintf("%s %s: %d event(s) held, newest %s", d.Type, d.Resource, s.Count, s.Newest.Format(time.RFC3339))
			}
			*out = append(*out, Reason{Kind: WhyData, Task: name, Status: st.Status, Depth: depth + 1, Text: text})
		}
	}
	if en.def.Condition != "" && en.def.Parent == "" {
		started = true
		add(WhyTrigger, "%s; it starts when its condition %s holds after a task it names completes", statusOf(name, st.Status), en.def.Condition)
		e.whyClauses(en, now, depth, seen, out)
	}
	if en.def.Parent != "" {
		started = true
		add(WhyTrigger, "%s; it runs when its bundle %s runs", statusOf(name, st.Status), en.def.Parent)
	}
	if !started {
		add(WhyNothing, "%s; nothing starts it by itself (no time trigger, condition or data dependency): start it by hand", statusOf(name, st.Status))
	}
}

// whyCalendars says how a task's calendars hold its time trigger now:
// today is not a day of its run_calendar, its next occurrence is on a day
// of its exclude_calendar (and which one runs), or its run_calendar holds
// no day ahead.
func (e *Engine) whyCalendars(name string, en *entry, now time.Time, add func(ReasonKind, string, ...any)) {
	f, ok := en.sched.(*calendar.Filtered)
	if !ok {
		return
	}
	run, excl := f.Calendars()
	today := calendar.DateOf(now, f.Location())
	if run != nil && !run.Has(today) {
		if d, ok := run.Next(today + 1); ok {
			add(WhyCalendar, "today (%s) is not a day of its run_calendar %s: its time trigger fires on that calendar's days only, next on %s", today, run.Name(), d)
		} else {
			add(WhyCalendar, "today (%s) is not a day of its run_calendar %s, which holds no later day: its time trigger does not fire again until the calendar does", today, run.Name())
		}
	} else if run != nil && en.st.NextFire.IsZero() {
		add(WhyCalendar, "its time trigger has no occurrence ahead on a day of its run_calendar %s", run.Name())
	}
	nf := en.st.NextFire.Time()
	if excl == nil || nf.IsZero() {
		return
	}
	if why := exclusion(en.sched, nf); why != "" {
		text := fmt.Sprintf("its next occurrence, at %s, is outside its calendar: %s; it will be recorded skipped", nf.UTC().Format(time.RFC3339), why)
		if r, ok := calendar.NextRun(en.sched, nf); ok {
			text += fmt.Sprintf(", and the first that runs is at %s", r.UTC().Format(time.RFC3339))
		}
		add(WhyCalendar, "%s", text)
	} else if excl.Has(today) {
		add(WhyCalendar, "today (%s) is a day of its exclude_calendar %s: its occurrences today are skipped", today, excl.Name())
	}
}

func overlapName(t *job.Task) string {
	if o := t.Extras().Overlap; o != "" {
		return strings.ToLower(string(o))
	}
	return "skip"
}
