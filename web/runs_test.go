package web

import (
	"cmp"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/auth"
	"github.com/gnomon-sched/gnomon/executor"
	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/scheduler"
	"github.com/gnomon-sched/gnomon/store"
	"github.com/gnomon-sched/gnomon/store/sqlite"
)

// withHistory returns a started scheduler on a fresh SQLite store with
// the definitions applied and, when history is given, the history it
// returns written into the store while the scheduler was stopped (as the
// page benchmarks do), and its UI.
func withHistory(t *testing.T, text string, history func(lastRun int64) store.Batch) (*scheduler.Scheduler, *UI) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	st, err := sqlite.Open(ctx, filepath.Join(dir, "gnomon.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	start := func() *scheduler.Scheduler {
		runner, err := executor.NewLocal(executor.LocalConfig{Dir: filepath.Join(dir, "runs")})
		if err != nil {
			t.Fatal(err)
		}
		s, err := scheduler.New(ctx, scheduler.Config{Store: st, Runner: runner, DataDir: dir, Location: time.UTC})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			s.Stop(context.Background())
			runner.Stop(context.Background())
		})
		return s
	}
	s := start()
	if _, err := s.Define(ctx, scheduler.DefineFile{File: "history.def", Text: text}); err != nil {
		t.Fatal(err)
	}
	if history != nil {
		if err := s.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		snap, err := st.Load(ctx)
		if err != nil {
			t.Fatal(err)
		}
		b := history(snap.LastRun)
		if err := st.Commit(ctx, &b); err != nil {
			t.Fatal(err)
		}
		s = start()
	}
	u, err := New(Config{Scheduler: s, Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	return s, u
}

const historyDefs = `insert_task: a
type: callable
function: log
label: nightly

insert_task: b
type: callable
function: log
label: nightly

insert_task: bun
type: bundle

insert_task: c
type: callable
function: log
parent: bun

insert_task: d
type: callable
function: log
parent: bun

insert_task: e
type: callable
function: log
`

// historyRuns are 450 ended runs of the tasks of historyDefs over ten
// days before t0, three starting at each instant, one in five failed and
// one in eleven aborted.
func historyRuns(t0 time.Time) func(int64) store.Batch {
	return func(last int64) store.Batch {
		var b store.Batch
		tasks := []string{"a", "b", "bun", "c", "d", "e"}
		for i := range 450 {
			start := t0.Add(-10*24*time.Hour + time.Duration(i/3)*96*time.Minute)
			r := job.Run{ID: last + 1 + int64(i), Task: tasks[i%len(tasks)], Status: job.Success, Start: start, End: start.Add(time.Duration(1+i%7) * time.Minute), Trigger: "start"}
			switch {
			case i%5 == 0:
				r.Status, r.ExitCode, r.Message = job.Failure, 1, "exit status 1"
			case i%11 == 0:
				r.Status, r.Message = job.Aborted, "aborted"
			}
			b.Runs = append(b.Runs, r)
			b.Audit = append(b.Audit, job.AuditRecord{Task: r.Task, RunID: r.ID, Launch: r.Start, Stop: r.End, Result: job.ResultNormal, Status: r.Status})
		}
		return b
	}
}

// asRole returns a request for path as an identity of role.
func asRole(path string, role auth.Role) *http.Request {
	r := httptest.NewRequest(http.MethodGet, path, nil)
	return r.WithContext(auth.NewContext(r.Context(), &auth.Identity{Name: "someone", Role: role}))
}

// TestRunsPage pages through the runs of every task, under every filter,
// to the oldest and back to the newest, and checks the pages against the
// runs chosen by sorting them all.
func TestRunsPage(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	s, u := withHistory(t, historyDefs, historyRuns(t0))
	all, err := s.Store().Runs(context.Background(), store.RunQuery{})
	if err != nil || len(all) != 450 {
		t.Fatalf("%d runs stored, %v", len(all), err)
	}
	byStart := func(a, b job.Run) int { return cmp.Or(b.Start.Compare(a.Start), cmp.Compare(b.ID, a.ID)) }
	slices.SortFunc(all, byStart)
	page := func(t *testing.T, path string, role auth.Role) runsData {
		t.Helper()
		_, d, err := u.runs(asRole(path, role))
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		return d.(runsData)
	}
	for _, c := range []struct {
		query string
		keep  func(job.Run) bool
	}{
		{"", func(job.Run) bool { return true }},
		{"status=failure", func(r job.Run) bool { return r.Status == job.Failure }},
		{"task=b", func(r job.Run) bool { return r.Task == "b" }},
		{"label=nightly", func(r job.Run) bool { return r.Task == "a" || r.Task == "b" }},
		{"bundle=bun", func(r job.Run) bool { return r.Task == "bun" || r.Task == "c" || r.Task == "d" }},
		{"label=nightly&status=aborted", func(r job.Run) bool { return (r.Task == "a" || r.Task == "b") && r.Status == job.Aborted }},
		{"from=2026-11-20&to=2026-11-23", func(r job.Run) bool {
			return !r.Start.Before(time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)) && r.Start.Before(time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC))
		}},
		{"bundle=bun&task=e", func(job.Run) bool { return false }},
	} {
		t.Run(c.query, func(t *testing.T) {
			t.Parallel()
			var want []int64
			for _, r := range all {
				if c.keep(r) {
					want = append(want, r.ID)
				}
			}
			var (
				pages [][]int64
				got   []int64
				path  = "/runs?" + c.query
				last  runsData
			)
			for path != "" {
				d := page(t, path, auth.Admin)
				var ids []int64
				for _, r := range d.Runs {
					ids = append(ids, r.ID)
				}
				if len(pages) > 0 && d.Newer == "" {
					t.Errorf("%s: an older page links to no newer one", path)
				}
				pages, got, path, last = append(pages, ids), append(got, ids...), d.Older, d
				if len(pages) > 20 {
					t.Fatal("more pages than runs")
				}
			}
			if !slices.Equal(want, got) {
				t.Fatalf("paged to the oldest: %d runs\n got %v\nwant %v", len(got), got, want)
			}
			if want := (len(want) + historyRows - 1) / historyRows; len(pages) != max(want, 1) {
				t.Errorf("%d pages of at most %d runs, want %d", len(pages), historyRows, want)
			}
			// And back, one newer page at a time.
			for i := len(pages) - 1; i > 0; i-- {
				d := page(t, last.Newer, auth.Admin)
				var ids []int64
				for _, r := range d.Runs {
					ids = append(ids, r.ID)
				}
				if !slices.Equal(ids, pages[i-1]) {
					t.Fatalf("the page newer than page %d:\n got %v\nwant %v", i, ids, pages[i-1])
				}
				if (i > 1) != (d.Newer != "") {
					t.Errorf("page %d links to a newer one: %q", i-1, d.Newer)
				}
				last = d
			}
		})
	}
	// Oldest first: paged through to the newest, and back, under a few
	// filters, by the same keys.
	for _, c := range []struct {
		query string
		keep  func(job.Run) bool
	}{
		{"sort=start", func(job.Run) bool { return true }},
		{"sort=start&status=failure", func(r job.Run) bool { return r.Status == job.Failure }},
		{"sort=start&label=nightly", func(r job.Run) bool { return r.Task == "a" || r.Task == "b" }},
		{"sort=start&task=b&from=2026-11-20", func(r job.Run) bool {
			return r.Task == "b" && !r.Start.Before(time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC))
		}},
	} {
		t.Run(c.query, func(t *testing.T) {
			t.Parallel()
			var want []int64
			for _, r := range slices.Backward(all) {
				if c.keep(r) {
					want = append(want, r.ID)
				}
			}
			var (
				pages [][]int64
				got   []int64
				path  = "/runs?" + c.query
				last  runsData
			)
			for path != "" {
				d := page(t, path, auth.Admin)
				if !d.Oldest {
					t.Fatalf("%s: not oldest first", path)
				}
				var ids []int64
				for _, r := range d.Runs {
					ids = append(ids, r.ID)
				}
				if (len(pages) > 0) != (d.Older != "") {
					t.Errorf("%s: page %d links to an older one: %q", path, len(pages), d.Older)
				}
				pages, got, path, last = append(pages, ids), append(got, ids...), d.Newer, d
				if len(pages) > 20 {
					t.Fatal("more pages than runs")
				}
			}
			if !slices.Equal(want, got) {
				t.Fatalf("paged to the newest: %d runs\n got %v\nwant %v", len(got), got, want)
			}
			for i := len(pages) - 1; i > 0; i-- {
				d := page(t, last.Older, auth.Admin)
				var ids []int64
				for _, r := range d.Runs {
					ids = append(ids, r.ID)
				}
				if !slices.Equal(ids, pages[i-1]) {
					t.Fatalf("the page older than page %d:\n got %v\nwant %v", i, ids, pages[i-1])
				}
				last = d
			}
		})
	}
	// The longest first: paged through to the shortest, and back.
	byTook := slices.Clone(all)
	slices.SortStableFunc(byTook, func(a, b job.Run) int {
		return cmp.Or(cmp.Compare(b.End.Sub(b.Start), a.End.Sub(a.Start)), cmp.Compare(b.ID, a.ID))
	})
	for _, c := range []struct {
		query string
		keep  func(job.Run) bool
	}{
		{"sort=took", func(job.Run) bool { return true }},
		{"sort=took&status=failure", func(r job.Run) bool { return r.Status == job.Failure }},
		{"sort=took&label=nightly&from=2026-11-20", func(r job.Run) bool {
			return (r.Task == "a" || r.Task == "b") && !r.Start.Before(time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC))
		}},
	} {
		t.Run(c.query, func(t *testing.T) {
			t.Parallel()
			var want []int64
			for _, r := range byTook {
				if c.keep(r) {
					want = append(want, r.ID)
				}
			}
			var (
				pages [][]int64
				got   []int64
				path  = "/runs?" + c.query
				last  runsData
			)
			for path != "" {
				d := page(t, path, auth.Admin)
				if !d.ByTook {
					t.Fatalf("%s: not the longest first", path)
				}
				var ids []int64
				for _, r := range d.Runs {
					ids = append(ids, r.ID)
				}
				pages, got, path, last = append(pages, ids), append(got, ids...), d.Older, d
				if len(pages) > 20 {
					t.Fatal("more pages than runs")
				}
			}
			if !slices.Equal(want, got) {
				t.Fatalf("paged to the shortest: %d runs\n got %v\nwant %v", len(got), got, want)
			}
			for i := len(pages) - 1; i > 0; i-- {
				d := page(t, last.Newer, auth.Admin)
				var ids []int64
				for _, r := range d.Runs {
					ids = append(ids, r.ID)
				}
				if !slices.Equal(ids, pages[i-1]) {
					t.Fatalf("the page longer than page %d:\n got %v\nwant %v", i, ids, pages[i-1])
				}
				last = d
			}
		})
	}
	t.Run("the order lives in the links", func(t *testing.T) {
		t.Parallel()
		d := page(t, "/runs?sort=start&label=nightly", auth.Admin)
		next, _ := url.Parse(d.Newer)
		back, _ := url.Parse(d.Resort)
		if next.Query().Get("sort") != "start" || next.Query().Get("label") != "nightly" || back.Query().Get("sort") != "" || back.Query().Get("label") != "nightly" {
			t.Errorf("the next page %q and the other order %q", d.Newer, d.Resort)
		}
		d = page(t, "/runs?sort=took&label=nightly", auth.Admin)
		next, _ = url.Parse(d.Older)
		back, _ = url.Parse(d.TookSort)
		if next.Query().Get("sort") != "took" || next.Query().Get("label") != "nightly" || back.Query().Get("sort") != "" || back.Query().Get("label") != "nightly" {
			t.Errorf("the next page %q and the way back %q", d.Older, d.TookSort)
		}
		if _, _, err := u.runs(asRole("/runs?sort=size", auth.Admin)); err == nil || !strings.Contains(err.Error(), "sort:") {
			t.Errorf("a bad order: %v", err)
		}
	})
	t.Run("filters live in the links", func(t *testing.T) {
		t.Parallel()
		d := page(t, "/runs?from=2026-11-01&label=nightly", auth.Admin)
		q, err := url.Parse(d.Older)
		if err != nil || q.Query().Get("from") != "2026-11-01" || q.Query().Get("label") != "nightly" || q.Query().Get("older") == "" {
			t.Errorf("the next page is %q, want the same filter and older", d.Older)
		}
		if d.Tasks != 2 {
			t.Errorf("the label chooses %d tasks, want 2", d.Tasks)
		}
	})
	t.Run("a log in one click for those who may read it", func(t *testing.T) {
		t.Parallel()
		admin, viewer := page(t, "/runs?status=failure", auth.Admin), page(t, "/runs?status=failure", auth.Viewer)
		if r := admin.Runs[0]; !admin.Logs[r.ID] || r.Task == "bun" {
			t.Errorf("an admin gets no log link for run %d of %s", r.ID, r.Task)
		}
		for _, r := range admin.Runs {
			if r.Task == "bun" && admin.Logs[r.ID] {
				t.Errorf("a bundle's run %d links to a log", r.ID)
			}
		}
		if len(viewer.Logs) != 0 {
			t.Errorf("a viewer gets log links: %v", viewer.Logs)
		}
	})
	t.Run("bad filters say what to give", func(t *testing.T) {
		t.Parallel()
		for query, want := range map[string]string{
			"status=broken":                 `status: "broken" is not a status of a run: give running, success, failure or aborted`,
			"status=frozen":                 `status: "frozen" is not a status of a run`,
			"from=2026-13-01":               `from: "2026-13-01" is not a day: give it as 2006-01-02`,
			"to=yesterday":                  `to: "yesterday" is not a day`,
			"from=2026-11-20&to=2026-11-19": `from 2026-11-20 is after to 2026-11-19`,
			"older=x":                       `older: "x" is not a run number`,
			"newer=999999":                  `no run 999999`,
			"older=1&newer=2":               `give older or newer, not both`,
		} {
			_, _, err := u.runs(asRole("/runs?"+query, auth.Admin))
			var he *httpError
			if !errors.As(err, &he) || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: %v, want an error saying %q", query, err, want)
			}
		}
	})
}

