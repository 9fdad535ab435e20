package scheduler

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/engine"
	"github.com/gnomon-sched/gnomon/executor"
	"github.com/gnomon-sched/gnomon/internal/smtptest"
	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/notify"
	"github.com/gnomon-sched/gnomon/periods"
	"github.com/gnomon-sched/gnomon/store"
	"github.com/gnomon-sched/gnomon/store/sqlite"
)

// sim is a scheduler on a virtual clock, on a SQLite store and a local
// runner in a directory of its own.
type sim struct {
	t     testing.TB
	dir   string
	clock *VirtualClock
	st    store.Store
	s     *Scheduler
}

var t0 = time.Date(2026, 3, 8, 6, 0, 0, 0, time.UTC)

// openSim starts a simulating scheduler on dir from instant from, with the
// mailer that mailer returns for its clock (nil for none).
func openSim(t testing.TB, dir string, from time.Time, mailer func(Clock) Mailer) *sim {
	t.Helper()
	return openSimWith(t, dir, from, func(c *Config) {
		if mailer != nil {
			c.Mailer = mailer(c.Clock)
		}
	})
}

// openSimWith starts a simulating scheduler on dir from instant from, its
// configuration adjusted by opt.
func openSimWith(t testing.TB, dir string, from time.Time, opt func(*Config)) *sim {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(dir, "gnomon.db"))
	if err != nil {
		t.Fatal(err)
	}
	m := &sim{t: t, dir: dir, clock: NewVirtualClock(from), st: st}
	r, err := executor.NewLocal(executor.LocalConfig{Dir: filepath.Join(dir, "runs"), Clock: m.clock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Wait)
	cfg := Config{Store: st, Runner: r, DataDir: dir, Clock: m.clock, Location: time.UTC}
	opt(&cfg)
	m.s, err = New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	return m
}

// stop stops the scheduler without waiting for runs: they go on under
// their supervisors.
func (m *sim) stop() {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := m.s.Stop(ctx); err != nil {
		m.t.Fatal(err)
	}
	m.st.Close()
}

func (m *sim) submit(ev engine.Event) {
	m.t.Helper()
	if err := m.s.Submit(context.Background(), ev); err != nil {
		m.t.Fatal(err)
	}
}

// readTrees runs fn on the loop goroutine, where it may read the forest
// (and the engine).
func (s *Scheduler) readTrees(ctx context.Context, fn func(*periods.Forest, *engine.Engine)) error {
	return s.Read(ctx, func(e *engine.Engine) { fn(s.trees.f, e) })
}

func (m *sim) define(f DefineFile) {
	m.t.Helper()
	if _, err := m.s.Define(context.Background(), f); err != nil {
		m.t.Fatal(err)
	}
}

func (m *sim) advance(to time.Time) {
	m.t.Helper()
	if err := m.s.Advance(context.Background(), to); err != nil {
		m.t.Fatal(err)
	}
}

func (m *sim) runs(task string) []job.Run {
	m.t.Helper()
	rs, err := m.s.Store().Runs(context.Background(), store.RunQuery{Task: task})
	if err != nil {
		m.t.Fatal(err)
	}
	return rs
}

