package gnomon_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/gnomon-sched/gnomon"
	"github.com/gnomon-sched/gnomon/internal/pgtest"
	"github.com/gnomon-sched/gnomon/internal/smtptest"
	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/store"
)

func TestMain(m *testing.M) {
	// The usual umask, whatever the caller's: the tests check that what
	// the scheduler creates is its owner's only all the same.
	syscall.Umask(0o022)
	goleak.VerifyTestMain(m)
}

// recorder collects listener events.
type recorder struct {
	mu     sync.Mutex
	events []gnomon.Event
	ch     chan gnomon.Event
}

func listen(s *gnomon.Scheduler) *recorder {
	r := &recorder{ch: make(chan gnomon.Event, 1000)}
	s.Listen(func(e gnomon.Event) {
		r.mu.Lock()
		r.events = append(r.events, e)
		r.mu.Unlock()
		r.ch <- e
	})
	return r
}

// await waits for an event of a kind for a job, returning the first one
// recorded.
func (r *recorder) await(t *testing.T, kind gnomon.EventKind, job string) gnomon.Event {
	t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		r.mu.Lock()
		for _, e := range r.events {
			if e.Kind == kind && e.Job == job {
				r.mu.Unlock()
				return e
			}
		}
		r.mu.Unlock()
		select {
		case <-r.ch:
		case <-timeout:
			t.Fatalf("no %s event for %s within 20s; got %v", kind, job, r.list())
		}
	}
}

func (r *recorder) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, e := range r.events {
		out = append(out, string(e.Kind)+" "+e.Job)
	}
	return out
}

// testDBs holds the PostgreSQL database of each data directory when the
// tests run on PostgreSQL: a scheduler started again on the same data
// directory finds its database.
var testDBs sync.Map

// testDB returns the Config.DB of a scheduler on data dir: empty for the
// embedded SQLite store, or, with GNOMON_TEST_DB=postgres, a fresh
// PostgreSQL database of its own.
func testDB(t *testing.T, dir string) string {
	t.Helper()
	if os.Getenv("GNOMON_TEST_DB") != "postgres" {
		return ""
	}
	if db, ok := testDBs.Load(dir); ok {
		return db.(string)
	}
	db := pgtest.URL(t)
	testDBs.Store(dir, db)
	return db
}

// start makes a scheduler on cfg, stopped when the test ends, on the store
// the test run picks (see testDB) unless cfg names one.
func start(t *testing.T, cfg gnomon.Config) *gnomon.Scheduler {
	t.Helper()
	if cfg.DataDir == "" {
		cfg.DataDir = t.TempDir()
	}
	if cfg.DB == "" && cfg.Store == nil {
		cfg.DB = testDB(t, cfg.DataDir)
	}
	return startOn(t, cfg)
}

// startSQLite makes a scheduler on cfg's embedded SQLite store whatever
// the test run picks: for the tests about the SQLite file itself.
func startSQLite(t *testing.T, cfg gnomon.Config) *gnomon.Scheduler {
	t.Helper()
	if cfg.DataDir == "" {
		cfg.DataDir = t.TempDir()
	}
	return startOn(t, cfg)
}

func startOn(t *testing.T, cfg gnomon.Config) *gnomon.Scheduler {
	t.Helper()
	if cfg.Location == nil {
		cfg.Location = time.UTC
	}
	s, err := gnomon.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Stop(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return s
}

// alertsSettled waits until n alerts are recorded and none of them is
// pending any more. An alert is attempted only while it is pending, one
// attempt at a time, and each attempt is recorded once the mail server
// has answered it: from then on no attempt is in flight or left to come,
// and the mailbox holds every mail the alerts will ever send.
func alertsSettled(t *testing.T, s *gnomon.Scheduler, n int) {
	t.Helper()
	var as []gnomon.Alert
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		var err error
		if as, err = s.Alerts(context.Background(), "", 0); err != nil {
			t.Fatal(err)
		}
		if len(as) == n && !slices.ContainsFunc(as, func(a gnomon.Alert) bool { return a.State == job.AlertPending }) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("alerts after 20s: %+v; want %d, none pending", as, n)
		}
	}
}

