// Package scheduler runs the engine: one goroutine owns it, applies events
// in arrival order, writes each batch of accepted events to the journal
// together with the state they change (group commit), answers the callers
// once the batch is durable, and only then performs the effects.
//
// The loop talks to the outside through interfaces it owns: a store.Store
// for the journal and state, a Runner for the runs it starts, a Mailer for
// alerts and a Clock for every instant it decides on or records. It
// constructs none of them.
//
// The files of the package follow the loop: scheduler.go (requests, the
// loop and its commit), batch.go (what an engine output writes), effects.go
// (what is done once a batch is durable), simulate.go (a virtual clock),
// alerts.go and audit.go (the two workers behind the commit), and the
// journal's codec.go, replay.go and checkpoint.go.
package scheduler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gnomon-sched/gnomon/clock"
	"github.com/gnomon-sched/gnomon/defs"
	"github.com/gnomon-sched/gnomon/engine"
	"github.com/gnomon-sched/gnomon/internal/startstop"
	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/periods"
	"github.com/gnomon-sched/gnomon/store"
)

// Config configures a Scheduler.
// DefaultFireBatch is Config.FireBatch's default: a part of a tick then
// commits in tens of milliseconds, so that reads, run ends and the next
// instants are not kept waiting for a storm of 10^5 occurrences.
const DefaultFireBatch = 2000

type Config struct {
	// Store keeps the journal and state. Required; the scheduler does not
	// close it.
	Store store.Store
	// Runner runs what the engine starts. Required.
	Runner Runner
	// DataDir holds the audit log (DataDir/audit.log). Required.
	DataDir string
	// Workers is the concurrency limit for runs; zero means 10.
	Workers int
	// Clock defaults to SystemClock. With a *VirtualClock the scheduler
	// simulates: see Advance.
	Clock Clock
	// Location is the default time zone of calendars, and of the times in
	// the audit log; nil means UTC.
	Location *time.Location
	// EventLateness is engine.Config.EventLateness.
	EventLateness time.Duration
	// FireBatch is engine.Config.FireBatch: the most occurrences (then
	// the most tasks they queued) one commit handles when many are due
	// at one instant. Zero means DefaultFireBatch, a negative value no
	// limit.
	FireBatch int
	// Logger defaults to discarding.
	Logger *slog.Logger
	// Functions reports whether a Go function of that name exists, for
	// the validation of definitions; nil accepts only engine.BuiltinLog.
	Functions func(name string) bool
	// LogFile says why a definition may not name path as a log file, or
	// nil if it may (engine.Config.LogFile); nil accepts every path.
	LogFile func(path string) error
	// Owner says why a definition may not name owner as the user its
	// command runs as, or nil if it may (engine.Config.Owner); nil
	// accepts every owner.
	Owner func(owner string) error
	// Mailer sends alerts; nil records each alert as failed ("no SMTP
	// server is configured").
	Mailer Mailer
	// Hooks sends the alerts of webhooks (job.HookTarget); nil records
	// each as failed.
	Hooks Mailer
	// Files runs the file watchers of the tasks that define one; nil
	// leaves them idle, with a warning for each such task.
	Files FileWatcher
	// RetryAlertsFor is how long an alert that cannot be sent is retried
	// after its first attempt; zero means 24h.
	RetryAlertsFor time.Duration
	// ExternalClock leaves the finding of due occurrences to a cluster's
	// clock nodes (engine.Config.ExternalClock): time triggers fire
	// through engine.Fired events submitted to the scheduler.
	ExternalClock bool
	// Fetch has an external clock find the occurrences due in a
	// simulation (ExternalClock on a virtual clock): at each instant
	// Advance stops at, once the virtual clock's reading is saved in the
	// store, Advance calls it with the reading and the occurrences the
	// engine waits for by then (engine.Engine.Due), and it returns once it
	// has submitted, as engine.Fired, what the clock nodes recorded. Nil
	// leaves such occurrences unfired, and Advance fails on them.
	Fetch func(ctx context.Context, now time.Time, due []engine.ClockFire) error
	// Listener, if set, is told of every run started and ended and every
	// not-started outcome, in commit order, once each is durable. It is
	// called on one goroutine and should return quickly.
	Listener func(Notice)
	// Observer, if set, is told what the loop does, for metrics; Gauges
	// has the readings.
	Observer Observer
	// Retention is how long records are kept: New refuses horizons below
	// their floors, and a pruner removes what is older, off the loop, on
	// a store that can (store.Pruner). The zero value keeps
	// DefaultRetention.
	Retention Retention
	// AuditRotation rotates audit.log as the server's log files rotate
	// (its Size, Age and Keep; Off counts as zero): once it holds Size
	// bytes, or its oldest line is Age old on Clock, audit.log becomes
	// audit.log.1 (and so on, Keep files kept, 0 meaning 5) right after
	// the writer recorded its position. The zero value never rotates it.
	AuditRotation job.LogRotation
}

