package gnomon

import (
	"maps"
	"slices"

	"github.com/gnomon-sched/gnomon/scheduler"
)

// EventKind is the kind of an Event.
type EventKind string

// Event kinds: the seed's job events, plus the start of a run.
const (
	EventStarted    EventKind = "started"
	EventSucceeded  EventKind = "succeeded"
	EventFailed     EventKind = "failed" // failed, aborted, lost or could not be launched
	EventNotStarted EventKind = "not_started"
	// EventAlarm is an alarm of the job's MaxRunAlarm or MinRunAlarm;
	// Reason says what.
	EventAlarm EventKind = "alarm"
)

// Event is what listeners are told: a run started or ended, or a job did
// not start when a job its condition names completed.
type Event struct {
	Kind EventKind
	Job  string
	// Run is the run started or ended; zero for EventNotStarted.
	Run RunRecord
	// Reason says why the job did not start, or what an alarm is about.
	Reason string
}

// Listen registers fn to be told of every event, in order, once it is
// durable, until the returned function is called. Listeners are called one
// at a time on the scheduler's effect goroutine: fn should return quickly
// (hand long work to a goroutine of your own).
func (s *Scheduler) Listen(fn func(Event)) (cancel func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := s.nextID
	s.nextID++
	s.listeners[id] = fn
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		delete(s.listeners, id)
	}
}

func (s *Scheduler) notify(n scheduler.Notice) {
	ev := Event{Kind: EventKind(n.Kind), Job: n.Task, Run: n.Run, Reason: n.Reason}
	s.mu.RLock()
	fns := make([]func(Event), 0, len(s.listeners))
	for _, id := range slices.Sorted(maps.Keys(s.listeners)) {
		fns = append(fns, s.listeners[id])
	}
	s.mu.RUnlock()
	for _, fn := range fns {
		fn(ev)
	}
}