func TestChainWithDelayAndAlerts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	mb := smtptest.Start(t, "127.0.0.1:0")
	s := start(t, gnomon.Config{SMTP: &gnomon.SMTP{Addr: mb.Addr, From: "gnomon@example.com"}})
	rec := listen(s)
	var mu sync.Mutex
	var order []string
	step := func(name string, fail bool) gnomon.Func {
		return func(ctx context.Context, run *gnomon.Run) error {
			mu.Lock()
			order = append(order, name)
			mu.Unlock()
			run.SetStatus(name + " done")
			run.Set("rows", "42")
			if fail {
				return errors.New("the disk is full")
			}
			return nil
		}
	}
	for _, f := range []struct {
		name string
		fail bool
	}{{"extract", false}, {"load", false}, {"check", true}} {
		if err := s.Register(f.name, step(f.name, f.fail)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	jobs := []gnomon.Job{
		{Name: "A", Function: "extract"},
		{Name: "B", Function: "load", Condition: gnomon.OnSuccess("A"), Delay: 200 * time.Millisecond},
		{Name: "C", Function: "check", Condition: gnomon.OnSuccess("B"),
			AlertOn: []gnomon.Outcome{gnomon.Failure}, AlertTo: []string{"oncall@example.com"}},
		{Name: "D", Function: "log", Condition: gnomon.OnFailure("B")},
	}
	for _, j := range jobs {
		if err := s.AddJob(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.AddGroup(ctx, gnomon.Group{Name: "etl", Jobs: []string{"A", "B", "C"},
		AlertOn: []gnomon.Outcome{gnomon.Success}, AlertTo: []string{"boss@example.com", "oncall@example.com"}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Send(ctx, "A", gnomon.ActStart); err != nil {
		t.Fatal(err)
	}
	c := rec.await(t, gnomon.EventFailed, "C")
	rec.await(t, gnomon.EventNotStarted, "D")
	if c.Run.Message != "the disk is full" || c.Run.Data["rows"] != "42" {
		t.Errorf("C's run = %+v", c.Run)
	}
	// B starts at least its delay after A ended.
	a, _ := s.Runs(ctx, "A", 1)
	b, _ := s.Runs(ctx, "B", 1)
	if len(a) != 1 || len(b) != 1 || b[0].Start.Sub(a[0].End) < 200*time.Millisecond {
		t.Fatalf("A %+v then B %+v: B did not wait its delay", a, b)
	}
	if !slices.Equal(order, []string{"extract", "load", "check"}) {
		t.Errorf("functions ran in order %v", order)
	}
	// A and B succeeded: the group alerts both recipients, one mail each
	// outcome. C failed: its own alert goes to oncall only.
	mb.Wait(t, 3)
	alertsSettled(t, s, 3) // nothing more can come
	msgs := mb.All()
	if len(msgs) != 3 {
		t.Fatalf("got %d mails, want 3: %+v", len(msgs), msgs)
	}
	bySubject := map[string]smtptest.Message{}
	for _, m := range msgs {
		bySubject[m.Subject] = m
	}
	for _, want := range []struct {
		subject string
		to      []string
		body    []string
	}{
		{"gnomon: A success", []string{"boss@example.com", "oncall@example.com"}, []string{"Job A: success.", "extract done", "rows: 42"}},
		{"gnomon: B success", []string{"boss@example.com", "oncall@example.com"}, []string{"Job B: success.", "load done"}},
		{"gnomon: C failure", []string{"oncall@example.com"}, []string{"Job C: failure.", "Exit code: 1", "the disk is full", "rows: 42"}},
	} {
		m, ok := bySubject[want.subject]
		if !ok {
			t.Errorf("no mail with subject %q; got %+v", want.subject, msgs)
			continue
		}
		if to := slices.Sorted(slices.Values(m.To)); !slices.Equal(to, want.to) || m.From != "gnomon@example.com" {
			t.Errorf("%s: from %s to %v, want to %v", want.subject, m.From, m.To, want.to)
		}
		for _, frag := range want.body {
			if !strings.Contains(m.Body, frag) {
				t.Errorf("%s: body lacks %q:\n%s", want.subject, frag, m.Body)
			}
		}
	}
	alerts, err := s.Alerts(ctx, "", 0)
	if err != nil || len(alerts) != 3 {
		t.Fatalf("Alerts = %d, %v", len(alerts), err)
	}
	for _, a := range alerts {
		if a.State != "sent" || a.Attempts != 1 {
			t.Errorf("alert %+v: want sent after one attempt", a)
		}
	}
}

func TestAlertsSurviveSMTPDown(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	addr := smtptest.FreeAddr(t)
	s := start(t, gnomon.Config{SMTP: &gnomon.SMTP{Addr: addr, From: "gnomon@example.com", Subject: "[{{.JobStatus}}] {{.JobName}}"}})
	rec := listen(s)
	s.Register("boom", func(context.Context, *gnomon.Run) error { return errors.New("boom") })
	s.Start(ctx)
	for _, name := range []string{"x", "y"} {
		if err := s.AddJob(ctx, gnomon.Job{Name: name, Function: "boom", AlertOn: []gnomon.Outcome{gnomon.Failure}, AlertTo: []string{"ops@example.com"}}); err != nil {
			t.Fatal(err)
		}
		s.Send(ctx, name, gnomon.ActStart)
		rec.await(t, gnomon.EventFailed, name)
	}
	// The server is down: attempts fail and are recorded.
	deadline := time.Now().Add(10 * time.Second)
	for {
		as, _ := s.Alerts(ctx, "", 0)
		if len(as) == 2 && as[0].Attempts > 0 && as[1].Attempts > 0 {
			for _, a := range as {
				if a.State != "pending" || a.LastError == "" {
					t.Fatalf("alert while the server is down: %+v", a)
				}
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no failed attempts recorded: %+v", as)
		}
		time.Sleep(20 * time.Millisecond)
	}
	mb := smtptest.Start(t, addr)
	mb.Wait(t, 2)
	alertsSettled(t, s, 2) // no retry is left to send one twice
	msgs := mb.All()
	if len(msgs) != 2 {
		t.Fatalf("got %d mails, want 2", len(msgs))
	}
	subjects := []string{msgs[0].Subject, msgs[1].Subject}
	slices.Sort(subjects)
	if !slices.Equal(subjects, []string{"[failure] x", "[failure] y"}) {
		t.Errorf("subjects %q", subjects)
	}
	as, _ := s.Alerts(ctx, "x", 0)
	if len(as) != 1 || as[0].State != "sent" || as[0].Attempts < 2 {
		t.Fatalf("alert of x = %+v", as)
	}
}

func TestRunningStatusAndAudit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	s := start(t, gnomon.Config{DataDir: dir})
	rec := listen(s)
	release := make(chan struct{})
	s.Register("slow", func(ctx context.Context, run *gnomon.Run) error {
		run.SetStatus("halfway")
		run.Set("done", "50%")
		run.Logf("working on %s", run.Job())
		select {
		case <-release:
		case <-ctx.Done():
			return ctx.Err()
		}
		run.SetStatus("all rows copied")
		return nil
	})
	s.Start(ctx)
	// A relative log path is taken from the first log root, DataDir/logs.
	out := filepath.Join(dir, "logs", "slow.out")
	if err := s.AddJob(ctx, gnomon.Job{Name: "slow", Function: "slow", OutLog: "slow.out"}); err != nil {
		t.Fatal(err)
	}
	s.Send(ctx, "slow", gnomon.ActStart)
	rec.await(t, gnomon.EventStarted, "slow")
	var running []gnomon.RunStatus
	for range 1000 {
		running, _ = s.Running(ctx)
		if len(running) == 1 && running[0].RunningStatus == "halfway" {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if len(running) != 1 || running[0].RunningStatus != "halfway" || running[0].Data["done"] != "50%" || running[0].Run.Task != "slow" {
		t.Fatalf("Running = %+v", running)
	}
	js, err := s.Job(ctx, "slow")
	if err != nil || js.Status.String() != "running" {
		t.Fatalf("Job = %+v, %v", js, err)
	}
	close(release)
	e := rec.await(t, gnomon.EventSucceeded, "slow")
	if e.Run.Message != "all rows copied" {
		t.Errorf("run message %q", e.Run.Message)
	}
	if b, _ := os.ReadFile(out); string(b) != "working on slow\n" {
		t.Errorf("out log %q", b)
	}
	recs, err := s.Audit(ctx, 0, 0)
	if err != nil || len(recs) != 1 {
		t.Fatalf("Audit = %+v, %v", recs, err)
	}
	line := recs[0].Line(time.UTC)
	if !strings.HasPrefix(line, "slow : ") || !strings.HasSuffix(line, " : normal : success: all rows copied [done=50%]") {
		t.Errorf("audit line %q", line)
	}
	if err := s.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "audit.log"))
	if err != nil || string(b) != line+"\n" {
		t.Errorf("audit.log = %q, %v; want %q", b, err, line+"\n")
	}
}

func TestStopCancelsFunctionRuns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	s := start(t, gnomon.Config{DataDir: dir, KillGrace: 5 * time.Second})
	rec := listen(s)
	s.Register("forever", func(ctx context.Context, run *gnomon.Run) error {
		<-ctx.Done()
		return ctx.Err()
	})
	s.Start(ctx)
	s.AddJob(ctx, gnomon.Job{Name: "f", Function: "forever"})
	s.Send(ctx, "f", gnomon.ActStart)
	rec.await(t, gnomon.EventStarted, "f")
	sctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if err := s.Stop(sctx); err != nil {
		t.Fatal(err)
	}
	e := rec.await(t, gnomon.EventFailed, "f")
	if e.Run.Result != "killed" {
		t.Errorf("run ended %+v, want killed", e.Run)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "audit.log"))
	if !strings.Contains(string(b), " : abnormal : failure: cancelled: context canceled") {
		t.Errorf("audit.log = %q", b)
	}
}

func TestRegisterAndDefinitionErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := start(t, gnomon.Config{})
	if err := s.Register("bad name", func(context.Context, *gnomon.Run) error { return nil }); err == nil {
		t.Error("a name with a blank was accepted")
	}
	s.Start(ctx)
	err := s.AddJob(ctx, gnomon.Job{Name: "j", Function: "missing"})
	if err == nil || !strings.Contains(err.Error(), "function: missing is not registered with this scheduler") {
		t.Errorf("unregistered function: %v", err)
	}
	if err := s.AddJob(ctx, gnomon.Job{Name: "j", Function: "log", Start: time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC),
		End: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), Every: "1 hour"}); err == nil || !strings.Contains(err.Error(), "is before start_date") {
		t.Errorf("start after end: %v", err)
	}
	if err := s.AddJob(ctx, gnomon.Job{Name: "j", Function: "log"}); err != nil {
		t.Fatal(err)
	}
	if err := s.AddJob(ctx, gnomon.Job{Name: "j", Function: "log"}); err == nil || !strings.Contains(err.Error(), "task already exist") {
		t.Errorf("duplicate: %v", err)
	}
	if err := s.AddGroup(ctx, gnomon.Group{Name: "g", Jobs: []string{"j", "nope"}}); err == nil || !strings.Contains(err.Error(), "task nope does not exist") {
		t.Errorf("group with an unknown job: %v", err)
	}
	if err := s.Apply(ctx, "x.def", "insert_group: g\njobs: j\nalert_on: failure\nalert_to: a@example.com\n"); err != nil {
		t.Fatal(err)
	}
	if err := s.RemoveJob(ctx, "j"); err == nil || !strings.Contains(err.Error(), "belongs to group g") {
		t.Errorf("removing a grouped job: %v", err)
	}
	if err := s.RemoveGroup(ctx, "g"); err != nil {
		t.Fatal(err)
	}
	if err := s.RemoveJob(ctx, "j"); err != nil {
		t.Fatal(err)
	}
	if js, err := s.Jobs(ctx); err != nil || len(js) != 0 {
		t.Errorf("Jobs = %+v, %v", js, err)
	}
	// A job comes in as its definition, not as text: a value with a line
	// break is refused, naming the attribute, and cannot define a second
	// task the way a line of text would.
	err = s.AddJob(ctx, gnomon.Job{Name: "j", Function: "log", Label: "x\n\ninsert_task: smuggled\ntype: callable\nfunction: log"})
	if err == nil || !strings.Contains(err.Error(), "gnomon: job j: label:") {
		t.Errorf("a label with line breaks: %v", err)
	}
	if js, err := s.Jobs(ctx); err != nil || len(js) != 0 {
		t.Errorf("after a refused job, Jobs = %+v, %v", js, err)
	}
}

