// Package engine is gnomon's deterministic core. Apply takes one event and
// the current instant and returns what changed and the effects to perform;
// it does no I/O, never reads the clock and iterates maps only in sorted
// order, so replaying a journal of events rebuilds the same state.
//
// An Engine is not safe for concurrent use: one goroutine owns it.
package engine

import (
	"cmp"
	"container/heap"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/gnomon-sched/gnomon/calendar"
	"github.com/gnomon-sched/gnomon/cond"
	"github.com/gnomon-sched/gnomon/eventdep"
	"github.com/gnomon-sched/gnomon/job"
)

// Config tunes an Engine.
type Config struct {
	// Workers is the most callable runs that may be running at once.
	// Zero means 10.
	Workers int
	// Location is the time zone of calendars whose task names none. Nil
	// means UTC.
	Location *time.Location
	// MisfireGrace is how late an occurrence may be handled and still
	// start its task; an older one was missed (the scheduler was down).
	// Zero means one minute.
	MisfireGrace time.Duration
	// EventLateness is how much older than the newest event a
	// configuration has accepted a data event may be and still count for
	// it; older validations are dropped, which bounds the memory of a
	// configuration that never triggers. Zero means DefaultEventLateness;
	// a negative value keeps every validation.
	EventLateness time.Duration
	// ExternalClock leaves the finding of due occurrences to someone else:
	// the engine keeps each task's next occurrence, for forecasts, but
	// fires a time trigger only when it is handed the occurrence in a
	// Fired event (a cluster's clock nodes find them).
	ExternalClock bool
	// FireBatch is the most occurrences, and then the most tasks they
	// queued, one Tick handles: a tick with more goes on at the next
	// (see fireDue). Zero means no limit.
	FireBatch int
}

// BuiltinLog is the function every scheduler provides: it writes a log
// line for each run.
const BuiltinLog = "log"

// DefaultEventLateness is the default Config.EventLateness.
const DefaultEventLateness = 7 * 24 * time.Hour

// Engine holds the definitions and the state of every task.
type Engine struct {
	workers int
	tasks   map[string]*entry
	defs    map[string]*job.Task           // the definitions, shared with entries
	deps    map[string]map[string]struct{} // task → tasks whose condition names it
	kids    map[string]map[string]struct{} // bundle → its children
	// memberOf maps a task to the groups it belongs to.
	memberOf map[string]map[string]struct{}
	// cals are the named calendars, days the same compiled, and calUsers
	// maps a calendar to the tasks that name it.
	cals     map[string]*job.Calendar
	days     map[string]*calendar.DaySet
	calUsers map[string]map[string]struct{}
	ready    readyQueue          // callables in Ready, in dispatch order
	staged   map[string]struct{} // tasks in Staged, waiting for DueAt
	pending  map[string]struct{} // tasks with pending triggers (overlap allow, queue)
	runs     map[int64]*job.Run  // runs not yet ended
	running  int                 // callable runs holding a worker slot
	lastRun  int64               // highest run id handed out
	seq      int64               // ready order
	// draining stops dispatch: ready tasks stay ready.
	draining bool
	// backfills are the tasks whose backfills have occurrences waiting;
	// backfillTotal counts the backfill runs in flight (see backfill.go).
	backfills     map[string]struct{}
	backfillTotal int

	loc       *time.Location
	grace     time.Duration
	external  bool     // time triggers fire through Fired only
	fires     fireHeap // tasks with a next occurrence, earliest first
	fireBatch int      // see Config.FireBatch
	// res are the resources shared between tasks, by name; holds the
	// claims each run in flight holds (see resource).
	res   map[string]*resource
	holds map[int64][]hold
	// parked holds the ready tasks that wait for resources, and their
	// places among the waiters of each (kept beside the entries: a
	// million configurations have none).
	parked map[*entry][]*waiter
	firing *firing // the tick in progress, nil between ticks
	// unplanned tasks get their next occurrence at the next Tick: restored
	// without one, or with one their trigger no longer yields.
	unplanned []*entry
	problems  []string

	// dataIdx finds the configuration dependencies a data event
	// validates; refBuf is reused by each match.
	dataIdx  eventdep.Index
	refBuf   []eventdep.Ref
	lateness int64 // nanoseconds, 0 for no limit
	// holders are the configurations that may hold stored timestamps.
	holders map[string]*entry

	now time.Time
	out *Output
	// endedBy is, while an abort is applied, the identity that sent it:
	// every run the abort kills or ends names it (job.Run.EndedBy).
	endedBy string
	// queue holds status changes whose dependents have not been visited.
	queue []change
	// timed are the active tasks whose run policy has a deadline (see
	// watch); zones caches the time zones of their deadlines.
	timed map[string]struct{}
	// killedAtLimit are the runs this engine has killed at their
	// term_run_time. A run recorded timed out but not in it was killed by
	// an engine before a restart, and that kill may have been lost with
	// it: it is killed again.
	killedAtLimit map[int64]bool
	zones         map[string]*time.Location
	// counts and recent keep the overview (see Summarize).
	counts [job.Frozen + 1]int
	recent []ended
}

