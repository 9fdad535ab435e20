package periods

import "slices"

// evaluate applies the rules of the state-machine table that need no
// input (1, 2, 3, 4, 7 and 13) to one node.
func (f *Forest) evaluate(n *node) {
	f.visits++
	if !n.state.Active() {
		return
	}
	// Rule 13: a closed parent whose children are all skipped.
	if n.kids > 0 && n.kidsSkipped == n.kids && f.closed(n) {
		f.skipFrom([]*node{n}, cascadeCause{rule: 13, cause: CauseScheduler})
		return
	}
	l := n.lvl
	switch n.state {
	case Embryo:
		if l.next() != n {
			return // one process advances strictly in key order
		}
		switch l.def.Blocking {
		case Dependencies:
			open, skipped := f.dependencies(n)
			if skipped {
				f.skipFrom([]*node{n}, cascadeCause{rule: 4, cause: CauseScheduler}) // rule 4
				return
			}
			if !open {
				return
			}
		case Children:
			if n.kidsDone != n.kids || !f.counterpartsFinished(n) {
				return
			}
		}
		switch {
		case !l.continuous():
			if f.due(n) {
				f.startRun(n, InProgress, 1, CauseScheduler, nil)
			}
		case f.finalizable(n):
			f.startRun(n, FinalRun, 3, CauseScheduler, nil)
		default:
			f.startRun(n, InProgress, 2, CauseScheduler, nil)
		}
	case InProgress:
		// Rule 7: an awaiting node gets its final run.
		if n.run == 0 && f.finalizable(n) {
			f.startRun(n, FinalRun, 7, CauseScheduler, nil)
		}
	}
}

// finalizable reports whether n is active, closed, and its children and
// counterparts are finished.
func (f *Forest) finalizable(n *node) bool {
	return n.state.Active() && f.closed(n) && n.kidsDone == n.kids && f.counterpartsFinished(n)
}

func (f *Forest) counterpartsFinished(n *node) bool {
	for _, t := range n.lvl.tree.deps {
		if c := counterpart(n, t); c != nil && !c.state.Finished() {
			return false
		}
	}
	return true
}

// dependencies reports whether every counterpart of n is processed or
// noop, and whether one is skipped.
func (f *Forest) dependencies(n *node) (open, skipped bool) {
	open = true
	for _, t := range n.lvl.tree.deps {
		c := counterpart(n, t)
		if c == nil {
			continue
		}
		switch c.state {
		case Processed, Noop:
		case Skipped:
			skipped = true
			open = false
		default:
			open = false
		}
	}
	return open, skipped
}

// setState moves n to state to (or, when to is its state, only logs the
// decision) and queues the nodes the change may concern: n itself, the
// process's next node, n's parent and n's dependants. In a dry run it
// only records the change.
func (f *Forest) setState(n *node, to State, rule int, cause Cause, run int64, x *logExtra) {
	from := n.state
	f.record(n, from, to, rule, cause, run, x)
	if from == to || f.dry {
		return
	}
	l := n.lvl
	l.counts[from]--
	l.counts[to]++
	n.state = to
	if p := f.parent(n); p != nil {
		changed := false
		if from.Finished() != to.Finished() {
			changed = true
			if to.Finished() {
				p.kidsDone++
			} else {
				p.kidsDone--
			}
		}
		if (from == Skipped) != (to == Skipped) {
			changed = true
			if to == Skipped {
				p.kidsSkipped++
			} else {
				p.kidsSkipped--
			}
		}
		if changed {
			f.enqueue(p)
		}
	}
	if to.Active() && !n.inHeap {
		n.inHeap = true
		l.heap.push(n)
	}
	f.enqueue(n)
	if from.Active() != to.Active() {
		if nx := l.next(); nx != nil {
			f.enqueue(nx)
		}
	}
	for _, t := range l.tree.dependants {
		if d := counterpart(n, t); d != nil {
			f.enqueue(d)
		}
	}
}

// record notes a transition in the output and, unless in a dry run, in
// the node's event log.
func (f *Forest) record(n *node, from, to State, rule int, cause Cause, run int64, x *logExtra) {
	f.out.Changes = append(f.out.Changes, Change{Process: n.lvl.name, Timeperiod: n.key, From: from, To: to,
		Rule: rule, Cause: cause, RunID: run})
	if f.dry {
		return
	}
	e := logEntry{at: f.now.UnixNano(), run: run, extra: x, rule: uint8(rule), cause: causeIndex(cause), from: from, to: to}
	if len(n.log) == MaxLog {
		copy(n.log, n.log[1:])
		n.log = n.log[:MaxLog-1]
	}
	if n.log == nil {
		n.log = make([]logEntry, 0, 2)
	}
	n.log = append(n.log, e)
	f.out.Log = append(f.out.Log, NodeLogEntry{Process: n.lvl.name, Timeperiod: n.key, Entry: e.export()})
	f.markDirty(n)
}

func (f *Forest) newRunID() int64 {
	if f.cfg.NextRunIDFunc != nil {
		id := f.cfg.NextRunIDFunc()
		f.lastRun = max(f.lastRun, id)
		return id
	}
	f.lastRun++
	return f.lastRun
}

// startRun requests a run of n and moves it to state to (which may be its
// state: a retry, a tick). A run requested while an operator's skip or
// reprocess is applied names the operator.
func (f *Forest) startRun(n *node, to State, rule int, cause Cause, x *logExtra) {
	id := f.newRunID()
	n.run = id
	n.runStatus = 1
	f.outstanding[id] = n
	f.setState(n, to, rule, cause, id, x)
	f.out.Effects = append(f.out.Effects, f.startEffect(n))
	r := f.runRecord(n, RunRequested)
	r.By = f.by
	f.out.Runs = append(f.out.Runs, r)
}

