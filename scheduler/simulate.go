package scheduler

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/gnomon-sched/gnomon/clock"
	"github.com/gnomon-sched/gnomon/engine"
	"github.com/gnomon-sched/gnomon/store"
)

// A scheduler on a VirtualClock simulates: its clock moves only through
// Advance, which stops at every instant where something is due (an
// occurrence, a start delay, an alert's retry), in order, and lets
// everything due there happen before it moves on.
//
// Commands and functions still run for real, and virtual time passes
// while they do: a run ends at its virtual start plus the real time it
// took, and the clock moves on to that end if it is later. So `sleep 1`
// takes a second of virtual time, and a run never ends before it started;
// an occurrence that falls due while a run is in flight is handled when
// the run has ended, late by what remains of it. A task's time limit and
// run alarms act at their instant, even while runs are in flight: a run
// killed at its term_run_time of 2s takes 2s of virtual time.
//
// The virtual clock is state: Stop and every Advance record its reading
// in the store, and a scheduler started again on the same store resumes
// from the latest of that reading, the last journal entry and the start of
// the runs in flight, never earlier.

// ClockCursor is the store cursor that holds the virtual clock's reading,
// in Unix nanoseconds: where the clock nodes of a simulating cluster read
// it (see Config.Fetch).
const ClockCursor = "virtual clock"

// simulation is the state of a scheduler's virtual clock; its zero value
// is a scheduler on a real clock.
type simulation struct {
	clock *VirtualClock // nil on a real clock
	// change gets a signal after every batch that applied an event;
	// Advance waits on it.
	change  chan struct{}
	advance sync.Mutex // one Advance at a time
	// kick asks the alert deliverer to attempt what is due and answer
	// when the next retry is due (zero if none).
	kick chan chan time.Time
	// watchKick asks the file watchers to poll what is due and answer
	// when the next poll is due (zero if none).
	watchKick chan chan time.Time

	// frozen is closed when the scheduler begins to stop: the clock moves
	// no more, so that nothing is recorded at instants the stop would
	// reach while it drains (occurrences found the tasks it no longer
	// starts busy, and were recorded skipped).
	frozen     chan struct{}
	freezeOnce sync.Once

	mu sync.Mutex
	// runs holds when each run in flight started: on the virtual clock,
	// and (monotonic) on the system's.
	runs map[int64][2]time.Time
}

// init takes the clock, and resumes a virtual one from what the store
// recorded.
func (m *simulation) init(ctx context.Context, c Clock, st store.Store, snap *store.Snapshot) error {
	v, ok := c.(*VirtualClock)
	if !ok {
		return nil
	}
	m.clock, m.change, m.kick, m.runs = v, make(chan struct{}, 1), make(chan chan time.Time), map[int64][2]time.Time{}
	m.watchKick = make(chan chan time.Time)
	m.frozen = make(chan struct{})
	ns, err := st.Cursor(ctx, ClockCursor)
	if err != nil {
		return fmt.Errorf("virtual clock: %w", err)
	}
	if ns != 0 {
		v.forward(time.Unix(0, ns))
	}
	last, err := st.JournalBefore(ctx, "", 0, 1)
	if err != nil {
		return fmt.Errorf("virtual clock: %w", err)
	}
	if len(last) > 0 {
		v.forward(last[0].At)
	}
	for _, r := range snap.Active {
		v.forward(r.Start)
	}
	return nil
}

func (m *simulation) on() bool { return m.clock != nil }

// freeze stops the virtual clock for good, and waits until an Advance in
// progress has returned; it does nothing on a real clock.
func (m *simulation) freeze() {
	if !m.on() {
		return
	}
	m.freezeOnce.Do(func() { close(m.frozen) })
	// Taken and released: an Advance in progress has returned.
	m.advance.Lock()
	//lint:ignore SA2001 the lock is taken to wait for Advance, not to guard anything
	m.advance.Unlock()
}

// stopped returns the error of an Advance the stop of the scheduler
// froze, or nil while the clock may move.
func (m *simulation) stopped() error {
	select {
	case <-m.frozen:
		return fmt.Errorf("%w: the virtual clock stopped at %s", ErrStopped, m.clock.Now().UTC().Format(time.RFC3339Nano))
	default:
		return nil
	}
}

