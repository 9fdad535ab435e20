package engine

import (
	"container/heap"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gnomon-sched/gnomon/calendar"
	"github.com/gnomon-sched/gnomon/job"
)

// maxMissed bounds the missed occurrences listed one by one for a task
// after a long stop; later ones are summed up in one record.
const maxMissed = 1000

// fireHeap orders the tasks with a time trigger by their next occurrence,
// then by name. One timer, armed for the top, serves them all.
type fireHeap []*entry

func (h fireHeap) Len() int { return len(h) }
func (h fireHeap) Less(i, j int) bool {
	a, b := h[i].st.NextFire, h[j].st.NextFire
	if a != b {
		return a < b
	}
	return h[i].def.Name < h[j].def.Name
}
func (h fireHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].hidx, h[j].hidx = i, j
}
func (h *fireHeap) Push(x any) {
	en := x.(*entry)
	en.hidx = len(*h)
	*h = append(*h, en)
}
func (h *fireHeap) Pop() any {
	old := *h
	en := old[len(old)-1]
	*h = old[:len(old)-1]
	en.hidx = -1
	return en
}

// plan compiles a task's time trigger. A task whose trigger cannot be
// compiled (a zone that vanished from the host) is reported and not armed.
func (e *Engine) plan(en *entry) {
	if p := e.compile(en); p != "" {
		e.problems = append(e.problems, p)
	}
}

// compile sets a task's compiled time trigger and returns the problem that
// left it without one, if any. It reads only the engine's configuration
// and calendars, so entries may compile concurrently.
func (e *Engine) compile(en *entry) string {
	en.sched = nil
	if !en.def.HasTimeTrigger() {
		return ""
	}
	s, err := calendar.ForTaskWith(en.def, e.loc, e.daySet)
	if err != nil {
		return fmt.Sprintf("task %s: %v", en.def.Name, err)
	}
	en.sched = s
	return ""
}

// arm sets the task's next occurrence and its place in the heap.
func (e *Engine) arm(en *entry, next time.Time, ok bool) {
	if !ok {
		next = time.Time{}
	}
	en.st.NextFire = job.At(next)
	switch {
	case next.IsZero() && en.hidx >= 0:
		heap.Remove(&e.fires, en.hidx)
	case next.IsZero():
	case en.hidx >= 0:
		heap.Fix(&e.fires, en.hidx)
	default:
		heap.Push(&e.fires, en)
	}
}

// replan arms a task from now on: its first occurrence at or after now.
// Occurrences before now are not its business: they belong to the
// definition it replaced, or to no definition at all.
func (e *Engine) replan(en *entry) {
	if en.sched == nil {
		e.arm(en, time.Time{}, false)
		return
	}
	next, ok := en.sched.Next(e.now.Add(-time.Nanosecond))
	e.arm(en, next, ok)
	e.touch(en.def.Name)
}

// sameTrigger reports whether two definitions have the same time trigger.
func sameTrigger(a, b *job.Task) bool {
	return a.Type == b.Type && a.RunDays == b.RunDays && slices.Equal(a.StartTimes, b.StartTimes) &&
		((a.Window == nil) == (b.Window == nil)) && (a.Window == nil || *a.Window == *b.Window) &&
		slices.Equal(a.StartMins, b.StartMins) && a.Cron == b.Cron && a.StartDate == b.StartDate &&
		a.EndDate == b.EndDate && a.Interval == b.Interval && a.Timezone == b.Timezone &&
		a.Extras().RunCalendar == b.Extras().RunCalendar && a.Extras().ExcludeCalendar == b.Extras().ExcludeCalendar
}

// fireDue handles every occurrence due at or before now, in order of
// instant. Occurrences due at the same instant are one tick: their tasks
// are all queued first, then released in dispatch order.
func (e *Engine) fireDue() {
	for _, en := range e.unplanned {
		if e.tasks[en.def.Name] == en {
			e.replan(en)
		}
	}
	e.unplanned = nil
	if e.external {
		return
	}
	for len(e.fires) > 0 && !e.fires[0].st.NextFire.After(e.now) {
		at := e.fires[0].st.NextFire
		var group []*entry
		for len(e.fires) > 0 && e.fires[0].st.NextFire == at {
			en := e.fires[0]
			if e.fate(en, at.Time(), e.now.Sub(at.Time()), notRunning) {
				group = append(group, en)
			}
			e.advance(en)
		}
		e.startGroup(group, at.Time())
	}
}

// Why occurrences are missed: the scheduler was down, or (in a cluster) no
// clock node owned the task's partition.
const (
	notRunning = "the scheduler was not running at that time"
	notOwned   = "no clock node owned the task's partition at that time"
)

// fate records what becomes of an occurrence found late after its
// instant at, and reports whether it starts the task. An occurrence on a
// day of the task's exclude_calendar is skipped, naming the calendar; one
// found later than the misfire grace was missed, for the reason given.
func (e *Engine) fate(en *entry, at time.Time, late time.Duration, missed string) bool {
	f := job.Fire{Task: en.def.Name, Scheduled: at, At: e.now, Fate: job.FateRan}
	if why := exclusion(en.sched, at); why != "" {
		f.Fate, f.Reason = job.FateSkipped, why
	} else if late > e.grace {
		f.Fate = job.FateMissed
		f.Reason = fmt.Sprintf("%s (it was noticed %s later)", missed, roundAge(late))
	} else if queued, why := e.admit(en, "task", job.Pending{Trigger: "schedule", Scheduled: at}); why != "" {
		f.Fate, f.Reason = job.FateSkipped, why
	} else if queued {
		f.Reason = waitReason(en)
		e.out.Fires = append(e.out.Fires, f)
		return false
	}
	e.out.Fires = append(e.out.Fires, f)
	return f.Fate == job.FateRan
}