func (f *Forest) startEffect(n *node) StartRun {
	l := n.lvl
	return StartRun{RunID: n.run, Process: l.name, Tree: l.tree.name, Qualifier: l.q, Timeperiod: n.key,
		Start: l.q.Start(n.key), End: l.q.End(n.key), Final: n.state == FinalRun, Attempt: int(n.failures) + 1,
		Command: l.def.Command, Owner: l.def.Owner, Function: l.def.Function, External: l.def.Command == "" && l.def.Function == ""}
}

func (f *Forest) runRecord(n *node, s RunStatus) Run {
	return Run{ID: n.run, Process: n.lvl.name, Timeperiod: n.key, Status: s, Final: n.state == FinalRun,
		Attempt: int(n.failures) + 1, At: f.now}
}

// endRun forgets n's outstanding run, which ended with status s, ended
// by the operator endedBy names (empty if it ended by itself).
func (f *Forest) endRun(n *node, s RunStatus, endedBy string) {
	r := f.runRecord(n, s)
	r.EndedBy = endedBy
	f.out.Runs = append(f.out.Runs, r)
	delete(f.outstanding, n.run)
	n.run = 0
	n.runStatus = 0
	f.markDirty(n)
}

// cancelRun cancels n's outstanding run, if any: while an operator's skip
// or reprocess is applied, that operator ended it.
func (f *Forest) cancelRun(n *node) {
	if n.run == 0 || f.dry {
		return
	}
	f.out.Effects = append(f.out.Effects, CancelRun{RunID: n.run, Process: n.lvl.name, Timeperiod: n.key})
	f.endRun(n, RunStatus(OutcomeCanceled), f.by)
}

// current returns the node whose current run is id, nil if none.
func (f *Forest) current(process string, k Key, id int64) *node {
	l, ok := f.procs[process]
	if !ok || id == 0 {
		return nil
	}
	if n := l.at(k); n != nil && n.run == id {
		return n
	}
	return nil
}

func (f *Forest) started(ev RunStarted) {
	n := f.current(ev.Process, ev.Timeperiod, ev.RunID)
	if n == nil {
		f.out.Stale = true
		return
	}
	if n.runStatus != 2 {
		n.runStatus = 2
		f.out.Runs = append(f.out.Runs, f.runRecord(n, RunRunning))
		f.markDirty(n)
	}
}

// result applies rules 5, 6, 9, 10, 11 and 12.
func (f *Forest) result(ev RunResult) {
	n := f.current(ev.Process, ev.Timeperiod, ev.RunID)
	if n == nil {
		f.out.Stale = true
		return
	}
	var x *logExtra
	if ev.Message != "" {
		x = &logExtra{message: ev.Message}
	}
	final := n.state == FinalRun
	f.endRun(n, RunStatus(ev.Outcome), "")
	switch ev.Outcome {
	case OutcomeProcessed, OutcomeNoop:
		to := Processed
		if ev.Outcome == OutcomeNoop {
			to = Noop
		}
		switch {
		case final:
			f.setState(n, to, 9, CauseRun, ev.RunID, x)
		case !n.lvl.continuous() && f.finalizable(n):
			f.setState(n, to, 5, CauseRun, ev.RunID, x)
		default:
			// Rule 6: the node awaits; rule 7 gives it its final run.
			f.setState(n, InProgress, 6, CauseRun, ev.RunID, x)
			f.enqueue(n)
			f.skipTicks(n)
		}
	case OutcomeFailed:
		n.failures++
		if n.failures <= n.lvl.tree.maxFailures {
			f.startRun(n, n.state, 10, CauseRun, x)
		} else {
			f.skipFrom([]*node{n}, cascadeCause{rule: 11, cause: CauseRun, run: ev.RunID, message: ev.Message})
		}
	case OutcomeCanceled:
		f.skipFrom([]*node{n}, cascadeCause{rule: 12, cause: CauseRun, run: ev.RunID, message: ev.Message})
	}
}

// tick applies rule 8 to a continuous level: its open period, awaiting,
// runs again.
func (f *Forest) tick(l *level) {
	n := l.at(l.q.KeyAt(f.now))
	if n != nil && n.state == InProgress && n.run == 0 && !f.closed(n) {
		f.startRun(n, InProgress, 8, CauseTick, nil)
	}
}

// skipTicks moves the tick of a continuous node's level past now when
// the node starts to await: ticks count only for a node that awaits with
// no run (rule 8), and the loop is not woken for the ticks that pass
// while its run is outstanding (see NextWake), so those are left behind
// here rather than starting a run as soon as this one ended.
func (f *Forest) skipTicks(n *node) {
	l := n.lvl
	if l.continuous() && l.at(l.q.KeyAt(f.now)) == n && !l.nextTick.After(f.now) {
		l.nextTick = nextTick(f.now, l.every)
	}
}

// restart requests every outstanding run again, with its ID.
func (f *Forest) restart() {
	ns := make([]*node, 0, len(f.outstanding))
	for _, n := range f.outstanding {
		ns = append(ns, n)
	}
	slices.SortFunc(ns, func(a, b *node) int {
		if a.lvl.name != b.lvl.name {
			if a.lvl.name < b.lvl.name {
				return -1
			}
			return 1
		}
		return cmpKey(a.key, b.key)
	})
	for _, n := range ns {
		n.runStatus = 1
		f.record(n, n.state, n.state, 0, CauseRestart, n.run, nil)
		f.out.Effects = append(f.out.Effects, f.startEffect(n))
		f.out.Runs = append(f.out.Runs, f.runRecord(n, RunRequested))
	}
}
