package executor

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/gnomon-sched/gnomon/clock"
	"github.com/gnomon-sched/gnomon/job"
)

// LocalConfig configures a Local runner.
type LocalConfig struct {
	// Dir holds the files of running commands. Required.
	Dir string
	// Supervisor starts a run supervisor (see Config.Command); nil means
	// the running executable.
	Supervisor []string
	// Grace is the time between TERM and KILL when a command is aborted,
	// and how long function runs have to return when the runner stops.
	// Zero means 10s.
	Grace time.Duration
	// Spares is how many idle supervisors are kept ahead of need; zero
	// means 1.
	Spares int
	// Keep is how many supervisors may be kept for reuse (Config.Keep);
	// zero means Spares.
	Keep int
	// DefaultOwner is the OS user ("user" or "user:group") the commands
	// of tasks without an owner run as; empty means the server's own user
	// (see docs/security.md).
	DefaultOwner string
	// Functions finds the Go function of a name; nil has none.
	Functions func(name string) Func
	// Logs says where the log files of runs may be, for commands and
	// functions alike; nil confines nothing.
	Logs *LogFiles
	// Clock stamps the outcomes the runner records itself and dates its
	// log files; nil means clock.System.
	Clock  clock.Clock
	Logger *slog.Logger
}

// Local runs work on this machine: commands under supervisors (Executor),
// Go functions in process (Funcs). Each run's outcome goes to the report
// function given when it was started or attached. It is safe for
// concurrent use.
type Local struct {
	cfg LocalConfig
	x   *Executor
	fx  *Funcs

	mu   sync.Mutex
	runs map[int64]*watched
	// writers counts the runs in flight that write to each log file (by
	// resolved path): a file is rotated only when none does.
	writers map[string]int
	// begun is when the runner made each log file it made (by identity),
	// on its clock: a file's age (see Rotation).
	begun map[uint64]time.Time
}

// watched is a run in flight: where its outcome goes, and where its output
// begins in its task's log files.
type watched struct {
	report         func(Exit)
	outLog, errLog string
	span           job.LogSpan
}

// NewLocal returns a Local runner. Supervisors start with the first
// command: a program that runs only functions never starts one.
func NewLocal(cfg LocalConfig) (*Local, error) {
	if cfg.Grace <= 0 {
		cfg.Grace = 10 * time.Second
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.System{}
	}
	if cfg.Functions == nil {
		cfg.Functions = func(string) Func { return nil }
	}
	l := &Local{cfg: cfg, runs: map[int64]*watched{}, writers: map[string]int{}, begun: map[uint64]time.Time{}}
	var err error
	l.x, err = New(Config{Dir: cfg.Dir, Command: cfg.Supervisor, Grace: cfg.Grace, Spares: cfg.Spares, Keep: cfg.Keep, Report: l.report, Clock: cfg.Clock, Logger: cfg.Logger})
	if err != nil {
		return nil, err
	}
	l.fx = NewFuncs(l.report, cfg.Logger)
	l.fx.clock, l.fx.logs = cfg.Clock, cfg.Logs
	return l, nil
}

// report hands an outcome to the report function of its run, with where
// its output ends in its task's log files.
func (l *Local) report(e Exit) {
	l.mu.Lock()
	w := l.runs[e.RunID]
	delete(l.runs, e.RunID)
	if w != nil {
		l.written(w, -1)
	}
	l.mu.Unlock()
	if w == nil {
		return
	}
	if e.Log == nil {
		span := w.span
		span.OutTo = l.end(w.outLog, span.OutFile)
		span.ErrTo = l.end(w.errLog, span.ErrFile)
		e.Log = &span
	}
	w.report(e)
}

// watch notes a run in flight and where its output begins in its task's
// log files: their sizes now, and which files they are, or unknown for a
// run started before. A log file that reached its rotation's size is
// rotated first, when no other run writes to it.
func (l *Local) watch(w job.Launch, report func(Exit), started bool) {
	r := &watched{report: report, outLog: w.OutLog, errLog: w.ErrLog, span: job.LogSpan{OutFrom: -1, ErrFrom: -1}}
	l.mu.Lock()
	defer l.mu.Unlock()
	if started {
		owner := w.Owner
		if owner == "" {
			owner = l.cfg.DefaultOwner
		}
		rot := l.cfg.Logs.rotation().Over(w.LogRotate)
		r.span.OutFrom, r.span.OutFile = l.begin(w.OutLog, owner, rot)
		r.span.ErrFrom, r.span.ErrFile = l.begin(w.ErrLog, owner, rot)
	}
	l.runs[w.RunID] = r
	l.written(r, 1)
}

// written adds n to the writers of a run's log files.
func (l *Local) written(r *watched, n int) {
	for _, p := range []string{r.outLog, r.errLog} {
		if p == "" {
			continue
		}
		key := l.logKey(p)
		if l.writers[key] += n; l.writers[key] <= 0 {
			delete(l.writers, key)
		}
	}
}

// logKey is the file a log path names, as writers counts it.
func (l *Local) logKey(path string) string {
	if p, err := l.cfg.Logs.Resolve(path); err == nil {
		return p
	}
	return path
}

