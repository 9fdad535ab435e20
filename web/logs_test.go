package web_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon"
	"github.com/gnomon-sched/gnomon/auth"
	"github.com/gnomon-sched/gnomon/job"
)

// started returns a scheduler on cfg, in UTC, started, and stopped when
// the test ends.
func started(t *testing.T, cfg gnomon.Config) *gnomon.Scheduler {
	t.Helper()
	cfg.Location = time.UTC
	s, err := gnomon.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Stop(context.Background()) })
	return s
}

// The log of one run is the part of its task's log files it appended:
// of three runs, the second's shows its lines only; a run in flight
// shows what it wrote so far and polls for more.
func TestRunLogs(t *testing.T) {
	ctx := context.Background()
	s := started(t, gnomon.Config{DataDir: t.TempDir()})
	if err := s.Apply(ctx, "t.def", `insert_task: talk
type: callable
command: echo "out of run $GNOMON_RUN_ID"; echo "err of run $GNOMON_RUN_ID" >&2
out_log_file: talk.out
err_log_file: talk.err

insert_task: slow
type: callable
command: echo "begun"; exec sleep 60
out_log_file: slow.out
err_log_file: slow.err
`); err != nil {
		t.Fatal(err)
	}
	runs := func(task string) []job.Run {
		t.Helper()
		rs, err := s.Runs(ctx, task, 0)
		if err != nil {
			t.Fatal(err)
		}
		return rs
	}
	for n := 1; n <= 3; n++ {
		if err := s.Send(ctx, "talk", gnomon.ActStart); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			if rs := runs("talk"); len(rs) == n && rs[0].Done() {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("run %d of talk did not end", n)
			}
		}
	}
	get := adminGet(t, s)
	second := runs("talk")[1]
	if second.Log == nil || second.Log.OutFrom <= 0 || second.Log.OutTo <= second.Log.OutFrom {
		t.Fatalf("run %d records its log span %+v", second.ID, second.Log)
	}
	code, body := get("/tasks/talk/runs/"+itoa(second.ID)+"/logs", "HX-Request", "true")
	if code != http.StatusOK {
		t.Fatalf("status %d: %s", code, body)
	}
	for _, want := range []string{"out of run " + itoa(second.ID) + "\n", "err of run " + itoa(second.ID) + "\n"} {
		if strings.Count(body, want) != 1 {
			t.Errorf("the log of run %d does not hold %q once:\n%s", second.ID, want, body)
		}
	}
	if strings.Count(body, "of run") != 2 || strings.Contains(body, "every 2s") {
		t.Errorf("the log of run %d holds other runs' lines, or polls:\n%s", second.ID, body)
	}
	if code, _ := get("/tasks/talk/runs/99/logs", "HX-Request", "true"); code != http.StatusNotFound {
		t.Errorf("the log of a run that does not exist: status %d", code)
	}
	if code, body := get("/tasks/talk"); code != http.StatusOK || !strings.Contains(body, `href="/tasks/talk/runs/`+itoa(second.ID)+`/logs" data-runlog`) {
		t.Errorf("the task page does not link the runs' logs: %d\n%s", code, body)
	}

	// A run in flight: what it wrote so far, polled for more.
	if err := s.Send(ctx, "slow", gnomon.ActStart); err != nil {
		t.Fatal(err)
	}
	var live string
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(live, "begun"); time.Sleep(20 * time.Millisecond) {
		if rs := runs("slow"); len(rs) == 1 {
			_, live = get("/tasks/slow/runs/"+itoa(rs[0].ID)+"/logs", "HX-Request", "true")
		}
		if time.Now().After(deadline) {
			t.Fatalf("the log of the running run never showed its output:\n%s", live)
		}
	}
	if !strings.Contains(live, `hx-trigger="every 2s"`) || !strings.Contains(live, "running") {
		t.Errorf("the log of a running run does not poll:\n%s", live)
	}
	if err := s.Send(ctx, "slow", gnomon.ActAbort); err != nil {
		t.Fatal(err)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// workerRunner ends each run at once as a cluster's worker w9 would report
// it, with the span it measured on its machine: 13 bytes of out log,
// nothing in the err log. A real worker cannot run in this test; the
// cluster's own tests run one.
type workerRunner struct{}

func (workerRunner) Start(w job.Launch, report func(job.Exit)) {
	// The scheduler's loop calls Start: the report goes to it from
	// another goroutine, as a runner's always does.
	go report(job.Exit{RunID: w.RunID, Result: job.ResultNormal, End: time.Now(),
		Log: &job.LogSpan{OutFrom: 0, OutTo: 13, ErrFrom: 0, ErrTo: 0, Node: "w9"}})
}
func (r workerRunner) Attach(w job.Launch, report func(job.Exit)) { r.Start(w, report) }
func (workerRunner) Kill(int64)                                   {}
func (workerRunner) Forget(int64)                                 {}
func (workerRunner) Sweep(map[int64]bool)                         {}
func (workerRunner) Running() int                                 { return 0 }
func (workerRunner) Stop(context.Context) error                   { return nil }

// The log of a run a cluster's worker ran: when the files are on the
// worker's machine only, the page says so, naming the worker, for each
// log; when this server reads the same file, it shows the run's bytes.
func TestRunLogsOnWorker(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := started(t, gnomon.Config{DataDir: dir, Runner: workerRunner{}})
	if err := s.Apply(ctx, "t.def", `insert_task: far
type: callable
command: echo far
out_log_file: far.out
err_log_file: far.err
`); err != nil {
		t.Fatal(err)
	}
	if err := s.Send(ctx, "far", gnomon.ActStart); err != nil {
		t.Fatal(err)
	}
	var run job.Run
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		rs, err := s.Runs(ctx, "far", 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(rs) == 1 && rs[0].Done() {
			run = rs[0]
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the run of far did not end")
		}
	}
	if run.Log == nil || run.Log.Node != "w9" || run.Log.OutTo != 13 {
		t.Fatalf("run %d records its log span %+v, want 13 bytes of out log on w9", run.ID, run.Log)
	}
	getAny := adminGet(t, s)
	get := func(path string) string {
		t.Helper()
		code, body := getAny(path, "HX-Request", "true")
		if code != http.StatusOK {
			t.Fatalf("%s: status %d: %s", path, code, body)
		}
		return body
	}
	page := "/tasks/far/runs/" + itoa(run.ID) + "/logs"
	body := get(page)
	want := "run " + itoa(run.ID) + " ran on worker w9: its out log is in far.out on w9&#39;s machine, which this server cannot read"
	if !strings.Contains(body, want) || strings.Count(body, "cannot read") != 1 || !strings.Contains(body, "far.err is empty") {
		t.Errorf("the log of a run on another machine does not say %q once, and that it wrote no err log:\n%s", want, body)
	}
	if !strings.Contains(body, "Run "+itoa(run.ID)+" on worker w9") {
		t.Errorf("the log of a run on a worker does not name it:\n%s", body)
	}
	// This server reads the same file: the run's bytes, and not what
	// was appended after them.
	logs := filepath.Join(dir, "logs")
	if err := os.MkdirAll(logs, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(logs, "far.out"), []byte("out of w9 r1\nlater run\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	body = get(page)
	if !strings.Contains(body, "out of w9 r1\n") || strings.Contains(body, "later run") || strings.Contains(body, "cannot read") {
		t.Errorf("the log of a run whose file this server reads:\n%s", body)
	}
}

// adminGet signs an admin in to s's web UI and returns a GET of a path
// with that session, and headers given as name, value pairs: the status
// and the body.
func adminGet(t *testing.T, s *gnomon.Scheduler) func(path string, headers ...string) (int, string) {
	t.Helper()
	h := s.Handler(gnomon.HandlerConfig{Version: "test"})
	token, err := s.NewToken(context.Background(), auth.Request{Name: "ada", Role: auth.Admin})
	if err != nil {
		t.Fatal(err)
	}
	cookie, err := signIn(h, token)
	if err != nil {
		t.Fatal(err)
	}
	return func(path string, headers ...string) (int, string) {
		req := httptest.NewRequest(http.MethodGet, "http://localhost"+path, nil)
		req.AddCookie(cookie)
		for i := 0; i+1 < len(headers); i += 2 {
			req.Header.Set(headers[i], headers[i+1])
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		b, _ := io.ReadAll(w.Result().Body)
		return w.Code, string(b)
	}
}

// A failed run's log is one click from the runs page, on a page of its
// own: its facts, its output, a download of the whole of it; the task's
// log file marks where each run began; the log's address opened on its
// own leads to that page.
func TestRunPage(t *testing.T) {
	ctx := context.Background()
	s := started(t, gnomon.Config{DataDir: t.TempDir()})
	if err := s.Apply(ctx, "t.def", `insert_task: flaky
type: callable
command: echo "line 1 of run $GNOMON_RUN_ID"; echo "line 2 of run $GNOMON_RUN_ID"; echo "trouble in $GNOMON_RUN_ID" >&2; test "$GNOMON_RUN_ID" != 2
out_log_file: flaky.out
err_log_file: flaky.err
`); err != nil {
		t.Fatal(err)
	}
	var runs []job.Run
	for n := 1; n <= 3; n++ {
		if err := s.Send(ctx, "flaky", gnomon.ActStart); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			var err error
			if runs, err = s.Runs(ctx, "flaky", 0); err != nil {
				t.Fatal(err)
			}
			if len(runs) == n && runs[0].Done() {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("run %d of flaky did not end", n)
			}
		}
	}
	var failed job.Run
	for _, r := range runs {
		if r.Status == job.Failure {
			failed = r
		}
	}
	if failed.ID == 0 {
		t.Fatalf("no run failed: %+v", runs)
	}
	id := itoa(failed.ID)
	get := adminGet(t, s)
	code, body := get("/runs?status=failure")
	if code != http.StatusOK || !strings.Contains(body, `<a href="/runs/`+id+`#log" aria-label="Log of run `+id+`">log</a>`) {
		t.Fatalf("the failed runs do not link run %s's log: %d\n%s", id, code, body)
	}
	code, body = get("/runs/" + id)
	if code != http.StatusOK {
		t.Fatalf("run page: %d\n%s", code, body)
	}
	for _, want := range []string{
		"<title>Run " + id + " of flaky · gnomon</title>", `<link rel="stylesheet"`, // a whole page, styled
		"line 2 of run " + id + "\n", "trouble in " + id + "\n",
		`href="/runs/` + id + `/log/out" download`, `data-logsearch="#runlog"`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the run page does not hold %q:\n%s", want, body)
		}
	}
	if strings.Contains(body, "of run "+itoa(runs[0].ID)) {
		t.Errorf("the page of run %s shows another run's lines:\n%s", id, body)
	}
	if strings.Contains(body, `data-follow`) {
		t.Error("the page of an ended run offers to follow it")
	}
	// The download is the whole of what the run wrote, as a file.
	h := s.Handler(gnomon.HandlerConfig{Version: "test"})
	token, err := s.NewToken(ctx, auth.Request{Name: "dl", Role: auth.Admin})
	if err != nil {
		t.Fatal(err)
	}
	cookie, err := signIn(h, token)
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodGet, "http://localhost/runs/"+id+"/log/out", nil)
	req.AddCookie(cookie)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	if want := "line 1 of run " + id + "\nline 2 of run " + id + "\n"; w.Code != http.StatusOK || w.Body.String() != want {
		t.Errorf("the download: %d %q, want %q", w.Code, w.Body, want)
	}
	if cd := w.Header().Get("Content-Disposition"); !strings.Contains(cd, "attachment") || !strings.Contains(cd, "flaky-run"+id+"-out.log") {
		t.Errorf("the download is not a file to save: %q", cd)
	}
	// The task's file marks where each run began.
	_, body = get("/tasks/flaky/log/out", "HX-Request", "true")
	for _, r := range runs {
		sep := "── run " + itoa(r.ID) + " · " + r.Status.String()
		if i, j := strings.Index(body, sep), strings.Index(body, "line 1 of run "+itoa(r.ID)); i < 0 || j < i {
			t.Errorf("the task's log does not mark run %d before its lines:\n%s", r.ID, body)
		}
	}
	// The log's own address, opened alone, leads to the run's page.
	req = httptest.NewRequest(http.MethodGet, "http://localhost/tasks/flaky/runs/"+id+"/logs", nil)
	req.AddCookie(cookie)
	w = httptest.NewRecorder()
	h.ServeHTTP(w, req)
	if loc := w.Header().Get("Location"); w.Code != http.StatusSeeOther || loc != "/runs/"+id+"#log" {
		t.Errorf("the log's address alone: %d to %q, want 303 to the run's page", w.Code, loc)
	}
	if code, _ := get("/runs/" + id + "/log/mid"); code != http.StatusNotFound {
		t.Errorf("a log that is not out or err: %d", code)
	}
	if code, _ := get("/runs/99999"); code != http.StatusNotFound {
		t.Errorf("a run that does not exist: %d", code)
	}
}
