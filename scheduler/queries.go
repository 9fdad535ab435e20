package scheduler

import (
	"context"
	"maps"
	"slices"
	"time"

	"github.com/gnomon-sched/gnomon/calendar"
	"github.com/gnomon-sched/gnomon/engine"
	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/periods"
)

// The queries below answer what readers such as the API ask of the
// tasks and timeperiod trees, each in one visit of the loop goroutine:
// they read the engine's and the forest's live structures (the reach of a
// task, why it waits, its backfill runs, the trees), which the View does
// not hold. What they see is durable, as with Read. What the View holds
// (a task's definition, state, children and groups, the named calendars,
// the definitions) is read from it instead, without waiting.

// CalendarInfo is a named calendar with what refers to it, as a View
// holds it: read only.
type CalendarInfo struct {
	// Calendar is the definition.
	Calendar *job.Calendar
	// UsedBy names the tasks whose run_calendar or exclude_calendar names
	// it, sorted; HolidaysOf the calendars whose holidays name it, in
	// name order.
	UsedBy, HolidaysOf []string
	// Days is the compiled set of its days, nil if it has none. It never
	// changes once compiled: a new definition compiles a new set.
	Days *calendar.DaySet
}

// Definitions are the definitions of the tasks and of the named calendars
// as of one commit, for planning a definition file against them or
// exporting them. Their values are shared with the engine, which
// replaces a definition rather than change it: they are read only.
type Definitions struct {
	Tasks     map[string]*job.Task
	Calendars map[string]*job.Calendar
	// active holds the tasks that are active or have a run in flight.
	active map[string]bool
}

// Active reports whether a task is active or has a run in flight, as a
// definition that deletes or changes it must allow for.
func (d *Definitions) Active(name string) bool { return d.active[name] }

// CalendarNames returns the names of the calendars, sorted.
func (d *Definitions) CalendarNames() []string { return slices.Sorted(maps.Keys(d.Calendars)) }

