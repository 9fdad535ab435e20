// Package gnomon embeds the gnomon scheduler in a Go program.
//
// A Scheduler runs jobs: Go functions registered with Register, or shell
// commands. A job runs on a time trigger (an interval with start and end
// dates, a cron expression, or a calendar written in the definition
// language), or after other jobs: a job whose Condition is OnSuccess("A")
// starts when A succeeds, after its Delay. Jobs may alert by email on
// success, failure or not starting, alone or through the groups they belong
// to. Every ended run is written to the audit log (DataDir/audit.log).
//
// State lives in an embedded SQLite database in DataDir: definitions, run
// history, alerts and the journal of every event. A Scheduler started
// again on the same DataDir carries on where it stopped; missed time-trigger
// occurrences are not made up, and function runs that were in flight are
// recorded as lost.
//
// A minimal program:
//
//	s, err := gnomon.New(gnomon.Config{DataDir: "state"})
//	if err != nil { ... }
//	s.Register("report", func(ctx context.Context, run *gnomon.Run) error {
//		run.SetStatus("building the report")
//		...
//		run.Set("rows", "1200")
//		return nil
//	})
//	s.Start(ctx)
//	defer s.Stop(ctx)
//	s.AddJob(ctx, gnomon.Job{Name: "nightly", Function: "report", Cron: "0 2 * * *"})
//
// # Commands and the run supervisor
//
// A command job runs under a supervisor process, so that it survives a
// restart of the program and its outcome is still recorded. The supervisor
// is the program itself, started again with the environment variable
// GNOMON_SUPERVISE set: this package's init function recognises it and
// supervises the run instead of letting main start. Programs that only run
// Go functions never start one.
//
// All methods of Scheduler are safe for concurrent use.
package gnomon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gnomon-sched/gnomon/api"
	"github.com/gnomon-sched/gnomon/auth"
	"github.com/gnomon-sched/gnomon/clock"
	"github.com/gnomon-sched/gnomon/cluster"
	"github.com/gnomon-sched/gnomon/defs"
	"github.com/gnomon-sched/gnomon/engine"
	"github.com/gnomon-sched/gnomon/executor"
	"github.com/gnomon-sched/gnomon/internal/startstop"
	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/metrics"
	"github.com/gnomon-sched/gnomon/notify"
	"github.com/gnomon-sched/gnomon/periods"
	"github.com/gnomon-sched/gnomon/scheduler"
	"github.com/gnomon-sched/gnomon/store"
	"github.com/gnomon-sched/gnomon/store/postgres"
	"github.com/gnomon-sched/gnomon/store/sqlite"
	"github.com/gnomon-sched/gnomon/watch"
	"github.com/gnomon-sched/gnomon/web"
)

// A program that embeds gnomon runs its commands under supervisors that
// are the program itself, started again with executor.EnvSupervise set.
// Such a process must supervise its run before the program's own main
// runs (which may parse flags, open a database or start a server): only
// an init can do that, and an explicit call would be a step an embedding
// program could forget. cmd/gnomon's main calls MaybeSupervise first too.
func init() { executor.MaybeSupervise() }

