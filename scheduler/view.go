package scheduler

import (
	"slices"
	"time"

	"github.com/tidwall/btree"

	"github.com/gnomon-sched/gnomon/calendar"
	"github.com/gnomon-sched/gnomon/engine"
	"github.com/gnomon-sched/gnomon/job"
)

// A View is the state of the tasks, and the named calendars, as of one
// commit, for readers on any goroutine: the API, the web UI, metrics and
// the library read it without waiting for the loop, however busy the loop
// is. The loop publishes one
// after each commit (Scheduler.View); a View never changes once
// published, so every read of one sees a single commit.
//
// The tasks are kept in a copy-on-write B-tree: after each commit the
// loop updates its own tree with the tasks the commit changed, copying
// only the nodes on their paths, and publishes a copy of it, which costs
// nothing to make. A commit that changes k of n tasks costs O(k log n),
// and a reader holds its View for as long as it likes.
type View struct {
	tasks *btree.BTreeG[*TaskItem]
	// watching are the tasks with a file watcher, kept as tasks is, so
	// that the watchers' polls never walk every task.
	watching *btree.BTreeG[*TaskItem]
	summary  engine.Summary
	problems []string
	at       time.Time // the clock reading of the commit
	seq      uint64    // commits published before this one
	ready    int
	running  int
	workers  int
	// cals are the named calendars, shared by the Views published until
	// a commit changes a calendar or a definition.
	cals *viewCalendars
}

// viewCalendars are the named calendars as a View holds them.
type viewCalendars struct {
	list   []CalendarInfo // in name order
	byName map[string]int // index in list
}

// TaskItem is one task as a View holds it. Its fields are read only: the
// definition is shared with the engine, which replaces it rather than
// change it, and the rest are copies.
type TaskItem struct {
	Def   *job.Task
	State job.State
	// Children are a bundle's children, Groups the groups the task
	// belongs to, each sorted.
	Children, Groups []string
	// Stored summarises the events a configuration holds
	// (engine.Engine.StoredEvents).
	Stored []engine.Stored
	// Schedule is the compiled time trigger, nil without one.
	Schedule calendar.Schedule
}

// SummaryRows is the most names in each list of a View's Summary.
const SummaryRows = 20

func byName(a, b *TaskItem) bool { return a.Def.Name < b.Def.Name }

// newTaskTree returns an empty tree of task items. The loop is its only
// writer and readers read copies, so it takes no locks.
func newTaskTree() *btree.BTreeG[*TaskItem] {
	return btree.NewBTreeGOptions(byName, btree.Options{NoLocks: true})
}

// key returns an item that finds name in the tree.
func key(name string) *TaskItem { return &TaskItem{Def: &job.Task{Name: name}} }

// Item returns a task as of the View's commit.
func (v *View) Item(name string) (*TaskItem, bool) { return v.tasks.Get(key(name)) }

// Task returns a task's definition and state, as engine.Engine.Task does.
func (v *View) Task(name string) (job.Task, job.State, bool) {
	it, ok := v.Item(name)
	if !ok {
		return job.Task{}, job.State{}, false
	}
	return *it.Def, it.State, true
}

// Len returns the number of tasks (groups included).
func (v *View) Len() int { return v.tasks.Len() }

// Names returns every task name, sorted.
func (v *View) Names() []string {
	out := make([]string, 0, v.tasks.Len())
	v.tasks.Scan(func(it *TaskItem) bool {
		out = append(out, it.Def.Name)
		return true
	})
	return out
}

// Ascend calls fn with each task whose name is after (or, with after
// empty, every task), in name order, until fn returns false.
func (v *View) Ascend(after string, fn func(*TaskItem) bool) {
	if after == "" {
		v.tasks.Scan(fn)
		return
	}
	v.tasks.Ascend(key(after), func(it *TaskItem) bool {
		if it.Def.Name == after {
			return true
		}
		return fn(it)
	})
}

