package periods

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"
)

// resolved settings of a tree.
type resolved struct {
	start       Key
	lag         int64
	maxFailures int32
}

func resolve(file, t Settings) resolved {
	r := resolved{start: file.StartTimeperiod, lag: DefaultLagMinutes * 60, maxFailures: DefaultMaxFailures}
	if t.StartTimeperiod != 0 {
		r.start = t.StartTimeperiod
	}
	if file.LagMinutes != nil {
		r.lag = int64(*file.LagMinutes) * 60
	}
	if t.LagMinutes != nil {
		r.lag = int64(*t.LagMinutes) * 60
	}
	if file.MaxFailures != nil {
		r.maxFailures = int32(*file.MaxFailures)
	}
	if t.MaxFailures != nil {
		r.maxFailures = int32(*t.MaxFailures)
	}
	return r
}

// Others returns what the forest defines outside a file, as Parse asks
// it: the trees and the processes of its other files (Options.TreeFunc
// and ProcessFunc; the other fields are nil). A file parsed with them is
// a plan Apply takes (Define.Plan) against the same state.
func (f *Forest) Others(file string) Options {
	return Options{
		TreeFunc: func(name string) (string, []string, bool) {
			t, ok := f.trees[name]
			if !ok || t.file == file {
				return "", nil, false
			}
			return t.file, t.def.DependentOn, true
		},
		ProcessFunc: func(name string) (string, string, bool) {
			l, ok := f.procs[name]
			if !ok || l.tree.file == file {
				return "", "", false
			}
			return l.tree.name, l.tree.file, true
		},
	}
}

// parseOptions are the Options a Define's Text is parsed with: the other
// files', and Config's lookups.
func (f *Forest) parseOptions(file string) Options {
	o := f.Others(file)
	o.NameTakenFunc, o.FunctionKnownFunc, o.OwnerFunc = f.cfg.NameTakenFunc, f.cfg.FunctionKnownFunc, f.cfg.OwnerFunc
	return o
}

// Check validates a Define against the forest as Apply would, and changes
// nothing: the error is the one Apply would return.
func (f *Forest) Check(ev Define) error {
	_, err := f.planDefine(ev, f.now)
	return err
}

// planDefine checks a Define against the forest's state, and returns its
// plan: Define.Plan, or Define.Text parsed when there is none.
func (f *Forest) planDefine(ev Define, now time.Time) (*File, error) {
	if ev.File == "" {
		return nil, fmt.Errorf("define: no file name: %w", ErrInvalid)
	}
	file := ev.Plan
	if file == nil {
		// Text alone (a journal entry of an earlier build): parsed as then.
		var err error
		if file, err = Parse(ev.File, []byte(ev.Text), f.parseOptions(ev.File)); err != nil {
			return nil, err
		}
	}
	var probs Problems
	for i, t := range file.Trees {
		bottom := t.Levels[len(t.Levels)-1].Qualifier
		start := resolve(file.Settings, t.Settings).start
		if old, ok := f.trees[t.Name]; ok && old.start <= start {
			continue // it builds nothing new: a tree may grow past the limit
		}
		if n := bottom.Sub(bottom.KeyAt(now), bottom.truncate(start)) + 1; n > int64(f.cfg.MaxPeriods) {
			probs = append(probs, Problem{File: ev.File, Path: fmt.Sprintf("trees[%d]", i),
				Msg: fmt.Sprintf("starting at %s, the %s level would have %d periods already, more than %d", start, bottom, n, f.cfg.MaxPeriods)})
		}
	}
	if old := f.files[ev.File]; old != nil {
		kept := map[string]bool{}
		for _, t := range file.Trees {
			kept[t.Name] = true
		}
		for _, ot := range old.Trees {
			if kept[ot.Name] {
				continue
			}
			for _, d := range f.trees[ot.Name].dependants {
				if d.file != ev.File {
					probs = append(probs, Problem{File: ev.File, Path: "trees",
						Msg: fmt.Sprintf("tree %q is no longer defined, but tree %q of %s depends on it", ot.Name, d.name, d.file)})
				}
			}
		}
	}
	if len(probs) > 0 {
		probs.sort()
		return nil, probs
	}
	return file, nil
}

