package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon"
	"github.com/gnomon-sched/gnomon/api"
	"github.com/gnomon-sched/gnomon/auth"
	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/scheduler"
	"github.com/gnomon-sched/gnomon/store"
	"github.com/gnomon-sched/gnomon/store/sqlite"
)

// The sizes of the history the page benchmarks render from: the UI's
// goal is that every page renders in under 100 ms of server time with
// them (docs/ui.md). GNOMON_BENCH_TASKS, GNOMON_BENCH_RUNS and
// GNOMON_BENCH_DAYS set others: a year of runs, say.
var (
	benchTasks = benchSize("GNOMON_BENCH_TASKS", 100_000, benchBundle)
	benchRuns  = benchSize("GNOMON_BENCH_RUNS", 1_000_000, benchBundle)
	// benchDays is how many days before now the runs spread over.
	benchDays = benchSize("GNOMON_BENCH_DAYS", 10, 1)
)

// benchBundle is how many tasks each bundle comes with (see
// largeDefinitions).
const benchBundle = 10

// benchSize reads a size of the benchmarks from the environment: a
// positive multiple of unit.
func benchSize(name string, def, unit int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < unit || n%unit != 0 {
		panic(fmt.Sprintf("%s=%q: give a positive whole number, a multiple of %d", name, v, unit))
	}
	return n
}

// large is a started scheduler holding benchTasks tasks and benchRuns
// runs, shared by the benchmarks of one test binary: it takes a while to
// build.
var large struct {
	once    sync.Once
	err     error
	s       *gnomon.Scheduler
	h       http.Handler
	cookie  *http.Cookie
	token   string
	dir     string
	built   time.Duration
	failing string // a task whose last run failed
	// midRun is a run halfway through the history, midDay its day.
	midRun int64
	midDay time.Time
}

// largeScheduler returns the shared scheduler, building it the first
// time. Its data directory is removed when the benchmarks end (see
// TestMain).
func largeScheduler(b *testing.B) (http.Handler, *http.Cookie) {
	b.Helper()
	large.once.Do(func() {
		t0 := time.Now()
		large.err = buildLarge()
		large.built = time.Since(t0)
		if large.err == nil {
			b.Logf("%d tasks and %d runs built in %s", benchTasks, benchRuns, large.built.Round(time.Millisecond))
		}
	})
	if large.err != nil {
		b.Fatal(large.err)
	}
	return large.h, large.cookie
}

// TestMain stops the shared scheduler of the benchmarks, if they built
// it, and removes its data unless GNOMON_BENCH_DIR keeps it.
func TestMain(m *testing.M) {
	code := m.Run()
	if large.s != nil {
		large.s.Stop(context.Background())
	}
	if large.dir != "" && os.Getenv("GNOMON_BENCH_DIR") == "" {
		os.RemoveAll(large.dir)
	}
	os.Exit(code)
}

// builtHistory describes a history kept in GNOMON_BENCH_DIR: its sizes,
// and the run halfway through it.
type builtHistory struct {
	Tasks, Runs, Days int
	MidRun            int64
	MidDay            time.Time
}

// keptHistory reads the description of the history kept in dir, and
// reports whether it has the sizes asked for.
func keptHistory(dir string) bool {
	b, err := os.ReadFile(filepath.Join(dir, "history.json"))
	if err != nil {
		return false
	}
	var h builtHistory
	if json.Unmarshal(b, &h) != nil || h.Tasks != benchTasks || h.Runs != benchRuns || h.Days != benchDays {
		return false
	}
	large.midRun, large.midDay = h.MidRun, h.MidDay
	return true
}

// taskName is the name of the k-th task: names sort as their numbers do.
func taskName(k int) string { return fmt.Sprintf("t%06d", k) }