// Watching calls fn with each task that has a file watcher (watch_file),
// in name order, until fn returns false.
func (v *View) Watching(fn func(*TaskItem) bool) { v.watching.Scan(fn) }

// Children returns the names of a bundle's children, sorted.
func (v *View) Children(bundle string) []string {
	if it, ok := v.Item(bundle); ok {
		return it.Children
	}
	return nil
}

// Groups returns the groups a task belongs to, sorted.
func (v *View) Groups(name string) []string {
	if it, ok := v.Item(name); ok {
		return it.Groups
	}
	return nil
}

// StoredEvents summarises the events a configuration holds, nil for other
// tasks.
func (v *View) StoredEvents(name string) []engine.Stored {
	if it, ok := v.Item(name); ok {
		return it.Stored
	}
	return nil
}

// Schedule returns a task's compiled time trigger, nil if it has none.
func (v *View) Schedule(name string) calendar.Schedule {
	if it, ok := v.Item(name); ok {
		return it.Schedule
	}
	return nil
}

// Calendars returns the named calendars as of the View's commit, in name
// order. They are shared by every reader: read only.
func (v *View) Calendars() []CalendarInfo { return v.cals.list }

// Calendar returns a named calendar as of the View's commit (read only),
// and false if there is none of that name.
func (v *View) Calendar(name string) (CalendarInfo, bool) {
	i, ok := v.cals.byName[name]
	if !ok {
		return CalendarInfo{}, false
	}
	return v.cals.list[i], true
}

// Definitions returns the definitions of the tasks and of the named
// calendars as of the View's commit, for planning a definition file
// against them or exporting them. It costs a map of every task.
func (v *View) Definitions() *Definitions {
	d := &Definitions{Tasks: make(map[string]*job.Task, v.tasks.Len()), Calendars: make(map[string]*job.Calendar, len(v.cals.list)),
		active: map[string]bool{}}
	v.tasks.Scan(func(it *TaskItem) bool {
		d.Tasks[it.Def.Name] = it.Def
		if it.State.Status.Active() || it.State.RunID != 0 {
			d.active[it.Def.Name] = true
		}
		return true
	})
	for _, ci := range v.cals.list {
		d.Calendars[ci.Calendar.Name] = ci.Calendar
	}
	return d
}

// Summary returns the overview of the tasks (engine.Engine.Summarize),
// with at most SummaryRows names in each list and the failures of the 24
// hours before the View's commit.
func (v *View) Summary() engine.Summary { return v.summary }

// Problems returns what went wrong while the scheduler restored its
// tasks.
func (v *View) Problems() []string { return v.problems }

// At returns the scheduler's clock reading when the View was published.
func (v *View) At() time.Time { return v.at }

// Seq counts the Views published before this one: a later View has a
// larger one.
func (v *View) Seq() uint64 { return v.seq }

// Ready, Running and Workers return the callables ready to start, the
// callable runs in flight and the worker slots.
func (v *View) Ready() int   { return v.ready }
func (v *View) Running() int { return v.running }
func (v *View) Workers() int { return v.workers }

// viewer keeps the loop's tree of task items and publishes Views of it;
// only the loop touches it.
type viewer struct {
	tasks, watching *btree.BTreeG[*TaskItem]
	seq             uint64
	cv              *viewCalendars
}

// loadCalendars takes in the engine's calendars: after a change of
// calendar, or of definition (which changes their users).
func (w *viewer) loadCalendars(e *engine.Engine) {
	cur := e.Calendars()
	names := e.CalendarNames()
	cv := &viewCalendars{list: make([]CalendarInfo, len(names)), byName: make(map[string]int, len(names))}
	holidaysOf := map[string][]string{}
	for _, n := range names { // in name order, as the lists
		for _, h := range cur[n].HolidayCalendars() {
			holidaysOf[h] = append(holidaysOf[h], n)
		}
	}
	for i, n := range names {
		cv.list[i] = CalendarInfo{Calendar: cur[n].Clone(), UsedBy: e.CalendarUsers(n), HolidaysOf: holidaysOf[n], Days: e.DaySet(n)}
		cv.byName[n] = i
	}
	w.cv = cv
}

