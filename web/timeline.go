package web

import (
	"fmt"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gnomon-sched/gnomon/auth"
	"github.com/gnomon-sched/gnomon/calendar"
	"github.com/gnomon-sched/gnomon/defs"
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
	tlRight  = 40 // room for the last tick's label
	tlRowH   = 22
	tlHeader = 28
	// tlRows is how many rows a page of the timeline draws; the others
	// are on the pages after, and the page says how many there are.
	tlRows = 200
	// tlRuns bounds the runs read for one page: past it the page says
	// that runs were left out, and how many it read.
	tlRuns = 100_000
	// tlPlans bounds the planned fires drawn in one row; a row that has
	// more says how many it left out.
	tlPlans = 500
	// tlCounted bounds the planned fires a row counts past those it draws.
	tlCounted = 10 * tlPlans
	// tlListed is the most tasks a filter's first walk lists: when it
	// chooses no more, the page walks the list, not every task again.
	tlListed = 2_000
	// tlNexts bounds the calendars a page works out to count the rows
	// after its own: past it, it says there are more than it counted.
	tlNexts = 5_000
	// tlWalk bounds the tasks a page walks past its own rows, to count
	// the rows after them: past it, it says there are more than it
	// counted.
	tlWalk = 5_000
	// tlProbeRuns is what asking the store whether a task ran costs, in
	// the runs a read of the whole range reads in the same time: about
	// 4 µs against 0.4 at 10^7 runs.
	tlProbeRuns = 10
	// tlLookback is how long before the range a run may have started and
	// still be drawn, running into it.
	tlLookback = 24 * time.Hour
)

// tlFilter chooses the tasks a timeline draws: by name (a pattern with *
// and ?, or a part of the name), label, bundle, current status, or one
// task; After is the last task of the page before.
type tlFilter struct {
	Task, Q, Label, Bundle, Status, After string
	// Group groups the rows of a page by bundle or by label ("" does
	// not): it chooses no task.
	Group string
	// scope, when set, is the scope of the viewer's token: the filter
	// chooses the tasks it covers only.
	scope *auth.Scope
}

func (f tlFilter) values() url.Values {
	return params("task", f.Task, "q", f.Q, "label", f.Label, "bundle", f.Bundle, "status", f.Status, "after", f.After, "group", f.Group)
}

// groupKey is the group a task's row goes in, "" for none: its bundle
// (a bundle's own row goes in its group) or its label.
func (f tlFilter) groupKey(def *job.Task) string {
	switch f.Group {
	case "bundle":
		if def.Type == job.Bundle {
			return def.Name
		}
		return def.Parent
	case "label":
		return def.Extras().Label
	}
	return ""
}

// matches reports whether a task passes the filter.
func (f tlFilter) matches(it *scheduler.TaskItem, status job.Status) bool {
	def := it.Def
	switch {
	case def.Type == job.Group,
		f.Task != "" && def.Name != f.Task,
		f.Label != "" && def.Extras().Label != f.Label,
		f.Bundle != "" && def.Parent != f.Bundle && def.Name != f.Bundle,
		f.Status != "" && it.State.Status != status,
		f.scope != nil && !f.scope.Covers(def.Name, it.Groups):
		return false
	case f.Q == "":
		return true
	case strings.ContainsAny(f.Q, "*?["):
		ok, _ := path.Match(f.Q, def.Name)
		return ok
	default:
		return strings.Contains(strings.ToLower(def.Name), strings.ToLower(f.Q))
	}
}

// list returns the tasks the filter chooses, in name order, and whether
// that is all of them: it lists them all when it names them (one task,
// or a bundle and its members) and when a filter matches at most n; it
// walks every task for a filter that names none, but stops at the n+1st
// match, and without a filter it lists none.
func (f tlFilter) list(v *scheduler.View, status job.Status, n int) ([]string, bool) {
	var names []string
	switch {
	case f.Task != "":
		names = []string{f.Task}
	case f.Bundle != "":
		names = append([]string{f.Bundle}, v.Children(f.Bundle)...)
	case f.Q == "" && f.Label == "" && f.Status == "":
		return nil, false
	default:
		v.Ascend("", func(it *scheduler.TaskItem) bool {
			if f.matches(it, status) {
				names = append(names, it.Def.Name)
			}
			return len(names) <= n
		})
		return names, len(names) <= n
	}
	slices.Sort(names)
	names = slices.Compact(names)
	out := names[:0]
	for _, name := range names {
		if it, ok := v.Item(name); ok && f.matches(it, status) {
			out = append(out, name)
		}
	}
	return out, true
}

