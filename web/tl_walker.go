package web

import (
	"context"
	"slices"
	"time"

	"github.com/gnomon-sched/gnomon/calendar"
	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/scheduler"
)

// tlWalker finds the rows of a timeline's page: every chosen task with a
// run or a planned fire in the range, in name order, a page of tlRows
// after the filter's After. One walk of the chosen tasks finds them and
// counts them in d, allocating nothing for the tasks it passes. Past the
// page it walks at most tlWalk tasks and works out at most tlNexts
// calendars to count the rows after it, and says "more than" when it
// could not count them all.
type tlWalker struct {
	d      *timelineData
	v      *scheduler.View
	f      tlFilter
	status job.Status
	// The range is [start of the range, to); planned fires are looked
	// for from start, the later of now and the range's start.
	now, start, to time.Time
	// chosen are the names the filter lists, in order, when listed; else
	// the walk ascends the View.
	chosen []string
	listed bool
	ran    *ranSet

	nexts int // the calendars worked out
	past  int // the tasks walked past the full page
	page  []string
	sched map[string]calendar.Schedule
	group map[string]string
	err   error
}

// walk walks the chosen tasks. When the link to the page says the number
// of its first row (row > 0), the walk starts after the filter's After,
// and the tasks before it that match are counted as at least those rows.
func (w *tlWalker) walk(ctx context.Context, row int) error {
	d := w.d
	visit := func(it *scheduler.TaskItem) bool { return w.visit(ctx, it) }
	switch {
	case w.listed:
		for _, name := range w.chosen {
			if it, _ := w.v.Item(name); !visit(it) {
				break
			}
		}
	case row > 0:
		d.First, d.Drawn, d.Matched, d.MatchedMore = row-1, row-1, row-1, row > 1
		w.v.Ascend(w.f.After, visit)
	default:
		w.v.Ascend("", visit)
	}
	return w.err
}

// planned reports whether a task has a planned fire in the range, and
// whether it knew without working its calendar out (which it does only
// when work is set). A task's next fire, when it is not past, answers
// for most: nothing fires before it, and it is in the range or after it.
func (w *tlWalker) planned(it *scheduler.TaskItem, work bool) (yes, known bool) {
	sc := it.Schedule
	if sc == nil || !w.to.After(w.now) {
		return false, true
	}
	if next := it.State.NextFire.Time(); !next.IsZero() && !next.Before(w.now) {
		switch {
		case !next.Before(w.to):
			return false, true
		case !next.Before(w.start):
			return true, true
		}
	}
	if !work {
		return false, false
	}
	w.nexts++
	t, ok := sc.Next(w.start.Add(-time.Nanosecond))
	return ok && t.Before(w.to), true
}

// asked reports whether the walk will ask whether a task ran in the
// range: a task it matches with no planned fire it knows of.
func (w *tlWalker) asked(it *scheduler.TaskItem) bool {
	yes, _ := w.planned(it, false)
	return !yes && w.f.matches(it, w.status)
}

// aheadFunc returns how the ran set finds the tasks to ask about after a
// name, at most n of them (see ranSet): in the chosen list, or walking
// the View. The set asks the store about them a batch ahead of the walk
// at a time: the tasks that ran in the range, or had begun up to
// tlLookback before it and not ended by its start (a run that began in
// the range ended in it or later, so one query of the runs that began
// from tlLookback before the range to its end and had not ended at its
// start asks for both).
func (w *tlWalker) aheadFunc() func(string, int) ([]string, string) {
	if w.listed {
		return func(name string, n int) ([]string, string) {
			i, _ := slices.BinarySearch(w.chosen, name)
			names := []string{name}
			for k, c := range w.chosen[i+1:] {
				if len(names) == n || k == ranLook*n {
					return names, w.chosen[i+k]
				}
				if it, ok := w.v.Item(c); ok && w.asked(it) {
					names = append(names, c)
				}
			}
			return names, ""
		}
	}
	return func(name string, n int) ([]string, string) {
		names, last, looked, end := []string{name}, name, 0, true
		w.v.Ascend(name, func(it *scheduler.TaskItem) bool {
			if len(names) == n || looked == ranLook*n {
				end = false
				return false
			}
			looked++
			last = it.Def.Name
			if w.asked(it) {
				names = append(names, last)
			}
			return true
		})
		if end {
			last = ""
		}
		return names, last
	}
}

// visit counts a task and, when it has a row on the page, takes it; it
// returns false to end the walk.
func (w *tlWalker) visit(ctx context.Context, it *scheduler.TaskItem) bool {
	d := w.d
	full := len(w.page) == tlRows
	if full {
		if w.past == tlWalk {
			d.DrawnMore, d.MatchedMore = true, true
			return false
		}
		w.past++
	}
	if !w.f.matches(it, w.status) {
		return true
	}
	d.Matched++
	name := it.Def.Name
	if yes, known := w.planned(it, false); !yes {
		has, err := w.ran.has(ctx, name)
		if err != nil {
			w.err = err
			return false
		}
		if !has {
			if !known {
				yes, known = w.planned(it, !full || w.nexts < tlNexts)
			}
			if !known {
				d.DrawnMore = true
				return true
			}
			if !yes {
				return true
			}
		}
	}
	d.Drawn++
	switch {
	case name <= w.f.After:
		d.First++
	case !full:
		w.page = append(w.page, name)
		w.sched[name], w.group[name] = it.Schedule, w.f.groupKey(it.Def)
	case d.Next == "":
		d.Next = "next" // linked below, once the rows before are counted
	}
	return true
}