// largeDefinitions returns the definitions of tasks first to first+n-1,
// by tens: a bundle of three function tasks, the second and third
// starting when the one before succeeds; then function tasks of their
// own, two on cron expressions, two on intervals, one that starts when
// the bundle succeeds, one only when started. One task in ten has a
// label.
func largeDefinitions(first, n int) string {
	var b strings.Builder
	for k := first; k < first+n; k++ {
		name, bundle := taskName(k), taskName(k-k%benchBundle)
		if k%benchBundle == 0 {
			fmt.Fprintf(&b, "insert_task: %s\ntype: bundle\nrun_days: mo,we,fr\nstart_times: %02d:%02d\n\n", name, k%24, k%60)
			continue
		}
		fmt.Fprintf(&b, "insert_task: %s\ntype: callable\nfunction: log\n", name)
		switch k % benchBundle {
		case 1:
			fmt.Fprintf(&b, "parent: %s\n", bundle)
		case 2, 3:
			fmt.Fprintf(&b, "parent: %s\ncondition: su(%s)\n", bundle, taskName(k-1))
		case 4, 5:
			fmt.Fprintf(&b, "cron: %d %d * * *\n", k%60, k%24)
		case 6, 7:
			fmt.Fprintf(&b, "start_date: 2026-01-01 %02d:%02d\ninterval: %d hours\n", k%24, k%60, 1+k%12)
		case 8:
			fmt.Fprintf(&b, "condition: su(%s)\n", bundle)
		}
		if k%benchBundle == 4 {
			fmt.Fprintf(&b, "label: load partition %d\n", k%97)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// buildLarge builds the shared scheduler: benchTasks tasks defined through
// the scheduler, then benchRuns runs written into its store. With
// GNOMON_BENCH_DIR set, the history is built there and kept, and a later
// run with the same sizes starts from it (a history of 10^7 runs takes
// minutes to write).
func buildLarge() error {
	ctx := context.Background()
	dir := os.Getenv("GNOMON_BENCH_DIR")
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "gnomon-web-bench-"); err != nil {
			return err
		}
	}
	large.dir = dir
	if !keptHistory(dir) {
		if err := buildHistory(ctx, dir); err != nil {
			return err
		}
	}
	var err error
	// A server that holds benchDays of history keeps it: the default
	// horizons would have the pruner deleting it under the benchmark.
	var keep gnomon.Retention
	if days := time.Duration(benchDays+1) * 24 * time.Hour; days > time.Duration(scheduler.DefaultRetention.Runs) {
		keep.Runs, keep.Fires, keep.Audit = job.Duration(days), job.Duration(days), job.Duration(days)
	}
	if large.s, err = gnomon.New(gnomon.Config{DataDir: dir, Location: time.UTC, Retention: keep}); err != nil {
		return err
	}
	if err := large.s.Start(ctx); err != nil {
		return err
	}
	if err := settle(ctx, large.s); err != nil {
		return err
	}
	tok, err := large.s.NewToken(ctx, auth.Request{Name: fmt.Sprintf("bench-%d", time.Now().UnixNano()), Role: auth.Admin}) // a kept history keeps the tokens of earlier runs
	if err != nil {
		return err
	}
	large.h, large.token = large.s.Handler(gnomon.HandlerConfig{Version: "bench"}), tok
	large.cookie, err = signIn(large.h, tok)
	return err
}

// buildHistory defines the tasks in a new data directory dir and writes
// their history, and describes it in dir/history.json.
func buildHistory(ctx context.Context, dir string) error {
	for _, f := range []string{"gnomon.db", "gnomon.db-wal", "gnomon.db-shm", "history.json"} {
		if err := os.Remove(filepath.Join(dir, f)); err != nil && !os.IsNotExist(err) {
			return err
		}
	}
	// The definitions go through the scheduler, as an operator's would.
	s, err := gnomon.New(gnomon.Config{DataDir: dir, Location: time.UTC})
	if err != nil {
		return err
	}
	if err := s.Start(ctx); err != nil {
		return err
	}
	const chunk = 10_000
	for first := 0; first < benchTasks; first += chunk {
		if err := s.Apply(ctx, fmt.Sprintf("large%d.def", first/chunk), largeDefinitions(first, min(chunk, benchTasks-first))); err != nil {
			s.Stop(ctx)
			return fmt.Errorf("define: %w", err)
		}
	}
	if err := s.Stop(ctx); err != nil {
		return err
	}
	// The history is written into the stopped scheduler's database
	// directly, in the scheduler's own batches: running 10^6 jobs would
	// take far longer and store the same rows.
	if err := writeHistory(ctx, filepath.Join(dir, "gnomon.db"), time.Now()); err != nil {
		return fmt.Errorf("history: %w", err)
	}
	b, err := json.Marshal(builtHistory{Tasks: benchTasks, Runs: benchRuns, Days: benchDays, MidRun: large.midRun, MidDay: large.midDay})
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "history.json"), b, 0o644)
}

