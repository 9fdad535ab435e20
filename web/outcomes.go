package web

import (
	"context"
	"fmt"
	"time"

	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/store"
)

// The overview's chart of outcomes: the runs that started in each of the
// last 24 hours, by how they ended, and the totals of the last 7 days,
// counted by the store from an index (store.RunCounts).

// outcomeStatuses are the outcomes the chart counts, drawn from the
// bottom of each bar up.
var outcomeStatuses = []job.Status{job.Success, job.Failure, job.Aborted}

// Chart geometry, in SVG user units.
const (
	ocBarW   = 30 // an hour's bar and its gap
	ocHeight = 120
	ocTop    = 8  // room above the highest bar
	ocAxis   = 18 // the hours' labels under the bars
	ocLeft   = 48 // the counts' labels
)

// outcomeData is the chart: Hours oldest first, the last one the hour in
// progress.
type outcomeData struct {
	Hours []outcomeHour
	// Day and Week total the runs of the hours drawn and of the last 7
	// days.
	Day, Week outcomeTotals
	// Max is the most runs of an hour, the height of the axis.
	Max           int
	Width, Height int
	Base          int // the y of the bars' bottom
	err           error
}

type outcomeHour struct {
	From   time.Time
	Label  string
	X, Mid int // the bar's left and middle
	Totals outcomeTotals
	Parts  []outcomePart
}

// outcomePart is one outcome's part of an hour's bar.
type outcomePart struct {
	Status     string
	X, W, Y, H float64
}

type outcomeTotals struct {
	Success, Failure, Aborted int
}

func (t outcomeTotals) of(s job.Status) int {
	switch s {
	case job.Success:
		return t.Success
	case job.Failure:
		return t.Failure
	case job.Aborted:
		return t.Aborted
	}
	return 0
}

func (t *outcomeTotals) add(s job.Status, n int) {
	switch s {
	case job.Success:
		t.Success += n
	case job.Failure:
		t.Failure += n
	case job.Aborted:
		t.Aborted += n
	}
}

// Runs is how many runs ended.
func (t outcomeTotals) Runs() int { return t.Success + t.Failure + t.Aborted }

// Text says the totals in words.
func (t outcomeTotals) Text() string {
	return fmt.Sprintf("%d succeeded, %d failed, %d aborted", t.Success, t.Failure, t.Aborted)
}

// countOutcomes reads the chart from the store, as of now.
func (u *UI) countOutcomes(ctx context.Context, now time.Time) outcomeData {
	st := u.cfg.Scheduler.Store()
	local := now.In(u.cfg.Location)
	// The hours of the display zone, the last in progress.
	last := time.Date(local.Year(), local.Month(), local.Day(), local.Hour(), 0, 0, 0, u.cfg.Location)
	from := last.Add(-23 * time.Hour)
	d := outcomeData{Hours: make([]outcomeHour, 24)}
	counts, err := st.RunCounts(ctx, store.RunCountQuery{From: from, To: now.Add(time.Nanosecond), Step: time.Hour, Statuses: outcomeStatuses})
	if err != nil {
		d.err = err
		return d
	}
	for _, c := range counts {
		if c.Step >= 0 && c.Step < len(d.Hours) {
			d.Hours[c.Step].Totals.add(c.Status, c.Runs)
			d.Day.add(c.Status, c.Runs)
		}
	}
	week, err := st.RunCounts(ctx, store.RunCountQuery{From: now.Add(-7 * 24 * time.Hour), To: now.Add(time.Nanosecond), Statuses: outcomeStatuses})
	if err != nil {
		d.err = err
		return d
	}
	for _, c := range week {
		d.Week.add(c.Status, c.Runs)
	}
	for _, h := range d.Hours {
		d.Max = max(d.Max, h.Totals.Runs())
	}
	d.Width, d.Height, d.Base = ocLeft+24*ocBarW, ocTop+ocHeight+ocAxis, ocTop+ocHeight
	scale := float64(ocHeight) / float64(max(d.Max, 1))
	for i := range d.Hours {
		h := &d.Hours[i]
		h.From = from.Add(time.Duration(i) * time.Hour)
		h.Label = h.From.Format("15")
		h.X = ocLeft + i*ocBarW
		h.Mid = h.X + ocBarW/2
		y := float64(d.Base)
		for _, s := range outcomeStatuses {
			n := h.Totals.of(s)
			if n == 0 {
				continue
			}
			hh := float64(n) * scale
			y -= hh
			h.Parts = append(h.Parts, outcomePart{Status: s.String(), X: float64(h.X + 2), W: ocBarW - 4, Y: y, H: hh})
		}
	}
	return d
}
