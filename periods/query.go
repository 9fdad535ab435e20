package periods

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// TreeInfo describes one tree, for listings.
type TreeInfo struct {
	Name string `json:"name"`
	File string `json:"file"`
	// DependentOn and Dependants name the trees this one depends on and
	// those that depend on it, sorted.
	DependentOn []string `json:"dependent_on,omitempty"`
	Dependants  []string `json:"dependants,omitempty"`
	// The settings in effect.
	Start       Key         `json:"start"`
	LagMinutes  int         `json:"lag_minutes"`
	MaxFailures int         `json:"max_failures"`
	Levels      []LevelInfo `json:"levels"`
}

// LevelInfo describes one level of a tree.
type LevelInfo struct {
	Level
	// Counts holds how many nodes are in each state (states with none
	// left out).
	Counts map[State]int `json:"counts"`
	// Next is the key of the level's earliest active node, zero if none.
	Next Key `json:"next,omitempty"`
	// NextTick is the next tick of a continuous level.
	NextTick time.Time `json:"next_tick,omitzero"`
}

// Trees describes every tree, by name.
func (f *Forest) Trees() []TreeInfo {
	out := make([]TreeInfo, 0, len(f.treeOrder))
	for _, t := range f.treeOrder {
		out = append(out, f.treeInfo(t))
	}
	return out
}

// Tree describes one tree.
func (f *Forest) Tree(name string) (TreeInfo, bool) {
	t, ok := f.trees[name]
	if !ok {
		return TreeInfo{}, false
	}
	return f.treeInfo(t), true
}

func (f *Forest) treeInfo(t *tree) TreeInfo {
	ti := TreeInfo{Name: t.name, File: t.file, Start: t.start, LagMinutes: int(t.lag / 60), MaxFailures: int(t.maxFailures)}
	for _, d := range t.deps {
		ti.DependentOn = append(ti.DependentOn, d.name)
	}
	for _, d := range t.dependants {
		ti.Dependants = append(ti.Dependants, d.name)
	}
	for _, l := range t.levels {
		li := LevelInfo{Level: l.def, Counts: map[State]int{}, NextTick: l.nextTick}
		for s, c := range l.counts {
			if c > 0 {
				li.Counts[State(s)] = c
			}
		}
		if len(l.heap) > 0 && l.heap[0].state.Active() { // stale tops are gone after each Apply
			li.Next = l.heap[0].key
		}
		ti.Levels = append(ti.Levels, li)
	}
	return ti
}

// Files names the files that define trees, sorted.
func (f *Forest) Files() []string { return slices.Sorted(maps.Keys(f.files)) }

// Definition returns a file as the forest holds it, for export with
// Format. After a Remove it lacks the removed tree. The caller must not
// modify it.
func (f *Forest) Definition(file string) (*File, bool) {
	d, ok := f.files[file]
	return d, ok
}

// Process returns the tree and the definition of a process.
func (f *Forest) Process(name string) (tree string, def Level, ok bool) {
	l, ok := f.procs[name]
	if !ok {
		return "", Level{}, false
	}
	return l.tree.name, l.def, true
}

// Nodes returns the nodes of a process whose keys are in [from, to], in
// order; a zero bound is open.
func (f *Forest) Nodes(process string, from, to Key) ([]Node, error) {
	l, ok := f.procs[process]
	if !ok {
		return nil, fmt.Errorf("nodes of %s: process %w", process, ErrNotFound)
	}
	lo, hi := int64(0), int64(len(l.nodes))
	for i, b := range []Key{from, to} {
		if b == 0 || len(l.nodes) == 0 {
			continue
		}
		k, err := l.q.Cast(b)
		if err != nil {
			return nil, fmt.Errorf("nodes of %s: %v: %w", process, err, ErrInvalid)
		}
		if i == 0 {
			lo = max(lo, l.q.Sub(k, l.first))
		} else {
			hi = min(hi, l.q.Sub(k, l.first)+1)
		}
	}
	var out []Node
	for i := lo; i < hi; i++ {
		out = append(out, l.nodes[i].view())
	}
	return out, nil
}