// TestAlertRetriedOnVirtualTime fails a run whose alert cannot be sent:
// the mail server is down for the first two attempts. The attempts happen
// at the virtual instants the backoff gives (1 s, then 2 s after), when
// Advance reaches them, and the mail is dated by the virtual clock.
func TestAlertRetriedOnVirtualTime(t *testing.T) {
	t.Parallel()
	addr := smtptest.FreeAddr(t)
	m := openSim(t, t.TempDir(), t0, func(c Clock) Mailer {
		mailer, err := notify.New(notify.Config{Addr: addr, From: "gnomon@example.com", TLS: notify.TLSNone, Timeout: 5 * time.Second, Clock: c})
		if err != nil {
			t.Fatal(err)
		}
		return mailer
	})
	defer m.stop()
	m.define(DefineFile{File: "a.def", Text: "insert_task: a\ntype: callable\ncommand: exit 3\nout_log_file: " + filepath.Join(m.dir, "a.out") +
		"\nerr_log_file: " + filepath.Join(m.dir, "a.err") + "\nalert_on: failure\nalert_to: ops@example.com\n"})
	m.submit(engine.Act{Task: "a", Action: job.ActStart})
	// The run ends (a little later), and the first attempt fails. Virtual
	// time passes while the command runs: on a loaded machine the clock
	// may be past t0 already, and Advance cannot go back.
	at := t0
	if now := m.s.Now(); now.After(at) {
		at = now
	}
	m.advance(at)
	alerts, err := m.st.Alerts(context.Background(), store.AlertQuery{Task: "a"})
	if err != nil || len(alerts) != 1 || alerts[0].Attempts != 1 {
		t.Fatalf("alerts %+v, %v; want one, attempted once", alerts, err)
	}
	m.advance(alerts[0].FirstAttempt.Add(1500 * time.Millisecond)) // the second, 1 s after, fails too
	box := smtptest.Start(t, addr)
	m.advance(t0.Add(10 * time.Second))
	msgs := box.Wait(t, 1)
	atts, err := m.st.Attempts(context.Background(), alerts[0].ID)
	if err != nil || len(atts) != 3 {
		t.Fatalf("attempts %+v, %v; want 3", atts, err)
	}
	// The run ends as much virtual time after t0 as it took: on a loaded
	// machine, more than a second.
	first, ended := atts[0].At, m.runs("a")[0].End
	if first.Before(ended) || first.After(ended.Add(time.Second)) {
		t.Errorf("first attempt at %s, want within a second of %s (when the run ended)", first, ended)
	}
	for i, want := range []time.Duration{0, time.Second, 3 * time.Second} {
		if got := atts[i].At.Sub(first); got != want {
			t.Errorf("attempt %d at first + %s, want + %s", i+1, got, want)
		}
	}
	if atts[0].Error == "" || atts[1].Error == "" || atts[2].Error != "" {
		t.Errorf("attempts: %+v; want two failures, then a success", atts)
	}
	if d := msgs[0].Date; !d.Equal(atts[2].At.Truncate(time.Second)) {
		t.Errorf("mail dated %s, want the virtual instant it was sent, %s", d, atts[2].At)
	}
}

// TestRunTakesVirtualTime runs a command that sleeps: it ends as much
// virtual time after its start as it took, and the clock moves on.
func TestRunTakesVirtualTime(t *testing.T) {
	t.Parallel()
	m := openSim(t, t.TempDir(), t0, nil)
	defer m.stop()
	m.define(DefineFile{File: "a.def", Text: "insert_task: a\ntype: callable\ncommand: sleep 0.3\nout_log_file: /dev/null\nerr_log_file: /dev/null\n"})
	m.submit(engine.Act{Task: "a", Action: job.ActStart})
	m.advance(t0)
	rs := m.runs("a")
	if len(rs) != 1 || rs[0].Status != job.Success {
		t.Fatalf("runs %+v", rs)
	}
	if took := rs[0].End.Sub(rs[0].Start); took < 300*time.Millisecond || took > 20*time.Second {
		t.Errorf("the run took %s of virtual time, want the 0.3 s it slept (and not much more)", took)
	}
	if now := m.s.Now(); now.Before(rs[0].End) {
		t.Errorf("the clock reads %s, before the run's end %s", now, rs[0].End)
	}
}

