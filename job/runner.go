package job

import "context"

// Runner starts runs and reports how each ended, once, to the report
// function it was given: commands under supervisors and Go functions in
// process (executor.Local) on the scheduler's machine or on a cluster's
// worker. The scheduler and a worker each ask a little more of it
// (scheduler.Runner, cluster.Executor); both embed this one.
type Runner interface {
	// Start starts a run. A run that cannot start is reported too, with
	// ResultLaunch.
	Start(w Launch, report func(Exit))
	// Attach watches a run that a previous process started and that had
	// not ended when it stopped, reporting its outcome (ResultLost if it
	// can no longer be known). An outcome already recorded (the run ended
	// while no process watched it), or a run known lost, is reported
	// before Attach returns.
	Attach(w Launch, report func(Exit))
	// Kill aborts a run; its outcome is reported as for any run.
	Kill(run int64)
	// Forget releases what a run whose outcome is durable still holds.
	Forget(run int64)
	// Stop ends the runs that cannot outlive the process, waiting until
	// they are reported or ctx is done, and releases the runner; runs
	// that can outlive it (commands under supervisors) go on, for the
	// next process to attach. It says what it could not finish in time.
	// It may be called more than once.
	Stop(ctx context.Context) error
}
