package scheduler

import (
	"context"
	"errors"
	"time"

	"github.com/gnomon-sched/gnomon/job"
)

// Runner runs the work the engine starts. The scheduler calls it from one
// goroutine, after the start of a run is durable; the runner reports each
// run's outcome, once, to the report function it was given, from any
// goroutine. The scheduler never constructs a runner: executor.Local runs
// commands and Go functions on this machine. Outcomes Attach reports
// before it returns are applied before the scheduler decides any
// occurrence (see Scheduler.Start); one reported later is taken as the
// run's end at that point.
type Runner interface {
	job.Runner
	// Sweep releases what every run but those in keep still holds.
	Sweep(keep map[int64]bool)
	// Running returns the number of runs in flight.
	Running() int
}

// Progressor is a Runner that knows a run's running status and message
// data while it runs (a Go function's, as it reports them).
type Progressor interface {
	Progress(run int64) (status string, data map[string]string, ok bool)
}

// Mailer sends one alert. An error whose Permanent method reports true
// (see IsPermanent) ends the alert's delivery at once; any other error is
// retried with backoff.
type Mailer interface {
	Send(ctx context.Context, a *job.Alert) error
}

// IsPermanent reports whether err, or an error it wraps, says of itself
// that retrying cannot help: it has a method Permanent() bool that returns
// true.
func IsPermanent(err error) bool {
	var p interface{ Permanent() bool }
	return errors.As(err, &p) && p.Permanent()
}

// LogSpanner is a Runner that knows where the output of a run in flight
// begins in its task's log files.
type LogSpanner interface {
	Span(run int64) (job.LogSpan, bool)
}

// FileWatcher runs the tasks' file watchers (job.Watch): watch.Watcher.
// Poll is called from one goroutine at a time; Waiting and Posted from
// any.
type FileWatcher interface {
	// Poll looks at the files of the watchers of tasks due at now, calls
	// found with each settled file version once, and returns when it
	// wants to be called again (zero without watchers).
	Poll(ctx context.Context, now time.Time, tasks []*job.Task, found func(ctx context.Context, t *job.Task, path string) error) (time.Time, error)
	// Waiting says what the watcher of a task waits for, and whether the
	// task has one.
	Waiting(task string) (string, bool)
	// Posted returns how many file versions it has handed over.
	Posted() int64
	// Notify asks for the operating system's notifications of changes
	// to the files watched: the channel it returns says that a watcher is
	// due at once; the function stops them. Where there are none, Poll
	// says so once, and polling alone finds the files.
	Notify() (<-chan struct{}, func())
}
