// Package scheduler runs the engine: one goroutine owns it, applies events
// in arrival order, writes each batch of accepted events to the journal
// together with the state they change (group commit), answers the callers
// once the batch is durable, and only then performs the effects.
package scheduler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sync"
	"time"

	"github.com/gnomon-sched/gnomon/engine"
	"github.com/gnomon-sched/gnomon/executor"
	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/store"
)

// Clock tells the time. The engine never reads the clock itself.
type Clock interface{ Now() time.Time }

// SystemClock is the real clock.
type SystemClock struct{}

// Now returns the current time.
func (SystemClock) Now() time.Time { return time.Now() }

// VirtualClock is a clock that moves only when a Scheduler is told to
// advance it. A scheduler on a virtual clock arms no timers: Advance
// delivers every due instant in order.
type VirtualClock struct {
	mu sync.Mutex
	t  time.Time
}

// NewVirtualClock returns a virtual clock reading t.
func NewVirtualClock(t time.Time) *VirtualClock { return &VirtualClock{t: t} }

// Now returns the virtual time.
func (c *VirtualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *VirtualClock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// Config configures a Scheduler.
type Config struct {
	// Store keeps the journal and state. Required.
	Store store.Store
	// DataDir holds run directories (DataDir/runs). Required.
	DataDir string
	// Workers is the concurrency limit for runs; zero means 10.
	Workers int
	// Clock defaults to SystemClock.
	Clock Clock
	// Grace is the time an aborted command gets between TERM and KILL;
	// zero means 10s.
	Grace time.Duration
	// SupervisorCommand starts a run supervisor; zero means this executable.
	SupervisorCommand []string
	// Location is the default time zone of calendars; nil means UTC.
	Location *time.Location
	// EventLateness is engine.Config.EventLateness.
	EventLateness time.Duration
	// Logger defaults to discarding.
	Logger *slog.Logger
	// Functions finds the Go functions that function jobs run; nil has
	// none. The built-in "log" is always there.
	Functions func(name string) executor.Func
	// Mailer sends alerts; nil records each alert as failed ("no SMTP
	// server is configured").
	Mailer Mailer
	// RetryAlertsFor is how long an alert that cannot be sent is retried
	// after its first attempt; zero means 24h.
	RetryAlertsFor time.Duration
	// Listener, if set, is told of every run started and ended and every
	// not-started outcome, in commit order, once each is durable. It is
	// called on one goroutine and should return quickly.
	Listener func(Notice)
}

// Notice is what a Listener is told.
type Notice struct {
	Kind NoticeKind
	Task string
	// Run is the run started or ended (zero for NotStarted).
	Run job.Run
	// Reason says why a task did not start.
	Reason string
}

// NoticeKind is the kind of a Notice.
type NoticeKind string

// Notice kinds.
const (
	Started    NoticeKind = "started"
	Succeeded  NoticeKind = "succeeded"
	Failed     NoticeKind = "failed" // failed, aborted, lost or failed to launch
	NotStarted NoticeKind = "not_started"
)

// ErrStopped is returned for requests made after Stop, or after the store
// failed.
var ErrStopped = errors.New("scheduler stopped")

// ErrNotSimulated is returned by Advance on a scheduler with a real clock.
var ErrNotSimulated = errors.New("the clock can only be moved on a server started with --simulate-from")

// Scheduler owns an engine. It is safe for concurrent use.
type Scheduler struct {
	cfg     Config
	eng     *engine.Engine
	x       *executor.Executor
	fx      *executor.Funcs
	in      chan *request
	effects chan []any
	quit    chan struct{}
	done    chan struct{}
	wg      sync.WaitGroup
	log     *slog.Logger

	stopOnce sync.Once
	mu       sync.Mutex
	err      error // why the loop stopped

	// virtual is the clock when simulating, nil otherwise.
	virtual *VirtualClock
	// changed gets a signal after every batch; Advance waits on it.
	changed chan struct{}
	advance sync.Mutex

	ckpt checkpointer // owned by the loop
	// dataBuf is the buffer the loop gathers a commit's data events in,
	// kept while it is at most maxDataBuf.
	dataBuf []byte

	// alertWake and auditWake tell the alert deliverer and the audit log
	// writer that a commit gave them work.
	alertWake, auditWake chan struct{}
}

type request struct {
	ev    engine.Event
	read  func(*engine.Engine)
	reply chan error
	// data is what a data event did, set before the reply.
	data *engine.DataResult
	// flush asks for every run and fire held back to be written in this
	// commit.
	flush bool
}

// timerEarly is how long before a due instant the loop's timer is armed.
// A process with many goroutines and a large heap was measured waking
// from a timer 2 to 4 ms late, against under 1 ms for a bare one; a
// goroutine that yields until the instant sees it come within
// microseconds. It costs at most timerEarly of CPU per due instant.
const timerEarly = 3 * time.Millisecond

// maxBatch bounds how many requests share one commit.
const maxBatch = 512

// maxDataBuf bounds the buffer the loop keeps for the next commit's data
// events: a batch of events with megabyte resources gets one of its own.
const maxDataBuf = 1 << 20

// linger bounds how long the loop waits for more requests before
// committing when the previous batch held more than one: a group-commit
// delay. The wait ends as soon as the batch holds as many requests as the
// previous one: under a steady load the callers answered last time are
// back, and waiting longer only adds latency. (A timer shorter than a
// millisecond is not exact anyway: an idle Go runtime sleeps in epoll,
// whose timeout is in milliseconds, so a 250 µs wait was measured taking
// 1.25 ms when nothing else ran.)
const linger = time.Millisecond

// New loads the stored state into a new engine.
func New(ctx context.Context, cfg Config) (*Scheduler, error) {
	if cfg.Store == nil || cfg.DataDir == "" {
		return nil, errors.New("scheduler: Store and DataDir are required")
	}
	if cfg.Clock == nil {
		cfg.Clock = SystemClock{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.RetryAlertsFor <= 0 {
		cfg.RetryAlertsFor = 24 * time.Hour
	}
	s := &Scheduler{
		cfg:       cfg,
		alertWake: make(chan struct{}, 1),
		auditWake: make(chan struct{}, 1),
		changed:   make(chan struct{}, 1),
		in:        make(chan *request, 1024),
		effects:   make(chan []any, 1024),
		quit:      make(chan struct{}),
		done:      make(chan struct{}),
		log:       cfg.Logger,
	}
	s.eng = engine.New(engine.Config{Workers: cfg.Workers, Location: cfg.Location, EventLateness: cfg.EventLateness,
		Functions: func(name string) bool { return s.function(name) != nil }})
	// Loading allocates the whole state at once: collect less often
	// meanwhile (the garbage is returned below).
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	snap, err := cfg.Store.Load(ctx)
	if err != nil {
		return nil, err
	}
	rp, err := replayJournal(ctx, cfg.Store, snap)
	if err != nil {
		return nil, err
	}
	s.ckpt = checkpointer{gen: snap.WindowsGen, seq: rp.last, since: rp.tail, live: len(snap.Windows), held: rp.runs}
	for _, name := range rp.apply(snap.Tasks) {
		if s.ckpt.dirty == nil {
			s.ckpt.dirty = map[string]bool{}
		}
		s.ckpt.dirty[name] = true
	}
	if err := s.eng.Restore(snap.Tasks, snap.Active, max(snap.LastRun, rp.lastRun), rp.vals); err != nil {
		return nil, err
	}
	// Loading made garbage the size of the store (rows, JSON): give it
	// back to the system now rather than keep it mapped until the heap
	// grows into it again.
	snap, rp = nil, nil
	debug.FreeOSMemory()
	for _, p := range s.eng.Problems() {
		s.log.Warn("time trigger not armed", "problem", p)
	}
	s.virtual, _ = cfg.Clock.(*VirtualClock)
	s.fx = executor.NewFuncs(s.report, cfg.Logger)
	s.x, err = executor.New(executor.Config{
		Dir:     filepath.Join(cfg.DataDir, "runs"),
		Command: cfg.SupervisorCommand,
		Grace:   cfg.Grace,
		Logger:  cfg.Logger,
		Report:  s.report,
		// A spare for each worker, up to 8: commands started together do
		// not wait for supervisors to start one after the other.
		Spares: min(max(cfg.Workers, 1), 8),
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// Start re-attaches to the runs that were in flight, then starts the loop.
// It does not block.
func (s *Scheduler) Start() {
	keep := map[int64]bool{}
	var lost []executor.Exit
	for _, r := range s.eng.ActiveRuns() {
		def, _, ok := s.eng.Task(r.Task)
		switch {
		case ok && def.Type == job.Bundle:
			continue
		case ok && def.Extras().Function != "":
			// A function run lives in the process: it died with it.
			lost = append(lost, executor.Exit{RunID: r.ID, Code: -1, Result: job.ResultLost,
				Message: "run lost: the scheduler stopped while its function ran", End: s.cfg.Clock.Now().UTC()})
			continue
		}
		keep[r.ID] = true
		s.x.Attach(r.ID)
	}
	s.x.Sweep(keep)
	s.wg.Add(4)
	go s.loop()
	go s.perform()
	go s.deliver()
	go s.writeAudit()
	for _, e := range lost {
		go s.report(e)
	}
	// Dispatch what was ready when the server stopped.
	go s.Submit(context.Background(), engine.Tick{})
}

// Submit applies an event and returns once its outcome is durable. A
// rejected event returns the engine's error and changes nothing.
func (s *Scheduler) Submit(ctx context.Context, ev engine.Event) error {
	return s.send(ctx, &request{ev: ev, reply: make(chan error, 1)})
}

// Post applies a data event and returns, once it is durable, the
// dependencies it validated and the configurations it triggered.
func (s *Scheduler) Post(ctx context.Context, ev engine.Data) (*engine.DataResult, error) {
	r := &request{ev: ev, reply: make(chan error, 1)}
	if err := s.send(ctx, r); err != nil {
		return nil, err
	}
	return r.data, nil
}

// Read runs fn on the loop goroutine, where it may read the engine. What it
// sees is durable: the loop answers only after committing.
func (s *Scheduler) Read(ctx context.Context, fn func(*engine.Engine)) error {
	return s.send(ctx, &request{read: fn, reply: make(chan error, 1)})
}

func (s *Scheduler) send(ctx context.Context, r *request) error {
	select {
	case s.in <- r:
	case <-s.done:
		return s.stopErr()
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-r.reply:
		return err
	case <-s.done:
		// The loop may have answered just before stopping.
		select {
		case err := <-r.reply:
			return err
		default:
			return s.stopErr()
		}
	}
}

func (s *Scheduler) stopErr() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	return ErrStopped
}

// Store returns the scheduler's store, for reading history. Its runs and
// fires may lack the latest of configurations that ran without a command,
// which are written in bulk: Runs and Fires have them.
func (s *Scheduler) Store() store.Store { return s.cfg.Store }

// Runs returns run history, as the store's Runs, once every run the loop
// holds back is written.
func (s *Scheduler) Runs(ctx context.Context, q store.RunQuery) ([]job.Run, error) {
	if err := s.flush(ctx); err != nil {
		return nil, err
	}
	return s.cfg.Store.Runs(ctx, q)
}

// Fires returns the recorded fates of occurrences, as the store's Fires,
// once every fire the loop holds back is written.
func (s *Scheduler) Fires(ctx context.Context, q store.FireQuery) ([]job.Fire, error) {
	if err := s.flush(ctx); err != nil {
		return nil, err
	}
	return s.cfg.Store.Fires(ctx, q)
}

// flush has the loop write what it holds back.
func (s *Scheduler) flush(ctx context.Context) error {
	return s.send(ctx, &request{flush: true, reply: make(chan error, 1)})
}

// Stop drains: no new run starts, running commands may finish until ctx is
// done, then the loop stops. Commands still running keep running under
// their supervisors and are re-attached at the next start. Stop may be
// called more than once.
func (s *Scheduler) Stop(ctx context.Context) error {
	var err error
	s.stopOnce.Do(func() {
		s.Read(ctx, func(e *engine.Engine) { e.Drain(true) })
		for s.x.Running()+s.fx.Running() > 0 && ctx.Err() == nil {
			select {
			case <-ctx.Done():
			case <-time.After(50 * time.Millisecond):
			}
		}
		// Function runs cannot outlive the process: cancel them, and give
		// them the kill grace to return and be recorded.
		if s.fx.Running() > 0 {
			s.fx.CancelAll()
			done := make(chan struct{})
			go func() { s.fx.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(s.grace()):
			}
			s.settleExits()
		}
		close(s.quit)
		s.wg.Wait()
		s.x.Close()
		err = s.runErr()
	})
	return err
}

func (s *Scheduler) runErr() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Done returns a channel closed when the loop stops, by Stop or because the
// store failed (Stop then returns why).
func (s *Scheduler) Done() <-chan struct{} { return s.done }

func (s *Scheduler) loop() {
	defer s.wg.Done()
	defer close(s.done)
	defer close(s.effects)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	last := 0
	var wake time.Time // the earliest due instant, as of the last batch
	for {
		var batch []*request
		select {
		case r := <-s.in:
			batch = append(batch, r)
		case <-timer.C:
			// The timer was armed timerEarly ahead: wait out the rest
			// here, yielding, unless a request comes meanwhile. The
			// deadline (monotonic) bounds the wait should the wall clock
			// be set back.
			for until := time.Now().Add(timerEarly); s.virtual == nil && !wake.IsZero() && wake.After(s.cfg.Clock.Now()) &&
				len(s.in) == 0 && time.Now().Before(until); {
				runtime.Gosched()
			}
		case <-s.quit:
			return
		}
	collect:
		for len(batch) < maxBatch {
			select {
			case r := <-s.in:
				batch = append(batch, r)
			default:
				break collect
			}
		}
		// A due instant goes first, whether the timer or a request woke
		// the loop, and does not wait for the linger.
		ticked := s.virtual == nil && !wake.IsZero() && !wake.After(s.cfg.Clock.Now())
		if ticked {
			batch = append([]*request{{ev: engine.Tick{}}}, batch...)
		}
		if want := min(last, maxBatch); len(batch) < want && !ticked {
			// Under concurrent load, wait a little for more requests so
			// that one commit (one fsync, one write per page) serves
			// more of them.
			lt := time.NewTimer(linger)
		linger:
			for len(batch) < want {
				select {
				case r := <-s.in:
					batch = append(batch, r)
				case <-lt.C:
					break linger
				}
			}
			lt.Stop()
		}
		last = len(batch)
		if err := s.process(batch); err != nil {
			s.mu.Lock()
			s.err = fmt.Errorf("%w: %w", ErrStopped, err)
			s.mu.Unlock()
			s.log.Error("store failed; stopping the scheduler", "err", err)
			for _, r := range batch {
				if r.reply != nil {
					r.reply <- s.err
				}
			}
			return
		}
		for _, r := range batch {
			if r.ev != nil { // reads change nothing
				select {
				case s.changed <- struct{}{}:
				default:
				}
				break
			}
		}
		timer.Stop()
		if wake = s.eng.NextWake(); !wake.IsZero() && s.virtual == nil {
			timer.Reset(max(wake.Sub(s.cfg.Clock.Now())-timerEarly, 0))
		}
	}
}

// report hands a run's outcome to the loop (or drops it once the
// scheduler stops: the run stays recorded as running, and is attached or
// lost at the next start).
func (s *Scheduler) report(e executor.Exit) {
	select {
	case s.in <- s.exitRequest(e):
	case <-s.quit:
	}
}

func (s *Scheduler) exitRequest(e executor.Exit) *request {
	at := e.End
	if s.virtual != nil {
		at = time.Time{} // runs take no virtual time: they end when reported
	}
	return &request{ev: engine.RunExited{RunID: e.RunID, ExitCode: e.Code, Result: e.Result, Message: e.Message, Data: e.Data, At: at}}
}

// process applies a batch, commits it and answers its callers.
func (s *Scheduler) process(batch []*request) error {
	var (
		b       store.Batch
		effects []any
		replies = make([]error, len(batch))
		notices []any
		tasks   = map[string]bool{}
		defined = map[string]bool{}
		deleted = map[string]bool{}
		runs    = map[int64]job.Run{}
		exited  []int64
		// Consecutive data events share one journal entry.
		data      = dataRun{spare: s.dataBuf}
		journaled int
	)
	flush := false
	held := len(s.ckpt.held) // the runs held back from this batch on
	for i, r := range batch {
		if r.read != nil {
			r.read(s.eng)
			continue
		}
		if r.flush {
			flush = true
			continue
		}
		now := s.cfg.Clock.Now()
		out, err := s.eng.Apply(r.ev, now)
		if err != nil {
			replies[i] = err
			continue
		}
		if d, ok := r.ev.(engine.Define); ok && d.Check {
			continue
		}
		journaled++
		if ev, ok := r.ev.(engine.Data); ok {
			err = data.add(ev, out, now.UTC())
		} else {
			data.flush(&b)
			var body []byte
			body, err = appendJournalBody(nil, r.ev, out, now.UTC())
			b.Entries = append(b.Entries, store.Entry{At: now.UTC(), Kind: engine.Kind(r.ev), Body: body})
		}
		if err != nil {
			return fmt.Errorf("journal: %w", err)
		}
		for _, n := range out.Tasks {
			tasks[n] = true
			delete(deleted, n)
		}
		for _, n := range out.Defined {
			defined[n] = true
		}
		for _, n := range out.Deleted {
			deleted[n] = true
			delete(tasks, n)
			defined[n] = true // if it comes back in this batch, it is new
		}
		for _, run := range out.Runs {
			runs[run.ID] = *run
		}
		b.Fires = append(b.Fires, out.Fires...)
		s.ckpt.hold(out)
		r.data = out.Data
		if ex, ok := r.ev.(engine.RunExited); ok {
			exited = append(exited, ex.RunID)
		}
		for _, ef := range out.Effects {
			effects = append(effects, ef)
		}
		b.Alerts = append(b.Alerts, out.Alerts...)
		if s.cfg.Listener != nil {
			notices = appendNotices(notices, out)
		}
		for _, f := range out.Fires {
			if f.Fate != job.FateRan {
				effects = append(effects, f) // logged
			}
		}
	}
	for n := range tasks {
		s.ckpt.written(n)
		def, st, ok := s.eng.Task(n)
		switch {
		case !ok:
		case defined[n]:
			b.Tasks = append(b.Tasks, job.Record{Def: &def, State: st})
		default:
			b.States = append(b.States, store.TaskState{Name: n, State: st})
		}
	}
	for n := range deleted {
		s.ckpt.written(n)
		b.Deleted = append(b.Deleted, n)
	}
	for _, r := range runs {
		if !s.ckpt.heldSince(held, r.ID) {
			b.Runs = append(b.Runs, r)
		}
	}
	b.Audit = auditOf(runs)
	data.flush(&b)
	s.ckpt.part(s.eng, &b, tasks)
	if flush {
		s.ckpt.flush(&b)
	}
	if err := s.cfg.Store.Commit(context.Background(), &b); err != nil {
		return err
	}
	s.ckpt.committed(&b, journaled, s.eng)
	if data.kept != nil && cap(data.kept) <= maxDataBuf {
		s.dataBuf = data.kept // a batch of huge events does not pin its buffer
	}
	for i, r := range batch {
		if r.reply != nil {
			r.reply <- replies[i]
		}
	}
	for _, id := range exited {
		effects = append(effects, forget{id})
	}
	effects = append(effects, notices...)
	if len(effects) > 0 {
		s.effects <- effects
	}
	if len(b.Alerts) > 0 {
		s.wakeAlerts()
	}
	if len(b.Audit) > 0 {
		s.wakeAudit()
	}
	return nil
}

// appendNotices adds what an output tells listeners: the runs that ended,
// then what that caused.
func appendNotices(notices []any, out *engine.Output) []any {
	for _, r := range out.Runs {
		switch {
		case r.Status == job.Success:
			notices = append(notices, Notice{Kind: Succeeded, Task: r.Task, Run: *r})
		case r.Done():
			notices = append(notices, Notice{Kind: Failed, Task: r.Task, Run: *r})
		}
	}
	for _, ef := range out.Effects {
		switch ef := ef.(type) {
		case engine.StartRun:
			notices = append(notices, Notice{Kind: Started, Task: ef.Task.Name, Run: ef.Run})
		case engine.NotStarted:
			notices = append(notices, Notice{Kind: NotStarted, Task: ef.Task, Reason: ef.Reason})
		}
	}
	return notices
}

// forget removes a run directory once the run's end is durable.
type forget struct{ id int64 }

// perform carries out effects in order, off the loop goroutine.
func (s *Scheduler) perform() {
	defer s.wg.Done()
	for list := range s.effects {
		for _, ef := range list {
			switch ef := ef.(type) {
			case engine.StartRun:
				s.log.Info("run started", "task", ef.Task.Name, "run", ef.Run.ID)
				spec := executor.Spec{
					RunID: ef.Run.ID, Task: ef.Task.Name, Command: ef.Task.Command, Profile: ef.Task.Extras().Profile,
					OutLog: ef.Task.OutLog, ErrLog: ef.Task.ErrLog, Scheduled: ef.Run.Scheduled,
				}
				if fn := ef.Task.Extras().Function; fn != "" {
					s.fx.Start(spec, fn, s.function(fn))
				} else {
					s.x.Start(spec)
				}
			case engine.KillRun:
				s.log.Info("run aborted", "run", ef.RunID)
				if !s.fx.Kill(ef.RunID) {
					s.x.Kill(ef.RunID)
				}
			case Notice:
				s.cfg.Listener(ef)
			case engine.Triggered:
				s.log.Info("job triggered", "configuration", ef.Task, "at", ef.At.UTC().Format(time.RFC3339Nano),
					"event", string(ef.Type)+"/"+ef.Resource)
			case engine.NotStarted:
				s.log.Info("not started", "task", ef.Task, "reason", ef.Reason)
			case job.Fire:
				s.log.Info("occurrence "+string(ef.Fate), "task", ef.Task, "scheduled", ef.Scheduled, "reason", ef.Reason)
			case forget:
				s.x.Forget(ef.id)
			}
		}
	}
}

// function returns the registered function of a name, nil if none.
func (s *Scheduler) function(name string) executor.Func {
	if s.cfg.Functions != nil {
		if fn := s.cfg.Functions(name); fn != nil {
			return fn
		}
	}
	if name == engine.BuiltinLog {
		return s.logFunc
	}
	return nil
}

// logFunc is the built-in function "log": it writes a log line.
func (s *Scheduler) logFunc(_ context.Context, c *executor.Call) error {
	s.log.Info("job triggered", "task", c.Task, "run", c.RunID, "scheduled", c.Scheduled)
	return nil
}

// Progress returns a running function run's status and message data; ok is
// false when the run is not a function run in flight.
func (s *Scheduler) Progress(run int64) (status string, data map[string]string, ok bool) {
	c := s.fx.Call(run)
	if c == nil {
		return "", nil, false
	}
	status, data = c.Progress()
	return status, data, true
}

func (s *Scheduler) grace() time.Duration {
	if s.cfg.Grace > 0 {
		return s.cfg.Grace
	}
	return 10 * time.Second
}

// settleExits waits (briefly) until the exits reported so far are
// committed: a read queued after them is answered after their commit.
func (s *Scheduler) settleExits() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	s.Read(ctx, func(*engine.Engine) {})
}

// Simulated reports whether the scheduler runs on a virtual clock.
func (s *Scheduler) Simulated() bool { return s.virtual != nil }

// Now returns the scheduler's clock reading.
func (s *Scheduler) Now() time.Time { return s.cfg.Clock.Now() }

// Advance moves a virtual clock to instant to. It stops at every instant
// where something is due, in order, lets the engine fire it and waits until
// every run started has ended (runs take no virtual time), so that when it
// returns the scheduler has settled at the new time. It fails on a real
// clock, and for an instant before the current one.
func (s *Scheduler) Advance(ctx context.Context, to time.Time) error {
	if s.virtual == nil {
		return ErrNotSimulated
	}
	s.advance.Lock()
	defer s.advance.Unlock()
	if now := s.virtual.Now(); to.Before(now) {
		return fmt.Errorf("the clock cannot go back: it reads %s", now.UTC().Format(time.RFC3339Nano))
	}
	var last time.Time
	for {
		if err := s.settle(ctx); err != nil {
			return err
		}
		var wake time.Time
		if err := s.Read(ctx, func(e *engine.Engine) { wake = e.NextWake() }); err != nil {
			return err
		}
		if wake.IsZero() || wake.After(to) {
			break
		}
		if !last.IsZero() && !wake.After(last) {
			return fmt.Errorf("the engine is stuck at %s", wake.UTC().Format(time.RFC3339Nano))
		}
		last = wake
		if wake.After(s.virtual.Now()) {
			s.virtual.set(wake)
		}
		if err := s.Submit(ctx, engine.Tick{}); err != nil {
			return err
		}
	}
	s.virtual.set(to)
	if err := s.Submit(ctx, engine.Tick{}); err != nil {
		return err
	}
	return s.settle(ctx)
}

// settle waits until no callable run is in flight.
func (s *Scheduler) settle(ctx context.Context) error {
	for {
		var busy bool
		if err := s.Read(ctx, func(e *engine.Engine) { busy = e.Running() > 0 }); err != nil {
			return err
		}
		if !busy {
			return nil
		}
		select {
		case <-s.changed:
		case <-s.done:
			return s.stopErr()
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