// A function run in flight when the program died is recorded as lost at
// the next start, and alerted on.
func TestLostFunctionRunAfterCrash(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	// The state a crash leaves: a function job running run 1.
	st, err := gnomon.OpenStore(ctx, testDB(t, dir), dir)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	def := &job.Task{Name: "f", Type: job.Callable, Extra: &job.Extra{Function: "work", AlertOn: []job.Outcome{job.OutcomeFailure}, AlertTo: []string{"ops@example.com"}}}
	if err := st.Commit(ctx, &store.Batch{
		Tasks: []job.Record{{Def: def, State: job.State{Status: job.Running, Start: job.At(t0), RunID: 1}}},
		Runs:  []job.Run{{ID: 1, Task: "f", Status: job.Running, Start: t0, Trigger: "start"}},
	}); err != nil {
		t.Fatal(err)
	}
	st.Close()

	s := start(t, gnomon.Config{DataDir: dir})
	rec := listen(s)
	s.Register("work", func(context.Context, *gnomon.Run) error { return nil })
	s.Start(ctx)
	e := rec.await(t, gnomon.EventFailed, "f")
	if e.Run.ID != 1 || e.Run.Result != job.ResultLost || !strings.Contains(e.Run.Message, "run lost") {
		t.Errorf("run after restart: %+v", e.Run)
	}
	as, err := s.Alerts(ctx, "f", 0)
	if err != nil || len(as) != 1 || as[0].Outcome != gnomon.Failure || as[0].RunID != 1 {
		t.Errorf("alerts = %+v, %v", as, err)
	}
	// Without an SMTP server the alert is recorded as failed, with why.
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if as, _ = s.Alerts(ctx, "f", 0); as[0].State == job.AlertFailed {
			break
		}
	}
	if as[0].State != job.AlertFailed || !strings.Contains(as[0].LastError, "no SMTP server is configured") {
		t.Errorf("alert %+v", as[0])
	}
}

