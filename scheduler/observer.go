package scheduler

import (
	"sync/atomic"
	"time"

	"github.com/gnomon-sched/gnomon/engine"
	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/store"
)

// Observer is told what the scheduler does, for metrics (package metrics
// implements it with Prometheus). The loop calls its methods as it applies
// each event of a batch, before the batch is durable: a commit that fails
// stops the scheduler, so at most that one batch is counted without having
// been recorded. Alerted is called by the alert deliverer.
//
// The loop calls it for every event, data events included: a method must
// return at once, take no lock another goroutine holds for long, and
// allocate nothing.
type Observer interface {
	// Fired is told of each fate recorded for an occurrence of a time
	// trigger, of a timeperiod, or of a configuration's trigger by a data
	// event. late is how long after the occurrence's instant the
	// scheduler's clock handled it (for TriggerTime; zero for the others).
	Fired(by Trigger, fate job.Fate, late time.Duration)
	// RunStarted is told of each run handed to the Runner (not of a run
	// attached after a restart).
	RunStarted()
	// RunEnded is told of each run whose end its runner reported: how it
	// ended. A configuration's execution without a command (engine.EventRun)
	// is no run started or ended: it is counted by Fired.
	RunEnded(status job.Status, result job.Result)
	// DataApplied is told of each data event accepted, and of how many
	// configurations it triggered.
	DataApplied(triggered int)
	// Committed is told of each group commit that wrote something and that
	// the store took at the first attempt: how many events it journaled,
	// and how long the store took (real time, whatever the clock). A
	// commit retried while the database was unavailable is not told.
	Committed(events int, took time.Duration)
	// Alerted is told of each attempt at sending an alert: how it ended.
	Alerted(result AlertResult)
}

// PruneObserver is an Observer that is also told of each pass of the
// pruner that removed rows or failed (see Scheduler.Prune), by the
// goroutine that ran it.
type PruneObserver interface {
	Pruned(n store.Pruned, err error)
}

// Trigger is what made an occurrence fire, as an Observer is told.
type Trigger string

// Triggers of a fire.
const (
	TriggerTime       Trigger = "time"       // a calendar, interval or cron expression
	TriggerEvent      Trigger = "event"      // a data event, for a configuration
	TriggerTimeperiod Trigger = "timeperiod" // a period of a timeperiod tree closing
)

// AlertResult is how one attempt at sending an alert ended.
type AlertResult string

// Results of an attempt at sending an alert.
const (
	AlertSent          AlertResult = "sent"
	AlertRetrying      AlertResult = "retrying"       // not taken; it is tried again later
	AlertGivenUp       AlertResult = "given_up"       // not taken, and its retries are over
	AlertRefused       AlertResult = "refused"        // refused for good (a permanent error)
	AlertNotConfigured AlertResult = "not_configured" // no mail server: recorded, not sent
)

// nopObserver is the Observer of a scheduler that has none.
type nopObserver struct{}

func (nopObserver) Fired(Trigger, job.Fate, time.Duration) {}
func (nopObserver) RunStarted()                            {}
func (nopObserver) RunEnded(job.Status, job.Result)        {}
func (nopObserver) DataApplied(int)                        {}
func (nopObserver) Committed(int, time.Duration)           {}
func (nopObserver) Alerted(AlertResult)                    {}

// Gauges are readings of the scheduler as of its last commit.
type Gauges struct {
	// Ready counts the callables ready to start: waiting for a worker
	// slot (or for dispatch to resume after a drain).
	Ready int
	// Workers is the number of worker slots, and Busy how many runs hold
	// one.
	Workers, Busy int
	// Journal is the number of journal entries ever written: the last
	// entry's number (retention removes old entries, never the last).
	// Consecutive data events of one commit share an entry.
	Journal int64
	// Resources are the resources shared between tasks and their use, by
	// name (none when no resource is defined).
	Resources []engine.Resource
	// FilesPosted counts the settled file versions the file watchers
	// handed to their tasks since the scheduler started.
	FilesPosted int64
}

// gauges are the readings Gauges returns, which the loop stores after each
// commit: a reader never waits for the loop, which owns the engine, nor
// for a commit (a scrape while the database is unavailable still
// answers), and the loop pays three atomic stores a batch.
type gauges struct {
	ready, busy, journal atomic.Int64
	// held counts the runs the checkpointer holds back (see flush).
	held atomic.Int64
	// resources is the engine's Resources as of the last commit.
	resources atomic.Pointer[[]engine.Resource]
}

// Gauges returns readings of the scheduler as of its last commit. It is
// safe to call from any goroutine and never waits for the loop.
func (s *Scheduler) Gauges() Gauges {
	g := Gauges{Ready: int(s.gauges.ready.Load()), Workers: s.eng.Workers(), Busy: int(s.gauges.busy.Load()),
		Journal: s.gauges.journal.Load(), FilesPosted: s.FilesPosted()}
	if rs := s.gauges.resources.Load(); rs != nil {
		g.Resources = *rs
	}
	return g
}

// publish stores the loop's readings for Gauges, and a View of the tasks
// with what a committed batch changed (nil: all of them, as loaded).
func (s *Scheduler) publish(bt *batch) {
	// The calendars a View holds change with a calendar (whose change
	// compiles again the days of those whose holidays it is) and with a
	// definition (which changes their users).
	cals := bt == nil || len(bt.defined) > 0 || len(bt.calendars) > 0
	if cals {
		s.viewer.loadCalendars(s.eng)
	}
	if bt == nil || len(bt.seen) > 0 || cals || s.view.Load() == nil {
		if bt != nil && s.viewer.update(s.eng, bt.seen, bt.defined) {
			// The file watchers look at once, so that a new one
			// starts its notifications.
			wake(s.watchWake)
		}
		s.view.Store(s.viewer.publish(s.eng, s.cfg.Clock.Now()))
	}
	s.gauges.ready.Store(int64(s.eng.Ready()))
	s.gauges.busy.Store(int64(s.eng.Running()))
	s.gauges.journal.Store(s.ckpt.seq)
	s.gauges.held.Store(int64(len(s.ckpt.held)))
	if rs := s.eng.Resources(); len(rs) > 0 || s.gauges.resources.Load() != nil {
		s.gauges.resources.Store(&rs)
	}
}
