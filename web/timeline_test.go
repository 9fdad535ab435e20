package web

import (
	"context"
	"fmt"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/auth"
	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/store"
)

// TestTimeline: the timeline chooses its tasks by name pattern, label,
// bundle or status; it draws a run that starts exactly at its start;
// it draws its rows a page at a time and says how many there are; a
// row that has more planned fires than it draws says how many it left
// out; the last tick's label fits.
func TestTimeline(t *testing.T) {
	t.Parallel()
	from := time.Date(2026, 11, 20, 6, 0, 0, 0, time.UTC)
	var defs strings.Builder
	defs.WriteString(historyDefs)
	// 450 tasks that ran once each in the range, for the pages of rows.
	for i := range 450 {
		fmt.Fprintf(&defs, "insert_task: many_%03d\ntype: callable\nfunction: log\n\n", i)
	}
	defs.WriteString("insert_task: often\ntype: callable\nfunction: log\ncron: * * * * *\n\n")
	s, u := withHistory(t, defs.String(), func(last int64) store.Batch {
		var b store.Batch
		id := last
		add := func(task string, start time.Time, st job.Status) {
			id++
			b.Runs = append(b.Runs, job.Run{ID: id, Task: task, Status: st, Start: start, End: start.Add(10 * time.Minute)})
		}
		add("a", from, job.Success)                     // at the range's start exactly
		add("b", from.Add(-5*time.Minute), job.Failure) // ran into it
		add("c", from.Add(-2*time.Hour), job.Success)   // ended before it
		add("d", from.Add(6*time.Hour), job.Success)    // at its end: not in it
		add("e", from.Add(3*time.Hour), job.Aborted)    // inside
		for i := range 450 {
			add(fmt.Sprintf("many_%03d", i), from.Add(time.Duration(i)*time.Second), job.Success)
		}
		return b
	})
	get := func(t *testing.T, query string) timelineData {
		t.Helper()
		_, d, err := u.timeline(asRole("/timeline?"+query, auth.Viewer))
		if err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		return d.(timelineData)
	}
	rows := func(d timelineData) map[string]tlRow {
		out := map[string]tlRow{}
		for _, r := range d.Rows {
			out[r.Task] = r
		}
		return out
	}
	fromQ := "span=6h&from=" + url.QueryEscape(from.Format(time.RFC3339))

	t.Run("what is in the range", func(t *testing.T) {
		t.Parallel()
		d := rows(get(t, fromQ+"&q=[a-e]"))
		for task, want := range map[string]bool{"a": true, "b": true, "c": false, "d": false, "e": true} {
			if r, ok := d[task]; ok != want || ok && (len(r.Bars) != 1 || r.Bars[0].X < tlLabel || r.Bars[0].W <= 0) {
				t.Errorf("%s: drawn %v %+v, want drawn %v", task, ok, r, want)
			}
		}
		if r := d["a"]; len(r.Bars) == 1 && r.Bars[0].X != tlLabel {
			t.Errorf("the run at the range's start is drawn at %v, want %v", r.Bars[0].X, tlLabel)
		}
	})
	t.Run("filters", func(t *testing.T) {
		t.Parallel()
		for query, want := range map[string][]string{
			"label=nightly":     {"a", "b"},
			"bundle=bun":        {},
			"q=many_44*":        {"many_440", "many_441", "many_442", "many_443", "many_444", "many_445", "many_446", "many_447", "many_448", "many_449"},
			"q=MANY_0":          nil, // a part of the name, in any case: 100 tasks
			"task=e":            {"e"},
			"label=nightly&q=b": {"b"},
		} {
			d := get(t, fromQ+"&"+query)
			if want == nil {
				if d.Drawn != 100 || len(d.Rows) != 100 {
					t.Errorf("%s: %d drawn, %d rows, want 100", query, d.Drawn, len(d.Rows))
				}
				continue
			}
			var got []string
			for _, r := range d.Rows {
				got = append(got, r.Task)
			}
			if fmt.Sprint(got) != fmt.Sprint(want) && !(len(got) == 0 && len(want) == 0) {
				t.Errorf("%s: rows %v, want %v", query, got, want)
			}
		}
		if _, _, err := u.timeline(asRole("/timeline?q=[", auth.Viewer)); err == nil || !strings.Contains(err.Error(), "is not a name pattern") {
			t.Errorf("a bad pattern: %v", err)
		}
	})
	t.Run("pages of rows, counted", func(t *testing.T) {
		t.Parallel()
		d := get(t, fromQ)
		// a, b, e and the 450.
		if d.Drawn != 453 || len(d.Rows) != tlRows || d.First != 1 || d.Next == "" {
			t.Fatalf("first page: %d drawn, %d rows from %d, next %q", d.Drawn, len(d.Rows), d.First, d.Next)
		}
		seen := map[string]bool{}
		for page := 0; ; page++ {
			for _, r := range d.Rows {
				if seen[r.Task] {
					t.Fatalf("%s on two pages", r.Task)
				}
				seen[r.Task] = true
			}
			if d.Next == "" {
				break
			}
			next, _ := url.Parse(d.Next)
			d = get(t, next.RawQuery)
			if d.First != len(seen)+1 {
				t.Errorf("page %d starts at row %d, want %d", page+1, d.First, len(seen)+1)
			}
		}
		if len(seen) != 453 {
			t.Errorf("%d rows on all pages, want 453", len(seen))
		}
		// Every count is exact under the bounds.
		if d.DrawnMore {
			t.Errorf("the last page says more than %d drawn", d.Drawn)
		}
	})
	t.Run("a page without its row number counts the rows before", func(t *testing.T) {
		t.Parallel()
		// many_000 is the fourth row, after a, b and e.
		d := get(t, fromQ+"&after=many_099")
		if d.First != 104 || d.Drawn != 453 || d.DrawnMore || d.Rows[0].Task != "many_100" {
			t.Errorf("after many_099: rows from %d of %d (more: %v), first %s; want from 104 of 453", d.First, d.Drawn, d.DrawnMore, d.Rows[0].Task)
		}
		// The link says the number, and the page believes it.
		next, _ := url.Parse(d.Next)
		if got := next.Query().Get("row"); got != "304" {
			t.Errorf("the next page's link says row %q, want 304", got)
		}
		if d := get(t, fromQ+"&after=many_099&row=104"); d.First != 104 || d.Rows[0].Task != "many_100" || d.Drawn != 453 {
			t.Errorf("after many_099, row 104: rows from %d of %d, first %s", d.First, d.Drawn, d.Rows[0].Task)
		}
		for _, bad := range []string{"0", "-1", "x"} {
			if _, _, err := u.timeline(asRole("/timeline?after=a&row="+bad, auth.Viewer)); err == nil || !strings.Contains(err.Error(), "row:") {
				t.Errorf("row=%s: %v, want an error naming row", bad, err)
			}
		}
	})
	t.Run("grouped", func(t *testing.T) {
		t.Parallel()
		d := get(t, fromQ+"&q=[a-e]&group=label")
		var got []string
		for _, c := range d.Charts {
			var names []string
			for _, r := range c.Rows {
				names = append(names, r.Task)
			}
			got = append(got, fmt.Sprintf("%s: %s", c.Heading, strings.Join(names, " ")))
		}
		if want := []string{"Label nightly: a b", "No label: e"}; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("grouped by label: %q, want %q", got, want)
		}
		if d := get(t, fromQ+"&q=[a-e]"); len(d.Charts) != 1 || d.Charts[0].Heading != "" || len(d.Charts[0].Rows) != 3 {
			t.Errorf("not grouped: %+v", d.Charts)
		}
		if _, _, err := u.timeline(asRole("/timeline?group=colour", auth.Viewer)); err == nil || !strings.Contains(err.Error(), "group:") {
			t.Errorf("a bad grouping: %v", err)
		}
	})
	t.Run("planned fires are not cut silently", func(t *testing.T) {
		t.Parallel()
		now := s.Now().Truncate(time.Minute).Add(time.Minute)
		d := get(t, "span=24h&task=often&from="+url.QueryEscape(now.Format(time.RFC3339)))
		if len(d.Rows) != 1 {
			t.Fatalf("%d rows", len(d.Rows))
		}
		r := d.Rows[0]
		// A fire a minute over 24 hours from a minute boundary.
		if r.Planned != tlPlans || r.Planned+r.Cut != 24*60 || d.PlansCut != r.Cut || r.CutMore {
			t.Errorf("drawn %d, cut %d (more: %v), page cut %d; want %d drawn of 1440", r.Planned, r.Cut, r.CutMore, d.PlansCut, tlPlans)
		}
		// A range around now: the task's next fire makes its row.
		if d := get(t, "span=1h&q=often"); len(d.Rows) != 1 || d.Rows[0].Planned < 29 {
			t.Errorf("around now: %d rows, %+v", len(d.Rows), d.Rows)
		}
	})
	t.Run("asked by name, the same rows", func(t *testing.T) {
		t.Parallel()
		uiWith := func(runs int64) *UI {
			cfg := u.cfg
			cfg.Scheduler = runsAbout{cfg.Scheduler, runs}
			ui, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			return ui
		}
		wholeRange, byName := uiWith(0), uiWith(1<<40)
		now := url.QueryEscape(s.Now().Truncate(time.Minute).Format(time.RFC3339))
		for _, query := range []string{
			fromQ, fromQ + "&q=[a-e]", fromQ + "&label=nightly", fromQ + "&q=many_44*", fromQ + "&q=MANY_0",
			fromQ + "&after=many_099", fromQ + "&after=many_099&row=104", "span=1h&q=often", "span=168h",
			"span=24h&from=" + now, "span=3h&q=[a-e]&from=" + now,
		} {
			_, whole, err := wholeRange.timeline(asRole("/timeline?"+query, auth.Viewer))
			if err != nil {
				t.Fatal(err)
			}
			_, named, err := byName.timeline(asRole("/timeline?"+query, auth.Viewer))
			if err != nil {
				t.Fatal(err)
			}
			sum := func(d timelineData) string {
				var rows []string
				for _, r := range d.Rows {
					rows = append(rows, fmt.Sprintf("%s:%d", r.Task, r.Runs))
				}
				return fmt.Sprintf("drawn %d (more %v) matched %d from %d next %q: %v", d.Drawn, d.DrawnMore, d.Matched, d.First, d.Next, rows)
			}
			if a, b := sum(whole.(timelineData)), sum(named.(timelineData)); a != b {
				t.Errorf("%s:\nthe whole range: %s\nby name:         %s", query, a, b)
			}
		}
	})
	t.Run("the last tick's label fits", func(t *testing.T) {
		t.Parallel()
		for _, span := range []string{"1h", "24h", "168h"} {
			d := get(t, "span="+span+"&from="+url.QueryEscape(from.Format(time.RFC3339)))
			last := d.Ticks[len(d.Ticks)-1]
			// Labels are centred on their tick, at most 12 characters of
			// about 6 units each.
			if half := float64(len(last.Label)) * 6 / 2; last.X+half > float64(d.Width) {
				t.Errorf("%s: the last tick's label %q at %v overflows the width %d", span, last.Label, last.X, d.Width)
			}
		}
	})
}