// changed signals Advance that a batch applied an event.
func (m *simulation) changed() {
	if m.on() {
		wake(m.change)
	}
}

// started notes that a run started at virtual instant at, and when on
// the wall clock: a run takes real time, even on a virtual clock.
func (m *simulation) started(id int64, at time.Time) {
	if !m.on() {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.runs[id] = [2]time.Time{at, clock.Wall.Now()}
}

// ended returns the virtual instant a run ended: its virtual start plus
// the real time it took (now, for a run started before a restart), and
// moves the clock there if it is later.
func (m *simulation) ended(id int64) time.Time {
	m.mu.Lock()
	r, ok := m.runs[id]
	delete(m.runs, id)
	m.mu.Unlock()
	if !ok {
		return m.clock.Now()
	}
	return m.clock.forward(r[0].Add(clock.Wall.Now().Sub(r[1])))
}

// inFlight returns the virtual instant that the runs in flight have
// reached: the latest of their virtual starts plus the real time since,
// or the clock's reading if that is later.
func (m *simulation) inFlight() time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.clock.Now()
	for _, r := range m.runs {
		if t := r[0].Add(clock.Wall.Now().Sub(r[1])); t.After(now) {
			now = t
		}
	}
	return now
}

// save records the virtual clock's reading in the store.
func (m *simulation) save(st store.Store) error {
	if !m.on() {
		return nil
	}
	return st.SetCursors(context.Background(), map[string]int64{ClockCursor: m.clock.Now().UnixNano()})
}

// Simulated reports whether the scheduler runs on a virtual clock.
func (s *Scheduler) Simulated() bool { return s.sim.on() }

// Advance moves a virtual clock to instant to. It stops at every instant
// where something is due, in order, lets the engine fire it, the alert
// deliverer retry what is due and the file watchers look at their files, and waits until every run started has
// ended, so that when it returns the scheduler has settled at the new time
// (or later: see the virtual time runs take). It fails on a real clock,
// and for an instant before the current one.
func (s *Scheduler) Advance(ctx context.Context, to time.Time) error {
	if !s.sim.on() {
		return ErrNotSimulated
	}
	s.sim.advance.Lock()
	defer s.sim.advance.Unlock()
	if now := s.sim.clock.Now(); to.Before(now) {
		return fmt.Errorf("the clock cannot go back: it reads %s", now.UTC().Format(time.RFC3339Nano))
	}
	var last time.Time
	for {
		if err := s.settle(ctx); err != nil {
			return err
		}
		if err := s.sim.stopped(); err != nil {
			return err
		}
		next, err := s.nextDue(ctx)
		if err != nil {
			return err
		}
		if next.IsZero() || next.After(to) {
			break
		}
		if !last.IsZero() && !next.After(last) {
			return fmt.Errorf("the engine is stuck at %s", next.UTC().Format(time.RFC3339Nano))
		}
		last = next
		s.sim.clock.forward(next)
		if err := s.fetch(ctx); err != nil {
			return err
		}
		if err := s.tick(ctx); err != nil {
			return err
		}
	}
	if err := s.sim.stopped(); err != nil {
		return err
	}
	s.sim.clock.forward(to)
	if err := s.fetch(ctx); err != nil {
		return err
	}
	if err := s.tick(ctx); err != nil {
		return err
	}
	if err := s.settle(ctx); err != nil {
		return err
	}
	if _, err := s.kickAlerts(ctx); err != nil {
		return err
	}
	if err := s.sim.save(s.cfg.Store); err != nil {
		return fmt.Errorf("virtual clock: %w", err)
	}
	return nil
}

// tick has the engine handle what is due at the virtual clock's reading,
// in as many Ticks as that takes (Config.FireBatch).
func (s *Scheduler) tick(ctx context.Context) error {
	for {
		if err := s.Submit(ctx, engine.Tick{}); err != nil {
			return err
		}
		var more bool
		if err := s.Read(ctx, func(e *engine.Engine) { more = e.Ticking() }); err != nil || !more {
			return err
		}
	}
}