// Outstanding returns the nodes with a requested or running run, by
// process and timeperiod.
func (f *Forest) Outstanding() []Node {
	out := make([]Node, 0, len(f.outstanding))
	for _, n := range f.outstanding {
		out = append(out, n.view())
	}
	slices.SortFunc(out, func(a, b Node) int {
		if c := strings.Compare(a.Process, b.Process); c != 0 {
			return c
		}
		return cmpKey(a.Timeperiod, b.Timeperiod)
	})
	return out
}

// Node returns one node with its surroundings. The timeperiod may be
// given at a finer precision than the process's level: it is cast.
func (f *Forest) Node(process, timeperiod string) (NodeDetail, error) {
	l, ok := f.procs[process]
	if !ok {
		return NodeDetail{}, fmt.Errorf("node %s: process %w", process, ErrNotFound)
	}
	k, err := ParseKey(timeperiod)
	if err == nil {
		k, err = l.q.Cast(k)
	}
	if err != nil {
		return NodeDetail{}, fmt.Errorf("node %s: %v: %w", process, err, ErrInvalid)
	}
	n := l.at(k)
	if n == nil {
		return NodeDetail{}, fmt.Errorf("node %s@%s: %w", process, k, ErrNotFound)
	}
	d := NodeDetail{Node: n.view(), Start: l.q.Start(k), End: l.q.End(k), Awaiting: n.state == InProgress && n.run == 0,
		Log: exportLog(n.log)}
	if p := f.parent(n); p != nil {
		v := p.view()
		d.Parent = &v
	}
	for _, c := range f.children(n) {
		d.Children = append(d.Children, c.view())
	}
	for _, t := range l.tree.deps {
		if c := counterpart(n, t); c != nil {
			d.Counterparts = append(d.Counterparts, c.view())
		}
	}
	for _, t := range l.tree.dependants {
		if c := counterpart(n, t); c != nil {
			d.Dependants = append(d.Dependants, c.view())
		}
	}
	return d, nil
}

// Reached returns the processes an operator's action on a process can
// change, sorted: those of its tree (skips and reprocesses cascade up
// and down its levels, an outcome lets the next level run) and those of
// every tree that depends on it, directly or not. An unknown process
// reaches only itself.
func (f *Forest) Reached(process string) []string {
	l, ok := f.procs[process]
	if !ok {
		return []string{process}
	}
	var out []string
	seen := map[*tree]bool{}
	work := []*tree{l.tree}
	for len(work) > 0 {
		t := work[len(work)-1]
		work = work[:len(work)-1]
		if seen[t] {
			continue
		}
		seen[t] = true
		for _, l := range t.levels {
			out = append(out, l.name)
		}
		work = append(work, t.dependants...)
	}
	slices.Sort(out)
	return out
}

// TreeProcesses returns the processes of a tree's levels, coarsest
// first, and whether the tree exists.
func (f *Forest) TreeProcesses(name string) ([]string, bool) {
	t, ok := f.trees[name]
	if !ok {
		return nil, false
	}
	out := make([]string, len(t.levels))
	for i, l := range t.levels {
		out[i] = l.name
	}
	return out, true
}

// Shown returns the processes a read of a process's nodes shows, sorted:
// those of its tree (a node's parent and children) and of the trees it
// depends on or that depend on it (a node's counterparts and
// dependants). An unknown process shows only itself.
func (f *Forest) Shown(process string) []string {
	l, ok := f.procs[process]
	if !ok {
		return []string{process}
	}
	var out []string
	for _, t := range slices.Concat([]*tree{l.tree}, l.tree.deps, l.tree.dependants) {
		for _, l := range t.levels {
			out = append(out, l.name)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