// TestTimelineCountBound: past its page, a timeline walks at most tlWalk
// tasks to count the rows after it, and says that there are more than
// it counted, on the page too.
func TestTimelineCountBound(t *testing.T) {
	t.Parallel()
	from := time.Date(2026, 11, 20, 6, 0, 0, 0, time.UTC)
	n := tlRows + tlWalk + 100
	var defs strings.Builder
	for i := range n {
		fmt.Fprintf(&defs, "insert_task: w_%05d\ntype: callable\nfunction: log\n\n", i)
	}
	_, u := withHistory(t, defs.String(), func(last int64) store.Batch {
		var b store.Batch
		for i := range n {
			start := from.Add(time.Duration(i) * time.Second)
			b.Runs = append(b.Runs, job.Run{ID: last + 1 + int64(i), Task: fmt.Sprintf("w_%05d", i), Status: job.Success, Start: start, End: start.Add(time.Minute)})
		}
		return b
	})
	path := "/timeline?span=6h&q=w_&from=" + url.QueryEscape(from.Format(time.RFC3339))
	_, data, err := u.timeline(asRole(path, auth.Viewer))
	if err != nil {
		t.Fatal(err)
	}
	d := data.(timelineData)
	if len(d.Rows) != tlRows || d.Drawn != tlRows+tlWalk || !d.DrawnMore || !d.MatchedMore || d.Next == "" {
		t.Fatalf("%d rows, %d drawn (more: %v), %d matched (more: %v), next %q; want %d rows of more than %d",
			len(d.Rows), d.Drawn, d.DrawnMore, d.Matched, d.MatchedMore, d.Next, tlRows, tlRows+tlWalk)
	}
	w := httptest.NewRecorder()
	u.ServeHTTP(w, asRole(path, auth.Viewer))
	want := fmt.Sprintf("More than %d tasks match the filter; more than %d of them have a run", tlRows+tlWalk, tlRows+tlWalk)
	if body := w.Body.String(); !strings.Contains(body, want) {
		t.Errorf("the page does not say %q:\n%s", want, body)
	}
	// The last page counts the rows to the end exactly.
	_, data, err = u.timeline(asRole(path+"&after=w_05099&row=5101", auth.Viewer))
	if err != nil {
		t.Fatal(err)
	}
	if d := data.(timelineData); d.Drawn != n || d.DrawnMore || d.Next != "" || d.First != 5101 || len(d.Rows) != tlRows {
		t.Errorf("the last page: %d rows from %d of %d (more: %v), next %q; want %d from 5101 of %d", len(d.Rows), d.First, d.Drawn, d.DrawnMore, d.Next, tlRows, n)
	}
}