type entry struct {
	def   *job.Task
	cond  *cond.Expr        // nil without a condition
	sched calendar.Schedule // nil without a time trigger
	hidx  int               // index in the fire heap, -1 when not in it
	ridx  int               // index in the ready queue, -1 when not in it
	st    job.State
	// active counts the task's runs that have not ended: more than one
	// under overlap allow.
	active int
	win    *windows // a configuration's accepted events, nil otherwise
	// backfilling counts the task's backfill runs in flight, which active
	// does not.
	backfilling int
}

// windows are the events a configuration accepted.
type windows struct {
	seen eventdep.Seen
	// newest is the newest timestamp the configuration accepted (or its
	// last execution), 0 with hasNewest false before any; pruned is the
	// value of newest when late validations were last dropped.
	newest, pruned int64
	hasNewest      bool
	// small holds seen for up to three dependencies, most configurations:
	// a million of them are then a million objects fewer to collect.
	small [3][]int64
}

// newWindows returns empty windows for n dependencies.
func newWindows(n int) *windows {
	w := &windows{}
	if n <= len(w.small) {
		w.seen = w.small[:n:n]
	} else {
		w.seen = eventdep.NewSeen(n)
	}
	return w
}

type change struct {
	task     string
	old, new job.Status
	// completed is set when a run of task ended.
	completed bool
	// concurrent is set when a run ended while others of the task still
	// run (overlap allow): new is that run's outcome, not the task's
	// status, and condition-triggered dependents see it.
	concurrent bool
}

// Output is what one Apply did.
type Output struct {
	// Tasks names the tasks whose definition or state changed, sorted
	// (but see Ran).
	Tasks []string
	// Defined names, among Tasks, those whose definition changed (the
	// others changed only their state), sorted.
	Defined []string
	// Deleted names deleted tasks, sorted.
	Deleted []string
	// Runs holds the runs created or updated.
	Runs []*job.Run
	// Effects are to be performed in order once the output is durable.
	Effects []Effect
	// Fires records the fate of each occurrence handled, and of each
	// trigger of a configuration, except those in Ran.
	Fires []job.Fire
	// Ran are the runs, among Runs, of configurations that a data event
	// ran without a command (EventRun). Such a configuration is not in
	// Tasks unless something else changed it: the run, its fire (RanFire)
	// and the configuration's state (Replay) follow from the event and the
	// run's ID and task, so a store may write all three later than the
	// event, provided the event's journal entry names the run.
	Ran []*job.Run
	// Data is the result of a data event, nil for other events.
	Data *DataResult
	// Validations are the dependencies a data event validated, and (with
	// Expire) the dependencies and configurations a definition removed,
	// with what they had stored. The journal records them so that a
	// restart rebuilds the windows.
	Validations []job.Validation
	// Alerts are the email alerts the outcomes of this event ask for.
	Alerts []job.Alert
	// Calendars names the calendars a definition inserted or updated,
	// sorted; DeletedCalendars those it deleted, sorted.
	Calendars        []string
	DeletedCalendars []string
	// Backfill is what a Backfill or BackfillCancel event did, nil for
	// other events.
	Backfill *BackfillResult

	tasks, defined, calendars map[string]bool
	runs                      map[int64]bool
}

// Error kinds that callers branch on.
var (
	ErrNotFound = errors.New("not found")
	ErrRefused  = errors.New("refused")
)