// TestVirtualClockResumes restarts a simulating scheduler, from an earlier
// instant, with a run in flight: the clock resumes where it was, and the
// run ends after it started. Without the recorded reading (a crash before
// it was written), the journal bounds it.
func TestVirtualClockResumes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	m := openSim(t, dir, t0, nil)
	m.define(DefineFile{File: "a.def", Text: "insert_task: a\ntype: callable\ncommand: sleep 0.5\nout_log_file: /dev/null\nerr_log_file: /dev/null\n"})
	later := t0.Add(5 * time.Hour)
	m.advance(later)
	m.submit(engine.Act{Task: "a", Action: job.ActStart}) // at 11:00, running when the scheduler stops
	m.stop()

	m = openSim(t, dir, t0, nil)
	if now := m.s.Now(); now.Before(later) {
		t.Errorf("after a restart from %s the clock reads %s, before %s where it was", t0, now, later)
	}
	m.advance(m.s.Now())
	rs := m.runs("a")
	if len(rs) != 1 || rs[0].Status != job.Success || rs[0].End.Before(rs[0].Start) || !rs[0].Start.Equal(later) {
		t.Fatalf("runs after the restart: %+v; want one success from %s, ending after it started", rs, later)
	}
	m.stop()

	// The reading lost: the last journal entry (the run's end) bounds it.
	st, err := sqlite.Open(context.Background(), filepath.Join(dir, "gnomon.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.SetCursors(context.Background(), map[string]int64{ClockCursor: 0}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	m = openSim(t, dir, t0, nil)
	defer m.stop()
	if now := m.s.Now(); now.Before(rs[0].End) {
		t.Errorf("without the recorded reading, the clock resumed at %s, before the last run's end %s", now, rs[0].End)
	}
}

// TestAdvanceFetchesExternalFires simulates with an external clock: at each
// instant Advance stops at (the engine's next occurrences too), the clock's
// reading is saved where clock nodes read it, and Fetch is asked for the
// occurrences due; what it hands in fires. Advance fails, naming the
// occurrence, when the clock nodes fire nothing.
func TestAdvanceFetchesExternalFires(t *testing.T) {
	t.Parallel()
	var asked []string
	var m *sim
	m = openSimWith(t, t.TempDir(), t0, func(c *Config) {
		c.ExternalClock = true
		c.Fetch = func(ctx context.Context, now time.Time, due []engine.ClockFire) error {
			saved, err := c.Store.Cursor(ctx, ClockCursor)
			if err != nil || saved != now.UnixNano() {
				t.Errorf("fetch at %s: the saved reading is %d (%v)", now, saved, err)
			}
			var fs []engine.ClockFire
			for _, d := range due {
				asked = append(asked, d.Task+"@"+d.Scheduled.Format("15:04"))
				if d.Task != "silent" {
					fs = append(fs, engine.ClockFire{Task: d.Task, Scheduled: d.Scheduled, At: now})
				}
			}
			return m.s.Submit(ctx, engine.Fired{Fires: fs})
		}
	})
	defer m.stop()
	m.define(DefineFile{File: "a.def", Text: "insert_task: a\ntype: callable\ncommand: true\nout_log_file: /dev/null\nerr_log_file: /dev/null\ncron: */20 * * * *\n" +
		"insert_task: b\ntype: callable\ncommand: true\nout_log_file: /dev/null\nerr_log_file: /dev/null\ncron: 30 * * * *\n"})
	m.advance(t0.Add(time.Hour))
	if want := "a@06:00 a@06:20 b@06:30 a@06:40 a@07:00"; strings.Join(asked, " ") != want {
		t.Errorf("asked for %q, want %q", asked, want)
	}
	if n, k := len(m.runs("a")), len(m.runs("b")); n != 4 || k != 1 {
		t.Errorf("%d runs of a, %d of b; want 4 and 1", n, k)
	}
	m.define(DefineFile{File: "s.def", Text: "insert_task: silent\ntype: callable\ncommand: true\nout_log_file: /dev/null\nerr_log_file: /dev/null\ncron: 10 * * * *\n"})
	if err := m.s.Advance(context.Background(), t0.Add(2*time.Hour)); err == nil || !strings.Contains(err.Error(), "the clock nodes did not fire silent at 2026-03-08T07:10:00Z") {
		t.Errorf("advance past an occurrence no clock node fires: %v", err)
	}
}

// TestAdvanceThroughATickInParts: Advance goes on with a tick handled in
// parts (Config.FireBatch) until it completes: every task due at the
// instant runs, in dispatch order, one slot at a time.
func TestAdvanceThroughATickInParts(t *testing.T) {
	t.Parallel()
	m := openSimWith(t, t.TempDir(), t0, func(c *Config) { c.FireBatch, c.Workers = 2, 1 })
	defer m.stop()
	var def strings.Builder
	for i := range 7 {
		fmt.Fprintf(&def, "insert_task: t%d\ntype: callable\ncommand: true\nout_log_file: /dev/null\nerr_log_file: /dev/null\nstart_times: 07:00\npriority: %d\n\n", i, i%3)
	}
	def.WriteString("insert_task: x\ntype: callable\ncommand: true\nout_log_file: /dev/null\nerr_log_file: /dev/null\nstart_times: 07:00\ncondition: nr(y)\n\n")
	def.WriteString("insert_task: y\ntype: callable\ncommand: sleep 0.2\nout_log_file: /dev/null\nerr_log_file: /dev/null\nstart_times: 07:00\ncondition: nr(x)\npriority: 3\n")
	m.define(DefineFile{File: "a.def", Text: def.String()})
	m.advance(t0.Add(time.Hour))
	var order []string
	for _, name := range []string{"t0", "t1", "t2", "t3", "t4", "t5", "t6", "x", "y"} {
		for _, r := range m.runs(name) {
			order = append(order, fmt.Sprintf("%d %s", r.ID, name))
		}
	}
	slices.SortFunc(order, func(a, b string) int {
		x, _ := strconv.Atoi(strings.Fields(a)[0])
		y, _ := strconv.Atoi(strings.Fields(b)[0])
		return x - y
	})
	var names []string
	for _, o := range order {
		names = append(names, strings.Fields(o)[1])
	}
	// y first (critical), then by priority, then by name: x, released
	// after y, finds it ready, not running, and is ready too.
	want := []string{"y", "t2", "t5", "t1", "t4", "t0", "t3", "t6", "x"}
	if !slices.Equal(names, want) {
		t.Fatalf("runs in order %v, want %v", names, want)
	}
	var ticking bool
	if err := m.s.Read(context.Background(), func(e *engine.Engine) { ticking = e.Ticking() }); err != nil || ticking {
		t.Fatalf("the tick is still in progress after Advance (%v)", err)
	}
}

// TestStopFreezesTheVirtualClock stops a scheduler while Advance moves its
// clock through a day of minutely runs: the clock stops before the drain,
// so no occurrence is recorded at an instant the stop would reach (they
// would find the task it no longer starts busy, and be recorded skipped),
// and Advance returns ErrStopped.
func TestStopFreezesTheVirtualClock(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	m := openSim(t, dir, t0, nil)
	m.define(DefineFile{File: "a.def", Text: "insert_task: a\ntype: callable\ncommand: sleep 0.02\nout_log_file: " + filepath.Join(dir, "a.out") +
		"\nerr_log_file: " + filepath.Join(dir, "a.err") + "\ncron: * * * * *\n"})
	advanced := make(chan error, 1)
	go func() { advanced <- m.s.Advance(context.Background(), t0.Add(24*time.Hour)) }()
	deadline := time.Now().Add(30 * time.Second)
	for len(m.runs("a")) < 5 {
		if time.Now().After(deadline) {
			t.Fatal("no runs within 30 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := m.s.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-advanced; !errors.Is(err, ErrStopped) || !strings.Contains(err.Error(), "the virtual clock stopped at") {
		t.Errorf("Advance: %v, want ErrStopped", err)
	}
	fires, err := m.st.Fires(context.Background(), store.FireQuery{Task: "a"})
	if err != nil {
		t.Fatal(err)
	}
	runs := m.runs("a")
	for _, f := range fires {
		if f.Fate != job.FateRan {
			t.Errorf("fire at %s recorded %s (%s) by a stopping scheduler", f.Scheduled.Format(time.RFC3339), f.Fate, f.Reason)
		}
	}
	if len(fires) != len(runs) || m.clock.Now().After(t0.Add(time.Duration(len(runs))*time.Minute)) {
		t.Errorf("%d fires, %d runs, the clock at %s", len(fires), len(runs), m.clock.Now().Format(time.RFC3339))
	}
	m.st.Close()
}
