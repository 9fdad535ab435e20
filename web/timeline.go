package web

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/gnomon-sched/gnomon/calendar"
	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/scheduler"
	"github.com/gnomon-sched/gnomon/store"
)

// The spans a timeline can show, from an hour to a week.
var spans = []time.Duration{time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour, 24 * time.Hour, 3 * 24 * time.Hour, 7 * 24 * time.Hour}

// Timeline geometry, in SVG user units.
const (
	tlLabel  = 220 // the task names' column
	tlWidth  = 1000
	tlRowH   = 22
	tlHeader = 28
	tlRows   = 200 // most rows drawn
	tlRuns   = 20000
)

// timelineData is a Gantt chart of runs with the planned fires after now
// drawn on the same axis.
type timelineData struct {
	From, To  time.Time
	Span      time.Duration
	Spans     []spanLink
	Earlier   string
	Later     string
	NowLink   string
	Task      string
	Rows      []tlRow
	Ticks     []tlTick
	NowX      float64
	ShowNow   bool
	Height    int
	Width     int
	Truncated int // rows left out
	Empty     bool
}

type spanLink struct {
	Label  string
	URL    string
	Active bool
}

type tlRow struct {
	Task  string
	Y     int
	Bars  []tlBar
	Plans []tlPlan
}

type tlBar struct {
	X, W  float64
	Class string
	Title string
	RunID int64
}

type tlPlan struct {
	X     float64
	Title string
}

type tlTick struct {
	X     float64
	Label string
}

func (u *UI) timeline(r *http.Request) (string, any, error) {
	q := r.URL.Query()
	now := u.cfg.Scheduler.Now()
	span := 6 * time.Hour
	if v := q.Get("span"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || !slices.Contains(spans, d) {
			return "", nil, badRequest("span: %q is not one of 1h, 3h, 6h, 12h, 24h, 72h, 168h", v)
		}
		span = d
	}
	from := now.Add(-span / 2)
	if v := q.Get("from"); v != "" {
		t, err := calendar.ParseInstant(v, u.cfg.Location)
		if err != nil {
			return "", nil, badRequest("from: %v", err)
		}
		from = t
	}
	to := from.Add(span)
	task := q.Get("task")
	d := timelineData{From: u.local(from), To: u.local(to), Span: span, Task: task, Width: tlLabel + tlWidth}
	link := func(f time.Time, s time.Duration) string {
		v := url.Values{"from": {f.In(u.cfg.Location).Format(time.RFC3339)}, "span": {shortDuration(s)}}
		if task != "" {
			v.Set("task", task)
		}
		return "/timeline?" + v.Encode()
	}
	for _, s := range spans {
		mid := from.Add(span / 2)
		d.Spans = append(d.Spans, spanLink{Label: shortDuration(s), URL: link(mid.Add(-s/2), s), Active: s == span})
	}
	d.Earlier, d.Later, d.NowLink = link(from.Add(-span/2), span), link(from.Add(span/2), span), link(now.Add(-span/2), span)

	x := func(t time.Time) float64 {
		return tlLabel + float64(t.Sub(from))/float64(span)*tlWidth
	}
	rows := map[string]*tlRow{}
	get := func(name string) *tlRow {
		if rows[name] == nil {
			rows[name] = &tlRow{Task: name}
		}
		return rows[name]
	}
	// Runs that started up to a day before the range may still run in it.
	runs, err := u.cfg.Scheduler.Store().Runs(r.Context(), store.RunQuery{Task: task, From: from.Add(-24 * time.Hour), To: to, Limit: tlRuns})
	if err != nil {
		return "", nil, err
	}
	for _, run := range runs {
		end := run.End
		if end.IsZero() {
			end = now
		}
		if end.Before(from) || run.Timeperiod != "" {
			continue
		}
		x0, x1 := max(x(run.Start), tlLabel), min(x(end), tlLabel+tlWidth)
		title := fmt.Sprintf("%s run %d: %s, %s – %s", run.Task, run.ID, run.Status, u.local(run.Start).Format(time.DateTime), endText(u.local(run.End)))
		get(run.Task).Bars = append(get(run.Task).Bars, tlBar{X: x0, W: max(x1-x0, 2), Class: statusClass(run.Status), Title: title, RunID: run.ID})
	}
	// The future: what the time triggers will fire.
	if to.After(now) {
		scheds := map[string]calendar.Schedule{}
		if v := u.cfg.Scheduler.View(); task != "" {
			if sc := v.Schedule(task); sc != nil {
				scheds[task] = sc
			}
		} else {
			v.Ascend("", func(it *scheduler.TaskItem) bool {
				if it.Schedule != nil {
					scheds[it.Def.Name] = it.Schedule
				}
				return true
			})
		}
		start := from
		if now.After(start) {
			start = now
		}
		planned, _ := calendar.Forecast(scheds, start, to, tlRuns)
		for _, p := range planned {
			title := fmt.Sprintf("%s planned at %s", p.Task, u.local(p.At).Format(time.DateTime))
			if p.Excluded != "" {
				title += fmt.Sprintf(", excluded by calendar %s: skipped, not run", p.Excluded)
			}
			get(p.Task).Plans = append(get(p.Task).Plans, tlPlan{X: x(p.At), Title: title})
		}
	}
	names := make([]string, 0, len(rows))
	for n := range rows {
		names = append(names, n)
	}
	slices.Sort(names)
	if len(names) > tlRows {
		d.Truncated = len(names) - tlRows
		names = names[:tlRows]
	}
	for i, n := range names {
		row := rows[n]
		row.Y = tlHeader + i*tlRowH
		d.Rows = append(d.Rows, *row)
	}
	d.Empty = len(d.Rows) == 0
	d.Height = tlHeader + max(len(d.Rows), 1)*tlRowH + 4
	d.Ticks = ticks(u.local(from), span, x)
	if !now.Before(from) && now.Before(to) {
		d.ShowNow, d.NowX = true, x(now)
	}
	title := "Timeline"
	if task != "" {
		title += " of " + task
	}
	return title, d, nil
}

func endText(t time.Time) string {
	if t.IsZero() {
		return "running"
	}
	return t.Format(time.DateTime)
}

// ticks places about eight labelled ticks on a round step.
func ticks(from time.Time, span time.Duration, x func(time.Time) float64) []tlTick {
	steps := []time.Duration{10 * time.Minute, 15 * time.Minute, 30 * time.Minute, time.Hour, 2 * time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour, 24 * time.Hour}
	step := steps[len(steps)-1]
	for _, s := range steps {
		if span/s <= 8 {
			step = s
			break
		}
	}
	layout := "15:04"
	if span > 24*time.Hour {
		layout = "Mon 02 15:04"
	}
	// Round in the display zone so that ticks fall on local hours.
	t := time.Date(from.Year(), from.Month(), from.Day(), 0, 0, 0, 0, from.Location())
	for t.Before(from) {
		t = t.Add(step)
	}
	var out []tlTick
	for ; t.Before(from.Add(span)); t = t.Add(step) {
		out = append(out, tlTick{X: x(t), Label: t.Format(layout)})
	}
	return out
}

func shortDuration(d time.Duration) string {
	return strings.TrimSuffix(strings.TrimSuffix(d.String(), "0s"), "0m")
}

// runClass is the CSS class of a status.
func statusClass(s job.Status) string { return "st-" + s.String() }