// New returns an empty engine.
func New(cfg Config) *Engine {
	if cfg.Workers <= 0 {
		cfg.Workers = 10
	}
	if cfg.Location == nil {
		cfg.Location = time.UTC
	}
	if cfg.MisfireGrace <= 0 {
		cfg.MisfireGrace = time.Minute
	}
	switch {
	case cfg.EventLateness == 0:
		cfg.EventLateness = DefaultEventLateness
	case cfg.EventLateness < 0:
		cfg.EventLateness = 0
	}
	return &Engine{
		workers:   cfg.Workers,
		lateness:  int64(cfg.EventLateness),
		loc:       cfg.Location,
		grace:     cfg.MisfireGrace,
		external:  cfg.ExternalClock,
		fireBatch: cfg.FireBatch,
		tasks:     map[string]*entry{},
		defs:      map[string]*job.Task{},
		deps:      map[string]map[string]struct{}{},
		kids:      map[string]map[string]struct{}{},
		memberOf:  map[string]map[string]struct{}{},
		cals:      map[string]*job.Calendar{},
		days:      map[string]*calendar.DaySet{},
		calUsers:  map[string]map[string]struct{}{},
		staged:    map[string]struct{}{},
		pending:   map[string]struct{}{},
		runs:      map[int64]*job.Run{},
	}
}

// Prepared is a stored task made ready for Restore: its condition parsed
// and its time trigger compiled.
type Prepared struct {
	rec     job.Record
	cond    *cond.Expr
	sched   calendar.Schedule
	problem string
}

// Prepare parses a stored task's condition and compiles its time trigger,
// for Restore. It reads only the engine's configuration and calendars
// (see RestoreCalendars) and changes nothing, so a loader may prepare many
// tasks concurrently before calling Restore.
func (e *Engine) Prepare(r job.Record) (Prepared, error) {
	p := Prepared{rec: r}
	if r.Def.Condition != "" {
		c, err := cond.Parse(r.Def.Condition)
		if err != nil {
			return Prepared{}, fmt.Errorf("restore %s: %w", r.Def.Name, err)
		}
		p.cond = c
	}
	en := entry{def: r.Def}
	p.problem = e.compile(&en)
	p.sched = en.sched
	return p, nil
}

// Restore loads stored tasks, prepared by Prepare, the runs that had not
// ended and the accepted events of configurations (see restoreWindows). It
// must be called on a new engine, before Apply. lastRun is the highest run
// id ever handed out.
func (e *Engine) Restore(tasks []Prepared, active []*job.Run, lastRun int64, vals []job.Validation) {
	ens := make([]entry, len(tasks))
	for i := range tasks {
		p := &tasks[i]
		ens[i] = entry{def: p.rec.Def, st: p.rec.State, hidx: -1, ridx: -1, cond: p.cond, sched: p.sched}
	}
	for i := range ens {
		en, r := &ens[i], &tasks[i].rec
		name := r.Def.Name
		if p := tasks[i].problem; p != "" {
			e.problems = append(e.problems, p)
		}
		if next := en.st.NextFire; en.sched != nil && !next.IsZero() {
			// Keep the occurrence only if the trigger still yields it (the
			// default zone may have changed since).
			if n, ok := en.sched.Next(next.Time().Add(-time.Nanosecond)); ok && job.At(n) == next {
				en.hidx = len(e.fires)
				e.fires = append(e.fires, en)
			} else {
				e.unplanned = append(e.unplanned, en)
			}
		} else if en.sched != nil {
			e.unplanned = append(e.unplanned, en)
		}
		e.tasks[name] = en
		e.defs[name] = r.Def
		e.count(r.Def, en.st.Status, 1)
		if s := en.st.Status; s == job.Failure || s == job.Aborted {
			e.recent = append(e.recent, ended{en.st.End, name, s})
		}
		var names []string
		if en.cond != nil {
			names = en.cond.Names() // parsed above, not again
		}
		e.link(name, names, r.Def)
		e.indexData(en, nil, r.Def)
		switch {
		case r.State.Status == job.Ready && r.Def.Executes():
			en.ridx = len(e.ready)
			e.ready = append(e.ready, en)
		case r.State.Status == job.Staged, r.State.Retrying():
			e.staged[name] = struct{}{}
		}
		e.resume(en)
		e.watch(name, en)
		if len(r.State.Pending) > 0 {
			e.pending[name] = struct{}{}
		}
		e.seq = max(e.seq, r.State.ReadySeq)
	}
	heap.Init(&e.fires)
	heap.Init(&e.ready)
	slices.SortFunc(e.recent, func(a, b ended) int { return cmp.Compare(a.at, b.at) })
	for _, r := range active {
		e.runs[r.ID] = r
		if t := e.tasks[r.Task]; t != nil && t.def.Type != job.Bundle {
			e.running++
			t.active++
		}
	}
	e.restoreWindows(vals)
	e.lastRun = lastRun
	e.restoreBackfills(active)
	e.restoreResources(active)
}