// fetch has an external clock find the occurrences due by the virtual
// clock's reading (Config.Fetch), once the reading is saved where the
// clock nodes read it, and hand them to the engine; it fails when the
// engine still waits for some of them.
func (s *Scheduler) fetch(ctx context.Context) error {
	if !s.cfg.ExternalClock {
		return nil
	}
	if err := s.sim.save(s.cfg.Store); err != nil {
		return fmt.Errorf("virtual clock: %w", err)
	}
	now := s.sim.clock.Now()
	var prev []engine.ClockFire
	for {
		var due []engine.ClockFire
		if err := s.Read(ctx, func(e *engine.Engine) { due = e.Due(now) }); err != nil {
			return err
		}
		if len(due) == 0 {
			return nil
		}
		if s.cfg.Fetch == nil || slices.Equal(due, prev) {
			return fmt.Errorf("the clock nodes did not fire %s at %s (and %d more due by %s)", due[0].Task,
				due[0].Scheduled.UTC().Format(time.RFC3339Nano), len(due)-1, now.UTC().Format(time.RFC3339Nano))
		}
		if err := s.cfg.Fetch(ctx, now, due); err != nil {
			return err
		}
		prev = due
	}
}

// nextDue returns the earliest instant something is due: the engine's next
// wake (or, with an external clock, its next occurrence) or an alert's
// next retry, once the alerts due now are attempted.
func (s *Scheduler) nextDue(ctx context.Context) (time.Time, error) {
	var wake time.Time
	if err := s.Read(ctx, func(e *engine.Engine) {
		wake = earliest(e.NextWake(), s.trees.f.NextWake())
		if s.cfg.ExternalClock {
			wake = earliest(wake, e.NextOccurrence())
		}
	}); err != nil {
		return time.Time{}, err
	}
	retry, err := s.kickAlerts(ctx)
	if err != nil {
		return time.Time{}, err
	}
	if wake.IsZero() || (!retry.IsZero() && retry.Before(wake)) {
		wake = retry
	}
	poll, err := s.kickWatchers(ctx)
	if err != nil {
		return time.Time{}, err
	}
	return earliest(wake, poll), nil
}

// kickAlerts has the alert deliverer attempt every alert due now, and
// returns when the next retry is due.
func (s *Scheduler) kickAlerts(ctx context.Context) (time.Time, error) {
	return s.kick(ctx, s.sim.kick)
}

// kick asks a part that works on the virtual clock (the alert deliverer,
// the file watchers) to do what is due now, and returns when it is due
// next.
func (s *Scheduler) kick(ctx context.Context, part chan<- chan time.Time) (time.Time, error) {
	reply := make(chan time.Time, 1)
	select {
	case part <- reply:
	case <-s.done:
		return time.Time{}, s.stopErr()
	case <-ctx.Done():
		return time.Time{}, ctx.Err()
	}
	select {
	case next := <-reply:
		return next, nil
	case <-s.quit:
		return time.Time{}, ErrStopped
	case <-ctx.Done():
		return time.Time{}, ctx.Err()
	}
}

// settle waits until no callable run is in flight. While runs are, the
// time limits and run alarms of tasks act when the virtual time the runs
// have taken reaches them.
func (s *Scheduler) settle(ctx context.Context) error {
	for {
		var busy bool
		var limit time.Time
		if err := s.Read(ctx, func(e *engine.Engine) { busy, limit = e.Running()+s.treesInFlight() > 0, e.PolicyWake() }); err != nil {
			return err
		}
		if !busy {
			return nil
		}
		var due <-chan time.Time
		if !limit.IsZero() {
			due = time.After(max(limit.Sub(s.sim.inFlight()), 0))
		}
		select {
		case <-s.sim.change:
		case <-s.sim.frozen:
			return s.sim.stopped()
		case <-due:
			if err := s.sim.stopped(); err != nil {
				return err
			}
			s.sim.clock.forward(limit)
			if err := s.tick(ctx); err != nil {
				return err
			}
		case <-s.done:
			return s.stopErr()
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
