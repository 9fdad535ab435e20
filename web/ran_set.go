package web

import (
	"context"
	"slices"

	"github.com/gnomon-sched/gnomon/store"
)

// The batches a timeline asks the store about the tasks it walks in.
const (
	// ranFirst is the tasks of the first batch; each batch after asks
	// about twice as many as the one before, up to ranMost.
	ranFirst = 256
	ranMost  = 4096
	// ranBudget is the most tasks asked about by name: a walk that goes
	// on past it passes many tasks without a row, and the set then reads
	// the tasks run in the whole range at once.
	ranBudget = 8192
	// ranLook bounds the tasks a batch looks at, in tasks it may ask
	// about: a walk whose tasks mostly have planned fires asks about few.
	ranLook = 4
)

// runTasker reads the tasks that have runs a query selects.
type runTasker interface {
	RunTasks(ctx context.Context, q store.RunPageQuery) ([]string, error)
}

// ranSet tells, for the tasks a walk visits in name order, which have a
// run its query selects. It asks the store about the tasks ahead of the
// walk a batch at a time, each task through its own runs, so that what it
// costs follows the tasks walked, not the runs in the range: a week of a
// busy server holds hundreds of thousands, and a page walks a few
// thousand tasks. Past its budget of tasks the walk is long and its rows
// are few, and the set reads the tasks run in the whole range at once,
// which costs the runs in the range instead: by the queries whole, which
// together select what probe does.
type ranSet struct {
	st    runTasker
	probe store.RunPageQuery
	whole []store.RunPageQuery
	// aheadFunc returns the tasks the walk will ask about from the one
	// named, that one first, at most n, and the last task it looked at
	// for them ("" when it looked to the walk's end): the walk asks about
	// none of the tasks between that it left out.
	aheadFunc func(from string, n int) (names []string, last string)

	batch, most, budget int

	ran   []string // the tasks that ran, from the walk's place on, in name order
	upto  string   // the last task ran answers for
	all   bool     // ran answers for every task after upto too
	asked int      // the tasks asked about by name
}

func newRanSet(st runTasker, probe store.RunPageQuery, whole []store.RunPageQuery, ahead func(string, int) ([]string, string)) *ranSet {
	return &ranSet{st: st, probe: probe, whole: whole, aheadFunc: ahead, batch: ranFirst, most: ranMost, budget: ranBudget}
}

// has reports whether the task named has a run: the walk asks in name
// order.
func (s *ranSet) has(ctx context.Context, name string) (bool, error) {
	if !s.all && (s.asked == 0 || name > s.upto) {
		if err := s.load(ctx, name); err != nil {
			return false, err
		}
	}
	for len(s.ran) > 0 && s.ran[0] < name {
		s.ran = s.ran[1:]
	}
	return len(s.ran) > 0 && s.ran[0] == name, nil
}

// load reads the tasks that ran among the next batch from the one named,
// or in the whole range once the budget is spent.
func (s *ranSet) load(ctx context.Context, from string) error {
	var names []string
	last := ""
	qs := s.whole
	if s.asked < s.budget {
		names, last = s.aheadFunc(from, s.batch)
		q := s.probe
		q.Tasks = names
		qs = []store.RunPageQuery{q}
	}
	var list []string
	for _, q := range qs {
		got, err := s.st.RunTasks(ctx, q)
		if err != nil {
			return err
		}
		list = append(list, got...)
	}
	slices.Sort(list) // in Go's order, which a database's collation may not be
	s.ran = slices.Compact(list)
	if len(names) == 0 {
		s.all = true
		return nil
	}
	s.asked += len(names)
	s.upto, s.all = last, last == ""
	s.batch = min(2*s.batch, s.most)
	return nil
}
