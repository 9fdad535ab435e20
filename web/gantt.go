package web

import (
	"time"

	"github.com/gnomon-sched/gnomon/cond"
	"github.com/gnomon-sched/gnomon/job"
)

// A bundle run's Gantt chart, on its page: the runs of its tasks as bars
// on one time axis, from the bundle run's start to its end (or now), with
// the critical path marked: the chain of runs, each waiting for the one
// before it, that ends with the run that ended last. The chain is found
// backwards: from the run that ended last, the run of a task its
// condition names that ended last before it started, and so on.

// Gantt geometry, in SVG user units.
const (
	gnLeft  = 160 // the tasks' names
	gnWidth = 640 // the time axis
	gnRowH  = 22
	gnBarH  = 14
	gnTop   = 4
	gnAxis  = 20 // the times under the bars
)

// ganttData is the chart; nil for a bundle run without runs.
type ganttData struct {
	Rows          []ganttRow
	Width, Height int
	Base          int    // the y of the axis
	From, To      string // the axis's ends, as times
	Took          string
	// Critical names the runs of the critical path, in order.
	Critical []string
}

type ganttRow struct {
	Run      int64
	Task     string
	Status   string
	Took     string
	Y, TextY int
	X, W     float64
	Critical bool
}

// gantt draws the runs of a bundle run (oldest first) from its start to
// to (its end, or now while it lasts); conds gives the condition of a
// task by name.
func gantt(bundle job.Run, kids []job.Run, to time.Time, conds func(task string) string) *ganttData {
	if len(kids) == 0 {
		return nil
	}
	from := bundle.Start
	for _, k := range kids {
		if k.Start.Before(from) {
			from = k.Start
		}
		if end := runEnd(k, to); end.After(to) {
			to = end
		}
	}
	span := to.Sub(from)
	if span <= 0 {
		span = time.Second
	}
	x := func(t time.Time) float64 { return gnLeft + gnWidth*float64(t.Sub(from))/float64(span) }
	d := &ganttData{Width: gnLeft + gnWidth + 8, From: from.Format(time.DateTime), To: to.Format(time.DateTime), Took: tookText(to.Sub(from))}
	critical := criticalPath(kids, to, conds)
	for i, k := range kids {
		w := max(x(runEnd(k, to))-x(k.Start), 2)
		row := ganttRow{Run: k.ID, Task: k.Task, Status: k.Status.String(), Took: tookText(runEnd(k, to).Sub(k.Start)),
			Y: gnTop + i*gnRowH + (gnRowH-gnBarH)/2, TextY: gnTop + i*gnRowH + gnRowH/2 + 4, X: x(k.Start), W: w, Critical: critical[k.ID]}
		d.Rows = append(d.Rows, row)
	}
	for _, k := range kids {
		if critical[k.ID] {
			d.Critical = append(d.Critical, k.Task)
		}
	}
	d.Base = gnTop + len(kids)*gnRowH
	d.Height = d.Base + gnAxis
	return d
}

// runEnd is when a run ended, or to while it lasts.
func runEnd(r job.Run, to time.Time) time.Time {
	if r.Done() && !r.End.IsZero() {
		return r.End
	}
	return to
}

// criticalPath returns the runs of the critical path among kids.
func criticalPath(kids []job.Run, to time.Time, conds func(task string) string) map[int64]bool {
	on := map[int64]bool{}
	last := -1
	for i, k := range kids {
		if last < 0 || runEnd(k, to).After(runEnd(kids[last], to)) {
			last = i
		}
	}
	for cur := last; cur >= 0 && !on[kids[cur].ID]; {
		on[kids[cur].ID] = true
		names := map[string]bool{}
		if x, err := cond.Parse(conds(kids[cur].Task)); err == nil {
			for _, n := range x.Names() {
				names[n] = true
			}
		}
		next := -1
		for i, k := range kids {
			if !names[k.Task] || runEnd(k, to).After(kids[cur].Start) {
				continue
			}
			if next < 0 || runEnd(k, to).After(runEnd(kids[next], to)) {
				next = i
			}
		}
		cur = next
	}
	return on
}
