package engine

import (
	"cmp"
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
// instant. Occurrences due at the same instant are one tick: they are
// decided in dispatch order and their tasks queued; a task on its own (see
// alone) is released at once, the others once every occurrence of the
// tick is decided, in dispatch order. A tick handles at most
// Config.FireBatch occurrences and releases: one with more goes on at the
// next Tick (NextWake says so), so that the commit of each part stays
// small and what else comes meanwhile is not kept waiting. Between two
// parts, occurrences of later instants of tasks on their own are handled
// too (see fireAlone): a storm at one instant does not delay them.
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
		} else {
			e.fireAlone(&budget)
		}
		if !e.fireTick(&budget) {
			return
		}
	}
}

// firing is a tick in progress: the instant it fires, the occurrences
// still to decide, and the tasks decided and queued that wait for the
// last decision to be released.
type firing struct {
	at     job.Instant
	todo   []*entry // taken out of the fire heap, in dispatch order
	queued []string
	later  []*entry // occurrences of later instants set aside (fireAlone)
}

// fireTick goes on with the tick in progress, spending budget on each
// occurrence decided and each task released, and reports whether it
// completed. Between two parts of a tick its queued tasks are queued in
// the store too: Restore finds them and the tick goes on (see resume).
func (e *Engine) fireTick(budget *int) bool {
	f := e.firing
	for *budget > 0 && (len(f.todo) > 0 || e.gather(f)) {
		en := f.todo[0]
		f.todo[0], f.todo = nil, f.todo[1:]
		if !e.undecided(en) {
			continue // deleted or planned again since it was gathered
		}
		if e.fate(en, f.at.Time(), e.now.Sub(f.at.Time()), notRunning) {
			e.enqueue(en, f.at.Time())
			if len(f.queued) == 0 && e.alone(en) {
				// Every task before it in dispatch order is released.
				e.releaseFired(en.def.Name)
			} else {
				f.queued = append(f.queued, en.def.Name)
			}
		}
		e.advance(en)
		*budget--
	}
	if len(f.todo) > 0 || e.dueAt(f.at) {
		return false
	}
	if *budget > 0 && len(f.queued) > 1 {
		// Priorities may have changed since the decisions, and a restart
		// finds the tasks by name.
		slices.SortFunc(f.queued, func(a, b string) int { return e.dispatchOrder(e.tasks[a], e.tasks[b]) })
	}
	for *budget > 0 && len(f.queued) > 0 {
		e.releaseFired(f.queued[0])
		f.queued = f.queued[1:]
		*budget--
	}
	if len(f.queued) > 0 {
		return false
	}
	e.firing = nil
	e.putBack(f.later)
	return true
}

// gather takes the occurrences at the tick's instant out of the fire heap
// into todo, in dispatch order, and reports whether there were any. A
// tick of a good share of the heap's tasks is taken in one pass over the
// heap, which then costs less than popping them one by one.
func (e *Engine) gather(f *firing) bool {
	if !e.dueAt(f.at) {
		return false
	}
	var got []*entry
	for pops := max(64, len(e.fires)/16); len(got) < pops && e.dueAt(f.at); {
		got = append(got, heap.Pop(&e.fires).(*entry))
	}
	if e.dueAt(f.at) {
		kept := e.fires[:0]
		for _, en := range e.fires {
			if en.st.NextFire == f.at {
				en.hidx = -1
				got = append(got, en)
				continue
			}
			en.hidx = len(kept)
			kept = append(kept, en)
		}
		clear(e.fires[len(kept):])
		e.fires = kept
		heap.Init(&e.fires)
	}
	slices.SortFunc(got, e.dispatchOrder)
	f.todo = got
	return true
}

// undecided reports whether a task gathered by the tick in progress still
// waits there for its occurrence to be decided: it was not deleted, nor
// planned again (back in the fire heap) since.
func (e *Engine) undecided(en *entry) bool {
	return e.tasks[en.def.Name] == en && en.hidx < 0 && en.st.NextFire == e.firing.at
}

// dispatchOrder orders the tasks of a tick as dispatch would start them:
// higher priority first, then by name. A task deleted meanwhile (nil)
// comes last.
func (e *Engine) dispatchOrder(a, b *entry) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return 1
	case b == nil:
		return -1
	case a.def.Priority != b.def.Priority:
		return cmp.Compare(b.def.Priority, a.def.Priority)
	}
	return strings.Compare(a.def.Name, b.def.Name)
}

// alone reports whether a task's release is seen by no other and sees
// none: it has no condition, no condition names it, and it is neither a
// bundle nor in one. Such a task is released as soon as its occurrence
// is decided, and its later occurrences are handled while a tick of
// others is in progress: no condition could tell.
func (e *Engine) alone(en *entry) bool {
	return en.cond == nil && en.def.Parent == "" && en.def.Type != job.Bundle && len(e.deps[en.def.Name]) == 0
}

// fireAlone handles, while a tick is in progress, the occurrences of
// later instants due by now of tasks on their own, each a tick of its own
// task, released at once. The others' wait aside (firing.later) for the
// tick in progress to complete, and then are a tick of their own.
func (e *Engine) fireAlone(budget *int) {
	f := e.firing
	// A quarter of the budget at most: the tick in progress goes on too.
	for spend := max(2, *budget/4); spend > 0 && !e.external && len(e.fires) > 0; spend-- {
		en := e.fires[0]
		at := en.st.NextFire
		if at == f.at || at.After(e.now) {
			return
		}
		*budget--
		if !e.alone(en) {
			f.later = append(f.later, heap.Pop(&e.fires).(*entry))
			continue
		}
		if e.fate(en, at.Time(), e.now.Sub(at.Time()), notRunning) {
			e.enqueue(en, at.Time())
			e.releaseFired(en.def.Name)
		}
		e.advance(en)
	}
}

// putBack returns to the fire heap the occurrences fireAlone set aside,
// once the tick in progress completes.
func (e *Engine) putBack(later []*entry) {
	for _, en := range later {
		if e.tasks[en.def.Name] == en && en.hidx < 0 && !en.st.NextFire.IsZero() {
			heap.Push(&e.fires, en)
		}
	}
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
	e.firing.queued = append(e.firing.queued, en.def.Name)
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
	en.st.Trigger, en.st.Scheduled, en.st.By, en.st.Params = "schedule", job.At(at), "", nil // the clock is no one
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