// Task returns a task's definition and state.
func (e *Engine) Task(name string) (job.Task, job.State, bool) {
	en, ok := e.tasks[name]
	if !ok {
		return job.Task{}, job.State{}, false
	}
	return *en.def, en.st, true
}

// Children returns the names of a bundle's children, sorted.
func (e *Engine) Children(bundle string) []string { return sortedSet(e.kids[bundle]) }

// Names returns every task name, sorted.
func (e *Engine) Names() []string { return slices.Sorted(maps.Keys(e.tasks)) }

// Active reports whether a task is active: running, or in a state that
// leads to a run, or with a backfill under way. A definition may not
// change or delete an active task.
func (e *Engine) Active(name string) bool {
	en := e.tasks[name]
	return en != nil && (en.st.Status.Active() || en.st.RunID != 0 || e.backfillUnderWay(en))
}

// Definitions returns the definitions. The caller must not modify them.
func (e *Engine) Definitions() map[string]*job.Task { return e.defs }

// ActiveRuns returns the runs that have not ended, by id.
func (e *Engine) ActiveRuns() []*job.Run {
	out := slices.Collect(maps.Values(e.runs))
	slices.SortFunc(out, func(a, b *job.Run) int { return int(a.ID - b.ID) })
	return out
}

// Running returns the number of callable runs in flight.
func (e *Engine) Running() int { return e.running }

// Ready returns the number of callables ready to start: waiting for a
// worker slot, or for dispatch to resume after a drain.
func (e *Engine) Ready() int { return len(e.ready) }

// Workers returns the most callable runs that may be running at once.
func (e *Engine) Workers() int { return e.workers }

// Drain stops (or with false, resumes) starting runs. Ready tasks stay
// ready and are started when dispatch resumes, here or after a restart.
func (e *Engine) Drain(on bool) { e.draining = on }

// Problems returns what went wrong while restoring, for the log.
func (e *Engine) Problems() []string { return e.problems }

// Schedule returns a task's compiled time trigger, nil if it has none. A
// schedule is immutable and may be used on any goroutine.
func (e *Engine) Schedule(name string) calendar.Schedule {
	if en := e.tasks[name]; en != nil {
		return en.sched
	}
	return nil
}

// NewRunID hands out a run ID for a run the engine does not start itself
// (a timeperiod node's): the engine's runs and those share one sequence.
func (e *Engine) NewRunID() int64 {
	e.lastRun++
	return e.lastRun
}

// Ticking reports whether the next Tick has occurrences to handle that
// were due by the last event's instant: a tick in progress (occurrences
// of one instant still to handle or release), or later instants a tick
// left for the next (see Config.FireBatch).
func (e *Engine) Ticking() bool {
	return e.firing != nil || !e.external && len(e.fires) > 0 && !e.fires[0].st.NextFire.After(e.now)
}

// NextWake returns the earliest instant at which a Tick has work to do, or
// the zero time if none.
func (e *Engine) NextWake() time.Time {
	if e.firing != nil {
		return e.firing.at.Time() // a tick in progress goes on at once
	}
	var t time.Time
	if len(e.fires) > 0 && !e.external {
		t = e.fires[0].st.NextFire.Time()
	}
	for name := range e.staged {
		due := e.tasks[name].st.DueAt
		if t.IsZero() || due.Before(t) {
			t = due.Time()
		}
	}
	if due := e.pendingWake(); !due.IsZero() && (t.IsZero() || due.Before(t)) {
		t = due
	}
	if due := e.PolicyWake(); !due.IsZero() && (t.IsZero() || due.Before(t)) {
		t = due
	}
	if due := e.backfillWake(); !due.IsZero() && (t.IsZero() || due.Before(t)) {
		t = due
	}
	return t
}

// Due returns the occurrences at or before t that the engine waits for:
// each task whose next occurrence is due by then, with it, earliest
// first, then by name. With an external clock these are the occurrences
// a simulation waits for the clock nodes to hand it (Fired).
func (e *Engine) Due(t time.Time) []ClockFire {
	var out []ClockFire
	var walk func(i int)
	walk = func(i int) {
		if i >= len(e.fires) || e.fires[i].st.NextFire.Time().After(t) {
			return
		}
		en := e.fires[i]
		out = append(out, ClockFire{Task: en.def.Name, Scheduled: en.st.NextFire.Time()})
		walk(2*i + 1)
		walk(2*i + 2)
	}
	walk(0)
	slices.SortFunc(out, func(a, b ClockFire) int {
		if c := a.Scheduled.Compare(b.Scheduled); c != 0 {
			return c
		}
		return strings.Compare(a.Task, b.Task)
	})
	return out
}

