package engine

import (
	"container/heap"
	"fmt"
	"math"
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

// fireDue handles the occurrences due at or before now, in order of
// instant. Occurrences due at the same instant are one tick: their tasks
// are all queued first, then released in dispatch order. A tick handles
// at most Config.FireBatch occurrences and releases: one with more goes
// on at the next Tick (NextWake says so), so that the commit of each part
// stays small and what else comes meanwhile is not kept waiting.
func (e *Engine) fireDue() {
	for _, en := range e.unplanned {
		if e.tasks[en.def.Name] == en {
			e.replan(en)
		}
	}
	e.unplanned = nil
	budget := e.fireBatch
	if budget <= 0 {
		budget = math.MaxInt
	}
	for budget > 0 {
		if e.firing == nil {
			if e.external || len(e.fires) == 0 || e.fires[0].st.NextFire.After(e.now) {
				return
			}
			e.firing = &firing{at: e.fires[0].st.NextFire}
		}
		if !e.fireTick(&budget) {
			return
		}
	}
}

// firing is a tick in progress: the instant it fires, then the tasks it
// queued, which it releases in dispatch order once every occurrence of
// the instant is handled.
type firing struct {
	at       job.Instant
	names    []string
	released bool // names are sorted in dispatch order, being released
	// ready are the tasks the tick made ready: they enter the ready
	// queue when it completes, so that none starts before the last is
	// released, as none would had the tick been handled at once. Ready
	// tasks that are not the tick's start meanwhile.
	ready []*entry
}

// fireTick goes on with the tick in progress, spending budget on each
// occurrence handled and each task released, and reports whether it
// completed. Between two parts of a tick its queued tasks are queued in
// the store too: Restore finds them and the tick goes on (see resume).
func (e *Engine) fireTick(budget *int) bool {
	f := e.firing
	if !f.released {
		for *budget > 0 && e.dueAt(f.at) {
			en := e.fires[0]
			if e.fate(en, f.at.Time(), e.now.Sub(f.at.Time()), notRunning) {
				e.enqueue(en, f.at.Time())
				f.names = append(f.names, en.def.Name)
			}
			e.advance(en)
			*budget--
		}
		if e.dueAt(f.at) {
			return false
		}
		slices.Sort(f.names)
		f.names, f.released = e.byDispatchOrder(f.names), true
	}
	for *budget > 0 && len(f.names) > 0 {
		e.releaseFired(f.names[0])
		f.names = f.names[1:]
		*budget--
	}
	if len(f.names) > 0 {
		return false
	}
	e.firing = nil
	for _, en := range f.ready {
		if en.st.Status == job.Ready && en.ridx < 0 && e.tasks[en.def.Name] == en {
			heap.Push(&e.ready, en)
		}
	}
	return true
}

// dueAt reports whether an occurrence at instant at is still to be
// handled by the engine's own clock.
func (e *Engine) dueAt(at job.Instant) bool {
	return !e.external && len(e.fires) > 0 && e.fires[0].st.NextFire == at && !at.After(e.now)
}

// resume takes up, on Restore, a tick a restart interrupted: the tasks
// queued by their occurrence (callables in Queued, bundles not yet started
// with the trigger set) are released by the first Tick, after the other
// occurrences of their instant still to handle. Ticks complete in order
// of instant, so only the latest can have been interrupted.
func (e *Engine) resume(en *entry) {
	if !queuedByClock(en) {
		return
	}
	if e.firing == nil {
		e.firing = &firing{}
	}
	e.firing.at = max(e.firing.at, en.st.Scheduled)
	e.firing.names = append(e.firing.names, en.def.Name)
}

// resumeReady holds back, on Restore, the tasks an interrupted tick had
// already released: they wait for the rest, as they did before.
func (e *Engine) resumeReady() {
	if e.firing == nil {
		return
	}
	e.ready = slices.DeleteFunc(e.ready, func(en *entry) bool {
		if en.st.Scheduled != e.firing.at {
			return false
		}
		en.ridx = -1
		e.firing.ready = append(e.firing.ready, en)
		return true
	})
	for i, en := range e.ready {
		en.ridx = i
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

// startGroup starts the tasks whose occurrence at instant at fired (all
// at once: a clock node hands its occurrences in batches).
func (e *Engine) startGroup(group []*entry, at time.Time) {
	names := make([]string, len(group))
	for i, en := range group {
		names[i] = en.def.Name
		e.enqueue(en, at)
	}
	slices.Sort(names)
	for _, n := range e.byDispatchOrder(names) {
		e.releaseFired(n)
	}
}

// enqueue queues a task whose occurrence at instant at fired: the
// occurrence is its trigger, and a callable is queued until released.
func (e *Engine) enqueue(en *entry, at time.Time) {
	en.st.Trigger, en.st.Scheduled, en.st.By = "schedule", job.At(at), "" // the clock is no one
	e.touch(en.def.Name)
	if en.def.Type == job.Callable {
		e.setStatus(en.def.Name, job.Queued, false)
	}
}

// releaseFired releases a task its occurrence queued: a callable becomes
// ready or waiting by its condition, a bundle starts its run. One that
// something else took meanwhile (deleted, frozen, started) is left be.
func (e *Engine) releaseFired(name string) {
	switch en := e.tasks[name]; {
	case en == nil || !queuedByClock(en):
	case en.def.Type == job.Bundle:
		e.startBundle(name)
	default:
		e.release(name)
	}
}

// queuedByClock reports whether a task is queued by its occurrence and
// not yet released: a callable in Queued (a status no other path leaves
// stored), a bundle idle with the trigger set (enqueue), not taken since.
func queuedByClock(en *entry) bool {
	if en.def.Type == job.Bundle {
		return en.st.Trigger == "schedule" && !en.st.Status.Active() && en.st.Status != job.Frozen
	}
	return en.st.Status == job.Queued
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
