package engine

import (
	"maps"
	"slices"
	"time"

	"github.com/gnomon-sched/gnomon/cond"
	"github.com/gnomon-sched/gnomon/job"
)

// define applies a plan of definition changes.
func (e *Engine) define(ev Define) error {
	res := &ev.Plan
	for _, name := range res.Deleted {
		e.count(e.defs[name], e.tasks[name].st.Status, -1)
		e.index(name, e.defs[name], nil)
		e.indexData(e.tasks[name], e.defs[name], nil)
		e.arm(e.tasks[name], time.Time{}, false)
		e.unready(e.tasks[name])
		delete(e.res, name)
		delete(e.tasks, name)
		delete(e.defs, name)
		delete(e.staged, name)
		delete(e.pending, name)
		delete(e.timed, name)
		e.out.Deleted = append(e.out.Deleted, name)
	}
	// Calendars before the tasks that name them, deleted after.
	users := e.defineCalendars(res)
	for _, def := range res.Tasks {
		def.PackStrings()
		name := def.Name // the maps keep the packed name, not the parsed one
		en := e.tasks[name]
		var old *job.Task
		if en == nil {
			en = &entry{hidx: -1, ridx: -1}
			e.tasks[name] = en
		} else {
			old = en.def
			e.count(old, en.st.Status, -1)
			if old.Type != def.Type {
				en.st = job.State{NextFire: en.st.NextFire} // deleted and inserted again as another type
			}
		}
		e.count(def, en.st.Status, 1)
		e.index(name, old, def)
		e.indexData(en, old, def)
		en.def, en.cond = def, nil
		e.reorderReady(en) // its priority may have changed
		if e.held(en) {
			// Its claims may have changed: dispatch looks at them again.
			for _, r := range e.unhold(en) {
				e.wake(r)
			}
			e.markReady(en)
		}
		if def.Type == job.Resource {
			e.defineResource(def)
		}
		if def.Condition != "" {
			en.cond = cond.MustParse(def.Condition)
		}
		e.defs[name] = def
		e.touchDefined(name)
		e.watch(name, en)
		if def.Extras().Overlap != job.OverlapAllow && def.Extras().Overlap != job.OverlapQueue && len(en.st.Pending) > 0 {
			en.st.Pending = nil // the task no longer lets triggers wait
			delete(e.pending, name)
		}
		if old == nil || !sameTrigger(old, def) {
			e.plan(en)
			e.replan(en)
		}
		// A waiting task is re-evaluated when its own condition changes.
		if en.st.Status == job.Waiting && e.evaluate(en) {
			e.setStatus(name, job.Ready, false)
		}
	}
	e.replanUsers(users)
	e.deleteCalendars(res)
	return nil
}

// index moves a task's entries in the dependency and bundle indexes from
// its old definition to its new one (either may be nil).
func (e *Engine) index(name string, old, def *job.Task) {
	if old != nil {
		for _, ref := range refs(old) {
			unlink(e.deps, ref, name)
		}
		for _, j := range old.Extras().Jobs {
			unlink(e.memberOf, j, name)
		}
		for _, c := range old.Calendars() {
			unlink(e.calUsers, c, name)
		}
		if old.Parent != "" {
			unlink(e.kids, old.Parent, name)
		}
	}
	if def != nil {
		e.link(name, refs(def), def)
	}
}

// link enters a task in the indexes: under each task its condition names
// (refs), each group it belongs to, and its bundle.
func (e *Engine) link(name string, refs []string, def *job.Task) {
	for _, ref := range refs {
		link(e.deps, ref, name)
	}
	for _, j := range def.Extras().Jobs {
		link(e.memberOf, j, name)
	}
	for _, c := range def.Calendars() {
		link(e.calUsers, c, name)
	}
	if def.Parent != "" {
		link(e.kids, def.Parent, name)
	}
}

func link(m map[string]map[string]struct{}, key, name string) {
	if m[key] == nil {
		m[key] = map[string]struct{}{}
	}
	m[key][name] = struct{}{}
}

func unlink(m map[string]map[string]struct{}, key, name string) {
	delete(m[key], name)
	if len(m[key]) == 0 {
		delete(m, key)
	}
}

func refs(t *job.Task) []string {
	if t.Condition == "" {
		return nil
	}
	return cond.MustParse(t.Condition).Names()
}

func sortedSet[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