// TestTimelineCharts: grouped rows go in one chart a group, in the
// order of the groups' names with the rows of no group last, each chart
// with its own rows' places and an ID no other page's chart has.
func TestTimelineCharts(t *testing.T) {
	t.Parallel()
	rows := []tlRow{{Task: "a", group: "x"}, {Task: "b"}, {Task: "c", group: "w"}, {Task: "d", group: "x"}}
	got := charts(rows, "bundle", 201)
	want := []struct {
		id, heading string
		tasks       []string
	}{{"tl-201-0", "Bundle w", []string{"c"}}, {"tl-201-1", "Bundle x", []string{"a", "d"}}, {"tl-201-2", "No bundle", []string{"b"}}}
	if len(got) != len(want) {
		t.Fatalf("%d charts, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		c := got[i]
		var tasks []string
		for j, r := range c.Rows {
			tasks = append(tasks, r.Task)
			if r.Y != tlHeader+j*tlRowH {
				t.Errorf("%s: row %s at %d, want %d", w.heading, r.Task, r.Y, tlHeader+j*tlRowH)
			}
		}
		if c.ID != w.id || c.Heading != w.heading || fmt.Sprint(tasks) != fmt.Sprint(w.tasks) || c.Height != tlHeader+len(w.tasks)*tlRowH+4 {
			t.Errorf("chart %d: %s %q %v height %d, want %s %q %v", i, c.ID, c.Heading, tasks, c.Height, w.id, w.heading, w.tasks)
		}
	}
	if got := charts(rows, "", 1); len(got) != 1 || got[0].Heading != "" || len(got[0].Rows) != 4 || got[0].ID != "tl-1-0" {
		t.Errorf("not grouped: %+v", got)
	}
}

// runsAbout is a scheduler whose store says that every range holds so
// many runs: few, and the timeline reads the whole range at once; many,
// and it asks about its tasks by name.
type runsAbout struct {
	Scheduler
	runs int64
}

func (r runsAbout) Store() store.Store { return runsAboutStore{r.Scheduler.Store(), r.runs} }

type runsAboutStore struct {
	store.Store
	runs int64
}

func (r runsAboutStore) RunsAbout(context.Context, time.Time, time.Time) (int64, error) {
	return r.runs, nil
}