// NextOccurrence returns the earliest next occurrence of a time trigger,
// or the zero time if none; unlike NextWake it counts them with an
// external clock too.
func (e *Engine) NextOccurrence() time.Time {
	if len(e.fires) == 0 {
		return time.Time{}
	}
	return e.fires[0].st.NextFire.Time()
}

// Apply performs one event at instant now. A rejected event returns an
// error and changes nothing.
func (e *Engine) Apply(ev Event, now time.Time) (*Output, error) {
	e.now = now
	e.out = &Output{} // its sets are made on first use: most events touch one task or none
	var err error
	switch ev := ev.(type) {
	case Define:
		err = e.define(ev)
	case Act:
		err = e.act(ev)
	case RunExited:
		e.exited(ev)
	case Tick:
		e.tick()
	case Data:
		err = e.data(ev)
	case Fired:
		e.fired(ev)
	case NodeGone:
	case Backfill:
		err = e.backfill(ev)
	case BackfillCancel:
		err = e.cancel(ev)
	default:
		err = fmt.Errorf("unknown event %T", ev)
	}
	if err != nil {
		e.out, e.endedBy = nil, ""
		return nil, err
	}
	e.propagate()
	if e.firing == nil {
		e.start()
	} else {
		// While a tick is in progress, runs of pending triggers and
		// backfills wait for it to complete, as they would for a tick
		// handled at once: they take the slots its tasks leave.
		e.dispatch()
	}
	out := e.out
	e.out, e.endedBy = nil, ""
	out.Tasks = slices.Sorted(maps.Keys(out.tasks))
	if len(out.defined) > 0 {
		out.Defined = slices.Sorted(maps.Keys(out.defined))
	}
	if len(out.calendars) > 0 {
		out.Calendars = slices.Sorted(maps.Keys(out.calendars))
	}
	slices.Sort(out.DeletedCalendars)
	return out, nil
}

func (e *Engine) touch(name string) {
	if e.out.tasks == nil {
		e.out.tasks = map[string]bool{}
	}
	e.out.tasks[name] = true
}

// touchDefined records that a task's definition changed.
func (e *Engine) touchDefined(name string) {
	e.touch(name)
	if e.out.defined == nil {
		e.out.defined = map[string]bool{}
	}
	e.out.defined[name] = true
}

func (e *Engine) touchRun(r *job.Run) {
	if !e.out.runs[r.ID] {
		if e.out.runs == nil {
			e.out.runs = map[int64]bool{}
		}
		e.out.runs[r.ID] = true
		e.out.Runs = append(e.out.Runs, r)
	}
}

// setStatus moves a task to a new status and queues its dependents.
func (e *Engine) setStatus(name string, s job.Status, completed bool) {
	en := e.tasks[name]
	old := en.st.Status
	en.st.Status = s
	e.count(en.def, old, -1)
	e.count(en.def, s, 1)
	e.touch(name)
	if !old.Active() && s.Active() {
		en.st.Alarms = nil // a new trigger: the last one's alarms are history
	}
	if s.Active() {
		en.st.SetBy = nil // no longer what the operator's event left
	} else {
		en.st.Attempt, en.st.RetryOf = 0, 0
	}
	e.unready(en)
	delete(e.staged, name)
	switch s {
	case job.Ready:
		e.seq++
		en.st.ReadySeq = e.seq
		if en.st.Trigger == "" {
			en.st.Trigger = "condition"
			if en.st.BundleRun != 0 {
				en.st.Trigger = "bundle"
			}
		}
		if en.def.Executes() {
			e.markReady(en)
		}
	case job.Staged:
	default:
		en.st.DueAt = 0
	}
	if s != job.Ready {
		en.st.ReadySeq, en.st.WaitsFor = 0, ""
	}
	if !s.Active() || s == job.Running {
		en.st.Trigger, en.st.By, en.st.Params = "", "", nil // the run took them
	}
	if !s.Active() {
		en.st.Scheduled = 0
	}
	// The first settled status of a bundle member is its outcome for the run.
	if en.st.BundleRun != 0 && en.st.BundleOutcome == job.Idle && s.Settled() && s != job.Idle {
		en.st.BundleOutcome = s
	}
	if old != s || completed {
		e.queue = append(e.queue, change{task: name, old: old, new: s, completed: completed})
	}
	e.watch(name, en)
	e.settled(name, &en.st)
}

