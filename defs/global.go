package defs

import (
	"slices"
	"strings"

	"github.com/gnomon-sched/gnomon/cond"
	"github.com/gnomon-sched/gnomon/job"
)

// children returns the sorted names of the tasks whose parent is bundle.
func (a *applier) children(bundle string) []string {
	var out []string
	a.tasks.each(func(name string, t *job.Task) {
		if t.Parent == bundle {
			out = append(out, name)
		}
	})
	slices.Sort(out)
	return out
}

// global checks the G-rules on the resulting set. Only tasks this file
// touched can break G1-G6: every set the store holds passed these checks.
// A task whose type is unknown (its insert had none, or a wrong one) is
// taken to exist, and no rule that depends on its type is applied to what
// refers to it.
func (a *applier) global(deleted map[string]bool) {
	touched := make([]string, 0, len(a.lines))
	for name := range a.lines {
		if _, ok := a.tasks.get(name); ok {
			touched = append(touched, name)
		}
	}
	slices.Sort(touched)
	gone := func(name string) bool { _, ok := a.tasks.get(name); return !ok && deleted[name] }

	// G7, G8: what a deletion leaves dangling, reported at the delete.
	for _, name := range sortedKeys(deleted) {
		if !gone(name) {
			continue
		}
		d := a.deletes[name]
		act := &Action{Kind: d.kind, Name: name, Line: d.line}
		var users, kids, groups, takers []string
		a.tasks.each(func(other string, t *job.Task) {
			for _, c := range t.Extras().Claims {
				if c.Resource == name {
					takers = append(takers, other)
				}
			}
			if t.Parent == name {
				kids = append(kids, other)
			}
			if t.Type == job.Group && slices.Contains(t.Extras().Jobs, name) {
				groups = append(groups, other)
			}
			if t.Condition != "" && slices.Contains(cond.MustParse(t.Condition).Names(), name) {
				users = append(users, other)
			}
		})
		slices.Sort(users)
		slices.Sort(kids)
		slices.Sort(groups)
		slices.Sort(takers)
		if len(takers) > 0 {
			a.errorf(act, act.Line, "resource %s is taken by %s (remove it from their resources first)", name, strings.Join(takers, ", "))
		}
		for _, u := range users {
			a.errorf(act, act.Line, "task %s is referenced in condition of %s", name, u)
		}
		for _, g := range groups {
			a.errorf(act, act.Line, "task %s belongs to group %s (remove it from the group's jobs first)", name, g)
		}
		// Children of a task that was no bundle are reported at their
		// parent line, below.
		if len(kids) > 0 && d.typ == job.Bundle {
			a.errorf(act, act.Line, "bundle %s still has child tasks: %s", name, strings.Join(kids, ", "))
		}
	}

	for _, name := range touched {
		t, _ := a.tasks.get(name)
		for _, j := range t.Extras().Jobs {
			switch m, ok := a.tasks.get(j); {
			case !ok && gone(j):
				// Reported at the delete.
			case !ok && a.env.Taken(j) != "":
				// A timeperiod process: the group's alerts cover its runs.
			case !ok:
				a.errorAt(name, "jobs", "jobs: task %s does not exist", j)
			case m.Type == job.Group:
				a.errorAt(name, "jobs", "jobs: %s is a group (groups do not nest)", j)
			case m.Type == job.Resource:
				a.errorAt(name, "jobs", "jobs: %s is a resource, not a task", j)
			}
		}
		if t.Parent != "" {
			switch p, ok := a.tasks.get(t.Parent); {
			case !ok && gone(t.Parent) && a.deletes[t.Parent].typ == job.Bundle:
				// G8, reported at the delete.
			case !ok && gone(t.Parent):
				a.errorAt(name, "parent", "parent task %s not exist (deleted on line %d)", t.Parent, a.deletes[t.Parent].line)
			case !ok:
				a.errorAt(name, "parent", "parent task %s not exist", t.Parent)
			case p.Type != job.Bundle && p.Type != "":
				a.errorAt(name, "parent", "parent task should be bundle type")
			}
		}
		if t.Condition == "" {
			continue
		}
		e := cond.MustParse(t.Condition)
		for _, ref := range e.Names() {
			switch rt, ok := a.tasks.get(ref); {
			case ok && rt.Type == job.Group:
				a.errorAt(name, "condition", "condition refers to %s, which is a group, not a task", ref)
			case ok && rt.Type == job.Resource:
				a.errorAt(name, "condition", "condition refers to %s, which is a resource, not a task", ref)
			case ref == name:
				a.errorAt(name, "condition", "self reference is not allowed")
			case !ok && !gone(ref):
				a.errorAt(name, "condition", "condition refers to task %s which does not exist", ref)
			case t.Parent != "" && ref == t.Parent:
				a.errorAt(name, "condition", "condition of a task inside a bundle cannot reference its own bundle")
			}
		}
	}
	a.cycles(touched)
	a.calendarsGlobal(touched)
	a.resourcesGlobal(touched, gone)
}

// cycles reports dependency cycles (rule G6) through su/fa clauses and
// bundle membership that involve a touched task, each cycle once.
func (a *applier) cycles(touched []string) {
	// Bundle membership is an edge from a bundle to its children; the
	// children are found (in one pass over every task) only if the search
	// reaches a bundle.
	var kids map[string][]string
	edges := func(name string) []string {
		t, _ := a.tasks.get(name)
		var out []string
		if t.Condition != "" {
			for _, d := range cond.MustParse(t.Condition).Deps() {
				if _, ok := a.tasks.get(d); ok && d != name {
					out = append(out, d)
				}
			}
		}
		if t.Type == job.Bundle {
			if kids == nil {
				kids = map[string][]string{}
				a.tasks.each(func(n string, t *job.Task) {
					if t.Parent != "" {
						kids[t.Parent] = append(kids[t.Parent], n)
					}
				})
			}
			out = append(out, kids[name]...)
		}
		slices.Sort(out)
		return out
	}
	const (
		white = iota
		grey
		black
	)
	color := map[string]int{}
	var stack []string
	reported := map[string]bool{}
	var visit func(string)
	visit = func(n string) {
		color[n] = grey
		stack = append(stack, n)
		for _, m := range edges(n) {
			switch color[m] {
			case white:
				visit(m)
			case grey:
				i := slices.Index(stack, m)
				cyc := append(slices.Clone(stack[i:]), m)
				key := canonicalCycle(cyc)
				if reported[key] {
					continue
				}
				reported[key] = true
				at := cyc[0]
				for _, c := range cyc {
					if _, ok := a.lines[c]; ok {
						at = c
						break
					}
				}
				a.errorAt(at, "condition", "cyclic dependency: %s", strings.Join(cyc, " -> "))
			}
		}
		stack = stack[:len(stack)-1]
		color[n] = black
	}
	for _, n := range touched {
		if color[n] == white {
			visit(n)
		}
	}
}

// canonicalCycle names a cycle independently of where it was entered.
func canonicalCycle(cyc []string) string {
	nodes := slices.Clone(cyc[:len(cyc)-1])
	slices.Sort(nodes)
	return strings.Join(nodes, ",")
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