// timelineData is a Gantt chart of runs with the planned fires after now
// drawn on the same axis.
type timelineData struct {
	From, To time.Time
	Span     time.Duration
	Spans    []spanLink
	Earlier  string
	Later    string
	NowLink  string
	Filter   tlFilter
	Filtered bool
	Statuses []string
	// Rows are the rows of the page, in name order; Charts draw them,
	// in one chart or one a group.
	Rows    []tlRow
	Charts  []tlChart
	Ticks   []tlTick
	NowX    float64
	ShowNow bool
	Width   int
	// Matched is how many tasks the filter chose, Drawn how many of them
	// have a run or a planned fire in the range: First is the number of
	// the first of those on this page (from 1), and Next links to the
	// page after, "" on the last.
	Matched, Drawn, First int
	// DrawnMore and MatchedMore say that there are more than Drawn and
	// Matched: the page did not walk every task after it, or work out
	// every calendar (see tlWalk and tlNexts).
	DrawnMore, MatchedMore bool
	Next, FirstPage        string
	// RunsCut says that the rows of this page had more than tlRuns runs
	// in the range: the oldest were not read.
	RunsCut bool
	// PlansCut is how many planned fires the rows of this page left out,
	// with PlansCutMore when a row counted no further.
	PlansCut     int
	PlansCutMore bool
	Empty        bool
	// Scope names the scope of the viewer's token, which the rows are
	// limited to; "" for every task.
	Scope string
}

type spanLink struct {
	Label  string
	URL    string
	Active bool
}

// tlChart is one chart of a page: all its rows, or one group's.
type tlChart struct {
	// ID tells the chart apart from every other of the page and of the
	// pages after, which scrolling appends to it.
	ID string
	// Group names the group ("" for the rows of no group), Heading says
	// it; both are "" when the rows are not grouped.
	Group, Heading string
	Rows           []tlRow
	Height         int
}