// Config configures a Scheduler. New assembles a running gnomon from the
// parts it names, and chooses a default for each part left nil: the
// embedded SQLite store in DataDir, commands and functions run on this
// machine, email through SMTP when SMTP is set.
type Config struct {
	// DataDir holds the audit log (audit.log), the files of running
	// commands, and the database when Store is nil (gnomon.db). Required;
	// created if missing. It is made readable by its owner only (0700),
	// and so is every file the scheduler creates in it (0600).
	DataDir string
	// LogRoots are the directories where the log files of jobs
	// (out_log_file, err_log_file) may be: a relative path is taken from
	// the first, and must stay inside it; an absolute one must lie inside
	// one of them. The files of the scheduler are refused wherever they
	// are: its database, and everything in DataDir but DataDir/logs. The
	// path /dev/null is always accepted. A definition that names another
	// path is refused, and a run whose log file leads elsewhere (through a
	// symbolic link made later) fails to launch. Empty means DataDir/logs
	// and the system's temporary directory (os.TempDir), where every
	// local account may make files: a run writes only to a log file it
	// creates (exclusively) or one its user owns already, never through a
	// symbolic link, never to a FIFO or a file with other names (see
	// executor.LogFiles). Each root is created if missing; log files and
	// the directories the runs need are created readable by their owner
	// only.
	LogRoots []string
	// LogRotation bounds the log files of jobs by size and age: a file
	// that reached LogRotation.Size, or whose oldest content is
	// LogRotation.Age old, when a run starts, and that no run writes to,
	// is renamed FILE.1 (FILE.1 FILE.2, and so on, up to LogRotation.Keep
	// files kept). A task's own log_rotate_size, log_rotate_age and
	// log_keep replace them for its files. The zero value never rotates.
	LogRotation LogRotation
	// Store keeps the journal, definitions, state and history; nil means
	// the database DB names (see OpenStore). The Scheduler owns it: Stop
	// closes it.
	Store Store
	// DB names the database when Store is nil: empty for the SQLite
	// database DataDir/gnomon.db, "sqlite:PATH", or a PostgreSQL URL
	// postgres://USER@HOST:PORT/DB.
	DB string
	// Runner runs the commands and functions of jobs; nil means a local
	// runner: each command under a supervisor process on this machine
	// (see "Commands and the run supervisor"), each function on a
	// goroutine of this program.
	Runner Runner
	// Mailer sends alerts; nil means SMTP when SMTP is set, else every
	// alert is recorded as not sent.
	Mailer Mailer
	// WebhookSecret keys the HMAC-SHA256 signature of the alerts posted
	// to generic webhooks (notify: webhook:URL); empty sends them
	// unsigned. Webhook alerts are sent whether or not SMTP is set.
	WebhookSecret []byte
	// PagerDutyURL is where the events of PagerDuty targets (notify:
	// pagerduty:@file:PATH) are posted; empty means PagerDuty's Events
	// API v2 (notify.PagerDutyEvents).
	PagerDutyURL string
	// Location is the time zone of calendars, cron expressions and
	// interval dates of jobs that name none, and of the times in the
	// audit log and alerts. Nil means time.Local.
	Location *time.Location
	// Workers is the most runs at once; zero means 10.
	Workers int
	// KillGrace is how long an aborted command has between TERM and KILL,
	// and how long function runs have to return when the scheduler stops.
	// Zero means 10s.
	KillGrace time.Duration
	// SMTP sends email alerts when Mailer is nil; nil records every alert
	// as not sent.
	SMTP *SMTP
	// RetryAlertsFor is how long an alert the mail server does not take
	// is retried, with backoff up to 5 minutes; zero means 24h.
	RetryAlertsFor time.Duration
	// Retention is how long each kind of record is kept: the zero value
	// keeps scheduler.DefaultRetention, and New refuses a horizon below
	// its floor (docs/operations.md, "Retention").
	Retention Retention
	// EventLateness bounds how much older than the newest event a
	// configuration has accepted a data event may be and still count:
	// zero means 7 days, a negative value no bound (memory then grows with
	// every event kept).
	EventLateness time.Duration
	// SimulateFrom, when set, runs the scheduler on a virtual clock that
	// starts at this instant (or where the clock of the same store was
	// left, if later) and moves only through Advance. Runs still execute
	// for real, and the virtual clock moves by the real time they take.
	SimulateFrom time.Time
	// Supervisor is the command that starts a run supervisor for the
	// local runner; nil means this program (see "Commands and the run
	// supervisor").
	Supervisor []string
	// DefaultOwner is the OS user ("user" or "user:group") the commands
	// of tasks that name no owner run as; empty means the scheduler's
	// own user. A scheduler that runs commands checks, at start and for
	// each definition that names an owner, that the user exists and that
	// it may run commands as that user (it has CAP_SETUID and CAP_SETGID,
	// as root has). See docs/security.md for what to choose when the
	// scheduler runs as root.
	DefaultOwner string
	// Logger receives the scheduler's log; nil discards it.
	Logger *slog.Logger
	// Cluster, if set, makes the scheduler the director of a cluster on
	// its PostgreSQL store: clock nodes find the time triggers due.
	Cluster *Cluster
	// Metrics is where the scheduler registers its Prometheus metrics
	// (docs/metrics.md). Nil means a registry of its own, with the Go
	// runtime's and the process's collectors too, which Handler serves at
	// /metrics. A program's own registerer gets gnomon's metrics only;
	// Handler serves it at /metrics when it is also a prometheus.Gatherer
	// (as a *prometheus.Registry is), and answers 404 there otherwise.
	// Two schedulers in one program need a registerer each.
	Metrics prometheus.Registerer
}

// SMTP is how alerts are sent.
type SMTP struct {
	// Addr is the server's host:port.
	Addr string
	// From is the sender address.
	From string
	// Subject is a text/template of the subject line (the fields of the
	// body template); empty means "gnomon: {{.JobName}} {{.JobStatus}}".
	Subject string
	// TLS is "opportunistic" (STARTTLS when offered; the default),
	// "mandatory" or "none".
	TLS string
	// Username and Password authenticate when Username is set.
	Username, Password string
}

// Func is a Go function run as a job. It should return when ctx is
// cancelled: the run was aborted, or the scheduler is stopping. A nil
// error is a success; an error, or a panic, is a failure whose message is
// the error's text.
type Func func(ctx context.Context, run *Run) error

// ErrNoop, returned by the function of a timeperiod process, says that it
// found nothing to do in its period: the node becomes noop instead of
// processed. From a task's function it is a failure like any error.
var ErrNoop = executor.ErrNoop

