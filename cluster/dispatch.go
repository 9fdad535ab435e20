package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/gnomon-sched/gnomon/clock"
	"github.com/gnomon-sched/gnomon/job"
)

// dispatchPoll is how often the director looks for outcomes when no
// notice woke it, and retries what the database refused.
const dispatchPoll = 500 * time.Millisecond

// Dispatch is the director's runner in a cluster: the runs its engine
// starts go to the target channel for workers to claim, and their
// outcomes come back to the engine. It has the methods of the
// scheduler's Runner. Writes are gathered and made by one goroutine, in
// batches, and retried until the database takes them: a run whose start
// the engine made durable is queued even across an outage. Each write is
// fenced by the director's epoch (Channel.Enqueue): once another
// director took the cluster over, the dispatch drops what it gathered,
// writes nothing more, and reports it deposed (Config.Deposed).
type Dispatch struct {
	reg      Channel
	director string
	epoch    int64
	deposed  func(error)
	clock    clock.Clock
	log      *slog.Logger

	mu      sync.Mutex
	watched map[int64]func(job.Exit) // the runs in flight, with their report functions
	queue   []job.Launch             // runs to queue
	aborts  []int64                  // runs to abort
	forgets []int64                  // runs to delete
	keep    []int64                  // a sweep to make, if sweep
	sweep   bool

	// recorded holds, once the first Attach read them, the outcomes that
	// workers recorded of runs no director had taken in (see Attach).
	readOnce sync.Once
	recorded map[int64]job.Exit

	wake   chan struct{}
	cancel context.CancelFunc
	done   chan struct{}
}

// attachRead bounds how long the first Attach reads the outcomes recorded
// while no director took them in; past it, or when the read fails, those
// outcomes are reported as the dispatch collects them.
const attachRead = 10 * time.Second

// NewDispatch returns the runner of the director cfg configures (its
// Registry, Node, Epoch, Deposed and Logger), and starts its goroutine;
// Stop ends it. c is the director's clock, its engine's (virtual when it
// simulates).
func NewDispatch(cfg Config, c clock.Clock) *Dispatch {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	d := &Dispatch{reg: cfg.Registry, director: cfg.Node.ID, epoch: cfg.Epoch, deposed: cfg.Deposed, clock: c, log: log,
		watched: map[int64]func(job.Exit){}, wake: make(chan struct{}, 1), cancel: cancel, done: make(chan struct{})}
	go d.run(ctx)
	return d
}

func (d *Dispatch) signal() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// Start queues a run for the workers.
func (d *Dispatch) Start(w job.Launch, report func(job.Exit)) {
	d.mu.Lock()
	d.watched[w.RunID] = report
	d.queue = append(d.queue, w)
	d.mu.Unlock()
	d.signal()
}

// Attach watches a run the engine had in flight when the director last
// stopped. A run whose outcome its worker recorded meanwhile (the
// director was down, or this one is taking the cluster over) is reported
// before Attach returns, so that the engine takes it in before it decides
// any fire: the first Attach reads every outcome recorded in the channel,
// in one query. Otherwise the run is queued again if the channel lacks
// it: the director stopped between making its start durable and queueing
// it, so no worker can have run it.
func (d *Dispatch) Attach(w job.Launch, report func(job.Exit)) {
	d.readOnce.Do(d.readRecorded)
	d.mu.Lock()
	e, ok := d.recorded[w.RunID]
	delete(d.recorded, w.RunID)
	d.mu.Unlock()
	if ok {
		report(e)
		return
	}
	d.Start(w, report)
}

// readRecorded reads the outcomes recorded in the channel, for Attach.
func (d *Dispatch) readRecorded() {
	ctx, cancel := context.WithTimeout(context.Background(), attachRead)
	defer cancel()
	exits, err := d.reg.Ended(ctx)
	if err != nil {
		d.log.Warn("the outcomes recorded while no director took them in are taken in as the dispatch collects them", "err", err)
		return
	}
	recorded := make(map[int64]job.Exit, len(exits))
	for _, e := range exits {
		recorded[e.RunID] = e
	}
	d.mu.Lock()
	d.recorded = recorded
	d.mu.Unlock()
}

// Kill aborts a run: a queued run ends at once, a claimed one is killed
// by its worker.
func (d *Dispatch) Kill(run int64) {
	d.mu.Lock()
	d.aborts = append(d.aborts, run)
	d.mu.Unlock()
	d.signal()
}

// Forget deletes a run whose outcome the engine made durable.
func (d *Dispatch) Forget(run int64) {
	d.mu.Lock()
	d.forgets = append(d.forgets, run)
	d.mu.Unlock()
	d.signal()
}