// busy says why a trigger of a task (what names its kind) is skipped, or
// returns "" if it is not: the task is frozen, or still active (overlap
// skip).
func busy(en *entry, what string) string {
	switch s := en.st.Status; {
	case s == job.Frozen:
		return fmt.Sprintf("the %s is frozen", what)
	case s.Active() && en.st.RunID != 0:
		return fmt.Sprintf("the %s is %s with run %d (overlap skip)", what, s, en.st.RunID)
	case s.Active():
		return fmt.Sprintf("the %s is %s (overlap skip)", what, s)
	}
	return ""
}

// advance moves a task past the occurrence at the top of the heap,
// recording as missed those the scheduler found past the grace.
func (e *Engine) advance(en *entry) {
	next, ok := en.sched.Next(en.st.NextFire.Time())
	next, ok = e.miss(en, next, ok, e.now.Add(-e.grace), notRunning)
	e.arm(en, next, ok)
	e.touch(en.def.Name)
}

// miss records as missed, for the reason why, a task's occurrences from
// next (if ok) up to until, not included, and returns the first one at or
// after until; those on a day of its exclude_calendar are skipped for it
// instead, as they would have been. After a long stop they are listed up
// to maxMissed; the rest is summed up in the last record.
func (e *Engine) miss(en *entry, next time.Time, ok bool, until time.Time, why string) (time.Time, bool) {
	for n := 0; ok && next.Before(until); n++ {
		f := job.Fire{Task: en.def.Name, Scheduled: next, At: e.now, Fate: job.FateMissed,
			Reason: fmt.Sprintf("%s (it was noticed %s later)", why, roundAge(e.now.Sub(next)))}
		if x := exclusion(en.sched, next); x != "" {
			f.Fate, f.Reason = job.FateSkipped, x
		}
		if n == maxMissed-1 {
			resume, ok := en.sched.Next(until.Add(-time.Nanosecond))
			f.Reason = fmt.Sprintf("%s; later occurrences before %s were missed too and are not listed", why, resume.Format(time.RFC3339))
			e.out.Fires = append(e.out.Fires, f)
			return resume, ok
		}
		e.out.Fires = append(e.out.Fires, f)
		next, ok = en.sched.Next(next)
	}
	return next, ok
}

// startGroup starts the tasks whose occurrence at instant at fired.
func (e *Engine) startGroup(group []*entry, at time.Time) {
	names := make([]string, len(group))
	for i, en := range group {
		names[i] = en.def.Name
	}
	slices.Sort(names)
	names = e.byDispatchOrder(names)
	for _, n := range names {
		en := e.tasks[n]
		en.st.Trigger, en.st.Scheduled, en.st.By = "schedule", job.At(at), "" // the clock is no one
		if en.def.Type == job.Callable {
			e.setStatus(n, job.Queued, false)
		}
	}
	for _, n := range names {
		en := e.tasks[n]
		if en.def.Type == job.Bundle {
			e.startBundle(n)
		} else if en.st.Status == job.Queued {
			e.release(n)
		}
	}
}

// fired handles occurrences clock nodes found due, grouped by instant in
// order, as fireDue handles those the engine finds itself. A task's
// occurrences between its next one and the one handed are missed: no
// clock node found them in time.
func (e *Engine) fired(ev Fired) {
	fs := slices.Clone(ev.Fires)
	slices.SortFunc(fs, func(a, b ClockFire) int {
		if c := a.Scheduled.Compare(b.Scheduled); c != 0 {
			return c
		}
		return strings.Compare(a.Task, b.Task)
	})
	for i := 0; i < len(fs); {
		at := fs[i].Scheduled
		var group []*entry
		for ; i < len(fs) && fs[i].Scheduled.Equal(at); i++ {
			f := fs[i]
			en := e.tasks[f.Task]
			if en == nil || en.sched == nil || en.st.NextFire.IsZero() || at.Before(en.st.NextFire.Time()) {
				continue // handled, or before the definition the task has
			}
			if n, ok := en.sched.Next(at.Add(-time.Nanosecond)); !ok || !n.Equal(at) {
				continue // not an occurrence of the trigger the task has now
			}
			e.miss(en, en.st.NextFire.Time(), true, at, notOwned)
			late := f.At.Sub(at)
			if e.fate(en, at, late, notOwned) {
				group = append(group, en)
			}
			next, ok := en.sched.Next(at)
			if late > e.grace {
				// The clock node that found it past the grace resumes
				// the task within its catch-up bound (the grace) of
				// when it found it: the occurrences between are missed
				// now, as a single server records them when it starts
				// again, not when the next fire comes.
				next, ok = e.miss(en, next, ok, f.At.Add(-e.grace), notOwned)
			}
			e.arm(en, next, ok)
			e.touch(en.def.Name)
		}
		e.startGroup(group, at)
	}
}

// roundAge renders a delay to the second without zero tails: 30m, 1h30m.
func roundAge(d time.Duration) string {
	s := d.Round(time.Second).String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