// Run is one run of a Func, as the function sees it. Its methods are safe
// for concurrent use.
type Run struct{ c *executor.Call }

// ID returns the run's id.
func (r *Run) ID() int64 { return r.c.RunID }

// Job returns the name of the job the run belongs to.
func (r *Run) Job() string { return r.c.Task }

// Scheduled returns the time-trigger occurrence the run is for, or the
// zero time when something else started it.
func (r *Run) Scheduled() time.Time { return r.c.Scheduled }

// Attempt returns the run's retry number under the job's Retries: 0 for
// its first run, n for its n-th retry of the same occurrence.
func (r *Run) Attempt() int { return r.c.Attempt }

// Period returns the timeperiod a timeperiod process's run is for: its
// key (YYYYMMDDHH, UTC) and bounds, [start, end). ok is false for a
// task's run.
func (r *Run) Period() (key string, start, end time.Time, ok bool) {
	if p := r.c.Period; p != nil {
		return p.Key, p.Start, p.End, true
	}
	return "", time.Time{}, time.Time{}, false
}

// Param returns the value of a parameter the job declares (Job.Params):
// the one its start gave (StartWith, a backfill, the command line or the
// API), else its default. ok is false for a name the job does not declare.
func (r *Run) Param(name string) (value string, ok bool) {
	for _, p := range r.c.Params {
		if p.Name == name {
			return p.Value, true
		}
	}
	return "", false
}

// SetStatus reports the run's running status: a short message that
// Running and the status listings show while it runs, and that becomes
// the run's message (in run history, alerts and the audit log) when it
// succeeds.
func (r *Run) SetStatus(msg string) { r.c.SetStatus(msg) }

// Set records a field of the run's message data. Alert templates see each
// field by name (and all of them as .Data); run history keeps them.
func (r *Run) Set(key, value string) { r.c.Set(key, value) }

// Logf appends a line to the job's out_log_file, if it has one.
func (r *Run) Logf(format string, args ...any) {
	fmt.Fprintf(r.c.Stdout, format+"\n", args...)
}

// Scheduler is an embedded gnomon scheduler.
type Scheduler struct {
	cfg   Config
	store Store
	sched *scheduler.Scheduler

	// node is the cluster node the scheduler is (Config.Cluster), and
	// stopNode ends it.
	node     *cluster.Config
	stopNode func()
	// feed takes the fires of the clock nodes in at each step of the
	// virtual clock of a simulating director; nil otherwise.
	feed *cluster.Feed
	// metrics is what Handler serves at /metrics, nil for nothing; mx
	// are gnomon's own, which the handler's requests are told to.
	metrics prometheus.Gatherer
	mx      *metrics.Metrics

	// runLogs are where runs write their logs, which the web UI shows.
	runLogs *executor.LogFiles

	mu        sync.RWMutex
	funcs     map[string]executor.Func
	listeners map[int]func(Event)
	nextID    int
	life      startstop.Guard
	// authorities are those of the handlers made: a token NewToken makes
	// is theirs at once.
	authorities []*auth.Authority
	// background is the handlers' work beside the requests (their token
	// reloads): cancelled when the scheduler stops, and waited for by
	// Stop.
	background     context.Context
	stopBackground context.CancelFunc
	backgroundWG   sync.WaitGroup
}

// New assembles a scheduler from cfg and loads its state. Register
// functions, then Start it. It is the one place where a running gnomon
// is put together: the gnomon server is built on it too.
func New(cfg Config) (*Scheduler, error) {
	s, err := build(context.Background(), cfg)
	if err != nil {
		return nil, fmt.Errorf("gnomon: %w", err)
	}
	return s, nil
}

