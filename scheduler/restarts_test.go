package scheduler

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/gnomon-sched/gnomon/engine"
	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/store"
	"github.com/gnomon-sched/gnomon/store/sqlite"
)

// steppedClock reads the instant the test last set. A scheduler on it is
// not simulating: its loop ticks by itself whenever it finds an occurrence
// due, as a scheduler on the system's clock does, the first time as soon
// as it starts.
type steppedClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *steppedClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *steppedClock) forward(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.After(c.t) {
		c.t = t
	}
}

// heldRuns is a Runner whose runs hold until the test ends them, at an
// instant of the test's choosing, and outlive the scheduler that started
// them, as commands under their supervisors do. The outcome of a run that
// ends while no scheduler watches is recorded in a file of dir, and read
// and reported when the next scheduler attaches the run, before Attach
// returns, as executor.Local reports the outcome a supervisor recorded.
// The real runner cannot serve here: its supervisors date an outcome by
// the system's clock.
type heldRuns struct {
	dir  string
	mu   sync.Mutex
	runs map[int64]*heldRun
	now  func() time.Time
	// handed is signalled whenever a run is handed over (Start, Attach).
	handed chan struct{}
}

type heldRun struct {
	report func(job.Exit) // nil while no scheduler watches the run
	ended  bool           // its outcome was recorded while none did
}

var _ Runner = (*heldRuns)(nil)

func newHeldRuns(dir string) *heldRuns {
	return &heldRuns{dir: dir, runs: map[int64]*heldRun{}, handed: make(chan struct{}, 1)}
}

func (h *heldRuns) record(id int64) string { return filepath.Join(h.dir, fmt.Sprintf("%d.exit", id)) }

func (h *heldRuns) Start(w job.Launch, report func(job.Exit)) {
	h.mu.Lock()
	h.runs[w.RunID] = &heldRun{report: report}
	h.mu.Unlock()
	wake(h.handed)
}

func (h *heldRuns) Attach(w job.Launch, report func(job.Exit)) {
	h.mu.Lock()
	r, ok := h.runs[w.RunID]
	switch {
	case !ok:
		h.mu.Unlock()
		report(job.Exit{RunID: w.RunID, Code: -1, Result: job.ResultLost, Message: "run lost: unknown to the runner", End: h.now()})
	case r.ended:
		delete(h.runs, w.RunID)
		h.mu.Unlock()
		// executor.Local opens, locks and reads the supervisor's files
		// here, and other goroutines run meanwhile.
		runtime.Gosched()
		var e job.Exit
		b, err := os.ReadFile(h.record(w.RunID))
		if err == nil {
			err = json.Unmarshal(b, &e)
		}
		if err != nil {
			e = job.Exit{RunID: w.RunID, Code: -1, Result: job.ResultLost, Message: "run lost: " + err.Error(), End: h.now()}
		}
		report(e)
	default:
		r.report = report
		h.mu.Unlock()
	}
	wake(h.handed)
}

func (h *heldRuns) Kill(id int64) {
	h.end(job.Exit{RunID: id, Code: -1, Result: job.ResultKilled, Message: "killed", End: h.now()})
}

func (h *heldRuns) Forget(int64) {}

func (h *heldRuns) Sweep(keep map[int64]bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	maps.DeleteFunc(h.runs, func(id int64, _ *heldRun) bool { return !keep[id] })
}

func (h *heldRuns) Running() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, r := range h.runs {
		if r.report != nil {
			n++
		}
	}
	return n
}

// Stop leaves every run going on, watched by no scheduler.
func (h *heldRuns) Stop(context.Context) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, r := range h.runs {
		r.report = nil
	}
	return nil
}

// end ends a run in flight: its outcome is reported if a scheduler watches
// it, recorded otherwise.
func (h *heldRuns) end(e job.Exit) error {
	h.mu.Lock()
	r, ok := h.runs[e.RunID]
	if !ok || r.ended {
		h.mu.Unlock()
		return nil
	}
	if r.report == nil {
		defer h.mu.Unlock()
		b, err := json.Marshal(e)
		if err == nil {
			err = os.WriteFile(h.record(e.RunID), b, 0o644)
		}
		r.ended = err == nil
		return err
	}
	delete(h.runs, e.RunID)
	h.mu.Unlock()
	r.report(e)
	return nil
}