// item builds the item of a task from the engine.
func item(e *engine.Engine, name string) (*TaskItem, bool) {
	_, st, ok := e.Task(name)
	if !ok {
		return nil, false
	}
	st.Pending, st.Alarms = slices.Clone(st.Pending), slices.Clone(st.Alarms)
	if st.Backfill != nil {
		bf := *st.Backfill
		bf.Queue, bf.Killed = slices.Clone(bf.Queue), slices.Clone(bf.Killed)
		st.Backfill = &bf
	}
	return &TaskItem{
		Def: e.Definitions()[name], State: st, Children: e.Children(name), Groups: e.Groups(name),
		Stored: e.StoredEvents(name), Schedule: e.Schedule(name),
	}, true
}

// load fills the tree with every task of the engine.
func (w *viewer) load(e *engine.Engine) {
	w.tasks, w.watching = newTaskTree(), newTaskTree()
	for _, name := range e.Names() {
		it, _ := item(e, name)
		w.tasks.Load(it)
		if it.Def.Extras().Watching() != nil {
			w.watching.Load(it)
		}
	}
}

// update takes in the tasks a commit changed (or deleted), with the
// bundles and members whose lists of children and groups a change of
// definition moved. It reports whether a file watcher came, went or
// changed.
func (w *viewer) update(e *engine.Engine, changed, defined map[string]bool) (watchers bool) {
	var also []string
	for name := range defined {
		if !sameWatch(w.def(name), e.Definitions()[name]) {
			watchers = true
		}
		// The bundles and groups the old definition and the new name.
		for _, def := range []*job.Task{w.def(name), e.Definitions()[name]} {
			if def == nil {
				continue
			}
			if def.Parent != "" {
				also = append(also, def.Parent)
			}
			also = append(also, def.Extras().Jobs...)
		}
	}
	for name := range changed {
		w.set(e, name)
	}
	for _, name := range also {
		if !changed[name] {
			w.set(e, name)
		}
	}
	return watchers
}

// sameWatch reports whether two definitions of a task (nil: none) watch
// files alike.
func sameWatch(a, b *job.Task) bool {
	var wa, wb *job.Watch
	if a != nil {
		wa = a.Extras().Watching()
	}
	if b != nil {
		wb = b.Extras().Watching()
	}
	return wa == nil && wb == nil || wa != nil && wb != nil && *wa == *wb
}

// def returns the definition the tree holds for a task, nil if none.
func (w *viewer) def(name string) *job.Task {
	if it, ok := w.tasks.Get(key(name)); ok {
		return it.Def
	}
	return nil
}

func (w *viewer) set(e *engine.Engine, name string) {
	it, ok := item(e, name)
	if ok {
		w.tasks.Set(it)
	} else {
		w.tasks.Delete(key(name))
	}
	if ok && it.Def.Extras().Watching() != nil {
		w.watching.Set(it)
	} else if w.watching.Len() > 0 {
		w.watching.Delete(key(name))
	}
}

// publish returns a View of the tree as it is now.
func (w *viewer) publish(e *engine.Engine, now time.Time) *View {
	w.seq++
	return &View{
		tasks: w.tasks.Copy(), watching: w.watching.Copy(), summary: e.Summarize(SummaryRows, now.Add(-24*time.Hour)), problems: e.Problems(), at: now, seq: w.seq,
		ready: e.Ready(), running: e.Running(), workers: e.Workers(), cals: w.cv,
	}
}

// View returns the state of the tasks as of the last commit. It never
// waits for the loop.
func (s *Scheduler) View() *View { return s.view.Load() }
