package web

import (
	"fmt"
	"slices"
	"time"

	"github.com/gnomon-sched/gnomon/defs"
	"github.com/gnomon-sched/gnomon/job"
)

// A task's duration trend, on its page: how long each of its last
// trendRuns ended runs took, oldest on the left, as bars patterned by
// outcome as the overview's chart is, with the task's max_run_alarm and
// min_run_alarm drawn across them, as Airflow's duration view does.

// trendRuns is how many ended runs the trend draws.
const trendRuns = 50

// Trend geometry, in SVG user units.
const (
	trBarW   = 14 // a run's bar and its gap
	trHeight = 110
	trTop    = 8
	trLeft   = 56 // the durations' labels
	trAxis   = 6
)

// trendData is the chart; nil when the task has no ended run.
type trendData struct {
	Bars []trendBar
	// Lines are the alarms drawn across the bars.
	Lines         []trendLine
	Max           string // the duration at the top of the axis
	Width, Height int
	Base          int // the y of the bars' bottom
	// Text says it in words: how many runs, the shortest, the median and
	// the longest.
	Text string
}

type trendBar struct {
	Run        int64
	Status     string
	Took       string
	Start      time.Time
	X, W, Y, H float64
}

type trendLine struct {
	Name string // max_run_alarm, min_run_alarm
	Took string
	Y    float64
}

// trend draws the ended runs among runs (newest first, as the store
// lists them) with the task's alarms.
func trend(runs []job.Run, p job.Policy) *trendData {
	var ended []job.Run
	for _, r := range runs {
		if r.Done() && !r.End.IsZero() && !r.End.Before(r.Start) {
			ended = append(ended, r)
		}
	}
	if len(ended) == 0 {
		return nil
	}
	if len(ended) > trendRuns {
		ended = ended[:trendRuns]
	}
	slices.Reverse(ended)
	took := make([]time.Duration, len(ended))
	top := time.Duration(0)
	for i, r := range ended {
		took[i] = r.End.Sub(r.Start)
		top = max(top, took[i])
	}
	for _, a := range []job.Duration{p.MaxRunAlarm, p.MinRunAlarm} {
		top = max(top, time.Duration(a))
	}
	if top <= 0 {
		top = time.Second
	}
	d := &trendData{Width: trLeft + len(ended)*trBarW + trAxis, Height: trTop + trHeight + trAxis, Base: trTop + trHeight, Max: tookText(top)}
	y := func(v time.Duration) float64 { return float64(d.Base) - float64(trHeight)*float64(v)/float64(top) }
	for i, r := range ended {
		h := float64(d.Base) - y(took[i])
		if h < 1 {
			h = 1 // a run of no time still shows
		}
		d.Bars = append(d.Bars, trendBar{Run: r.ID, Status: r.Status.String(), Took: tookText(took[i]), Start: r.Start,
			X: float64(trLeft + i*trBarW + 1), W: trBarW - 3, Y: float64(d.Base) - h, H: h})
	}
	if p.MaxRunAlarm > 0 {
		d.Lines = append(d.Lines, trendLine{Name: "max_run_alarm", Took: tookText(time.Duration(p.MaxRunAlarm)), Y: y(time.Duration(p.MaxRunAlarm))})
	}
	if p.MinRunAlarm > 0 {
		d.Lines = append(d.Lines, trendLine{Name: "min_run_alarm", Took: tookText(time.Duration(p.MinRunAlarm)), Y: y(time.Duration(p.MinRunAlarm))})
	}
	sorted := slices.Clone(took)
	slices.Sort(sorted)
	d.Text = fmt.Sprintf("the last %d ended runs took from %s to %s, %s at the median", len(took),
		tookText(sorted[0]), tookText(sorted[len(sorted)-1]), tookText(sorted[len(sorted)/2]))
	if len(took) == 1 {
		d.Text = "its one ended run took " + tookText(took[0])
	}
	return d
}

// tookText says how long a run took, to the second past 10 seconds, to
// the tenth of a second past one, to the millisecond below.
func tookText(d time.Duration) string {
	switch {
	case d >= 10*time.Second:
		d = d.Round(time.Second)
	case d >= time.Second:
		d = d.Round(100 * time.Millisecond)
	default:
		d = d.Round(time.Millisecond)
	}
	return defs.FormatDuration(d)
}