// settleByEvent applies a status event's outcome: end time now, start kept.
func (e *Engine) settleByEvent(name string, s job.Status) {
	e.tasks[name].st.End = job.At(e.now)
	e.setStatus(name, s, false)
}

// evaluate reports whether a task's condition holds now.
func (e *Engine) evaluate(en *entry) bool {
	return en.cond == nil || en.cond.Eval(e.status)
}

func (e *Engine) status(name string) job.Status {
	if en, ok := e.tasks[name]; ok {
		return en.st.Status
	}
	return job.Idle
}

// release moves a queued task to ready or waiting by its condition.
func (e *Engine) release(name string) {
	if e.evaluate(e.tasks[name]) {
		e.setStatus(name, job.Ready, false)
	} else {
		e.setStatus(name, job.Waiting, false)
	}
}

// propagate visits the dependents of every queued status change, and the
// bundle of every changed child, until nothing more changes.
func (e *Engine) propagate() {
	for len(e.queue) > 0 {
		c := e.queue[0]
		e.queue = e.queue[1:]
		for _, d := range sortedSet(e.deps[c.task]) {
			e.reconsider(d, c)
		}
		if en := e.tasks[c.task]; en != nil && en.def.Parent != "" {
			e.checkBundle(en.def.Parent)
		}
	}
}

// reconsider re-evaluates dependent d after change c of a task it names.
func (e *Engine) reconsider(d string, c change) {
	en := e.tasks[d]
	switch {
	case en.st.Status == job.Waiting:
		if e.evaluate(en) {
			e.setStatus(d, job.Ready, false)
		}
	case en.def.ConditionTriggered() && en.st.Status != job.Frozen:
		before := en.cond.Eval(func(n string) job.Status {
			if n == c.task {
				return c.old
			}
			return e.status(n)
		})
		after := e.evaluate(en)
		if c.concurrent {
			after = en.cond.Eval(func(n string) job.Status {
				if n == c.task {
					return c.new
				}
				return e.status(n)
			})
		}
		switch {
		case !before && after && en.st.Status.Active():
			if queued, why := e.admit(en, "task", job.Pending{Trigger: "condition"}); !queued {
				e.notStarted(d, fmt.Sprintf("condition became true after %s %s but %s", c.task, c.new, why))
			}
		case !before && after && c.concurrent:
			// True for the run that ended, not for the task, which still
			// runs: it starts without evaluating the condition again.
			e.trigger(d, false)
		case !before && after:
			e.trigger(d, true)
		case c.completed && !after:
			e.notStarted(d, fmt.Sprintf("%s ended %s and the condition %s is false", c.task, c.new, en.def.Condition))
		}
	}
}

func (e *Engine) notStarted(task, reason string) {
	e.out.Effects = append(e.out.Effects, NotStarted{Task: task, Reason: reason})
	e.alert(e.tasks[task], job.OutcomeNotStarted, nil, reason)
}

// trigger starts a condition-triggered task: ready now (released by its
// condition when gate is set), or staged until its start delay has passed.
func (e *Engine) trigger(name string, gate bool) {
	en := e.tasks[name]
	if en.def.Extras().StartDelay > 0 {
		en.st.DueAt = job.At(e.now.Add(time.Duration(en.def.Extras().StartDelay)))
		e.setStatus(name, job.Staged, false)
		e.staged[name] = struct{}{}
		return
	}
	e.setStatus(name, job.Queued, false)
	if gate {
		e.release(name)
	} else {
		e.setStatus(name, job.Ready, false)
	}
}

func (e *Engine) tick() {
	for _, name := range sortedSet(e.staged) {
		if en := e.tasks[name]; !en.st.DueAt.After(e.now) {
			e.setStatus(name, job.Ready, false)
		}
	}
	if len(e.timed) > 0 {
		e.enforce()
	}
	e.fireDue()
}

// start starts what may start: runs of pending triggers, ready callables
// in dispatch order, backfill runs.
func (e *Engine) start() {
	if len(e.pending) > 0 {
		e.startPending()
		e.propagate()
	}
	e.dispatch()
	if len(e.pending) > 0 {
		e.startPending() // concurrent runs take the workers ready tasks left
	}
	if len(e.backfills) > 0 {
		e.startBackfills() // and backfill runs those still left
	}
}