// inFlight returns the runs that have not ended, watched or not, by ID.
func (h *heldRuns) inFlight() []int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	var ids []int64
	for id, r := range h.runs {
		if !r.ended {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// holds reports whether the runner holds each of the runs ids.
func (h *heldRuns) holds(ids []int64) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, id := range ids {
		if _, ok := h.runs[id]; !ok {
			return false
		}
	}
	return true
}

// restarting is a scheduler over a store and a heldRuns that outlive it,
// stopped and started again as the test goes.
type restarting struct {
	rt      *rapid.T
	dir     string
	virtual bool // a VirtualClock, else a steppedClock
	// batch is Config.FireBatch: ticks of several tasks in parts, and
	// restarts between two parts, when small.
	batch int
	runs  *heldRuns
	clock Clock
	st    store.Store
	s     *Scheduler
}

// open starts a scheduler from instant at.
func (m *restarting) open(at time.Time) {
	if m.virtual {
		m.clock = NewVirtualClock(at)
	} else {
		m.clock = &steppedClock{t: at}
	}
	m.runs.now = m.clock.Now
	var err error
	m.s, err = New(context.Background(), Config{Store: m.st, Runner: m.runs, DataDir: m.dir, Clock: m.clock, Location: time.UTC, FireBatch: m.batch})
	if err != nil {
		m.rt.Fatal(err)
	}
	if err := m.s.Start(context.Background()); err != nil {
		m.rt.Fatal(err)
	}
	m.settle()
}

// stop stops the scheduler; the runs in flight go on.
func (m *restarting) stop() {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := m.s.Stop(ctx)
	m.s = nil
	if err != nil {
		m.rt.Fatal(err)
	}
}

// forward moves the clock to at.
func (m *restarting) forward(at time.Time) {
	if c, ok := m.clock.(*VirtualClock); ok {
		c.forward(at)
	} else {
		m.clock.(*steppedClock).forward(at)
	}
}

// settle has the scheduler decide what is due by now, behind every
// outcome already reported, and waits until the runner holds every run the
// engine started.
func (m *restarting) settle() {
	ctx := context.Background()
	if err := m.s.tick(ctx); err != nil {
		m.rt.Fatal(err)
	}
	var active []int64
	if err := m.s.Read(ctx, func(e *engine.Engine) {
		for _, r := range e.ActiveRuns() {
			active = append(active, r.ID)
		}
	}); err != nil {
		m.rt.Fatal(err)
	}
	deadline := time.NewTimer(30 * time.Second)
	defer deadline.Stop()
	for !m.runs.holds(active) {
		select {
		case <-m.runs.handed:
		case <-deadline.C:
			m.rt.Fatalf("the runner was not handed the runs %v", active)
		}
	}
}

// reasonRun finds the run a fire's reason names as the one the task was
// busy with.
var reasonRun = regexp.MustCompile(`is (\w+) with run (\d+) \(overlap skip\)`)

// TestFateReasonsTrueAcrossRestarts runs tasks with time triggers (every
// few seconds or minutes, on an interval or a cron) under each overlap
// policy, their runs held and ended at random, through random restarts:
// while the scheduler is down for a random time, within the misfire grace
// or beyond it, some of the runs in flight end and their outcomes are
// recorded. Over the whole fire ledger, no occurrence is skipped for a run
// that had ended before the occurrence was decided, or that had not yet
// started; and each run that ended while the scheduler was down is
// recorded with the outcome recorded then.
//
// On the stepped clock the loop ticks by itself as soon as it starts, as
// on the system's clock: there an outcome taken in after the loop's first
// batch (Start before the outcomes came first) shows as occurrences
// skipped for a run that had ended. On the virtual clock only the test's
// ticks decide, and a run that ended while the scheduler was down is taken
// to end when the scheduler attaches it (see simulation.ended).
func TestFateReasonsTrueAcrossRestarts(t *testing.T) {
	t.Parallel()
	// Each check starts from a copy of one empty database: migrating a new
	// one for each took most of the test's time.
	empty := filepath.Join(t.TempDir(), "gnomon.db")
	st, err := sqlite.Open(context.Background(), empty)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	db, err := os.ReadFile(empty)
	if err != nil {
		t.Fatal(err)
	}
	rapid.Check(t, func(rt *rapid.T) {
		checkFateReasons(t, rt, db)
	})
}

func checkFateReasons(t *testing.T, rt *rapid.T, empty []byte) {
	dir := t.TempDir()
	path := filepath.Join(dir, "gnomon.db")
	if err := os.WriteFile(path, empty, 0o600); err != nil {
		rt.Fatal(err)
	}
	// The database outlives the scheduler, as a server's does.
	st, err := sqlite.Open(context.Background(), path)
	if err != nil {
		rt.Fatal(err)
	}
	defer st.Close()
	m := &restarting{rt: rt, dir: dir, st: st, virtual: rapid.Bool().Draw(rt, "virtual"), runs: newHeldRuns(dir),
		batch: rapid.SampledFrom([]int{0, 1, 2}).Draw(rt, "fire batch")}
	var def strings.Builder
	tasks := make([]string, rapid.IntRange(1, 4).Draw(rt, "tasks"))
	for i := range tasks {
		tasks[i] = fmt.Sprintf("t%d", i)
		trigger := rapid.SampledFrom([]string{
			"interval: 1 second", "interval: 2 seconds", "interval: 7 seconds",
			"interval: 1 minute", "interval: 3 minutes", "cron: * * * * *", "cron: */2 * * * *",
		}).Draw(rt, "trigger")
		if strings.HasPrefix(trigger, "interval") {
			trigger = "start_date: 2026-03-08 06:00\n" + trigger
		}
		overlap := rapid.SampledFrom([]string{"skip", "queue", "allow"}).Draw(rt, "overlap")
		fmt.Fprintf(&def, "insert_task: %s\ntype: callable\ncommand: true\nout_log_file: /dev/null\nerr_log_file: /dev/null\n%s\noverlap: %s\n",
			tasks[i], trigger, overlap)
	}
	m.open(t0)
	defer func() {
		if m.s != nil {
			m.stop()
		}
	}()
	ctx := context.Background()
	if _, err := m.s.Define(ctx, DefineFile{File: "t.def", Text: def.String()}); err != nil {
		rt.Fatal(err)
	}
	m.settle()

	exit := func(id int64, at time.Time) job.Exit {
		code := rapid.SampledFrom([]int{0, 0, 1, 3}).Draw(rt, "exit code")
		return job.Exit{RunID: id, Code: code, Result: job.ResultNormal, End: at.UTC()}
	}
	endedDown := map[int64]job.Exit{} // the outcomes recorded while the scheduler was down
	restart := func() {
		stopped := m.clock.Now()
		m.stop()
		down := rapid.OneOf(
			rapid.Int64Range(1, 59_000),       // within the misfire grace
			rapid.Int64Range(61_000, 300_000), // beyond it
		).Draw(rt, "down (ms)")
		back := stopped.Add(time.Duration(down) * time.Millisecond)
		for _, id := range m.runs.inFlight() {
			if rapid.Bool().Draw(rt, fmt.Sprintf("run %d ends while down", id)) {
				at := stopped.Add(time.Duration(rapid.Int64Range(0, down-1).Draw(rt, "ended after (ms)")) * time.Millisecond)
				e := exit(id, at)
				endedDown[id] = e
				if err := m.runs.end(e); err != nil {
					rt.Fatal(err)
				}
			}
		}
		m.open(back)
	}
	for range rapid.IntRange(1, 16).Draw(rt, "steps") {
		switch step := rapid.IntRange(0, 9).Draw(rt, "step"); {
		case step < 5:
			d := rapid.SampledFrom([]time.Duration{100 * time.Millisecond, 700 * time.Millisecond, time.Second,
				2500 * time.Millisecond, 10 * time.Second, 30 * time.Second}).Draw(rt, "advance")
			m.forward(m.clock.Now().Add(d))
			m.settle()
		case step < 8:
			held := m.runs.inFlight()
			if len(held) == 0 {
				continue
			}
			if err := m.runs.end(exit(rapid.SampledFrom(held).Draw(rt, "ends"), m.clock.Now())); err != nil {
				rt.Fatal(err)
			}
			m.settle()
		default:
			restart()
		}
	}
	restart()
	m.forward(m.clock.Now().Add(time.Second))
	m.settle()

	runs := map[int64]job.Run{}
	var fires []job.Fire
	for _, task := range tasks {
		rs, err := m.s.Store().Runs(ctx, store.RunQuery{Task: task})
		if err != nil {
			rt.Fatal(err)
		}
		for _, r := range rs {
			runs[r.ID] = r
		}
		fs, err := m.s.Store().Fires(ctx, store.FireQuery{Task: task})
		if err != nil {
			rt.Fatal(err)
		}
		fires = append(fires, fs...)
	}
	stamp := func(at time.Time) string { return at.Format("15:04:05.000") }
	for _, f := range fires {
		sub := reasonRun.FindStringSubmatch(f.Reason)
		if sub == nil {
			continue
		}
		id, _ := strconv.ParseInt(sub[2], 10, 64)
		r, ok := runs[id]
		switch {
		case !ok:
			rt.Errorf("%s at %s, decided at %s: %s %q; no run %d is recorded", f.Task, stamp(f.Scheduled), stamp(f.At), f.Fate, f.Reason, id)
		case !r.End.IsZero() && r.End.Before(f.At):
			rt.Errorf("%s at %s, decided at %s: %s %q; run %d had ended at %s", f.Task, stamp(f.Scheduled), stamp(f.At), f.Fate, f.Reason, id, stamp(r.End))
		case r.Start.After(f.At):
			rt.Errorf("%s at %s, decided at %s: %s %q; run %d started later, at %s", f.Task, stamp(f.Scheduled), stamp(f.At), f.Fate, f.Reason, id, stamp(r.Start))
		}
	}
	for _, id := range slices.Sorted(maps.Keys(endedDown)) {
		e, r := endedDown[id], runs[id]
		want := job.Success
		if e.Code != 0 {
			want = job.Failure
		}
		if r.Status != want || r.ExitCode != e.Code || r.Result != job.ResultNormal || (!m.virtual && !r.End.Equal(e.End)) {
			rt.Errorf("run %d ended while the scheduler was down, exit code %d at %s; recorded %s, exit code %d, %s, at %s",
				id, e.Code, stamp(e.End), r.Status, r.ExitCode, r.Result, stamp(r.End))
		}
	}
}