// Every method may be called from many goroutines at once.
func TestConcurrentUse(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := start(t, gnomon.Config{Workers: 4})
	var ran sync.WaitGroup
	s.Register("work", func(ctx context.Context, run *gnomon.Run) error {
		run.SetStatus("working")
		return nil
	})
	s.Start(ctx)
	var wg sync.WaitGroup
	const n = 16
	ran.Add(n)
	cancel := s.Listen(func(e gnomon.Event) {
		if e.Kind == gnomon.EventSucceeded {
			ran.Done()
		}
	})
	defer cancel()
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := fmt.Sprintf("job%d", i)
			if err := s.AddJob(ctx, gnomon.Job{Name: name, Function: "work", Overlap: gnomon.Allow}); err != nil {
				t.Error(err)
				return
			}
			if err := s.Send(ctx, name, gnomon.ActStart); err != nil {
				t.Error(err)
			}
			s.Jobs(ctx)
			s.Running(ctx)
			s.Runs(ctx, name, 1)
			s.Register(fmt.Sprintf("fn%d", i), func(context.Context, *gnomon.Run) error { return nil })
		}()
	}
	wg.Wait()
	ran.Wait()
	js, err := s.Jobs(ctx)
	if err != nil || len(js) != n {
		t.Fatalf("Jobs = %d, %v", len(js), err)
	}
}