// TestAuditPage pages through the audit newest first, with filters, to
// the oldest and back.
func TestAuditPage(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	s, u := withHistory(t, historyDefs, historyRuns(t0))
	all, err := s.Store().Audit(context.Background(), 0, 0)
	if err != nil || len(all) != 450 {
		t.Fatalf("%d audit records, %v", len(all), err)
	}
	slices.Reverse(all)
	for _, c := range []struct {
		query string
		keep  func(job.AuditRecord) bool
	}{
		{"", func(job.AuditRecord) bool { return true }},
		{"task=c", func(a job.AuditRecord) bool { return a.Task == "c" }},
		{"status=failure", func(a job.AuditRecord) bool { return a.Status == job.Failure }},
		{"task=a&status=success", func(a job.AuditRecord) bool { return a.Task == "a" && a.Status == job.Success }},
		{"from=2026-11-20&to=2026-11-23", func(a job.AuditRecord) bool { return stoppedIn(a, "2026-11-20", "2026-11-24") }},
		{"from=2026-11-25", func(a job.AuditRecord) bool { return stoppedIn(a, "2026-11-25", "2100-01-01") }},
		{"to=2026-11-19", func(a job.AuditRecord) bool { return stoppedIn(a, "2000-01-01", "2026-11-20") }},
		{"task=c&status=failure&from=2026-11-19&to=2026-11-26", func(a job.AuditRecord) bool {
			return a.Task == "c" && a.Status == job.Failure && stoppedIn(a, "2026-11-19", "2026-11-27")
		}},
	} {
		t.Run(c.query, func(t *testing.T) {
			t.Parallel()
			var want, got []int64
			for _, a := range all {
				if c.keep(a) {
					want = append(want, a.Seq)
				}
			}
			var pages [][]int64
			var last auditData
			for path := "/audit?" + c.query; path != ""; path = last.Older {
				_, d, err := u.audit(asRole(path, auth.Viewer))
				if err != nil {
					t.Fatal(err)
				}
				last = d.(auditData)
				var seqs []int64
				for _, a := range last.Records {
					seqs = append(seqs, a.Seq)
				}
				// The paging links keep the filter.
				filter, _ := url.ParseQuery(c.query)
				for _, link := range []string{last.Older, last.Newer, last.First} {
					if link == "" {
						continue
					}
					l, _ := url.Parse(link)
					for k := range filter {
						if l.Query().Get(k) != filter.Get(k) {
							t.Errorf("link %s loses the filter %s", link, c.query)
						}
					}
				}
				pages, got = append(pages, seqs), append(got, seqs...)
				if len(pages) > 10 {
					t.Fatal("more pages than records")
				}
			}
			if !slices.Equal(want, got) {
				t.Fatalf("paged to the oldest:\n got %v\nwant %v", got, want)
			}
			for i := len(pages) - 1; i > 0; i-- {
				_, d, err := u.audit(asRole(last.Newer, auth.Viewer))
				if err != nil {
					t.Fatal(err)
				}
				last = d.(auditData)
				var seqs []int64
				for _, a := range last.Records {
					seqs = append(seqs, a.Seq)
				}
				if !slices.Equal(seqs, pages[i-1]) {
					t.Fatalf("the page newer than page %d:\n got %v\nwant %v", i, seqs, pages[i-1])
				}
			}
		})
	}
	for query, want := range map[string]string{
		"status=frozen":                 "give success, failure or aborted",
		"from=yesterday":                `from: "yesterday" is not a day: give it as 2006-01-02`,
		"to=2026-13-01":                 `to: "2026-13-01" is not a day`,
		"from=2026-11-25&to=2026-11-20": "from 2026-11-25 is after to 2026-11-20: give the first day, then the last",
	} {
		var he *httpError
		if _, _, err := u.audit(asRole("/audit?"+query, auth.Viewer)); !errors.As(err, &he) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error saying %q", query, err, want)
		}
	}
}

// stoppedIn reports whether a record's run stopped from the start of day
// from (UTC) to before the start of day to.
func stoppedIn(a job.AuditRecord, from, to string) bool {
	f, _ := time.Parse(time.DateOnly, from)
	t, _ := time.Parse(time.DateOnly, to)
	return !a.Stop.Before(f) && a.Stop.Before(t)
}