// dispatch starts ready callables while worker slots are free: higher
// priority first, then earlier ready, then name (readyQueue). A task held
// back by its backfill runs keeps its place for the next dispatch.
func (e *Engine) dispatch() {
	if e.draining || e.running >= e.workers || len(e.ready) == 0 {
		return
	}
	var held []*entry
	started := 0
	for e.running < e.workers && len(e.ready) > 0 {
		en := e.ready[0]
		if e.backfillTotal > 0 && e.heldByBackfill(en.def.Name) {
			held = append(held, heap.Pop(&e.ready).(*entry))
			continue
		}
		if len(en.def.Extras().Claims) > 0 {
			if r := e.blocking(en); r != nil {
				heap.Pop(&e.ready)
				e.holdBack(en, r)
				continue
			}
		}
		e.startRun(en.def.Name, en.st.Trigger) // takes it out of the queue
		started++
	}
	for _, en := range held {
		heap.Push(&e.ready, en)
	}
	if started == 0 {
		return
	}
	e.propagate()
	if e.running < e.workers && len(e.ready) > 0 {
		e.dispatch() // a start can make others ready (nr clauses do not, but be exact)
	}
}

func (e *Engine) startRun(name, trigger string) {
	en := e.tasks[name]
	en.active++
	e.lastRun++
	r := &job.Run{
		ID:        e.lastRun,
		Task:      name,
		Status:    job.Running,
		Start:     e.now,
		BundleRun: en.st.BundleRun,
		Trigger:   trigger,
		Scheduled: en.st.Scheduled.Time(),
		By:        en.st.By,
		Params:    en.st.Params,
		Attempt:   en.st.Attempt,
		RetryOf:   en.st.RetryOf,
	}
	e.runs[r.ID] = r
	e.running++
	e.take(r.ID, en.def)
	en.st.Start, en.st.End, en.st.RunID = job.At(e.now), 0, r.ID
	e.setStatus(name, job.Running, false)
	e.touchRun(r)
	e.out.Effects = append(e.out.Effects, StartRun{Run: *r, Task: *en.def})
}

func (e *Engine) exited(ev RunExited) {
	r, ok := e.runs[ev.RunID]
	if !ok {
		return // already recorded (a duplicate report after a restart)
	}
	delete(e.runs, ev.RunID)
	delete(e.killedAtLimit, ev.RunID)
	e.releaseHolds(ev.RunID)
	if r.Trigger == job.TriggerBackfill {
		e.backfillExited(r, ev)
		return
	}
	end := ev.At
	if end.IsZero() {
		end = e.now
	}
	if end.Before(r.Start) {
		// A clock set back, or a supervisor's clock behind the
		// scheduler's: a run never ends before it started.
		end = r.Start
	}
	timedOut, reason := r.Result == job.ResultTimeout, r.Message
	r.End, r.ExitCode, r.Result, r.Message, r.Data, r.Log = end, ev.ExitCode, ev.Result, ev.Message, ev.Data, ev.Log
	en := e.tasks[r.Task]
	if en == nil {
		r.Status = job.Failure
		e.touchRun(r)
		return
	}
	if en.def.Type != job.Bundle {
		e.running--
		en.active--
	}
	switch {
	case en.st.Status == job.Aborted: // every run in flight was killed with the task
		r.Status = job.Aborted
		if r.Result == job.ResultNormal {
			r.Result = job.ResultKilled
		}
	case ev.Result == job.ResultNormal && ev.ExitCode == 0:
		r.Status = job.Success
	default:
		r.Status = job.Failure
	}
	e.endPolicy(en, r, timedOut && r.Status != job.Aborted, reason)
	e.touchRun(r)
	if r.Status == job.Failure && en.st.RunID == r.ID && en.st.Status == job.Running && en.active == 0 && e.retry(en, r) {
		return
	}
	e.alert(en, outcome(r.Status), r, "")
	if en.active > 0 && en.st.Status == job.Running && en.def.Extras().Overlap == job.OverlapAllow {
		// Other runs of the task still run (overlap allow): the task stays
		// running, and this run's outcome reaches its dependents.
		if en.st.RunID == r.ID {
			en.st.RunID = e.latestRun(r.Task)
		}
		e.touch(r.Task)
		e.queue = append(e.queue, change{task: r.Task, old: job.Running, new: r.Status, completed: true, concurrent: true})
		return
	}
	if en.st.RunID != r.ID {
		return
	}
	en.st.RunID = 0
	if en.st.Status == job.Running {
		en.st.End = job.At(end)
		e.setStatus(r.Task, r.Status, true)
	} else {
		e.touch(r.Task)
	}
}