func build(ctx context.Context, cfg Config) (s *Scheduler, err error) {
	if cfg.DataDir == "" {
		return nil, errors.New("Config.DataDir is required")
	}
	if cfg.Location == nil {
		cfg.Location = time.Local
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.KillGrace <= 0 {
		cfg.KillGrace = 10 * time.Second
	}
	if err := makeDataDir(cfg.DataDir, cfg.Logger); err != nil {
		return nil, err
	}
	// clk is the clock of decisions and records: every part below that
	// decides or records something reads it. Liveness (leases,
	// credentials) reads clock.Wall.
	var clk clock.Clock = clock.System{}
	if !cfg.SimulateFrom.IsZero() {
		clk = scheduler.NewVirtualClock(cfg.SimulateFrom)
	}
	if cfg.Mailer == nil && cfg.SMTP != nil {
		m, err := notify.New(notify.Config{Addr: cfg.SMTP.Addr, From: cfg.SMTP.From, Subject: cfg.SMTP.Subject, TLS: cfg.SMTP.TLS,
			Username: cfg.SMTP.Username, Password: cfg.SMTP.Password, Location: cfg.Location, Clock: clk})
		if err != nil {
			return nil, err
		}
		cfg.Mailer = m
	}
	if cfg.Store == nil {
		if cfg.Store, err = OpenStore(ctx, cfg.DB, cfg.DataDir); err != nil {
			return nil, err
		}
	}
	// What is made here and runs goroutines or processes is stopped if
	// the scheduler cannot be made.
	var made []interface{ Stop(context.Context) error }
	defer func() {
		if err != nil {
			for _, m := range made {
				m.Stop(ctx)
			}
			cfg.Store.Close()
		}
	}()
	logs, runLogs, err := logFiles(cfg, cfg.Store)
	if err != nil {
		return nil, err
	}
	s = &Scheduler{cfg: cfg, store: cfg.Store, runLogs: runLogs, funcs: map[string]executor.Func{}, listeners: map[int]func(Event){}}
	s.background, s.stopBackground = context.WithCancel(context.Background())
	if cfg.Cluster != nil {
		if !slices.Contains(cfg.Cluster.Roles, cluster.RoleDirector) {
			return nil, errors.New("a Scheduler is a cluster's director: run other nodes with RunNode")
		}
		if cfg.Cluster.Simulated {
			return nil, errors.New("Cluster.Simulated is for the other nodes: a director simulates with Config.SimulateFrom")
		}
		cc, err := clusterConfig(ctx, cfg.Cluster, cfg.Store, cfg.Location)
		if err != nil {
			return nil, err
		}
		fencer, ok := cfg.Store.(store.Fencer)
		if !ok {
			return nil, errors.New("a cluster's director needs a store that can be fenced")
		}
		epoch, err := cluster.TakeOver(ctx, cc.Registry, cc.Node, clock.Wall, cfg.Logger)
		if err != nil {
			return nil, err
		}
		// From its first commit on, the engine's writes are stored only
		// while this director holds the cluster at its epoch: once
		// another took it over, they are refused, and the engine stops
		// when the store refuses one or when the node finds it deposed.
		fencer.Fence(cc.Node.ID, epoch)
		cc.Epoch, cc.Deposed = epoch, func(err error) { s.sched.Halt(err) }
		cfg.Logger.Info("director of the cluster", "node", cc.Node.ID, "epoch", epoch, "timezone", cc.Node.Zone,
			"space", cc.Registry.Space().Size, "partitions", cc.Registry.Space().Partitions, "scatter_steps", cc.Registry.Space().Scatter)
		cc.Logger, cc.Clock, cc.Fires, cc.Gone, cc.Slots = cfg.Logger, clk, fireSink{s}, s.nodeGone, cfg.Workers
		cc.Files = s.handFile
		if !cfg.SimulateFrom.IsZero() {
			// Liveness stays on the system's clock; occurrences are
			// found by the virtual one, which the clock nodes read in
			// the store, and the fires are taken in at each step of it.
			cc.Clock, cc.Virtual = clock.Wall, storeClock(cfg.Store)
			s.feed = cluster.NewFeed(cc.Registry, cc.Node.ID, cc.Epoch, fireSink{s}, clk, cfg.Logger)
		}
		if cc.Node.Has(cluster.RoleWorker) {
			if cc.Executor, err = localRunner(cfg, runLogs, clk, s.function); err != nil {
				return nil, err
			}
			made = append(made, cc.Executor)
		}
		s.node = &cc
		if cfg.Runner == nil {
			// Runs go to the target channel, for the cluster's workers.
			cfg.Runner = cluster.NewDispatch(cc, clk)
			made = append(made, cfg.Runner)
		}
	}
	if cfg.Runner == nil {
		if cfg.Runner, err = localRunner(cfg, runLogs, clk, s.function); err != nil {
			return nil, err
		}
		made = append(made, cfg.Runner)
	}
	// Owners are checked where this process runs the commands: another
	// runner (an embedder's, or a cluster's remote workers) says at
	// launch whether it can run as the owner.
	var owner func(string) error
	if _, local := cfg.Runner.(*executor.Local); local || s.node != nil && s.node.Executor != nil {
		owner = executor.CheckOwner
	}
	m, err := s.newMetrics(cfg.Metrics)
	if err != nil {
		return nil, err
	}
	var fetch func(context.Context, time.Time, []engine.ClockFire) error
	if s.feed != nil {
		fetch = s.fetch
	}
	s.sched, err = scheduler.New(ctx, scheduler.Config{
		Store: cfg.Store, Runner: cfg.Runner, DataDir: cfg.DataDir, Workers: cfg.Workers, Clock: clk, Location: cfg.Location,
		EventLateness: cfg.EventLateness, Logger: cfg.Logger, Mailer: cfg.Mailer, RetryAlertsFor: cfg.RetryAlertsFor,
		Hooks:     notify.NewHooks(notify.HookConfig{Secret: cfg.WebhookSecret, Location: cfg.Location, PagerDutyURL: cfg.PagerDutyURL}),
		Files:     watch.New(cfg.Store),
		Retention: cfg.Retention,
		// audit.log rotates as the log files of runs do.
		AuditRotation: job.LogRotation{Size: cfg.LogRotation.Size, Age: job.Duration(cfg.LogRotation.Age), Keep: cfg.LogRotation.Keep},
		Functions:     func(name string) bool { return s.function(name) != nil }, Listener: s.notify,
		ExternalClock: s.node != nil, Fetch: fetch, LogFile: func(p string) error { _, err := logs.Resolve(p); return err },
		Owner:    owner,
		Observer: m,
	})
	if err != nil {
		return nil, err
	}
	m.Read(s.reading(cfg.Runner))
	s.mx = m
	return s, nil
}

// newMetrics registers the scheduler's metrics with reg, or with a
// registry of its own when reg is nil, and notes what Handler serves.
func (s *Scheduler) newMetrics(reg prometheus.Registerer) (*metrics.Metrics, error) {
	if reg == nil {
		own := metrics.NewRegistry()
		reg, s.metrics = own, own
	} else if g, ok := reg.(prometheus.Gatherer); ok {
		s.metrics = g
	}
	return metrics.New(reg)
}

// reading returns what the gauges read at each scrape: the scheduler's
// readings, and the runs and supervisors of runner (those of a cluster
// director's own worker when runner dispatches to the cluster).
func (s *Scheduler) reading(runner Runner) func() metrics.Reading {
	sv, _ := runner.(interface{ Supervisors() (int, int) })
	if s.node != nil && s.node.Executor != nil {
		sv, _ = s.node.Executor.(interface{ Supervisors() (int, int) })
	}
	return func() metrics.Reading {
		r := metrics.Reading{Scheduler: s.sched.Gauges(), Running: runner.Running(), Unavailable: s.sched.Unavailable() != nil}
		if sv != nil {
			r.Supervisors = true
			r.SupervisorsRunning, r.SupervisorsSpare = sv.Supervisors()
		}
		return r
	}
}

// localRunner returns the runner of commands and functions on this
// machine, whose log files logs confines, recording on clock c.
func localRunner(cfg Config, logs *executor.LogFiles, c clock.Clock, funcs func(string) executor.Func) (*executor.Local, error) {
	if cfg.DefaultOwner != "" {
		if err := defs.CheckOwner(cfg.DefaultOwner); err != nil {
			return nil, fmt.Errorf("default owner: %w", err)
		}
		if err := executor.CheckOwner(cfg.DefaultOwner); err != nil {
			return nil, fmt.Errorf("default owner %s: %w", cfg.DefaultOwner, err)
		}
	}
	workers := cfg.Workers
	if workers <= 0 {
		workers = 10 // the scheduler's default
	}
	return executor.NewLocal(executor.LocalConfig{
		Dir: filepath.Join(cfg.DataDir, "runs"), Supervisor: cfg.Supervisor, Grace: cfg.KillGrace, Functions: funcs, Logs: logs,
		DefaultOwner: cfg.DefaultOwner,
		// A spare for each worker, up to 8: commands started together
		// do not wait for supervisors to start one after the other.
		Spares: min(workers, 8),
		// And as many as there are worker slots are kept for reuse: a
		// storm on many slots does not start a process for each run.
		Keep:  workers,
		Clock: c, Logger: cfg.Logger,
	})
}

// makeDataDir creates the data directory readable by its owner only, and
// tightens an existing one that others may read.
func makeDataDir(dir string, log *slog.Logger) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("data directory: %w", err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("data directory: %w", err)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		if err := os.Chmod(dir, perm&^0o077); err != nil {
			return fmt.Errorf("data directory: %w", err)
		}
		log.Info("data directory made private to its owner", "dir", dir, "was", perm.String(), "now", (perm &^ 0o077).String())
	}
	return nil
}

