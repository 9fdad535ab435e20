package engine

import (
	"slices"

	"github.com/gnomon-sched/gnomon/job"
)

// Reached returns the tasks an action on the named tasks can touch, the
// named ones included, sorted. A read shows a bundle's members with it,
// and a group's jobs, so with acted false the answer is the tasks and,
// below each bundle or group, its members. An action (a start, an abort, a forced status, a
// backfill, a data event, a new definition) can also start, end or
// settle others, so with acted true the answer follows every way a
// change of status travels, from each task reached: a bundle to its
// members (a bundle's start starts them, its abort kills them), a member
// to its bundle (its outcome settles the bundle's run), and a task to
// those whose condition names it. Names the engine does not hold are
// returned as given.
func (e *Engine) Reached(names []string, acted bool) []string {
	seen := map[string]bool{}
	work := slices.Clone(names)
	for len(work) > 0 {
		n := work[len(work)-1]
		work = work[:len(work)-1]
		if seen[n] {
			continue
		}
		seen[n] = true
		for c := range e.kids[n] {
			work = append(work, c)
		}
		if def := e.defs[n]; def != nil && def.Type == job.Group {
			work = append(work, def.Extras().Jobs...) // a group shows its jobs' alerts
		}
		if !acted {
			continue
		}
		for d := range e.deps[n] {
			work = append(work, d)
		}
		if def := e.defs[n]; def != nil && def.Parent != "" {
			work = append(work, def.Parent)
		}
	}
	return sortedSet(seen)
}

// Upstream returns the tasks a task's condition names, and those their
// conditions name, all the way up, sorted: what an explanation of why it
// waits (Why) shows the status and reasons of.
func (e *Engine) Upstream(name string) []string {
	seen := map[string]bool{}
	work := []string{name}
	for len(work) > 0 {
		n := work[len(work)-1]
		work = work[:len(work)-1]
		if def := e.defs[n]; def != nil {
			for _, ref := range refs(def) {
				if !seen[ref] {
					seen[ref] = true
					work = append(work, ref)
				}
			}
		}
	}
	return sortedSet(seen)
}

// DataReached returns the configurations a data event of that type and
// resource would be offered to, sorted: those it can validate and
// trigger.
func (e *Engine) DataReached(typ job.DataType, resource string) []string {
	set := map[string]bool{}
	for _, r := range e.dataIdx.Match(typ, resource, nil) {
		set[r.Config] = true
	}
	return sortedSet(set)
}