// define applies a checked file.
func (f *Forest) define(name string, file *File) {
	inFile := map[string]bool{}
	for _, t := range file.Trees {
		inFile[t.Name] = true
	}
	if old := f.files[name]; old != nil {
		for _, ot := range old.Trees {
			if !inFile[ot.Name] {
				f.dropTree(f.trees[ot.Name])
			}
		}
	}
	// The trees whose definition or settings changed, and the levels of
	// theirs that do not survive: a process gone, moved to another tree
	// or given another qualifier.
	var update []int
	for i, nt := range file.Trees {
		t := f.trees[nt.Name]
		res := resolve(file.Settings, nt.Settings)
		if t != nil && reflect.DeepEqual(t.def, nt) && res == (resolved{t.start, t.lag, t.maxFailures}) {
			continue
		}
		update = append(update, i)
		if t == nil {
			continue
		}
		for _, l := range t.levels {
			if !slices.ContainsFunc(nt.Levels, func(nl Level) bool { return nl.Process == l.name && nl.Qualifier == l.q }) {
				f.dropLevel(l)
			}
		}
	}
	var changed []*tree
	for _, i := range update {
		nt := file.Trees[i]
		t := f.trees[nt.Name]
		if t == nil {
			t = &tree{name: nt.Name, file: name}
			f.trees[nt.Name] = t
		}
		res := resolve(file.Settings, nt.Settings)
		t.def, t.start, t.lag, t.maxFailures = nt, res.start, res.lag, res.maxFailures
		t.levels = t.levels[:0:0]
		t.byQ = [Yearly + 1]*level{}
		for j, nl := range nt.Levels {
			l := f.procs[nl.Process]
			if l == nil || l.tree != t {
				l = &level{tree: t, name: nl.Process, q: nl.Qualifier}
				f.procs[nl.Process] = l
			}
			l.pos, l.def = j, nl
			f.setTicks(l)
			t.levels = append(t.levels, l)
			t.byQ[l.q] = l
			f.rebase(l)
		}
		f.out.Trees = append(f.out.Trees, t.name)
		changed = append(changed, t)
	}
	if len(file.Trees) > 0 {
		f.files[name] = file
	} else {
		delete(f.files, name)
	}
	f.relink()
	for _, t := range changed {
		f.buildTree(t)
		f.recount(t)
	}
	// Gates read counterparts: the changed trees and their dependants
	// see their nodes again.
	again := map[*tree]bool{}
	for _, t := range changed {
		again[t] = true
		for _, d := range t.dependants {
			again[d] = true
		}
	}
	for _, l := range f.levelOrder {
		if again[l.tree] {
			f.enqueueActive(l)
		}
	}
}

// setTicks sets a level's tick after its definition: a continuous level
// keeps its schedule or starts one, a discrete one has none.
func (f *Forest) setTicks(l *level) {
	if !l.continuous() {
		l.every, l.nextTick = 0, time.Time{}
		return
	}
	every := l.def.Every
	if every == 0 {
		every = DefaultEvery
	}
	if s := int64(every / time.Second); s != l.every || l.nextTick.IsZero() {
		l.every = s
		l.nextTick = nextTick(f.now, s)
	}
}

// enqueueActive queues the active nodes of a level, in key order.
func (f *Forest) enqueueActive(l *level) {
	var act []*node
	for _, n := range l.heap {
		if n.state.Active() {
			act = append(act, n)
		}
	}
	slices.SortFunc(act, func(a, b *node) int { return cmpKey(a.key, b.key) })
	for _, n := range act {
		f.enqueue(n)
	}
}

// rebase fits a level's nodes to its tree's start: nodes before it are
// dropped, and an earlier start adds embryo nodes in front.
func (f *Forest) rebase(l *level) {
	first := l.q.truncate(l.tree.start)
	if len(l.nodes) == 0 {
		l.first = first
		return
	}
	switch {
	case first > l.first:
		i := min(l.q.Sub(first, l.first), int64(len(l.nodes)))
		for _, n := range l.nodes[:i] {
			f.dropNode(n)
		}
		l.nodes = slices.Clone(l.nodes[i:])
		f.out.Dropped = append(f.out.Dropped, Dropped{Process: l.name, Before: first})
	case first < l.first:
		m := l.q.Sub(l.first, first)
		ns := make([]*node, 0, int64(len(l.nodes))+m)
		for k := first; k < l.first; k = l.q.Next(k) {
			n := &node{lvl: l, key: k, end: l.q.endUnix(k)}
			ns = append(ns, n)
			f.markDirty(n)
		}
		l.nodes = append(ns, l.nodes...)
	}
	l.first = first
	l.heap = nil
	for _, n := range l.nodes {
		n.inHeap = n.state.Active()
		if n.inHeap {
			l.heap.push(n)
		}
	}
}