// Children returns the names of a bundle's children, sorted.
func (d *Definitions) Children(bundle string) []string {
	var out []string
	for name, t := range d.Tasks {
		if t.Parent == bundle && bundle != "" {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// Reach says what a question about a name reaches.
type Reach struct {
	// Acted asks what acting on it changes rather than what reading it
	// shows.
	Acted bool
	// Upstream adds, for a task, the tasks its condition names, and
	// theirs.
	Upstream bool
	// Groups asks for the groups of each name reached too.
	Groups bool
}

// Reachable is what a question reaches: names, and the groups of each
// when they were asked for.
type Reachable struct {
	Names  []string
	Groups map[string][]string
}

// groupsOf returns the groups of each name (task or process) that a
// group's jobs name.
func groupsOf(e *engine.Engine, names []string) map[string][]string {
	m := make(map[string][]string, len(names))
	for _, n := range names {
		m[n] = e.Groups(n)
	}
	return m
}

// Reach returns what a task or a timeperiod process reaches: for a task,
// engine.Engine.Reached (and Upstream when asked); for a process, the
// processes an action on it changes (periods.Forest.Reached) or a read
// of it shows (periods.Forest.Shown). A name that is neither reaches
// only itself.
func (s *Scheduler) Reach(ctx context.Context, name string, how Reach) (Reachable, error) {
	var out Reachable
	err := s.Read(ctx, func(e *engine.Engine) {
		_, _, task := e.Task(name)
		switch {
		case task:
			out.Names = e.Reached([]string{name}, how.Acted)
			if how.Upstream {
				out.Names = append(out.Names, e.Upstream(name)...)
			}
		case how.Acted:
			out.Names = s.trees.f.Reached(name)
		default:
			out.Names = s.trees.f.Shown(name)
		}
		if how.Groups {
			out.Groups = groupsOf(e, out.Names)
		}
	})
	return out, err
}

// DataReached returns the tasks a data event reaches: the configurations
// it is offered to and every task they reach, with their groups if asked.
func (s *Scheduler) DataReached(ctx context.Context, typ job.DataType, resource string, groups bool) (Reachable, error) {
	var out Reachable
	err := s.Read(ctx, func(e *engine.Engine) {
		out.Names = e.Reached(e.DataReached(typ, resource), true)
		if groups {
			out.Groups = groupsOf(e, out.Names)
		}
	})
	return out, err
}

// Explanation is why a task is in its status and what it waits for.
type Explanation struct {
	Reasons []engine.Reason
	// Schedule is its compiled time trigger, nil without one.
	Schedule calendar.Schedule
}

// Why explains a task at now (engine.Engine.Why), and returns false if
// there is no task of that name.
func (s *Scheduler) Why(ctx context.Context, name string, now time.Time) (Explanation, bool, error) {
	var (
		x  Explanation
		ok bool
	)
	err := s.Read(ctx, func(e *engine.Engine) {
		if x.Reasons, ok = e.Why(name, now); ok {
			x.Schedule = e.Schedule(name)
		}
	})
	return x, ok, err
}

// BackfillState is what remains of a task's backfills.
type BackfillState struct {
	// Backfill is a copy of the task's backfill state, nil without one:
	// its queue of occurrences not started.
	Backfill *job.Backfill
	// Runs are its backfill runs in flight.
	Runs []job.Run
}

// Backfills returns what remains of a task's backfills, and false if
// there is no task of that name.
func (s *Scheduler) Backfills(ctx context.Context, name string) (BackfillState, bool, error) {
	var (
		b  BackfillState
		ok bool
	)
	err := s.Read(ctx, func(e *engine.Engine) {
		var st job.State
		if _, st, ok = e.Task(name); ok {
			if st.Backfill != nil {
				bf := *st.Backfill
				bf.Queue, bf.Killed = slices.Clone(bf.Queue), slices.Clone(bf.Killed)
				b.Backfill = &bf
			}
			b.Runs = e.BackfillRuns(name)
		}
	})
	return b, ok, err
}

// Running returns the runs in flight of callable tasks (bundles left
// out), oldest first, as copies.
func (s *Scheduler) Running(ctx context.Context) ([]job.Run, error) {
	var out []job.Run
	err := s.Read(ctx, func(e *engine.Engine) {
		for _, r := range e.ActiveRuns() {
			if def, _, ok := e.Task(r.Task); ok && def.Type != job.Bundle {
				out = append(out, *r) // copied here: the engine owns r
			}
		}
	})
	return out, err
}

// IsProcess reports whether name is a timeperiod process.
func (s *Scheduler) IsProcess(ctx context.Context, name string) (bool, error) {
	var ok bool
	err := s.Read(ctx, func(*engine.Engine) { _, _, ok = s.trees.f.Process(name) })
	return ok, err
}

// TreeList returns the timeperiod trees (periods.Forest.Trees).
func (s *Scheduler) TreeList(ctx context.Context) ([]periods.TreeInfo, error) {
	var out []periods.TreeInfo
	err := s.Read(ctx, func(*engine.Engine) { out = s.trees.f.Trees() })
	return out, err
}

// Tree returns a timeperiod tree, and false if there is none of that
// name.
func (s *Scheduler) Tree(ctx context.Context, name string) (periods.TreeInfo, bool, error) {
	var (
		t  periods.TreeInfo
		ok bool
	)
	err := s.Read(ctx, func(*engine.Engine) { t, ok = s.trees.f.Tree(name) })
	return t, ok, err
}

// TreeGrid returns a timeperiod tree and, for each of its levels in
// order, the last (at most) nodes of its process, all from one commit;
// false if there is no tree of that name.
func (s *Scheduler) TreeGrid(ctx context.Context, name string, last int) (periods.TreeInfo, [][]periods.Node, bool, error) {
	var (
		t     periods.TreeInfo
		ok    bool
		nodes [][]periods.Node
		ferr  error
	)
	err := s.Read(ctx, func(*engine.Engine) {
		if t, ok = s.trees.f.Tree(name); !ok {
			return
		}
		for _, lv := range t.Levels {
			ns, err := s.trees.f.Nodes(lv.Process, 0, 0)
			if err != nil {
				ferr = err
				return
			}
			nodes = append(nodes, slices.Clone(ns[max(0, len(ns)-last):]))
		}
	})
	if err == nil {
		err = ferr
	}
	return t, nodes, ok, err
}

// TreeFile returns a tree file in the layout periods.Format gives, or,
// when there is no file of that name, nil and the names of the tree
// files.
func (s *Scheduler) TreeFile(ctx context.Context, name string) (text []byte, files []string, err error) {
	err = s.Read(ctx, func(*engine.Engine) {
		if def, ok := s.trees.f.Definition(name); ok {
			text = periods.Format(def)
			return
		}
		files = s.trees.f.Files()
	})
	return text, files, err
}

// Nodes returns the nodes of a process whose keys are in [from, to], in
// order; a zero bound is open (periods.Forest.Nodes).
func (s *Scheduler) Nodes(ctx context.Context, process string, from, to periods.Key) ([]periods.Node, error) {
	var (
		nodes []periods.Node
		ferr  error
	)
	if err := s.Read(ctx, func(*engine.Engine) { nodes, ferr = s.trees.f.Nodes(process, from, to) }); err != nil {
		return nil, err
	}
	return nodes, ferr
}

// Outstanding returns the nodes not yet settled, of every process
// (periods.Forest.Outstanding).
func (s *Scheduler) Outstanding(ctx context.Context) ([]periods.Node, error) {
	var nodes []periods.Node
	err := s.Read(ctx, func(*engine.Engine) { nodes = s.trees.f.Outstanding() })
	return nodes, err
}

// Node returns one node; a timeperiod of a finer level is cast to the
// process's (periods.Forest.Node).
func (s *Scheduler) Node(ctx context.Context, process, timeperiod string) (periods.NodeDetail, error) {
	var (
		d    periods.NodeDetail
		ferr error
	)
	if err := s.Read(ctx, func(*engine.Engine) { d, ferr = s.trees.f.Node(process, timeperiod) }); err != nil {
		return d, err
	}
	return d, ferr
}

// TreeFacts is a tree file's plan and what comparing it with the forest
// reads: the forest's trees, the tree of each process, and the file as it
// stands.
type TreeFacts struct {
	// Plan is the file as the loop planned it (periods.Define.Plan). It
	// is read only.
	Plan *periods.File
	// Trees are the trees by name; Processes the tree of each process.
	Trees     map[string]periods.TreeInfo
	Processes map[string]string
	// File is the tree file of that name as the forest holds it, nil if
	// none. It is read only.
	File *periods.File
}

// CheckTrees plans the text of a tree file on the loop, as Define and
// Trees do, and checks the plan against the forest (periods.Forest.Check);
// if it passes, it returns the plan and what comparing it reads, from the
// same commit.
func (s *Scheduler) CheckTrees(ctx context.Context, ev periods.Define) (*TreeFacts, error) {
	var (
		facts *TreeFacts
		ferr  error
	)
	err := s.Read(ctx, func(*engine.Engine) {
		f := s.trees.f
		d, err := s.planDefine(ev)
		if err == nil {
			err = f.Check(d)
		}
		if ferr = err; ferr != nil {
			return
		}
		facts = &TreeFacts{Plan: d.Plan, Trees: map[string]periods.TreeInfo{}, Processes: map[string]string{}}
		for _, t := range f.Trees() {
			facts.Trees[t.Name] = t
			procs, _ := f.TreeProcesses(t.Name)
			for _, p := range procs {
				facts.Processes[p] = t.Name
			}
		}
		facts.File, _ = f.Definition(ev.File)
	})
	if err != nil {
		return nil, err
	}
	return facts, ferr
}