// Errors are wrapped so that callers can tell the kind with errors.Is.
func refused(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrRefused, fmt.Sprintf(format, args...))
}

func (e *Engine) act(ev Act) error {
	en, ok := e.tasks[ev.Task]
	if !ok {
		return fmt.Errorf("%w: task %s not found", ErrNotFound, ev.Task)
	}
	if t := en.def.Type; t == job.Group || t == job.Resource {
		return refused("%s", Refusal(ev.Action, en.def, &en.st, false))
	}
	s := en.st.Status
	name := ev.Task
	if err := checkParams(en.def, ev.Action, ev.Params); err != nil {
		return err
	}
	if why := Refusal(ev.Action, en.def, &en.st, e.backfillUnderWay(en)); why != "" {
		return refused("%s", why)
	}
	switch ev.Action {
	case job.ActStart:
		if s.Active() && en.def.Type != job.Bundle {
			if queued, _ := e.admit(en, "task", job.Pending{Trigger: "start", By: ev.By, Params: ev.Params}); queued {
				return nil
			}
		}
		if en.def.Type == job.Bundle {
			en.st.By = ev.By
			e.startBundle(name)
			return nil
		}
		// A start bypasses the condition; a child of a running bundle that
		// was waiting stays a member of that bundle run.
		en.st.Trigger, en.st.By, en.st.Params = "start", ev.By, ev.Params
		e.setStatus(name, job.Ready, false)
	case job.ActAbort:
		// Until the end of this Apply: a bundle run that ends because a
		// member was aborted is ended by the abort too.
		e.endedBy = ev.By
		if !s.Settled() {
			e.abort(name)
		}
		if e.backfillUnderWay(en) {
			e.cancelBackfill(en, ev.By) // an abort cancels the task's backfills too
		}
	case job.ActFreeze:
		if s != job.Frozen {
			e.settleByEvent(name, job.Frozen)
		}
	case job.ActReset:
		e.settleByEvent(name, job.Idle)
		if en.def.Type == job.Configuration {
			e.resetData(en)
		}
		if en.def.Type == job.Bundle {
			for _, c := range sortedSet(e.kids[name]) {
				if cs := e.tasks[c].st.Status; cs.Settled() && cs != job.Frozen {
					e.settleByEvent(c, job.Idle)
				}
			}
		}
	case job.ActGreen:
		e.settleByEvent(name, job.Success)
	case job.ActRed:
		e.settleByEvent(name, job.Failure)
	}
	// Who set a settled status: not a start, nor an abort that only
	// cancelled the backfill of a task already settled.
	if ev.Action != job.ActStart && !(ev.Action == job.ActAbort && s.Settled()) && en.st.Status.Settled() {
		en.st.SetBy = &job.StatusEvent{Action: ev.Action, By: ev.By, At: job.At(e.now)}
		e.touch(name)
	}
	return nil
}

// abort stops an active task: a running callable is killed, a running bundle
// aborts every active child. Every run it kills, and the bundle run it
// ends, names who sent the abort (e.endedBy) from now on, though a killed
// run ends only when its process has: its record is written at once, so
// that the name survives a restart before the process ends.
func (e *Engine) abort(name string) {
	en := e.tasks[name]
	if en.def.Type == job.Bundle {
		for _, c := range sortedSet(e.kids[name]) {
			if ce := e.tasks[c]; ce.st.Status.Active() && ce.st.BundleRun == en.st.RunID {
				e.abort(c)
			}
		}
		e.finishBundle(name, job.Aborted)
		return
	}
	if en.st.Status == job.Running {
		for _, r := range e.ActiveRuns() { // every run, under overlap allow
			if r.Task == name {
				e.out.Effects = append(e.out.Effects, KillRun{RunID: r.ID})
				if e.endedBy != "" && r.EndedBy == "" {
					r.EndedBy = e.endedBy
					e.touchRun(r)
				}
			}
		}
	}
	if len(en.st.Pending) > 0 {
		en.st.Pending = nil // an abort cancels what waits too
		delete(e.pending, name)
	}
	e.settleByEvent(name, job.Aborted)
}

// Groups returns the groups a task belongs to, sorted.
func (e *Engine) Groups(name string) []string { return sortedSet(e.memberOf[name]) }