// begin returns where a run starting now begins in a log file, and which
// file it is, rotating it first when it is due by rot and no run writes to it;
// -1 when not known. A file not there yet is made, for the run's owner,
// as the run would make it: its identity is then known from the start,
// whatever renames it later. l.mu is held.
func (l *Local) begin(path, owner string, rot Rotation) (int64, uint64) {
	if path == "" {
		return 0, 0
	}
	now := l.cfg.Clock.Now()
	if l.writers[l.logKey(path)] == 0 {
		id, err := l.cfg.Logs.rotate(path, rot, now, func(id uint64) time.Time { return l.begun[id] })
		if err != nil && l.cfg.Logger != nil {
			l.cfg.Logger.Warn("log file not rotated", "path", path, "err", err)
		}
		delete(l.begun, id)
	}
	n, id, err := l.cfg.Logs.Stat(path)
	if err == nil && id == 0 && n == 0 {
		l.create(path, owner)
		if n, id, err = l.cfg.Logs.Stat(path); err == nil && id != 0 {
			l.begun[id] = now
		}
	}
	if err != nil {
		return -1, 0
	}
	return n, id
}

// create makes a log file for a run's owner, as the run's launch would
// (LogFiles.OpenerAs); a failure is left to the launch to report.
func (l *Local) create(path, owner string) {
	var o *Owner
	if owner != "" {
		var err error
		if o, err = LookupOwner(owner); err != nil {
			return
		}
	}
	if f, err := l.cfg.Logs.OpenerAs(o)(path); err == nil {
		f.Close()
	}
}

// end returns where a run's output ends in a log file: the size of the
// file it began in (id), wherever a rotation moved it, else of the file at
// path; 0 when not known.
func (l *Local) end(path string, id uint64) int64 {
	if path == "" {
		return 0
	}
	if id != 0 {
		if _, n, ok := l.cfg.Logs.locate(path, id); ok {
			return n
		}
	}
	n, _, err := l.cfg.Logs.Stat(path)
	if err != nil {
		return 0
	}
	return n
}

// Span returns where the output of a run in flight begins in its task's
// log files (the To of each range is -1: it is still written); ok is
// false for a run it does not run.
func (l *Local) Span(id int64) (span job.LogSpan, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	w := l.runs[id]
	if w == nil {
		return job.LogSpan{}, false
	}
	span = w.span
	span.OutTo, span.ErrTo = -1, -1
	return span, true
}

// Start starts a run: its function when it names one, else its command.
// The outcome, or the failure to launch, goes to report.
func (l *Local) Start(w job.Launch, report func(Exit)) {
	l.watch(w, report, true)
	owner := w.Owner
	if owner == "" {
		owner = l.cfg.DefaultOwner
	}
	spec := Spec{RunID: w.RunID, Task: w.Task, Command: w.Command, Profile: w.Profile, Owner: owner, OutLog: w.OutLog, ErrLog: w.ErrLog,
		Scheduled: w.Scheduled, Attempt: w.Attempt, Start: l.cfg.Clock.Now().UTC(), Period: w.Period, Logs: l.cfg.Logs, Env: w.Env}
	if w.Function != "" {
		l.fx.Start(spec, w.Function, l.cfg.Functions(w.Function))
		return
	}
	l.x.Start(spec)
}

// Attach watches a run started before a restart. A function run cannot
// have survived it: it is reported lost at once.
func (l *Local) Attach(w job.Launch, report func(Exit)) {
	if w.Function != "" {
		report(Exit{RunID: w.RunID, Code: -1, Result: job.ResultLost, End: l.cfg.Clock.Now().UTC(),
			Message: "run lost: the scheduler stopped while its function ran"})
		return
	}
	l.watch(w, report, false)
	l.x.Attach(w.RunID)
}

// Kill aborts a run: a function's context is cancelled; a command's
// process group gets TERM, then KILL after the grace period.
func (l *Local) Kill(id int64) {
	if !l.fx.Kill(id) {
		l.x.Kill(id)
	}
}

// Forget removes the files of a run whose outcome is recorded.
func (l *Local) Forget(id int64) { l.x.Forget(id) }

// Sweep removes the files of every run not in keep.
func (l *Local) Sweep(keep map[int64]bool) { l.x.Sweep(keep) }

// Runs returns the runs whose commands' files are on this machine (see
// Executor.Runs).
func (l *Local) Runs() []int64 { return l.x.Runs() }

// Running returns the number of runs in flight.
func (l *Local) Running() int { return l.x.Running() + l.fx.Running() }

// Supervisors returns the number of supervisor processes running a
// command's run, and of the spares waiting for one (see
// Executor.Supervisors).
func (l *Local) Supervisors() (running, spare int) { return l.x.Supervisors() }

// Progress returns a function run's running status and message data; ok
// is false unless the run is a function run in flight.
func (l *Local) Progress(id int64) (status string, data map[string]string, ok bool) {
	c := l.fx.Call(id)
	if c == nil {
		return "", nil, false
	}
	status, data = c.Progress()
	return status, data, true
}

// Stop cancels the function runs, which cannot outlive the process, and
// waits until each has returned and been reported, for at most the grace
// period or until ctx is done. Commands keep running under their
// supervisors, to be attached by the next runner on the same Dir. Stop
// then releases the idle supervisors. It returns an error naming how many
// function runs had not returned in time. It may be called more than
// once.
func (l *Local) Stop(ctx context.Context) error {
	defer l.x.Stop(ctx)
	if l.fx.Running() == 0 {
		return nil
	}
	l.fx.CancelAll()
	done := make(chan struct{})
	go func() { l.fx.Wait(); close(done) }()
	t := time.NewTimer(l.cfg.Grace)
	defer t.Stop()
	select {
	case <-done:
		return nil
	case <-t.C:
		return fmt.Errorf("executor: %d function runs had not returned %s after they were cancelled", l.fx.Running(), l.cfg.Grace)
	case <-ctx.Done():
		return fmt.Errorf("executor: %d function runs had not returned when the stop ended: %w", l.fx.Running(), ctx.Err())
	}
}

// Wait waits until every goroutine of the runner has ended: every run
// watched has been reported.
func (l *Local) Wait() {
	l.x.Wait()
	l.fx.Wait()
}