// writeHistory stores benchRuns ended runs and their audit records,
// spread evenly over the tasks (bundles included) and over the benchDays
// days before now, and sets each task's state to its last run's outcome:
// one run in twenty fails.
func writeHistory(ctx context.Context, path string, now time.Time) error {
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		return err
	}
	defer st.Close()
	snap, err := st.Load(ctx)
	if err != nil {
		return err
	}
	states := map[string]job.State{}
	for _, r := range snap.Tasks {
		if r.Def.Type != job.Group {
			states[r.Def.Name] = r.State
		}
	}
	if len(states) != benchTasks {
		return fmt.Errorf("%d tasks stored, want %d", len(states), benchTasks)
	}
	perTask := benchRuns / benchTasks
	span := time.Duration(benchDays) * 24 * time.Hour
	step := span / time.Duration(benchRuns)
	id := snap.LastRun
	var batch store.Batch
	// Runs are written in the order the scheduler would have: by start
	// time, so that each task's runs interleave with all the others'.
	for i := range benchRuns {
		k, n := i%benchTasks, i/benchTasks
		name := taskName(k)
		id++
		start := now.Add(-span + time.Duration(i)*step).UTC()
		r := job.Run{ID: id, Task: name, Status: job.Success, Start: start, End: start.Add(time.Duration(1+i%90) * time.Second), Trigger: "start"}
		if (i/7)%20 == 0 {
			r.Status, r.ExitCode, r.Message = job.Failure, 1, "exit status 1"
		}
		batch.Runs = append(batch.Runs, r)
		batch.Audit = append(batch.Audit, job.AuditRecord{Task: r.Task, RunID: r.ID, Launch: r.Start, Stop: r.End, Result: job.ResultNormal, Status: r.Status, Message: r.Message})
		if i == benchRuns/2 {
			large.midRun, large.midDay = r.ID, r.Start.Truncate(24*time.Hour)
		}
		if n == perTask-1 {
			s := states[name]
			s.Status, s.Start, s.End = r.Status, job.At(r.Start), job.At(r.End)
			batch.States = append(batch.States, store.TaskState{Name: name, State: s})
		}
		if len(batch.Runs) == 20_000 || i == benchRuns-1 {
			if err := st.Commit(ctx, &batch); err != nil {
				return err
			}
			batch = store.Batch{}
		}
	}
	return nil
}