// logFiles returns where the log files that definitions name may be
// (Config.LogRoots), creating the roots, and which files of the scheduler
// they may not be: anything in its data directory but DataDir/logs (the
// files directly in DataDir/tls are compared at launch too), and the
// database of a SQLite store, wherever it is. run is the same for the
// runs, which may also write in DataDir/logs, a root or not: the logs of
// timeperiod nodes go there.
func logFiles(cfg Config, st Store) (defined, run *executor.LogFiles, err error) {
	data, err := filepath.Abs(cfg.DataDir)
	if err != nil {
		return nil, nil, fmt.Errorf("data directory: %w", err)
	}
	own := filepath.Join(data, "logs")
	roots := cfg.LogRoots
	if len(roots) == 0 {
		roots = []string{own, os.TempDir()}
	}
	defined = &executor.LogFiles{Private: []string{data, filepath.Join(data, "tls")}, Rotate: cfg.LogRotation}
	for _, r := range roots {
		if r == "" {
			return nil, nil, errors.New("log roots: an empty path")
		}
		if r, err = filepath.Abs(r); err != nil {
			return nil, nil, fmt.Errorf("log roots: %w", err)
		}
		defined.Roots = append(defined.Roots, r)
	}
	if db, ok := st.(interface{ Path() string }); ok {
		p, err := filepath.Abs(db.Path())
		if err != nil {
			return nil, nil, fmt.Errorf("database: %w", err)
		}
		defined.Own = []string{p, p + "-wal", p + "-shm", p + "-journal"}
	}
	cp := *defined
	run = &cp
	if !slices.Contains(run.Roots, own) {
		run.Roots = append(slices.Clip(run.Roots), own)
	}
	for _, r := range run.Roots {
		if err := os.MkdirAll(r, 0o700); err != nil {
			return nil, nil, fmt.Errorf("log roots: %w", err)
		}
	}
	return defined, run, nil
}

