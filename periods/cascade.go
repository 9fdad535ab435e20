package periods

// cascadeCause is what started a cascade: the rule and cause logged on
// its root, the operator and the run's message if any, and the run whose
// result started it.
type cascadeCause struct {
	rule    int
	cause   Cause
	by      string
	message string
	run     int64
}

// newStamp starts a cascade's visited set.
func (f *Forest) newStamp() uint32 {
	f.stamp++
	if f.stamp == 0 { // wrapped: forget every old mark
		for _, l := range f.levelOrder {
			for _, n := range l.nodes {
				n.mark = 0
			}
		}
		f.stamp = 1
	}
	return f.stamp
}

// skipFrom skips the roots and propagates (§5): every node reached
// through children and dependants, with a visited set shared by the
// roots, is skipped if active and its run canceled. It never goes up: a
// parent follows by rule 13 once its own period has closed.
//
// The root's entry carries the rule that started the cascade (14 or 15 for
// an operator, 4, 11, 12 or 13 otherwise); the nodes reached log the same
// rule with cause skip and the root as origin.
func (f *Forest) skipFrom(roots []*node, c cascadeCause) {
	stamp := f.newStamp()
	for _, r := range roots {
		if r.mark == stamp {
			continue // reached already from an earlier root
		}
		rx := &logExtra{by: c.by, message: c.message}
		if c.by == "" && c.message == "" {
			rx = nil
		}
		ref := r.ref()
		cx := &logExtra{by: c.by, origin: &ref}
		work := append(f.cascade[:0], r)
		r.mark = stamp
		for i := 0; i < len(work); i++ {
			n := work[i]
			f.visits++
			switch {
			case n == r && n.state.Active():
				run := c.run
				if n.run != 0 {
					run = n.run
				}
				f.cancelRun(n)
				f.setState(n, Skipped, c.rule, c.cause, run, rx)
			case n == r && c.cause == CauseOperator:
				f.setState(n, n.state, 15, CauseOperator, 0, rx) // logged, unchanged
			case n != r && n.state.Active():
				run := n.run
				f.cancelRun(n)
				f.setState(n, Skipped, c.rule, CauseSkip, run, cx)
			}
			for _, ch := range f.children(n) {
				if ch.mark != stamp {
					ch.mark = stamp
					work = append(work, ch)
				}
			}
			for _, t := range n.lvl.tree.dependants {
				if d := counterpart(n, t); d != nil && d.mark != stamp {
					d.mark = stamp
					work = append(work, d)
				}
			}
		}
		clear(work)
		f.cascade = work[:0]
	}
}

// reprocessFrom reprocesses root and cascades (§6): every node reached
// through parents and dependants, with a visited set, goes back to embryo
// with no failures and its run canceled (rule 16), unless it is embryo
// already. Children and the trees root depends on are never touched. The
// walk is depth first: a node, then its parent chain, then its
// dependants.
func (f *Forest) reprocessFrom(root *node, by string) {
	stamp := f.newStamp()
	var rx *logExtra
	if by != "" {
		rx = &logExtra{by: by}
	}
	ref := root.ref()
	cx := &logExtra{by: by, origin: &ref}
	work := append(f.cascade[:0], root)
	for len(work) > 0 {
		n := work[len(work)-1]
		work = work[:len(work)-1]
		if n.mark == stamp {
			continue
		}
		n.mark = stamp
		f.visits++
		if n.state != Embryo {
			run := n.run
			f.cancelRun(n)
			if !f.dry {
				n.failures = 0
			}
			if n == root {
				f.setState(n, Embryo, 16, CauseOperator, run, rx)
			} else {
				f.setState(n, Embryo, 16, CauseReprocess, run, cx)
			}
		}
		deps := n.lvl.tree.dependants
		for i := len(deps) - 1; i >= 0; i-- {
			if d := counterpart(n, deps[i]); d != nil && d.mark != stamp {
				work = append(work, d)
			}
		}
		if p := f.parent(n); p != nil && p.mark != stamp {
			work = append(work, p)
		}
	}
	clear(work[:cap(work)])
	f.cascade = work[:0]
}

// skip applies an operator's Skip.
func (f *Forest) skip(ev Skip) {
	roots := make([]*node, 0, len(ev.Timeperiods))
	for _, tp := range ev.Timeperiods {
		n, _ := f.lookup(ev.Process, tp, f.now, true) // checked by Apply; built by now
		roots = append(roots, n)
	}
	f.skipFrom(roots, cascadeCause{rule: 14, cause: CauseOperator, by: ev.By})
}

// reprocess applies an operator's Reprocess.
func (f *Forest) reprocess(ev Reprocess) {
	n, _ := f.lookup(ev.Process, ev.Timeperiod, f.now, true)
	f.reprocessFrom(n, ev.By)
}