// dropNode cancels the run of a node that goes away.
func (f *Forest) dropNode(n *node) {
	if n.run == 0 {
		return
	}
	f.out.Effects = append(f.out.Effects, CancelRun{RunID: n.run, Process: n.lvl.name, Timeperiod: n.key})
	f.out.Runs = append(f.out.Runs, f.runRecord(n, RunStatus(OutcomeCanceled)))
	delete(f.outstanding, n.run)
	n.run, n.runStatus = 0, 0
}

func (f *Forest) dropLevel(l *level) {
	for _, n := range l.nodes {
		f.dropNode(n)
	}
	l.nodes, l.heap = nil, nil
	delete(f.procs, l.name)
	f.out.Dropped = append(f.out.Dropped, Dropped{Process: l.name})
}

func (f *Forest) dropTree(t *tree) {
	for _, l := range t.levels {
		f.dropLevel(l)
	}
	delete(f.trees, t.name)
	f.out.Removed = append(f.out.Removed, t.name)
}

// relink rebuilds the orders and the links between trees.
func (f *Forest) relink() {
	f.treeOrder = f.treeOrder[:0]
	f.levelOrder = f.levelOrder[:0]
	for _, t := range f.trees {
		f.treeOrder = append(f.treeOrder, t)
		t.deps, t.dependants = nil, nil
	}
	slices.SortFunc(f.treeOrder, func(a, b *tree) int { return strings.Compare(a.name, b.name) })
	for _, t := range f.treeOrder {
		for _, d := range t.def.DependentOn {
			if dt, ok := f.trees[d]; ok {
				t.deps = append(t.deps, dt)
				dt.dependants = append(dt.dependants, t) // in name order: t walks in order
			}
		}
		slices.SortFunc(t.deps, func(a, b *tree) int { return strings.Compare(a.name, b.name) })
		f.levelOrder = append(f.levelOrder, t.levels...)
	}
	slices.SortFunc(f.levelOrder, func(a, b *level) int { return strings.Compare(a.name, b.name) })
}

// recount sets the state counts of a tree's levels and the child counts
// of its nodes from scratch.
func (f *Forest) recount(t *tree) {
	for _, l := range t.levels {
		l.counts = [numStates]int{}
		for _, n := range l.nodes {
			l.counts[n.state]++
			n.kids, n.kidsDone, n.kidsSkipped = 0, 0, 0
		}
	}
	for _, l := range t.levels[1:] {
		for _, n := range l.nodes {
			p := f.parent(n)
			if p == nil {
				continue
			}
			p.kids++
			if n.state.Finished() {
				p.kidsDone++
			}
			if n.state == Skipped {
				p.kidsSkipped++
			}
		}
	}
}

func (f *Forest) checkRemove(name string) error {
	t, ok := f.trees[name]
	if !ok {
		return fmt.Errorf("remove tree %s: %w", name, ErrNotFound)
	}
	if len(t.dependants) > 0 {
		names := make([]string, len(t.dependants))
		for i, d := range t.dependants {
			names[i] = d.name
		}
		return fmt.Errorf("remove tree %s: %s depend on it: %w", name, strings.Join(names, ", "), ErrRefused)
	}
	return nil
}

// remove removes a tree, and takes it out of its file's definition.
func (f *Forest) remove(name string) {
	t := f.trees[name]
	f.dropTree(t)
	old := f.files[t.file]
	nf := &File{Settings: old.Settings}
	for _, ot := range old.Trees {
		if ot.Name != name {
			nf.Trees = append(nf.Trees, ot)
		}
	}
	if len(nf.Trees) > 0 {
		f.files[t.file] = nf
	} else {
		delete(f.files, t.file)
	}
	f.relink()
}