// TestTreeLevelRunsAFunction runs the hours of a timeperiod process as a
// registered Go function on a simulated clock: the function sees its
// period, and ErrNoop makes a node noop.
func TestTreeLevelRunsAFunction(t *testing.T) {
	t.Parallel()
	from := time.Date(2026, 3, 8, 3, 0, 0, 0, time.UTC)
	s := start(t, gnomon.Config{SimulateFrom: from})
	var mu sync.Mutex
	var seen []string
	if err := s.Register("rollup", func(_ context.Context, r *gnomon.Run) error {
		key, begin, end, ok := r.Period()
		if !ok || !end.Equal(begin.Add(time.Hour)) || r.Job() != "hits_hourly" {
			return fmt.Errorf("period %s %s %s %v of %s", key, begin, end, ok, r.Job())
		}
		mu.Lock()
		seen = append(seen, key)
		mu.Unlock()
		if key == "2026030801" {
			return gnomon.ErrNoop
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	tree := `{"settings": {"startTimeperiod": "2026030800", "lagMinutes": 0},
	  "trees": [{"name": "hits", "levels": [{"process": "hits_hourly", "qualifier": "hourly", "function": "rollup"}]}]}`
	if err := s.Declare(context.Background(), "hits.json", tree); err != nil {
		t.Fatal(err)
	}
	if err := s.Advance(context.Background(), from.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	nodes, err := s.Nodes(context.Background(), "hits_hourly")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, n := range nodes {
		got = append(got, n.Timeperiod.String()+" "+n.State.String())
	}
	want := []string{"2026030800 processed", "2026030801 noop", "2026030802 processed", "2026030803 embryo"}
	if !slices.Equal(got, want) {
		mu.Lock()
		defer mu.Unlock()
		t.Errorf("nodes %v, want %v (the function saw %v)", got, want, seen)
	}
	if _, err := s.Nodes(context.Background(), "nope"); err == nil {
		t.Error("the nodes of an unknown process")
	}
}

// A function job that hangs is canceled at its Timeout and retried; the
// retry succeeds. On a simulated clock, the limit acts at its instant while
// the run is in flight.
func TestFunctionTimeoutAndRetry(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	from := time.Date(2026, 3, 8, 3, 0, 0, 0, time.UTC)
	s := start(t, gnomon.Config{SimulateFrom: from})
	rec := listen(s)
	var mu sync.Mutex
	calls := 0
	var attempts []int
	if err := s.Register("stuck_once", func(ctx context.Context, r *gnomon.Run) error {
		mu.Lock()
		calls++
		n := calls
		attempts = append(attempts, r.Attempt())
		mu.Unlock()
		if n == 1 {
			<-ctx.Done()
			return ctx.Err()
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.AddJob(ctx, gnomon.Job{Name: "f", Function: "stuck_once", Timeout: 500 * time.Millisecond, Retries: 1,
		RetryDelay: time.Minute, Start: from.Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	if err := s.Advance(ctx, from.Add(10*time.Minute)); err != nil {
		t.Fatal(err)
	}
	failed := rec.await(t, gnomon.EventFailed, "f")
	if failed.Run.Result != "timeout" || !strings.Contains(failed.Run.Message, "term_run_time") {
		t.Errorf("first run %+v, want a timeout", failed.Run)
	}
	ok := rec.await(t, gnomon.EventSucceeded, "f")
	if ok.Run.Trigger != "retry" || ok.Run.Attempt != 1 || ok.Run.RetryOf != failed.Run.ID || !ok.Run.Start.Equal(failed.Run.End.Add(time.Minute)) {
		t.Errorf("retry %+v after %+v", ok.Run, failed.Run)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(attempts, []int{0, 1}) {
		t.Errorf("the function saw attempts %v, want [0 1]", attempts)
	}
}

// A node's name is recorded with the runs it ran and in the cluster's
// tables: one that could not be read back is refused at start, naming it.
func TestClusterNodeName(t *testing.T) {
	db := pgtest.URL(t)
	for _, name := range []string{"w,1", "worker one", strings.Repeat("n", 101)} {
		err := gnomon.RunNode(context.Background(), gnomon.Config{DB: db, Cluster: &gnomon.Cluster{Node: name, Roles: []string{"worker"}}})
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("node name %q", name)) {
			t.Errorf("node %q: %v, want the name refused", name, err)
		}
	}
}

// A job declares parameters with defaults; StartWith gives values, which
// the function reads with Run.Param and the run records; a name the job
// does not declare is refused, starting nothing.
func TestStartWithParameters(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := start(t, gnomon.Config{SimulateFrom: time.Date(2026, 3, 8, 3, 0, 0, 0, time.UTC)})
	rec := listen(s)
	seen := make(chan [2]string, 2)
	if err := s.Register("load", func(ctx context.Context, r *gnomon.Run) error {
		day, _ := r.Param("day")
		region, _ := r.Param("region")
		if _, ok := r.Param("undeclared"); ok {
			return errors.New("a parameter the job does not declare has a value")
		}
		seen <- [2]string{day, region}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.AddJob(ctx, gnomon.Job{Name: "load", Function: "load", Params: map[string]string{"day": "today", "region": "eu"}}); err != nil {
		t.Fatal(err)
	}
	if err := s.StartWith(ctx, "load", map[string]string{"reigon": "us"}); err == nil || !strings.Contains(err.Error(), "reigon") {
		t.Fatalf("an undeclared parameter: %v, want it refused by name", err)
	}
	if err := s.StartWith(ctx, "load", map[string]string{"day": "2026-03-07"}); err != nil {
		t.Fatal(err)
	}
	ok := rec.await(t, gnomon.EventSucceeded, "load")
	if got := <-seen; got != [2]string{"2026-03-07", "eu"} {
		t.Errorf("the function read day, region = %q, want the value given and the default", got)
	}
	runs, err := s.Runs(ctx, "load", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || runs[0].ID != ok.Run.ID || fmt.Sprintf("%+v", runs[0].Params) != "[{Name:day Value:2026-03-07}]" {
		t.Errorf("runs %+v, want one recording the value given", runs)
	}
}

// Stop ends the work of the handlers made (their token reloads) and waits
// for it before it closes the store, whether the scheduler was started
// or not.
func TestStopEndsTheHandlersWork(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	for _, started := range []bool{false, true} {
		s, err := gnomon.New(gnomon.Config{DataDir: t.TempDir(), Location: time.UTC})
		if err != nil {
			t.Fatal(err)
		}
		if started {
			if err := s.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		s.Handler(gnomon.HandlerConfig{NoUI: true})
		s.Handler(gnomon.HandlerConfig{})
		if err := s.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}