// Sweep deletes every run but those in keep: at the director's start, the
// runs its engine no longer has in flight.
func (d *Dispatch) Sweep(keep map[int64]bool) {
	d.mu.Lock()
	d.keep, d.sweep = slices.Collect(maps.Keys(keep)), true
	d.mu.Unlock()
	d.signal()
}

// Running returns the number of runs queued or in flight on workers.
func (d *Dispatch) Running() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.watched)
}

// Stop makes the writes still gathered, until ctx is done, and ends the
// goroutine. Runs in flight go on on their workers: the next director
// attaches them. It returns an error when writes were left unmade.
func (d *Dispatch) Stop(ctx context.Context) error {
	d.cancel()
	<-d.done
	for d.pending() && ctx.Err() == nil {
		if err := d.flush(ctx); err == nil || errors.Is(err, ErrDeposed) {
			return nil
		}
		sleep(ctx, dispatchPoll)
	}
	if d.pending() {
		return fmt.Errorf("cluster: the dispatch's writes not made when the stop ended: %w", ctx.Err())
	}
	return nil
}

func (d *Dispatch) pending() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.sweep || len(d.queue)+len(d.aborts)+len(d.forgets) > 0
}

// run makes the gathered writes and collects outcomes, at each signal, at
// each notice of ended runs, and every dispatchPoll.
func (d *Dispatch) run(ctx context.Context) {
	defer close(d.done)
	listening := make(chan struct{})
	go func() {
		defer close(listening)
		d.reg.Listen(ctx, d.wake, NoticeEnded)
	}()
	defer func() { <-listening }()
	t := time.NewTimer(dispatchPoll)
	defer t.Stop()
	var failing bool
	for {
		err := d.flush(ctx)
		if errors.Is(err, ErrDeposed) {
			d.log.Error("another director took the cluster over: this director's runs are left to it", "err", err)
			if d.deposed != nil {
				d.deposed(err)
			}
			return
		}
		if err == nil {
			err = d.collect(ctx)
		}
		switch {
		case err != nil && ctx.Err() == nil && !failing:
			d.log.Warn("runs not dispatched: retrying", "err", err)
			failing = true
		case err == nil && failing:
			d.log.Info("runs dispatched again")
			failing = false
		}
		t.Reset(dispatchPoll)
		select {
		case <-ctx.Done():
			return
		case <-d.wake:
		case <-t.C:
		}
	}
}

// flush makes the gathered writes: the sweep, then queued runs, aborts
// and deletions. What fails stays gathered, to be made again, unless
// the director was deposed: then what it gathered is dropped.
func (d *Dispatch) flush(ctx context.Context) error {
	d.mu.Lock()
	sweep, keep := d.sweep, d.keep
	queue, aborts, forgets := d.queue, d.aborts, d.forgets
	d.sweep, d.keep, d.queue, d.aborts, d.forgets = false, nil, nil, nil, nil
	d.mu.Unlock()
	var err error
	restore := func() {
		if errors.Is(err, ErrDeposed) {
			return
		}
		d.mu.Lock()
		defer d.mu.Unlock()
		if sweep {
			d.sweep, d.keep = true, keep
		}
		d.queue = append(queue, d.queue...)
		d.aborts = append(aborts, d.aborts...)
		d.forgets = append(forgets, d.forgets...)
	}
	if sweep {
		if err = d.reg.DeleteExcept(ctx, d.director, d.epoch, keep); err != nil {
			restore()
			return err
		}
		sweep = false
	}
	if err = d.reg.Enqueue(ctx, d.director, d.epoch, queue, d.clock.Now()); err != nil {
		restore()
		return err
	}
	queue = nil
	for len(aborts) > 0 {
		if err = d.reg.Abort(ctx, d.director, d.epoch, aborts[0], d.clock.Now()); err != nil {
			restore()
			return err
		}
		aborts = aborts[1:]
	}
	if len(forgets) > 0 {
		if err = d.reg.Delete(ctx, d.director, d.epoch, forgets); err != nil {
			restore()
			return err
		}
	}
	return nil
}

// collect hands the engine the outcomes of the runs it watches that
// ended.
func (d *Dispatch) collect(ctx context.Context) error {
	d.mu.Lock()
	runs := slices.Collect(maps.Keys(d.watched))
	d.mu.Unlock()
	if len(runs) == 0 {
		return nil
	}
	exits, err := d.reg.Outcomes(ctx, runs)
	if err != nil {
		return err
	}
	for _, e := range exits {
		d.mu.Lock()
		report := d.watched[e.RunID]
		delete(d.watched, e.RunID)
		d.mu.Unlock()
		if report != nil {
			report(e)
		}
	}
	return nil
}