// settle waits until no task is ready or running: the history written
// behind the scheduler's back makes some conditions hold when it starts,
// and the runs they start end in a few seconds. Time triggers keep firing
// a run or two a second afterwards, as on any scheduler with that many
// tasks.
func settle(ctx context.Context, s *gnomon.Scheduler) error {
	deadline := time.Now().Add(5 * time.Minute)
	for quiet := 0; quiet < 3; {
		jobs, err := s.Jobs(ctx)
		if err != nil {
			return err
		}
		busy := 0
		for _, j := range jobs {
			if j.Status == job.Ready || j.Status == job.Running {
				busy++
			}
		}
		if quiet++; busy > 0 {
			quiet = 0
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d tasks still ready or running after 5 minutes", busy)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return nil
}

// signIn posts the sign-in form with a token, as a browser does, and
// returns the session cookie.
func signIn(h http.Handler, token string) (*http.Cookie, error) {
	req := httptest.NewRequest(http.MethodPost, "http://localhost/login", strings.NewReader(url.Values{"token": {token}, "next": {"/"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	for _, c := range w.Result().Cookies() {
		if c.Name == api.SessionCookie && c.Value != "" {
			return c, nil
		}
	}
	return nil, fmt.Errorf("sign-in: %d, no session cookie: %s", w.Code, w.Body)
}

// BenchmarkPage times the server's answer to a browser's request for a
// page, with benchTasks tasks and benchRuns runs in history: from the
// request to the last byte of the page, through the whole handler (the
// session check, the read of the scheduler and the store, the template).
// Its baseline, api_tasks, is the JSON API's first page of the task
// list, which a client asks for with a token.
func BenchmarkPage(b *testing.B) {
	// The history pages ask for a run halfway through the history, and
	// its day, which are known once it is built.
	mid := func() string { return strconv.FormatInt(large.midRun, 10) }
	day := func() string { return large.midDay.Format(time.DateOnly) }
	for _, page := range []struct {
		name, path string
		api        bool
		at         func() string // the path, when it is known only once the history is built
	}{
		{"overview", "/", false, nil},
		{"tasks", "/tasks", false, nil},
		{"tasks_failure", "/tasks?status=failure", false, nil},
		{"tasks_query", "/tasks?q=t0999", false, nil},
		{"task", "/tasks/" + taskName(benchTasks/2+1), false, nil},
		{"api_tasks", "/api/v1/tasks?count=100", true, nil},
		{"runs", "/runs", false, nil},
		{"runs_failure", "/runs?status=failure", false, nil},
		{"runs_task", "/runs?task=" + taskName(benchTasks/2+1), false, nil},
		{"runs_label", "/runs?label=load+partition+5", false, nil},
		{"runs_bundle", "/runs?bundle=" + taskName(benchTasks/2), false, nil},
		{"runs_aborted", "/runs?status=aborted", false, nil},
		{"runs_oldest", "/runs?sort=start", false, nil},
		{"runs_day_failure", "", false, func() string { return "/runs?status=failure&from=" + day() + "&to=" + day() }},
		{"runs_older", "", false, func() string { return "/runs?older=" + mid() }},
		{"runs_newer", "", false, func() string { return "/runs?status=failure&newer=" + mid() }},
		{"run", "", false, func() string { return "/runs/" + mid() }},
		{"timeline", "/timeline", false, nil},
		{"timeline_week", "/timeline?span=168h", false, nil},
		{"timeline_label", "/timeline?span=24h&label=load+partition+5", false, nil},
		// A range after now, whose planned fires the page works out, and
		// a page of rows after the first.
		{"timeline_later", "", false, func() string {
			return "/timeline?span=6h&from=" + url.QueryEscape(time.Now().Add(12*time.Hour).UTC().Format(time.RFC3339))
		}},
		{"timeline_rows", "/timeline?span=24h&after=" + taskName(benchTasks/2), false, nil},
		// A week before the history, where no task has a row: the page
		// walks every task, past the budget of tasks asked about by name.
		{"timeline_before", "", false, func() string {
			return "/timeline?span=168h&from=" + url.QueryEscape(time.Now().AddDate(0, 0, -benchDays-30).UTC().Format(time.RFC3339))
		}},
		{"audit", "/audit", false, nil},
		{"audit_task", "/audit?task=" + taskName(benchTasks/2+1), false, nil},
		{"audit_older", "", false, func() string { return "/audit?status=failure&older=" + mid() }},
	} {
		b.Run(page.name, func(b *testing.B) {
			h, cookie := largeScheduler(b)
			if page.at != nil {
				page.path = page.at()
			}
			get := func() *httptest.ResponseRecorder {
				req := httptest.NewRequest(http.MethodGet, "http://localhost"+page.path, nil)
				if page.api {
					req.Header.Set("Authorization", "Bearer "+large.token)
				} else {
					req.AddCookie(cookie)
				}
				w := httptest.NewRecorder()
				h.ServeHTTP(w, req)
				return w
			}
			if w := get(); w.Code != http.StatusOK {
				b.Fatalf("GET %s: %d %s", page.path, w.Code, w.Body)
			}
			b.ReportAllocs()
			var size int
			var took []time.Duration
			for b.Loop() {
				began := time.Now()
				w := get()
				took = append(took, time.Since(began))
				if w.Code != http.StatusOK {
					b.Fatalf("GET %s: %d", page.path, w.Code)
				}
				size = w.Body.Len()
			}
			b.ReportMetric(float64(size), "bytes/page")
			// The goal is on the slowest requests: p99 and the worst.
			slices.Sort(took)
			b.ReportMetric(float64(took[(len(took)-1)*99/100].Microseconds())/1000, "ms-p99")
			b.ReportMetric(float64(took[len(took)-1].Microseconds())/1000, "ms-max")
		})
	}
}