// OpenStore opens the store a database URL names, creating it if needed:
// empty (the SQLite database gnomon.db in dataDir), "sqlite:PATH" or a
// file path (a SQLite database there), or postgres://USER@HOST:PORT/DB
// (a PostgreSQL database, which must exist; its tables are created).
func OpenStore(ctx context.Context, db, dataDir string) (Store, error) {
	switch {
	case db == "":
		return sqlite.Open(ctx, filepath.Join(dataDir, "gnomon.db"))
	case strings.HasPrefix(db, "postgres://"), strings.HasPrefix(db, "postgresql://"):
		return postgres.Open(ctx, db)
	default:
		return sqlite.Open(ctx, strings.TrimPrefix(db, "sqlite:"))
	}
}

var funcName = regexp.MustCompile(`^[A-Za-z0-9_]{1,64}$`)

// Register makes fn available to jobs as function name (letters, digits
// and underscores). Registering a name again replaces its function for
// later runs. The name "log" is the built-in function that writes a log
// line; registering it replaces it.
func (s *Scheduler) Register(name string, fn Func) error {
	if !funcName.MatchString(name) {
		return fmt.Errorf("gnomon: function name %q: use 1 to 64 letters, digits and underscores", name)
	}
	if fn == nil {
		return fmt.Errorf("gnomon: function %s is nil", name)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.funcs[name] = func(ctx context.Context, c *executor.Call) error { return fn(ctx, &Run{c: c}) }
	return nil
}

// function returns the function of a name: a registered one, else the
// built-in "log"; nil if none.
func (s *Scheduler) function(name string) executor.Func {
	s.mu.RLock()
	fn := s.funcs[name]
	s.mu.RUnlock()
	switch {
	case fn != nil:
	case name == engine.BuiltinLog:
		return logFunc(s.cfg.Logger)
	case name == BackupFunc:
		return s.backupFunc
	}
	return fn
}

// logFunc returns the built-in function "log": it writes a log line.
func logFunc(log *slog.Logger) executor.Func {
	return func(_ context.Context, c *executor.Call) error {
		log.Info("job triggered", "task", c.Task, "run", c.RunID, "scheduled", c.Scheduled)
		return nil
	}
}

// Start starts scheduling: runs that were in flight are re-attached (or
// recorded as lost), and what was ready starts. It does not block.
func (s *Scheduler) Start(ctx context.Context) error {
	return s.life.Start(ctx, "gnomon", "gnomon.New", func() error { return s.start(ctx) })
}

// start is Start's work, done once.
func (s *Scheduler) start(ctx context.Context) error {
	if err := s.sched.Start(ctx); err != nil {
		return fmt.Errorf("gnomon: %w", err)
	}
	if s.node != nil {
		m := cluster.NewMember(*s.node)
		if err := m.Start(ctx); err != nil {
			return fmt.Errorf("gnomon: %w", err)
		}
		logged := make(chan struct{})
		go func() {
			defer close(logged)
			<-m.Done()
			// A deposed director's node said so, and its engine stops.
			if err := m.Err(); err != nil && !errors.Is(err, cluster.ErrDeposed) {
				s.cfg.Logger.Error("cluster node stopped", "err", err)
			}
		}()
		s.stopNode = func() { m.Stop(context.Background()); <-logged }
	}
	return nil
}

// Stop stops scheduling: no new run starts; running commands may finish
// until ctx is done, then keep running under their supervisors and are
// re-attached by the next Start on the same DataDir. Function runs are
// cancelled and get Config.KillGrace to return. Stop then closes the
// database. It may be called more than once.
func (s *Scheduler) Stop(ctx context.Context) error {
	started, first := s.life.Stop()
	if !first {
		return nil
	}
	var err error
	if started {
		err = s.sched.Stop(ctx)
	}
	if s.stopNode != nil {
		// Then the node leaves the cluster: its partitions move at once,
		// and the director's lease, which fences the engine's commits
		// (the end of runs it waited for, too), is free for another.
		s.stopNode()
	}
	// The handlers' work reads the store: it ends before the store
	// closes.
	s.stopBackground()
	s.backgroundWG.Wait()
	return errors.Join(err, s.store.Close())
}

// Progress returns a function run's running status and message data, as
// it last reported them; ok is false unless the run is a function run in
// flight.
func (s *Scheduler) Progress(run int64) (status string, data map[string]string, ok bool) {
	return s.sched.Progress(run)
}

// Apply validates and applies definitions in gnomon's definition language
// (insert_task, update_task, delete_task, insert_group, ...) or seed-000
// JSON configurations, all or nothing. file names the text in errors. The
// scheduler must be started.
func (s *Scheduler) Apply(ctx context.Context, file, text string) error {
	return s.defineFile(ctx, scheduler.DefineFile{File: file, Text: text})
}

// Declare applies definitions as a declaration of what should exist: as
// Apply, but an insert of a job or group that exists replaces it, so the
// same text can be applied again and again (the server's --definitions
// files are applied this way at every start).
func (s *Scheduler) Declare(ctx context.Context, file, text string) error {
	return s.defineFile(ctx, scheduler.DefineFile{File: file, Text: text, Mode: defs.Declared})
}

// Check validates definitions as Apply would, without applying them.
func (s *Scheduler) Check(ctx context.Context, file, text string) error {
	return s.defineFile(ctx, scheduler.DefineFile{File: file, Text: text, Check: true})
}

// Send sends an operator action to a job: start (now, bypassing its
// condition), abort, freeze, reset, green (mark succeeded) or red (mark
// failed).
func (s *Scheduler) Send(ctx context.Context, name string, a Action) error {
	return s.submit(ctx, engine.Act{Task: name, Action: a})
}

// StartWith starts a job now, as Send with Start does, giving values to
// parameters it declares (Job.Params); the others keep their defaults. It
// fails, starting nothing, if a name is not one the job declares. The
// run records the values given; a function reads them with Run.Param, a
// command as variables of their names.
func (s *Scheduler) StartWith(ctx context.Context, name string, params map[string]string) error {
	return s.submit(ctx, engine.Act{Task: name, Action: job.ActStart, Params: api.Params(params)})
}

func (s *Scheduler) submit(ctx context.Context, ev engine.Event) error {
	if err := s.sched.Submit(ctx, ev); err != nil {
		return fmt.Errorf("gnomon: %w", err)
	}
	return nil
}

// defineFile sends a definition file to the scheduler's loop.
func (s *Scheduler) defineFile(ctx context.Context, f scheduler.DefineFile) error {
	if _, err := s.sched.Define(ctx, f); err != nil {
		return fmt.Errorf("gnomon: %w", err)
	}
	return nil
}

// Done returns a channel that is closed when the scheduler stops, by Stop,
// because its store failed, or, as a cluster's director, because another
// director took the cluster over (Stop then says why).
func (s *Scheduler) Done() <-chan struct{} { return s.sched.Done() }

// Now returns the scheduler's clock: the virtual one when simulating.
func (s *Scheduler) Now() time.Time { return s.sched.Now() }

// Advance moves a simulating scheduler's virtual clock to t, firing every
// occurrence and delay due on the way, in order, and waiting for the runs
// they start to end. It fails unless Config.SimulateFrom was set.
func (s *Scheduler) Advance(ctx context.Context, t time.Time) error {
	if err := s.sched.Advance(ctx, t); err != nil {
		return fmt.Errorf("gnomon: %w", err)
	}
	return nil
}

// Node is one period of a timeperiod process (seed 003): its state,
// failures and outstanding run.
type Node = periods.Node

// LogRotation bounds the log files of jobs (Config.LogRotation): see
// executor.Rotation.
type LogRotation = executor.Rotation

// Retention is how long each kind of record is kept (Config.Retention):
// see scheduler.Retention.
type Retention = scheduler.Retention

// Nodes returns the nodes of a timeperiod process, in key order. Trees
// are defined like jobs, by Declare or Apply of a tree file.
func (s *Scheduler) Nodes(ctx context.Context, process string) ([]Node, error) {
	nodes, err := s.sched.Nodes(ctx, process, 0, 0)
	if err != nil {
		return nil, fmt.Errorf("gnomon: nodes of %s: %w", process, err)
	}
	return nodes, nil
}

// Store returns the scheduler's store, for reading history beyond what
// the methods here offer. It sees everything the scheduler has recorded.
func (s *Scheduler) Store() Store { return s.sched.Store() }

// Fires returns the recorded fates of occurrences and triggers, newest
// first.
func (s *Scheduler) Fires(ctx context.Context, q FireQuery) ([]Fire, error) {
	fires, err := s.sched.Store().Fires(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("gnomon: %w", err)
	}
	return fires, nil
}

// Handler returns the scheduler's HTTP API (the JSON API under /api/v1/,
// the data-event endpoint /events, /healthz and the Prometheus metrics at
// /metrics, as docs/api.md describes) and its web UI at every other path
// (docs/ui.md), for a program that serves it itself. The scheduler must be
// started.
//
// Every request but GET /healthz (and GET /metrics with
// HandlerConfig.MetricsPublic) needs a token of the store (see package
// auth and docs/security.md): the handler reads them now and again every
// second while the scheduler runs, so that tokens created or revoked by
// another process take effect.
func (s *Scheduler) Handler(cfg HandlerConfig) http.Handler {
	c := cfg.Clock
	if c == nil {
		c = clock.Wall
	}
	a := auth.NewAuthority(c, cfg.TokenRate)
	s.mu.Lock()
	s.authorities = append(s.authorities, a)
	s.mu.Unlock()
	ctx := s.background
	if err := a.Reload(ctx, s.cfg.Store); err != nil {
		s.cfg.Logger.Error("tokens not read: requests are refused until they are", "err", err)
	}
	s.backgroundWG.Add(2)
	go func() {
		defer s.backgroundWG.Done()
		select {
		case <-s.sched.Done(): // stopped, or the store failed
			s.stopBackground()
		case <-ctx.Done():
		}
	}()
	go func() {
		defer s.backgroundWG.Done()
		a.Watch(ctx, s.cfg.Store, time.Second, func(err error) { s.cfg.Logger.Warn("tokens not read again", "err", err) })
	}()
	access := api.Access{Authority: a, Keeper: s.cfg.Store, Hosts: cfg.Hosts}
	if !cfg.NoUI {
		access.Sessions = auth.NewSessions(a, cfg.SessionIdle, cfg.SessionLifetime)
	}
	h := api.NewServer(s.sched, s.cfg.Location, cfg.Version, s.cfg.Logger, access)
	h.MaxFutureSkew, h.Logs, h.DefaultOwner = cfg.MaxFutureSkew, s.runLogs, s.cfg.DefaultOwner
	if s.metrics != nil {
		h.Metrics, h.MetricsPublic = metrics.Handler(s.metrics), cfg.MetricsPublic
	}
	if s.mx != nil {
		h.ObserveFunc = s.mx.Requested
	}
	if s.node != nil {
		h.Cluster = clusterOps{reg: s.node.Registry, clock: s.sched}
	}
	if !cfg.NoUI {
		ui, err := web.New(web.Config{Scheduler: s.sched, Location: s.cfg.Location, Version: cfg.Version, Sessions: access.Sessions, Logs: s.runLogs, Logger: s.cfg.Logger,
			LiveStreams: cfg.LiveStreams, Tokens: access.Keeper, TokenClock: c, Cluster: h.Cluster})
		if err != nil {
			// The UI's templates and files are part of the binary: they
			// parse, or the build is broken.
			panic(err)
		}
		h.Mount(ui)
	}
	return h
}

// NewToken makes an API token as req asks and returns it; it exists
// nowhere else (the store keeps its hash). A program that serves Handler
// gives it to its clients; see docs/security.md. The handlers already
// made take it at once.
func (s *Scheduler) NewToken(ctx context.Context, req auth.Request) (string, error) {
	tok, t, err := auth.Create(ctx, s.cfg.Store, req, "", clock.Wall.Now()) // tokens live in real time
	if err != nil {
		return "", err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, a := range s.authorities {
		a.Add(t)
	}
	return tok, nil
}

// HandlerConfig configures the HTTP API.
type HandlerConfig struct {
	// Version is what /healthz and the API report as the server's version.
	Version string
	// MaxFutureSkew, when positive, refuses data events stamped further
	// ahead of the scheduler's clock.
	MaxFutureSkew time.Duration
	// Hosts are the names clients reach the server by, besides localhost
	// and IP addresses of the server: a request naming another host is
	// refused (see api.Access).
	Hosts []string
	// TokenRate is the requests a second a token without a rate of its
	// own may make; 0 means no limit.
	TokenRate int
	// Clock is the clock tokens expire on and rates are counted by; nil
	// means clock.Wall, the real clock, whatever clock the scheduler runs
	// on.
	Clock clock.Clock
	// NoUI leaves out the web UI, which is otherwise served at every
	// path the API does not take (see docs/ui.md).
	NoUI bool
	// SessionIdle is how long a web UI session lasts without a request;
	// 0 means auth.DefaultSessionIdle.
	SessionIdle time.Duration
	// SessionLifetime is how long a web UI session lasts at most, however
	// used; 0 means auth.DefaultSessionLifetime.
	SessionLifetime time.Duration
	// MetricsPublic lets GET /metrics answer without a token; it needs
	// one with the read permission otherwise.
	MetricsPublic bool
	// LiveStreams is the most streams of the web UI's change notices
	// (/live) a token may hold open at once; 0 means
	// web.DefaultLiveStreams.
	LiveStreams int
}
