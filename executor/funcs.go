package executor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"runtime/debug"
	"sync"
	"time"

	"github.com/gnomon-sched/gnomon/clock"
	"github.com/gnomon-sched/gnomon/job"
)

// Func is a Go function run as a job. It should return when ctx is
// cancelled (the run was aborted, or the scheduler is stopping); a nil
// error is a success.
type Func func(ctx context.Context, c *Call) error

// ErrNoop, returned by the function of a timeperiod process, says that it
// found nothing to do: the run ends with status job.ExitNoop, and its
// node becomes noop instead of processed.
var ErrNoop = errors.New("nothing to do")

// Call is one run of a Func. Its methods are safe for concurrent use.
type Call struct {
	RunID     int64
	Task      string
	Scheduled time.Time // the occurrence the run is for, zero if none
	Attempt   int       // the run's retry number, 0 for a first run
	// Period is the timeperiod of a timeperiod process's run (Task names
	// the process), nil for a task's.
	Period *job.Period
	// Params are the run's parameters: each the task declares, with the
	// value its start gave, else its default (see job.Environment.Params).
	Params []job.Var
	// Stdout and Stderr append to the task's log files (discarding when
	// it has none).
	Stdout, Stderr io.Writer

	mu     sync.Mutex
	status string
	data   map[string]string
}

// SetStatus reports the run's running status: a short message that status
// listings show while it runs, and that becomes the run's message when it
// succeeds.
func (c *Call) SetStatus(msg string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.status = msg
}

// Set records a field of the run's message data, which alerts, the audit
// log and run listings show.
func (c *Call) Set(key, value string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.data == nil {
		c.data = map[string]string{}
	}
	c.data[key] = value
}

// Progress returns the running status and a copy of the message data.
func (c *Call) Progress() (string, map[string]string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.status, maps.Clone(c.data)
}

// Funcs runs Go functions as jobs, in the server's process. Unlike a
// command, a function run cannot outlive the process: runs in flight when
// it stops are lost and recorded as such at the next start.
type Funcs struct {
	report func(Exit)
	log    *slog.Logger
	clock  clock.Clock
	// logs says where the runs' log files may be (nil: anywhere).
	logs *LogFiles

	mu    sync.Mutex
	calls map[int64]*funcRun
	wg    sync.WaitGroup
}

type funcRun struct {
	call   *Call
	cancel context.CancelFunc
}

// NewFuncs returns a runner that reports every outcome to report.
func NewFuncs(report func(Exit), log *slog.Logger) *Funcs {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Funcs{report: report, log: log, clock: clock.System{}, calls: map[int64]*funcRun{}}
}

// Start runs fn for a run on a new goroutine; a nil fn is reported as a
// launch failure.
func (f *Funcs) Start(spec Spec, name string, fn Func) {
	if fn == nil {
		f.report(Exit{RunID: spec.RunID, Code: -1, Result: job.ResultLaunch, End: f.clock.Now().UTC(),
			Message: fmt.Sprintf("function %s is not registered with this scheduler", name)})
		return
	}
	c := &Call{RunID: spec.RunID, Task: spec.Task, Scheduled: spec.Scheduled, Attempt: spec.Attempt, Period: spec.Period, Stdout: io.Discard, Stderr: io.Discard}
	if spec.Env != nil {
		c.Params = spec.Env.Params
	}
	var files []*os.File
	openLog := f.logs.Opener()
	for i, p := range []string{spec.OutLog, spec.ErrLog} {
		if p == "" {
			continue
		}
		fh, err := openLog(p)
		if err != nil {
			for _, fh := range files {
				fh.Close()
			}
			field := [...]string{"out_log_file", "err_log_file"}[i]
			f.report(Exit{RunID: spec.RunID, Code: -1, Result: job.ResultLaunch, End: f.clock.Now().UTC(), Message: fmt.Sprintf("%s: %v", field, err)})
			return
		}
		files = append(files, fh)
		if i == 0 {
			c.Stdout = fh
		} else {
			c.Stderr = fh
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	f.mu.Lock()
	f.calls[spec.RunID] = &funcRun{call: c, cancel: cancel}
	f.wg.Add(1)
	f.mu.Unlock()
	go func() {
		defer f.wg.Done()
		err, panicked := call(ctx, fn, c)
		status, data := c.Progress()
		e := Exit{RunID: spec.RunID, Result: job.ResultNormal, Message: status, End: f.clock.Now().UTC()}
		switch {
		case panicked:
			e.Code, e.Result, e.Message = -1, job.ResultInternal, err.Error()
		case errors.Is(err, ErrNoop):
			e.Code = job.ExitNoop
		case err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()):
			e.Code, e.Result, e.Message = -1, job.ResultKilled, "cancelled: "+err.Error()
		case err != nil:
			e.Code, e.Message = 1, err.Error()
		}
		e.Data = data
		for _, fh := range files {
			fh.Close()
		}
		f.mu.Lock()
		delete(f.calls, spec.RunID)
		f.mu.Unlock()
		cancel()
		f.report(e)
	}()
}

// call runs fn, turning a panic into an error.
func call(ctx context.Context, fn Func, c *Call) (err error, panicked bool) {
	defer func() {
		if r := recover(); r != nil {
			err, panicked = fmt.Errorf("panic: %v\n%s", r, debug.Stack()), true
		}
	}()
	return fn(ctx, c), false
}

// Kill cancels a run's context. It reports whether the run is a function
// run of this runner.
func (f *Funcs) Kill(id int64) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	r, ok := f.calls[id]
	if ok {
		r.cancel()
	}
	return ok
}

// Call returns a running function run's handle, nil if none.
func (f *Funcs) Call(id int64) *Call {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r, ok := f.calls[id]; ok {
		return r.call
	}
	return nil
}

// Running returns the number of function runs in flight.
func (f *Funcs) Running() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.calls)
}

// CancelAll cancels every run; Wait waits until each has returned and been
// reported.
func (f *Funcs) CancelAll() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, r := range f.calls {
		r.cancel()
	}
}

// Wait waits until every run has been reported.
func (f *Funcs) Wait() { f.wg.Wait() }