type tlRow struct {
	Task  string
	group string
	Y     int
	Bars  []tlBar
	Plans []tlPlan
	// Runs and Planned count what the row draws, Cut the planned fires it
	// left out, with CutMore when there were more than tlCounted.
	Runs, Planned, Cut int
	CutMore            bool
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
	from, span, f, status, err := u.timelineRequest(q, now)
	if err != nil {
		return "", nil, err
	}
	to := from.Add(span)
	scope := scopeOf(r)
	if len(scope) > 0 {
		f.scope = &scope
	}
	d := timelineData{From: u.local(from), To: u.local(to), Span: span, Filter: f, Width: tlLabel + tlWidth + tlRight, Scope: scopeLine(scope)}
	d.Filtered = f.Task != "" || f.Q != "" || f.Label != "" || f.Bundle != "" || f.Status != ""
	for s := job.Idle; s <= job.Frozen; s++ {
		if s != job.Staged && s != job.Queued {
			d.Statuses = append(d.Statuses, s.String())
		}
	}
	// link links to a range; after a row, it says the number of the row
	// after it, so that the page after need not count the rows before.
	link := func(fr time.Time, s time.Duration, after string, row int) string {
		g := f
		g.After = after
		v := g.values()
		if after != "" {
			v.Set("row", strconv.Itoa(row))
		}
		v.Set("from", fr.In(u.cfg.Location).Format(time.RFC3339))
		v.Set("span", shortDuration(s))
		return "/timeline?" + v.Encode()
	}
	for _, s := range spans {
		mid := from.Add(span / 2)
		d.Spans = append(d.Spans, spanLink{Label: shortDuration(s), URL: link(mid.Add(-s/2), s, "", 0), Active: s == span})
	}
	d.Earlier, d.Later, d.NowLink = link(from.Add(-span/2), span, "", 0), link(from.Add(span/2), span, "", 0), link(now.Add(-span/2), span, "", 0)
	d.FirstPage = link(from, span, "", 0)
	// The number of the first row of the page, which the link to it
	// says: the walk of the tasks then starts after f.After.
	row := 0
	if v := q.Get("row"); v != "" && f.After != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return "", nil, badRequest("row: %q is not a row number: give a whole number from 1, or leave it out to count the rows from the first", v)
		}
		row = n
	}

	v := u.cfg.Scheduler.View()
	in := store.RunPageQuery{From: from, To: to}
	before := in
	before.From, before.To, before.EndFrom = from.Add(-tlLookback), from, from
	st := u.cfg.Scheduler.Store()
	w := &tlWalker{d: &d, v: v, f: f, status: status, now: now, start: from, to: to, sched: map[string]calendar.Schedule{}, group: map[string]string{}}
	if now.After(w.start) {
		w.start = now
	}
	w.chosen, w.listed = f.list(v, status, tlListed)
	probe := before
	probe.To = to
	w.ran = newRanSet(st, probe, []store.RunPageQuery{in, before}, w.aheadFunc())
	// Asking about the tasks by name pays when the range holds many more
	// runs than the walk asks about tasks; else the set reads the whole
	// range at once, as it does past its budget.
	held, err := st.RunsAbout(r.Context(), probe.From, to)
	if err != nil {
		return "", nil, err
	}
	expect := tlRows + tlWalk
	if w.listed {
		expect = min(expect, len(w.chosen))
	}
	if held < int64(expect)*tlProbeRuns {
		w.ran.budget = 0
	}
	if err := w.walk(r.Context(), row); err != nil {
		return "", nil, err
	}
	page, sched, group := w.page, w.sched, w.group
	d.First++
	if d.Next != "" {
		d.Next = link(from, span, page[len(page)-1], d.First+len(page))
	}
	// The runs of the rows of this page.
	var runs []job.Run
	for _, q := range []store.RunPageQuery{in, before} {
		if len(runs) > tlRuns || len(page) == 0 {
			break
		}
		q.Tasks, q.Limit = page, tlRuns+1-len(runs)
		more, err := st.RunPage(r.Context(), q)
		if err != nil {
			return "", nil, err
		}
		runs = append(runs, more...)
	}
	if len(runs) > tlRuns {
		runs, d.RunsCut = runs[:tlRuns], true
	}
	byTask := map[string][]job.Run{}
	for _, run := range runs {
		if run.Timeperiod == "" {
			byTask[run.Task] = append(byTask[run.Task], run)
		}
	}
	x := func(t time.Time) float64 {
		return tlLabel + float64(t.Sub(from))/float64(span)*tlWidth
	}
	for _, name := range page {
		row := u.timelineRow(name, group[name], byTask[name], sched[name], tlPlanned{start: w.start, to: to, now: now}, x)
		d.PlansCut += row.Cut
		d.PlansCutMore = d.PlansCutMore || row.CutMore
		d.Rows = append(d.Rows, row)
	}
	d.Empty = len(d.Rows) == 0
	d.Charts = charts(d.Rows, f.Group, d.First)
	d.Ticks = ticks(u.local(from), span, x)
	if !now.Before(from) && now.Before(to) {
		d.ShowNow, d.NowX = true, x(now)
	}
	title := "Timeline"
	if f.Task != "" {
		title += " of " + f.Task
	}
	return title, d, nil
}

// tlPlanned is what a timeline's row marks planned fires by: the
// instants from start (now, or the range's start when later) to the
// range's end, to, when that is after now.
type tlPlanned struct{ start, to, now time.Time }

// timelineRow draws a task's row: a bar for each of its runs, and a mark
// for each planned fire in the range, at most tlPlans, the others
// counted up to tlCounted.
func (u *UI) timelineRow(name, group string, runs []job.Run, sc calendar.Schedule, p tlPlanned, x func(time.Time) float64) tlRow {
	start, to, now := p.start, p.to, p.now
	row := tlRow{Task: name, group: group}
	for _, run := range runs {
		end := run.End
		if end.IsZero() {
			end = now
		}
		x0, x1 := max(x(run.Start), tlLabel), min(x(end), tlLabel+tlWidth)
		title := fmt.Sprintf("%s run %d: %s, %s – %s", run.Task, run.ID, run.Status, u.local(run.Start).Format(time.DateTime), endText(u.local(run.End)))
		row.Bars = append(row.Bars, tlBar{X: x0, W: max(x1-x0, 2), Class: statusClass(run.Status), Title: title, RunID: run.ID})
	}
	row.Runs = len(row.Bars)
	if sc != nil && to.After(now) {
		for t, ok := sc.Next(start.Add(-time.Nanosecond)); ok && t.Before(to); t, ok = sc.Next(t) {
			if row.Planned == tlPlans {
				if row.Cut == tlCounted {
					row.CutMore = true
					break
				}
				row.Cut++
				continue
			}
			title := fmt.Sprintf("%s planned at %s", name, u.local(t).Format(time.DateTime))
			if ex := calendar.Excluded(sc, t); ex != "" {
				title += fmt.Sprintf(", excluded by calendar %s: skipped, not run", ex)
			}
			row.Plans = append(row.Plans, tlPlan{X: x(t), Title: title})
			row.Planned++
		}
	}
	return row
}

