package cluster

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/gnomon-sched/gnomon/clock"
	"github.com/gnomon-sched/gnomon/job"
)

// Executor runs, on the worker's machine, the runs it claims: commands
// under supervisors, Go functions in process (executor.Local). It reports
// each run's outcome, once, to the report function it was given.
type Executor interface {
	job.Runner
	// Runs returns the runs whose files are on the worker's machine:
	// started, by this process or an earlier one, and not forgotten.
	Runs() []int64
}

// workerPoll is how often a worker looks for runs when no notice woke it,
// and checks that the runs it holds are still its own.
const workerPoll = time.Second

// worker claims runs from the target channel and executes them. One
// goroutine claims, starts and writes outcomes; the executor reports from
// any goroutine.
type worker struct {
	reg      Queue
	id       string
	machines []string
	slots    int
	x        Executor
	clock    clock.Clock
	log      *slog.Logger
	wake     chan struct{}

	mu    sync.Mutex
	held  map[int64]*holding // the runs in flight here
	ended []ended            // outcomes to write
}

// holding is a run in flight on this worker.
type holding struct {
	attempt int
	// killed is set once the run was killed (aborted, or taken back).
	killed bool
}

type ended struct {
	exit    job.Exit
	attempt int
}

func newWorker(n *node) *worker {
	slots := n.cfg.Slots
	if slots <= 0 {
		slots = 10
	}
	return &worker{reg: n.cfg.Registry, id: n.cfg.Node.ID, machines: n.cfg.Node.Machines, slots: slots, x: n.cfg.Executor,
		clock: n.cfg.Clock, log: n.log, wake: make(chan struct{}, 1), held: map[int64]*holding{}}
}

// running returns the number of runs in flight here.
func (w *worker) running() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.held)
}

// report returns the report function of a run held at attempt.
func (w *worker) report(attempt int) func(job.Exit) {
	return func(e job.Exit) {
		w.mu.Lock()
		w.ended = append(w.ended, ended{exit: e, attempt: attempt})
		w.mu.Unlock()
		select {
		case w.wake <- struct{}{}:
		default:
		}
	}
}

// run works until ctx is done; then the executor stops, leaving commands
// running for a restart within the node timeout to take up.
func (w *worker) run(ctx context.Context) {
	listening := make(chan struct{})
	go func() {
		defer close(listening)
		w.reg.Listen(ctx, w.wake, NoticeQueued)
	}()
	defer func() {
		<-listening
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if err := w.x.Stop(sctx); err != nil {
			w.log.Warn("the worker's runner stopped late", "err", err)
		}
		w.write(sctx) // the outcomes of functions the stop cancelled
	}()
	adopted := false
	t := time.NewTimer(0)
	defer t.Stop()
	var failing bool
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.wake:
		case <-t.C:
		}
		err := w.write(ctx)
		if err == nil && !adopted {
			err = w.adopt(ctx)
			adopted = err == nil
		}
		if err == nil {
			err = w.check(ctx)
		}
		if err == nil {
			err = w.claim(ctx)
		}
		switch {
		case err != nil && ctx.Err() == nil && !failing:
			w.log.Warn("worker cannot reach the cluster: retrying", "err", err)
			failing = true
		case err == nil && failing:
			w.log.Info("worker reaches the cluster again")
			failing = false
		}
		t.Reset(workerPoll)
	}
}

// adopt takes up the runs a previous process of this worker held: a run
// it claimed and never started is queued again; one it started is
// attached (the executor reports it lost if its supervisor is gone). A
// run it started that is no longer this worker's (it was recorded lost
// while the worker was away longer than the node timeout) may still run
// on this machine: it is attached at an attempt no run has, so that check
// kills it and its outcome is refused.
func (w *worker) adopt(ctx context.Context) error {
	cs, err := w.reg.Held(ctx, w.id)
	if err != nil {
		return err
	}
	mine := map[int64]bool{}
	for _, c := range cs {
		mine[c.Launch.RunID] = true
		if c.State == Claimed {
			if err := w.reg.Requeue(ctx, w.id, c); err != nil {
				return err
			}
			continue
		}
		w.log.Info("run taken up after a restart", "run", c.Launch.RunID, "task", c.Launch.Task)
		w.hold(c)
		w.x.Attach(c.Launch, w.report(c.Attempt))
	}
	for _, run := range w.x.Runs() {
		if !mine[run] {
			c := Claim{Launch: job.Launch{RunID: run}, Attempt: notAttempt}
			w.hold(c)
			w.x.Attach(c.Launch, w.report(c.Attempt))
		}
	}
	return nil
}

// notAttempt is an attempt no run is at (a claim makes it 1 or more).
const notAttempt = -1

func (w *worker) hold(c Claim) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.held[c.Launch.RunID] = &holding{attempt: c.Attempt}
}

// write writes the outcomes reported, in order; one the database refused
// stays, to be written again.
func (w *worker) write(ctx context.Context) error {
	for {
		w.mu.Lock()
		if len(w.ended) == 0 {
			w.mu.Unlock()
			return nil
		}
		e := w.ended[0]
		w.mu.Unlock()
		ok, err := w.reg.End(ctx, w.id, e.attempt, e.exit)
		if err != nil {
			return err
		}
		if !ok {
			w.log.Warn("outcome dropped: the run was taken from this worker while it was silent",
				"run", e.exit.RunID, "result", e.exit.Result)
		}
		w.mu.Lock()
		w.ended = w.ended[1:]
		if h := w.held[e.exit.RunID]; h != nil && h.attempt == e.attempt {
			delete(w.held, e.exit.RunID)
		}
		w.mu.Unlock()
		w.x.Forget(e.exit.RunID)
	}
}

// check kills the runs the director aborted, and those taken from this
// worker (found dead while it was silent, they were recorded lost).
func (w *worker) check(ctx context.Context) error {
	if w.running() == 0 {
		return nil
	}
	cs, err := w.reg.Held(ctx, w.id)
	if err != nil {
		return err
	}
	mine := map[int64]Claim{}
	for _, c := range cs {
		mine[c.Launch.RunID] = c
	}
	var kill []int64
	w.mu.Lock()
	for run, h := range w.held {
		c, ok := mine[run]
		taken := !ok || c.Attempt != h.attempt
		if !h.killed && (taken || c.Abort) {
			h.killed = true
			kill = append(kill, run)
			if taken {
				w.log.Warn("run taken from this worker: killing it", "run", run)
			}
		}
	}
	w.mu.Unlock()
	for _, run := range kill {
		w.x.Kill(run)
	}
	return nil
}

// claim claims as many runs as there are free slots, and starts them.
func (w *worker) claim(ctx context.Context) error {
	free := w.slots - w.running()
	if free <= 0 {
		return nil
	}
	cs, err := w.reg.Claim(ctx, w.id, w.machines, free, w.clock.Now())
	if err != nil {
		return err
	}
	for i, c := range cs {
		ok, err := w.reg.MarkStarted(ctx, w.id, c, w.clock.Now())
		if err != nil {
			// The rest stay claimed by this worker, never started: they
			// are queued again when it is found dead, or restarts.
			for _, c := range cs[i:] {
				_ = w.reg.Requeue(context.WithoutCancel(ctx), w.id, c)
			}
			return err
		}
		if !ok {
			continue
		}
		w.log.Info("run claimed", "task", c.Launch.Task, "run", c.Launch.RunID, "attempt", c.Attempt)
		w.hold(c)
		w.x.Start(c.Launch, w.report(c.Attempt))
	}
	return nil
}
