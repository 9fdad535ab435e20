package periods

import "fmt"

// Backfill is an operator's reprocess of a range of periods of one
// process: each node of its level from From to To, both included (keys
// cast to the level), that is finished (processed, noop or skipped) is
// reprocessed with the cascade of a Reprocess (rule 16). A node still
// active (queued or running) is left as it is, so that a backfill asked
// again while the first is under way changes nothing; once its nodes
// have finished, a backfill reprocesses them again. Periods without a node
// (before the tree's start, after the current period) are not in the
// range. DryRun as for Skip.
type Backfill struct {
	Process string `json:"process"`
	From    string `json:"from"`
	To      string `json:"to"`
	By      string `json:"by,omitempty"`
	DryRun  bool   `json:"dry_run,omitempty"`
}

func (Backfill) kind() string { return "backfill" }

// MaxBackfill bounds the periods one Backfill may span.
const MaxBackfill = 10_000

// BackfillPeriod is what a Backfill did with one period of its range:
// State is the node's state before, and Reprocessed whether it was (or,
// in a dry run, would be) reprocessed.
type BackfillPeriod struct {
	Timeperiod  Key   `json:"timeperiod"`
	State       State `json:"state"`
	Reprocessed bool  `json:"reprocessed"`
}

// backfillRange checks a Backfill and returns its level and the keys of
// its range, cast to the level.
func (f *Forest) backfillRange(ev Backfill) (*level, Key, Key, error) {
	l, ok := f.procs[ev.Process]
	if !ok {
		return nil, 0, 0, fmt.Errorf("backfill: process %s: %w", ev.Process, ErrNotFound)
	}
	var keys [2]Key
	for i, s := range []string{ev.From, ev.To} {
		k, err := ParseKey(s)
		if err == nil {
			k, err = l.q.Cast(k)
		}
		if err != nil {
			return nil, 0, 0, fmt.Errorf("backfill %s: %v: %w", ev.Process, err, ErrInvalid)
		}
		keys[i] = k
	}
	from, to := keys[0], keys[1]
	switch {
	case to < from:
		return nil, 0, 0, fmt.Errorf("backfill %s: to %s is before from %s: %w", ev.Process, to, from, ErrInvalid)
	case l.q.Sub(to, from) >= MaxBackfill:
		return nil, 0, 0, fmt.Errorf("backfill %s: more than %d periods from %s to %s: %w", ev.Process, MaxBackfill, from, to, ErrInvalid)
	}
	return l, from, to, nil
}

// backfill applies a Backfill: every finished node of the range is
// reprocessed, in key order.
func (f *Forest) backfill(ev Backfill) {
	l, from, to, _ := f.backfillRange(ev) // checked by Apply
	lo, hi := l.span(from, l.q.Next(to))
	var roots []*node
	for _, n := range l.nodes[lo:hi] {
		p := BackfillPeriod{Timeperiod: n.key, State: n.state, Reprocessed: n.state.Finished()}
		f.out.Backfill = append(f.out.Backfill, p)
		if p.Reprocessed {
			roots = append(roots, n)
		}
	}
	for _, n := range roots {
		f.reprocessFrom(n, ev.By)
	}
}