// ErrStopped is returned for requests made after Stop, or after the store
// failed.
var ErrStopped = errors.New("scheduler stopped")

// ErrNotSimulated is returned by Advance on a scheduler with a real clock.
var ErrNotSimulated = errors.New("the clock can only be moved on a scheduler that simulates (started on a virtual clock)")

// Scheduler owns an engine. It is safe for concurrent use.
type Scheduler struct {
	// functions reports whether a function name is registered.
	functions func(string) bool
	cfg       Config
	eng       *engine.Engine
	in        chan *request
	// reads are the reads of the engine (Read), served between two
	// batches ahead of the events queued in in.
	reads   chan *request
	effects chan []effect
	quit    chan struct{}
	done    chan struct{}
	wg      sync.WaitGroup
	log     *slog.Logger

	life     startstop.Guard
	stopOnce sync.Once
	mu       sync.Mutex
	err      error // why the loop stopped

	// halt is closed by Halt, haltErr set before: the loop stops.
	haltOnce sync.Once
	halt     chan struct{}
	haltErr  error

	ckpt checkpointer // owned by the loop
	// dataBuf is the buffer the loop gathers a commit's data events in,
	// kept while it is at most maxDataBuf.
	dataBuf []byte

	// alertWake and auditWake tell the alert deliverer and the audit log
	// writer that a commit gave them work.
	alertWake, auditWake chan struct{}
	// watchWake tells the file watchers that a commit defined, changed or
	// deleted one.
	watchWake chan struct{}

	sim simulation // the virtual clock, when simulating
	// watchWarned holds the tasks whose file watcher was warned of.
	watchWarned sync.Map
	// changes tells watchers of the state that a commit changed it.
	changes changes

	trees forest // the timeperiod trees, owned by the loop
	// stopping is set once Stop stops the runner: a node's run it kills
	// then stays outstanding.
	stopping atomic.Bool
	// waiting is set while the loop waits for work (Idle).
	waiting atomic.Bool
	// unavailable holds why the store cannot take a commit, while the
	// loop retries one: requests are refused meanwhile.
	unavailable atomic.Pointer[error]
	// deferred holds the requests the loop takes before any sent to it:
	// those Start queues, and the reports (requests without a caller
	// waiting) that came while a commit was retried. Only the loop
	// touches it once started.
	deferred []*request

	obs    Observer // cfg.Observer, or one that ignores everything
	gauges gauges   // for Gauges, stored by the loop

	retention Retention  // cfg.Retention with its defaults
	pruning   sync.Mutex // held by a pass of the pruner

	// view is the state of the tasks as of the last commit, for readers;
	// viewer keeps what the loop builds it from.
	view   atomic.Pointer[View]
	viewer viewer
}

// request is what callers hand the loop: an event to apply, a read of the
// engine, or a flush of what the loop holds back.
type request struct {
	ev engine.Event
	// file is a definition file to plan into ev, or a tree file, and
	// defined what it did.
	file    *DefineFile
	defined *Defined
	read    func(*engine.Engine)
	reply   chan error
	// claim guards a read against its caller giving up: the loop runs it
	// only if the caller has not abandoned it, and a caller that gives up
	// while it runs waits for it to end (see sendTo).
	claim     sync.Mutex
	running   bool
	abandoned bool
	// data is what a data event did, set before the reply.
	data *engine.DataResult
	// flush asks for every run and fire held back to be written in this
	// commit.
	flush bool
	// tree is an event of the timeperiod forest, and treeOut what it did;
	// nodeExit is how a node's command or function ended.
	tree     periods.Event
	treeOut  *periods.Output
	nodeExit *nodeExit
	// backfill is what a backfill or its cancel did, set before the
	// reply; dryRun answers a backfill with what it would do.
	backfill *engine.BackfillResult
	dryRun   bool
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
// whose timeout is in milliseconds.)
const linger = time.Millisecond

// New loads the stored state into a new engine: the tasks, then the
// journal after the last checkpoint of the windows.
func New(ctx context.Context, cfg Config) (*Scheduler, error) {
	if cfg.Store == nil || cfg.Runner == nil || cfg.DataDir == "" {
		return nil, errors.New("scheduler: Store, Runner and DataDir are required")
	}
	// The log files of timeperiod nodes are named from it: an absolute
	// path does not depend on where a runner resolves relative ones.
	dataDir, err := filepath.Abs(cfg.DataDir)
	if err != nil {
		return nil, fmt.Errorf("scheduler: %w", err)
	}
	cfg.DataDir = dataDir
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
		watchWake: make(chan struct{}, 1),
		in:        make(chan *request, 1024),
		reads:     make(chan *request, 64),
		effects:   make(chan []effect, 1024),
		quit:      make(chan struct{}),
		done:      make(chan struct{}),
		halt:      make(chan struct{}),
		log:       cfg.Logger,
		obs:       cfg.Observer,
		retention: cfg.Retention.withDefaults(),
	}
	if s.obs == nil {
		s.obs = nopObserver{}
	}
	s.functions = cfg.Functions
	if s.functions == nil {
		s.functions = func(name string) bool { return name == engine.BuiltinLog }
	}
	if cfg.FireBatch == 0 {
		cfg.FireBatch = DefaultFireBatch
	}
	s.eng = engine.New(engine.Config{Workers: cfg.Workers, Location: cfg.Location, EventLateness: cfg.EventLateness, ExternalClock: cfg.ExternalClock,
		FireBatch: max(cfg.FireBatch, 0)})
	s.newForest()
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
		s.ckpt.markDirty(name)
	}
	s.eng.RestoreCalendars(snap.Calendars)
	tasks, err := prepare(s.eng, snap.Tasks)
	if err != nil {
		return nil, err
	}
	active := slices.DeleteFunc(slices.Clone(snap.Active), func(r *job.Run) bool { return r.Timeperiod != "" })
	s.eng.Restore(tasks, active, max(snap.LastRun, rp.lastRun), rp.vals)
	if err := s.restoreTrees(&snap.Trees, snap.Active); err != nil {
		return nil, err
	}
	for _, p := range s.eng.Problems() {
		s.log.Warn("time trigger not armed", "problem", p)
	}
	if err := s.sim.init(ctx, cfg.Clock, cfg.Store, snap); err != nil {
		return nil, err
	}
	if cfg.ExternalClock {
		// The clock nodes of a simulation read the virtual clock where
		// Advance saves it: from the start, they read this one.
		if err := s.sim.save(cfg.Store); err != nil {
			return nil, fmt.Errorf("virtual clock: %w", err)
		}
	}
	s.viewer.load(s.eng)
	s.publish(nil)
	if err := s.checkRetention(needsOf(s.View())); err != nil {
		return nil, err
	}
	return s, nil
}

