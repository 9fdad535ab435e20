package web

import (
	"context"
	"fmt"
	"sync"
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

// hourCounts keeps the counts of the 168 hours the chart draws (the
// last 24) and totals (all of them), so that a read of the chart counts
// again only the hours that may still change: an hour is settled once it
// was counted ocSettle after its end, when the runs that started in it
// and lasted less than that have ended. A settled hour is counted again
// after ocRecheck, for the longer runs and the runs pruned since, at
// most ocRecheckHours of them a read: so a read costs the runs of the
// last few hours, not those of a week, which at 10^5 runs a day take
// half a second to count.
//
// The zero value is ready for use; it is safe for concurrent use.
type hourCounts struct {
	mu    sync.Mutex
	hours map[int64]hourCount // by the hour's start, in Unix seconds
}

type hourCount struct {
	totals  outcomeTotals
	counted time.Time
}

const (
	ocHours        = 7 * 24
	ocSettle       = 2 * time.Hour
	ocRecheck      = time.Hour
	ocRecheckHours = 24
)

// count returns the counts of the ocHours hours up to the one that holds
// now, the last in progress: from the store those that may have changed,
// the others as counted before.
func (c *hourCounts) count(ctx context.Context, st store.Store, now time.Time, loc *time.Location) ([]outcomeTotals, time.Time, error) {
	local := now.In(loc)
	last := time.Date(local.Year(), local.Month(), local.Day(), local.Hour(), 0, 0, 0, loc)
	first := last.Add(-(ocHours - 1) * time.Hour)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.hours == nil {
		c.hours = map[int64]hourCount{}
	}
	for k := range c.hours {
		if k < first.Unix() {
			delete(c.hours, k)
		}
	}
	// The hours to count, as runs of consecutive hours.
	need := make([]bool, ocHours)
	rechecks := 0
	for i := range need {
		h := first.Add(time.Duration(i) * time.Hour)
		hc, ok := c.hours[h.Unix()]
		switch {
		case !ok || hc.counted.Before(h.Add(time.Hour+ocSettle)):
			need[i] = true
		case now.Sub(hc.counted) > ocRecheck && rechecks < ocRecheckHours:
			need[i], rechecks = true, rechecks+1
		}
	}
	for i := 0; i < ocHours; {
		if !need[i] {
			i++
			continue
		}
		j := i
		for j < ocHours && need[j] {
			j++
		}
		from, to := first.Add(time.Duration(i)*time.Hour), first.Add(time.Duration(j)*time.Hour)
		if to.After(now) {
			to = now.Add(time.Nanosecond)
		}
		counts := make([]outcomeTotals, j-i)
		if from.Before(to) {
			got, err := st.RunCounts(ctx, store.RunCountQuery{From: from, To: to, Step: time.Hour, Statuses: outcomeStatuses})
			if err != nil {
				return nil, time.Time{}, err
			}
			for _, rc := range got {
				if rc.Step >= 0 && rc.Step < len(counts) {
					counts[rc.Step].add(rc.Status, rc.Runs)
				}
			}
		}
		for k, t := range counts {
			c.hours[first.Add(time.Duration(i+k)*time.Hour).Unix()] = hourCount{totals: t, counted: now}
		}
		i = j
	}
	out := make([]outcomeTotals, ocHours)
	for i := range out {
		out[i] = c.hours[first.Add(time.Duration(i)*time.Hour).Unix()].totals
	}
	return out, first, nil
}

// countOutcomes reads the chart, as of now.
func (u *UI) countOutcomes(ctx context.Context, now time.Time) outcomeData {
	d := outcomeData{Hours: make([]outcomeHour, 24)}
	hours, first, err := u.hourCounts.count(ctx, u.cfg.Scheduler.Store(), now, u.cfg.Location)
	if err != nil {
		d.err = err
		return d
	}
	from := first.Add((ocHours - 24) * time.Hour)
	for i, t := range hours {
		for _, s := range outcomeStatuses {
			d.Week.add(s, t.of(s))
			if k := i - (ocHours - 24); k >= 0 {
				d.Hours[k].Totals.add(s, t.of(s))
				d.Day.add(s, t.of(s))
			}
		}
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