// timelineRequest reads a timeline's range, filter and status from its
// query: the range is span (6h unless given) from from (around now
// unless given).
func (u *UI) timelineRequest(q url.Values, now time.Time) (from time.Time, span time.Duration, f tlFilter, status job.Status, err error) {
	span = 6 * time.Hour
	if v := q.Get("span"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || !slices.Contains(spans, d) {
			return from, span, f, status, badRequest("span: %q is not one of 1h, 3h, 6h, 12h, 24h, 72h, 168h", v)
		}
		span = d
	}
	from = now.Add(-span / 2)
	if v := q.Get("from"); v != "" {
		t, err := calendar.ParseInstant(v, u.cfg.Location)
		if err != nil {
			return from, span, f, status, badRequest("from: %v", err)
		}
		from = t
	}
	f = tlFilter{Task: q.Get("task"), Q: q.Get("q"), Label: q.Get("label"), Bundle: q.Get("bundle"), Status: q.Get("status"), After: q.Get("after"), Group: q.Get("group")}
	if f.Group != "" && f.Group != "bundle" && f.Group != "label" {
		return from, span, f, status, badRequest("group: %q is not a grouping: give bundle or label, or leave it out", f.Group)
	}
	if f.Status != "" {
		if status, err = job.ParseStatus(f.Status); err != nil {
			return from, span, f, status, badRequest("status: %v", err)
		}
	}
	if _, err := path.Match(f.Q, ""); err != nil {
		return from, span, f, status, badRequest("q: %q is not a name pattern (* any characters, ? one, [a-z] one of a set): %v", f.Q, err)
	}
	return from, span, f, status, nil
}

// charts lays the rows of a page out in charts: one, or with grouping
// one a group, in the order of the groups' names and the rows of no group
// last. The groups are those of the page's rows: a group whose rows are
// on several pages is on each of them. first is the number of the page's
// first row, which makes the charts' IDs.
func charts(rows []tlRow, grouping string, first int) []tlChart {
	var out []tlChart
	if grouping == "" {
		out = []tlChart{{Rows: rows}}
	} else {
		at := map[string]int{}
		for _, r := range rows {
			i, ok := at[r.group]
			if !ok {
				i = len(out)
				at[r.group] = i
				out = append(out, tlChart{Group: r.group})
			}
			out[i].Rows = append(out[i].Rows, r)
		}
		slices.SortFunc(out, func(a, b tlChart) int {
			switch {
			case a.Group == b.Group:
				return 0
			case a.Group == "":
				return 1
			case b.Group == "":
				return -1
			}
			return strings.Compare(a.Group, b.Group)
		})
	}
	for i := range out {
		c := &out[i]
		c.ID = fmt.Sprintf("tl-%d-%d", first, i)
		switch {
		case grouping == "":
		case c.Group == "":
			c.Heading = "No " + grouping
		default:
			c.Heading = strings.ToUpper(grouping[:1]) + grouping[1:] + " " + c.Group
		}
		for j := range c.Rows {
			c.Rows[j].Y = tlHeader + j*tlRowH
		}
		c.Height = tlHeader + max(len(c.Rows), 1)*tlRowH + 4
	}
	return out
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

// shortDuration writes a span as the timeline's links give it: 6h, 168h.
func shortDuration(d time.Duration) string { return defs.FormatDuration(d) }

// runClass is the CSS class of a status.
func statusClass(s job.Status) string { return "st-" + s.String() }