// prepare prepares stored tasks for the engine on every CPU, in chunks;
// the error reported is that of the first task, by position, that fails.
func prepare(e *engine.Engine, recs []job.Record) ([]engine.Prepared, error) {
	const chunk = 1024
	out := make([]engine.Prepared, len(recs))
	errs := make([]error, (len(recs)+chunk-1)/chunk)
	var wg sync.WaitGroup
	next := make(chan int)
	for range runtime.NumCPU() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range next {
				for i := c * chunk; i < min((c+1)*chunk, len(recs)); i++ {
					p, err := e.Prepare(recs[i])
					if err != nil {
						errs[c] = err
						break
					}
					out[i] = p
				}
			}
		}()
	}
	for c := range errs {
		next <- c
	}
	close(next)
	wg.Wait()
	return out, firstError(errs)
}

func firstError(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// Start attaches to the runs that were in flight, then starts the loop
// and the workers behind it. It does not block. It starts a scheduler
// once: a second Start, or one after Stop, is refused; so is a Start
// whose ctx is done.
//
// The outcomes recorded while no scheduler watched (a run that ended
// while the server was down) are the first thing the loop applies: the
// runner reports them while Start attaches (see Runner.Attach), and they
// go into the loop's first batch, before its first Tick, and before the
// loop can tick by itself. So the occurrences that fell due meanwhile are
// decided against the runs as they are, not as they were when the
// scheduler stopped. Runs still in flight are reported when they end.
// The runs of timeperiod nodes are attached here too, and their outcomes
// known at once applied right after the forest's Restart: the periods
// that came due meanwhile are decided against the nodes as they are.
func (s *Scheduler) Start(ctx context.Context) error {
	return s.life.Start(ctx, "scheduler", "scheduler.New", s.start)
}

// start is Start's work, done once.
func (s *Scheduler) start() error {
	keep := map[int64]bool{}
	var tasks []inFlight
	for _, r := range s.eng.ActiveRuns() {
		def, _, ok := s.eng.Task(r.Task)
		if ok && def.Type == job.Bundle {
			continue
		}
		keep[r.ID] = true
		w := launchOf(r, &def)
		w.LogRotate = rotationOf(w.LogRotate, s.eng.Groups(r.Task), func(g string) *job.LogRotation {
			if gd, ok := s.eng.Definitions()[g]; ok {
				return gd.Extras().LogRotate
			}
			return nil
		})
		tasks = append(tasks, inFlight{w: w, known: func(e job.Exit) *request { return &request{ev: s.exited(e)} },
			late: s.report})
	}
	s.keepTreeRuns(keep)
	s.cfg.Runner.Sweep(keep)
	// The runs of nodes that had not ended are asked for again before any
	// other request can reach the forest (Start has attached them); then
	// the outcomes known at once, of nodes and of tasks; then what was
	// ready when the scheduler stopped is dispatched, and what fell due is
	// decided, before any request that comes after Start. The loop takes
	// what it defers before anything sent to it.
	first := []*request{{tree: periods.Restart{}}}
	first = append(first, s.attach(append(s.nodesInFlight(), tasks...))...)
	s.deferred = append(first, &request{ev: engine.Tick{}})
	s.wg.Add(6)
	go s.loop()
	go s.perform()
	go s.deliver()
	go s.watchFiles()
	go s.writeAudit()
	go s.prune()
	return nil
}

// inFlight is a run that a previous scheduler started and that had not
// ended when it stopped: known makes the loop's request of an outcome the
// runner reports while Start attaches it, late takes one reported later.
type inFlight struct {
	w     job.Launch
	known func(job.Exit) *request
	late  func(job.Exit)
}

// attach hands the runner the runs in flight and returns the requests of
// the outcomes it reported while attaching them: those recorded while no
// scheduler watched. Outcomes reported later go to the loop as any run's
// do.
func (s *Scheduler) attach(runs []inFlight) []*request {
	var (
		mu        sync.Mutex
		attaching = true
		known     []*request
	)
	for _, r := range runs {
		s.cfg.Runner.Attach(r.w, func(e job.Exit) {
			mu.Lock()
			if attaching {
				known = append(known, r.known(e))
				mu.Unlock()
				return
			}
			mu.Unlock()
			r.late(e)
		})
	}
	mu.Lock()
	defer mu.Unlock()
	attaching = false
	return known
}

// Submit applies an event and returns once its outcome is durable. A
// rejected event returns the engine's error and changes nothing.
// Definitions come in through Define, which plans them first.
func (s *Scheduler) Submit(ctx context.Context, ev engine.Event) error {
	if _, ok := ev.(engine.Define); ok {
		return errors.New("scheduler: a plan of definitions is made by Define, from a definition file, against the definitions as they are when it is applied")
	}
	return s.send(ctx, &request{ev: ev, reply: make(chan error, 1)})
}

// DefineFile is a definition file sent to the scheduler.
type DefineFile struct {
	// File names it in errors and in the record; Text is its content: the
	// task language, configuration JSON or a tree file.
	File, Text string
	// Syntax is the syntax Text is written in; defs.Told (the zero value)
	// lets its shape tell, once, when Define takes it.
	Syntax defs.Syntax
	// Actions are definitions a program built (defs.Define), given
	// instead of Text.
	Actions []defs.Action
	// Check only checks it.
	Check bool
	// Mode is how it is applied: as written, declared (an insert of what
	// exists replaces it) or synced (see defs.Mode).
	Mode defs.Mode
	// By names the identity that sent it (empty: the server itself).
	By string
	// TouchFunc, when set, says why the actions of a file in the task
	// language or configuration JSON may not be planned: the loop asks it
	// once the file is read, with the definitions it is applied to, before
	// planning it, so that a refused file learns nothing of them from
	// the plan's errors.
	TouchFunc func([]defs.Action, Facts) error
	// AllowFunc, when set, says why the plan of such a file may not be
	// applied (nor checked): the loop asks it once the file is planned,
	// and applies nothing it refuses.
	AllowFunc func(*job.Plan) error
}

// Facts are what a check of a file (DefineFile.TouchFunc) may ask of the
// definitions it is applied to.
type Facts interface {
	// Reached returns what an action on each root reaches, or a read of
	// it shows, unless acted (engine.Engine.Reached, each root alone).
	Reached(acted bool, roots ...string) [][]string
	// Groups returns the groups of each name.
	Groups(names []string) map[string][]string
}

// engineFacts are the Facts of the engine's definitions.
type engineFacts struct{ e *engine.Engine }

func (f engineFacts) Reached(acted bool, roots ...string) [][]string {
	out := make([][]string, len(roots))
	for i, r := range roots {
		out[i] = f.e.Reached([]string{r}, acted)
	}
	return out
}

func (f engineFacts) Groups(names []string) map[string][]string { return groupsOf(f.e, names) }

// Defined is what a definition file in the task language or configuration
// JSON did, or with Check would do.
type Defined struct {
	defs.Planned
	// Before holds the definitions, as they were, of the tasks the plan
	// changes or deletes that existed; BeforeCalendars those of the named
	// calendars.
	Before          map[string]*job.Task
	BeforeCalendars map[string]*job.Calendar
}

// Define checks a definition file and, unless it is a check, applies it,
// returning once that is durable what it did (nil for a tree file). The
// loop plans it when its turn comes, against the definitions as they are
// then, so that two files sent at once are each checked against what the
// other did; the journal records the plan.
func (s *Scheduler) Define(ctx context.Context, f DefineFile) (*Defined, error) {
	if f.Actions == nil {
		f.Syntax = f.Syntax.Of(f.Text)
	}
	r := &request{file: &f, reply: make(chan error, 1)}
	if err := s.send(ctx, r); err != nil {
		return nil, err
	}
	return r.defined, nil
}

// plan plans a definition file in the task language or configuration
// JSON against the engine's definitions.
func (s *Scheduler) plan(f *DefineFile) (*Defined, error) {
	cur, cals := s.eng.Definitions(), s.eng.Calendars()
	env := &defs.Env{Active: s.eng.Active, Function: s.functions, Taken: s.taken, Calendars: cals}
	srv := defs.Server{LogFile: s.cfg.LogFile, Owner: s.cfg.Owner}
	var (
		p   *defs.Planned
		err error
	)
	acts, mode := f.Actions, f.Mode
	if acts == nil {
		if acts, mode, err = defs.ReadFile(f.File, f.Text, f.Syntax, f.Mode); err != nil {
			return nil, err
		}
	}
	if f.TouchFunc != nil {
		if err := f.TouchFunc(acts, engineFacts{s.eng}); err != nil {
			return nil, err
		}
	}
	if p, err = defs.PlanActions(f.File, acts, mode, cur, env, srv); err != nil {
		return nil, err
	}
	if f.AllowFunc != nil {
		if err := f.AllowFunc(&p.Plan); err != nil {
			return nil, err
		}
	}
	tasks, calendars := p.Touched()
	return &Defined{Planned: *p, Before: existing(cur, tasks), BeforeCalendars: existing(cals, calendars)}, nil
}

// existing returns the entries of m that names name.
func existing[V any](m map[string]V, names []string) map[string]V {
	out := map[string]V{}
	for _, n := range names {
		if v, ok := m[n]; ok {
			out[n] = v
		}
	}
	return out
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
// sees is durable: the loop serves reads between two batches, after the
// commit of the first, and ahead of the events queued meanwhile, so a
// read waits at most for the batch in hand, however long the queue. Most
// readers want View instead, which does not wait at all.
func (s *Scheduler) Read(ctx context.Context, fn func(*engine.Engine)) error {
	return s.sendTo(ctx, s.reads, &request{read: fn, reply: make(chan error, 1)})
}

// Idle reports whether the loop is waiting for work, so that a Read sent
// now is served at once; false while it decides, commits or acts. A page
// that can do without the engine's answer asks only when it is idle.
func (s *Scheduler) Idle() bool { return s.waiting.Load() }

// inLine runs fn on the loop goroutine after every request queued before
// it: what a report handed in before the call did is committed when fn
// runs.
func (s *Scheduler) inLine(ctx context.Context, fn func(*engine.Engine)) error {
	return s.send(ctx, &request{read: fn, reply: make(chan error, 1)})
}

func (s *Scheduler) send(ctx context.Context, r *request) error { return s.sendTo(ctx, s.in, r) }

func (s *Scheduler) sendTo(ctx context.Context, to chan *request, r *request) error {
	if err := s.Unavailable(); err != nil {
		return err
	}
	select {
	case to <- r:
	case <-s.done:
		return s.stopErr()
	case <-ctx.Done():
		return ctx.Err()
	}
	var gaveUp <-chan struct{} // a read may be given up; an event, once queued, is applied
	if r.read != nil {
		gaveUp = ctx.Done()
	}
	select {
	case err := <-r.reply:
		return err
	case <-gaveUp:
		r.claim.Lock()
		running := r.running
		r.abandoned = !running
		r.claim.Unlock()
		if !running {
			return ctx.Err()
		}
		return <-r.reply // it runs now: it writes what the caller reads
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

// Store returns the scheduler's store as readers see it: its runs and
// fires include everything the loop has committed or holds back (see
// checkpointer), which it writes first.
func (s *Scheduler) Store() store.Store { return history{Store: s.cfg.Store, s: s} }

// history is the store with the runs and fires the loop holds back
// written before they are read.
type history struct {
	store.Store
	s *Scheduler
}

// Runs returns run history, once every run the loop holds back is written.
func (h history) Runs(ctx context.Context, q store.RunQuery) ([]job.Run, error) {
	if err := h.s.flush(ctx); err != nil {
		return nil, err
	}
	return h.Store.Runs(ctx, q)
}

// RunPage returns a page of the runs of every task, once every run the
// loop holds back is written.
func (h history) RunPage(ctx context.Context, q store.RunPageQuery) ([]job.Run, error) {
	if err := h.s.flush(ctx); err != nil {
		return nil, err
	}
	return h.Store.RunPage(ctx, q)
}

// RunTasks returns the tasks that have runs q selects, once every run the
// loop holds back is written.
func (h history) RunTasks(ctx context.Context, q store.RunPageQuery) ([]string, error) {
	if err := h.s.flush(ctx); err != nil {
		return nil, err
	}
	return h.Store.RunTasks(ctx, q)
}

// Fires returns the recorded fates of occurrences, once every fire the
// loop holds back is written.
func (h history) Fires(ctx context.Context, q store.FireQuery) ([]job.Fire, error) {
	if err := h.s.flush(ctx); err != nil {
		return nil, err
	}
	return h.Store.Fires(ctx, q)
}

// flush has the loop write what it holds back. With nothing held back
// as of the last commit, the store has every run and fire committed
// before the call, and the reader need not wait for the loop.
func (s *Scheduler) flush(ctx context.Context) error {
	if s.gauges.held.Load() == 0 {
		return nil
	}
	return s.send(ctx, &request{flush: true, reply: make(chan error, 1)})
}

// Stop drains: no new run starts, running runs may finish until ctx is
// done; then the runner stops (Go function runs are cancelled and given
// its grace to return; commands keep running under their supervisors, to
// be attached at the next start), and the loop stops. Stop may be called
// more than once, and on a scheduler never started, which it only marks
// stopped.
func (s *Scheduler) Stop(ctx context.Context) error {
	var err error
	s.stopOnce.Do(func() {
		if started, _ := s.life.Stop(); !started {
			return // nothing runs: nothing to drain
		}
		// A virtual clock stops first: the drain records nothing at a
		// later instant.
		s.sim.freeze()
		s.inLine(ctx, func(e *engine.Engine) { e.Drain(true) })
		for s.busy(ctx) {
			select {
			case <-ctx.Done():
			case <-time.After(50 * time.Millisecond):
			}
		}
		s.stopping.Store(true)
		if err := s.cfg.Runner.Stop(context.Background()); err != nil {
			s.log.Warn("the runner stopped late", "err", err)
		}
		s.settleExits()
		if err := s.sim.save(s.cfg.Store); err != nil {
			s.log.Error("virtual clock not recorded: a restart resumes from the last journal entry", "err", err)
		}
		close(s.quit)
		s.wg.Wait()
		err = s.runErr()
	})
	return err
}

// busy reports whether runs are in flight, as the engine records them (a
// run whose start is committed but not yet performed counts) or as the
// runner knows them, until ctx is done.
func (s *Scheduler) busy(ctx context.Context) bool {
	if ctx.Err() != nil {
		return false
	}
	running := 0
	if err := s.inLine(ctx, func(e *engine.Engine) { running = e.Running() + s.treesInFlight() }); err != nil {
		return false
	}
	return running > 0 || s.cfg.Runner.Running() > 0
}

func (s *Scheduler) runErr() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Done returns a channel closed when the loop stops, by Stop, because the
// store failed, or by Halt (Stop then returns why).
func (s *Scheduler) Done() <-chan struct{} { return s.done }

// LogSpan returns where the output of a run in flight begins in its task's
// log files, as the runner knows it (see job.LogSpan); ok is false when it
// does not.
func (s *Scheduler) LogSpan(run int64) (span job.LogSpan, ok bool) {
	if l, is := s.cfg.Runner.(LogSpanner); is {
		return l.Span(run)
	}
	return job.LogSpan{}, false
}

// Halt stops the loop because of err, as a commit the store refuses
// does: it commits nothing more, the requests in flight and every later
// one fail with ErrStopped and err, Done is closed, and Stop returns err.
// It does not wait; calls after the first do nothing. A cluster's director
// halts when another director took the cluster over.
func (s *Scheduler) Halt(err error) {
	s.haltOnce.Do(func() {
		s.haltErr = err
		close(s.halt)
	})
}

// halted records why the loop stops after Halt.
func (s *Scheduler) halted() {
	s.mu.Lock()
	s.err = fmt.Errorf("%w: %w", ErrStopped, s.haltErr)
	s.mu.Unlock()
	s.log.Error("stopping the scheduler", "err", s.haltErr)
}

// Now returns the scheduler's clock reading.
func (s *Scheduler) Now() time.Time { return s.cfg.Clock.Now() }

// Progress returns a running run's status and message data, as the runner
// knows them; ok is false when it knows none.
func (s *Scheduler) Progress(run int64) (status string, data map[string]string, ok bool) {
	if p, is := s.cfg.Runner.(Progressor); is {
		return p.Progress(run)
	}
	return "", nil, false
}

// loop is the scheduler: it takes every request waiting, or the due
// instant its one timer was armed for, applies them to the engine, commits
// them in one batch and re-arms the timer for the engine's next wake.
func (s *Scheduler) loop() {
	defer s.wg.Done()
	defer close(s.done)
	defer close(s.effects)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	last := 0
	var wake time.Time // the earliest due instant, as of the last batch
	real := !s.sim.on()
	for {
		select {
		case <-s.halt:
			s.halted()
			return
		default:
		}
		s.serveReads()
		// Reports that came while a commit was retried go first.
		batch := s.deferred
		s.deferred = nil
		if len(batch) == 0 {
			s.waiting.Store(true)
			select {
			case <-s.halt:
				s.waiting.Store(false)
				s.halted()
				return
			case r := <-s.reads:
				s.waiting.Store(false)
				s.serve(r)
				continue
			case r := <-s.in:
				s.waiting.Store(false)
				batch = append(batch, r)
			case <-timer.C:
				s.waiting.Store(false)
				// The timer was armed timerEarly ahead: wait out the rest
				// here, yielding, unless a request comes meanwhile. The
				// deadline (monotonic, on clock.Wall) bounds the wait
				// should the system's clock be set back.
				for until := clock.Wall.Now().Add(timerEarly); !wake.IsZero() && wake.After(s.cfg.Clock.Now()) &&
					len(s.in) == 0 && clock.Wall.Now().Before(until); {
					runtime.Gosched()
				}
			case <-s.quit:
				s.waiting.Store(false)
				return
			}
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
		ticked := real && !wake.IsZero() && !wake.After(s.cfg.Clock.Now())
		if ticked {
			batch = append([]*request{{ev: engine.Tick{}}}, batch...)
		}
		if want := min(last, maxBatch); len(batch) < want && !ticked {
			// Under concurrent load, wait a little for more requests so
			// that one commit (one fsync, one write per page) serves
			// more of them.
			batch = lingerFor(batch, want, s.in)
		}
		last = len(batch)
		if err := s.process(batch); err != nil {
			var a answeredError
			if errors.As(err, &a) {
				s.fail(nil, a.err) // the batch's callers have their answer
			} else {
				s.fail(batch, err)
			}
			return
		}
		timer.Stop()
		if wake = earliest(s.eng.NextWake(), s.trees.f.NextWake()); !wake.IsZero() && real {
			timer.Reset(max(wake.Sub(s.cfg.Clock.Now())-timerEarly, 0))
		}
	}
}

// serveReads serves the reads waiting, between two batches.
func (s *Scheduler) serveReads() {
	for {
		select {
		case r := <-s.reads:
			s.serve(r)
		default:
			return
		}
	}
}

// serve runs a read and answers it.
func (s *Scheduler) serve(r *request) {
	s.runRead(r)
	r.reply <- nil
}

// runRead runs a read, unless its caller gave up on it.
func (s *Scheduler) runRead(r *request) {
	r.claim.Lock()
	abandoned := r.abandoned
	r.running = !abandoned
	r.claim.Unlock()
	if !abandoned {
		r.read(s.eng)
	}
}

// lingerFor adds requests from in to batch until it holds want of them, or
// linger has passed.
func lingerFor(batch []*request, want int, in chan *request) []*request {
	lt := time.NewTimer(linger)
	defer lt.Stop()
	for len(batch) < want {
		select {
		case r := <-in:
			batch = append(batch, r)
		case <-lt.C:
			return batch
		}
	}
	return batch
}

// fail stops the loop after a commit failed: the batch's callers, and
// every later one, get the error.
func (s *Scheduler) fail(batch []*request, err error) {
	s.mu.Lock()
	s.err = fmt.Errorf("%w: %w", ErrStopped, err)
	s.mu.Unlock()
	s.log.Error("store failed; stopping the scheduler", "err", err)
	for _, r := range batch {
		if r.reply != nil {
			r.reply <- s.err
		}
	}
}

// process applies a batch, commits it, answers its callers and hands the
// effects to perform.
func (s *Scheduler) process(batch []*request) error {
	bt := newBatch(s.dataBuf, len(s.ckpt.held), s.cfg.Listener != nil, s.obs)
	replies := make([]error, len(batch))
	changed := false
	for i, r := range batch {
		switch {
		case r.read != nil:
			s.runRead(r)
			continue
		case r.flush:
			bt.flush = true
			continue
		}
		changed = true
		now := s.cfg.Clock.Now()
		if d, ok := r.tree.(periods.Define); ok {
			// The text of a tree file sent to Trees.
			if r.tree, replies[i] = s.planDefine(d); replies[i] != nil {
				continue
			}
		}
		if f := r.file; f != nil {
			if f.Actions == nil && f.Syntax == defs.Trees {
				// A file is known by its cleaned name: ./trees.json is trees.json.
				d, err := s.planDefine(periods.Define{File: path.Clean(f.File), Text: f.Text})
				if err == nil && f.Check {
					err = s.trees.f.Check(d)
				}
				if err != nil || f.Check {
					replies[i] = err
					continue
				}
				r.tree = d
			} else {
				d, err := s.plan(f)
				if err != nil || f.Check {
					r.defined, replies[i] = d, err
					continue
				}
				r.defined = d
				r.ev = engine.Define{File: f.File, Plan: d.Plan, By: f.By}
			}
		}
		switch {
		case r.tree != nil:
			if operator(r.tree) {
				// What the clock made due is the clock's: the runs an
				// operator's skip or reprocess starts name the operator.
				if err := s.tickTrees(bt, now); err != nil {
					s.log.Error("timeperiod trees not ticked", "err", err)
				}
			}
			r.treeOut, replies[i] = s.applyTree(bt, r.tree, now)
			continue
		case r.nodeExit != nil:
			if err := s.applyNodeExit(bt, r.nodeExit, now); err != nil {
				s.log.Error("outcome of a node's run not applied", "run", r.nodeExit.exit.RunID, "err", err)
			}
			continue
		}
		if done, err := s.prepareBackfill(bt, r, now); done {
			replies[i] = err
			continue
		}
		out, err := s.eng.Apply(r.ev, now)
		if err != nil {
			replies[i] = err
			continue
		}
		if err := bt.add(r.ev, out, now.UTC()); err != nil {
			return err
		}
		s.ckpt.hold(out)
		r.data, r.backfill = out.Data, out.Backfill
	}
	if err := s.tickTrees(bt, s.cfg.Clock.Now()); err != nil {
		s.log.Error("timeperiod trees not ticked", "err", err)
	}
	b := bt.finish(s.eng, &s.ckpt)
	if err := bt.finishTrees(s, b); err != nil {
		return err
	}
	answered := false
	began := clock.Wall.Now() // for the commit latency metric
	if err := s.cfg.Store.Commit(context.Background(), b); err != nil {
		if !errors.Is(err, store.ErrUnavailable) {
			return err
		}
		// Not written: the callers hear so now, and the loop tries the
		// same batch again until the store takes it. A caller told of an
		// error may thus find its change stored later; none is told of a
		// success before it is.
		answer := fmt.Errorf("%w (not acknowledged: the change may still be stored once the database is back)", err)
		for _, r := range batch {
			if r.reply != nil {
				r.reply <- answer
			}
		}
		answered = true
		if err := s.recommit(b, err); err != nil {
			return answeredError{err}
		}
	} else if !b.Empty() {
		s.obs.Committed(bt.journaled, clock.Wall.Now().Sub(began))
	}
	if bt.treeFiles != nil {
		s.trees.files = bt.treeFiles
	}
	s.ckpt.committed(b, bt.journaled, s.eng)
	s.publish(bt)
	if kept := bt.data.kept; kept != nil && cap(kept) <= maxDataBuf {
		s.dataBuf = kept // a batch of huge events does not pin its buffer
	}
	for i, r := range batch {
		if r.reply != nil && !answered {
			r.reply <- replies[i]
		}
	}
	if len(bt.effects) > 0 {
		s.effects <- bt.effects
	}
	if len(b.Alerts) > 0 {
		wake(s.alertWake)
	}
	if len(b.Audit) > 0 {
		wake(s.auditWake)
	}
	if changed {
		s.sim.changed()
		s.changes.bump()
	}
	return nil
}

// Unavailable returns why the store cannot take a commit, while the loop
// retries one, and nil otherwise. Every request is refused with it
// meanwhile.
func (s *Scheduler) Unavailable() error {
	if p := s.unavailable.Load(); p != nil {
		return *p
	}
	return nil
}

// answeredError is a failure of a batch whose callers were answered.
type answeredError struct{ err error }

func (e answeredError) Error() string { return e.err.Error() }

// Retry bounds of a commit the store could not take.
const (
	recommitFirst = 50 * time.Millisecond
	recommitMax   = 5 * time.Second
)

// recommit commits b again, with backoff, until the store takes it, fails
// otherwise than by being unavailable, or the scheduler stops.
func (s *Scheduler) recommit(b *store.Batch, cause error) error {
	first := cause // a pointer to a variable readers see, never written again
	s.unavailable.Store(&first)
	defer s.unavailable.Store(nil)
	s.log.Error("database unavailable: changes are refused while the last commit is retried", "err", cause)
	for delay := recommitFirst; ; delay = min(2*delay, recommitMax) {
		t := time.NewTimer(delay)
	wait:
		for {
			select {
			case <-s.quit:
				t.Stop()
				return fmt.Errorf("stopped while the database was unavailable: %w", cause)
			case <-s.halt:
				t.Stop()
				return s.haltErr
			case r := <-s.in:
				s.refuse(r, cause)
			case r := <-s.reads:
				s.refuse(r, cause)
			case <-t.C:
				break wait
			}
		}
		err := s.cfg.Store.Commit(context.Background(), b)
		if err == nil {
			s.log.Info("database available again: the retried commit is durable")
			return nil
		}
		if !errors.Is(err, store.ErrUnavailable) {
			return err
		}
		cause = err
		latest := err
		s.unavailable.Store(&latest)
	}
}

// refuse answers a request that reached the loop while it retried a
// commit: a caller is told the store is unavailable, as later callers are
// before they send; a report from a run, which has no caller to tell, is
// kept for the first batch after the store is back.
func (s *Scheduler) refuse(r *request, cause error) {
	if r.reply != nil {
		r.reply <- cause
		return
	}
	s.deferred = append(s.deferred, r)
}

// earliest returns the earlier of two instants, the zero time meaning
// none.
func earliest(a, b time.Time) time.Time {
	if a.IsZero() || (!b.IsZero() && b.Before(a)) {
		return b
	}
	return a
}

// wake signals a worker without blocking: one signal pending is enough.
func wake(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// settleExits waits (briefly) until the exits reported so far are
// committed: a read queued after them is answered after their commit.
func (s *Scheduler) settleExits() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	s.inLine(ctx, func(*engine.Engine) {})
}
