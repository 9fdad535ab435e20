// Package cluster spreads the time triggers of one gnomon over several
// nodes that share a PostgreSQL database: it places each schedule on a
// minute spot, groups spots into partitions, assigns partitions evenly to
// the live clock nodes, and keeps the registry of nodes, their heartbeats
// and the fenced partition leases under which a clock node may record a
// fire.
//
// # Minute spots
//
// A schedule's spot comes from the wall-clock hour and minute of its
// fires, in its own time zone: spot = (hour × 60 + minute) mod S, with the
// space size S from 1 to 1440. A daily run at 23:10 is on spot 10 when
// S = 60, and on spot 70 when S = 120. A schedule that repeats at a
// constant step shorter than an hour (every minute, */15, an interval of
// 30 seconds) has a dedicated spot per step instead, -X for a step of X
// minutes (-1 for a minute or less), so that the heavy repeaters do not
// crowd the spot of their first minute and their load is visible apart.
//
// A space that scatters the repeaters (Space.Scatter, --scatter-steps)
// places each of their occurrences on the regular spot of its own
// wall-clock minute instead: a */15 schedule with S = 60 is on spots 0,
// 15, 30 and 45, and its occurrences are fired by the owners of their
// partitions (see Filtered).
//
// # Partitions
//
// Spots are grouped into P partitions, the unit that is leased to a clock
// node: regular spot s is in partition s mod P, and dedicated spot -X in
// partition P + X - 1. The universe of partitions is fixed by S and P
// alone (P + 59 of them), so that it does not change as definitions do.
//
// # The registry
//
// The nodes coordinate in the database they share, through a Registry:
// the package declares it, with a smaller interface for each part of a
// node (Membership, Rounds, Recorder, Queue, ...), and holds no SQL. The
// PostgreSQL store implements it (store/postgres: Store.Cluster returns
// the cluster's view of the store).
package cluster

import (
	"fmt"
	"time"

	"github.com/gnomon-sched/gnomon/calendar"
)

// Space is the minute-spot space of a cluster.
type Space struct {
	// Size is S, the number of regular spots: 1 to 1440.
	Size int `json:"size"`
	// Partitions is P, the number of partitions the regular spots are
	// grouped into: 1 to Size.
	Partitions int `json:"partitions"`
	// Scatter places each occurrence of a schedule that repeats at a
	// constant step under an hour on the regular spot of its own minute,
	// rather than the whole schedule on the dedicated spot of its step
	// (which then stay empty). False by default.
	Scatter bool `json:"scatter,omitempty"`
}

// DefaultSpace is an hour of minute spots, one partition per spot.
var DefaultSpace = Space{Size: 60, Partitions: 60}

// maxStep is the longest step of a dedicated spot: 59 minutes.
const maxStep = 59

// Check reports a space that cannot be used.
func (s Space) Check() error {
	switch {
	case s.Size < 1 || s.Size > 1440:
		return fmt.Errorf("space size %d: should be from 1 to 1440 minutes", s.Size)
	case s.Partitions < 1 || s.Partitions > s.Size:
		return fmt.Errorf("partitions %d: should be from 1 to the space size, %d", s.Partitions, s.Size)
	}
	return nil
}

// Count returns how many partitions the space has: P regular ones and one
// per dedicated step.
func (s Space) Count() int { return s.Partitions + maxStep }

// Partition returns the partition that holds a spot.
func (s Space) Partition(spot int) int {
	if spot < 0 {
		return s.Partitions - spot - 1
	}
	return spot % s.Partitions
}

// PartitionName renders a partition for people: "p7" for regular spots,
// "every 5m" for a dedicated step.
func (s Space) PartitionName(p int) string {
	if p >= s.Partitions {
		return fmt.Sprintf("every %dm", p-s.Partitions+1)
	}
	return fmt.Sprintf("p%d", p)
}

// stepProbe is how many consecutive occurrences must be evenly spaced for
// a schedule to be a repeater.
const stepProbe = 48

// reference is the instant spots are computed from: any fixed instant
// serves, so that a schedule's spot never depends on when it is asked.
var reference = time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)

// Spot returns the minute spot of a schedule whose wall clock is in loc,
// and false for a schedule that never fires after the reference instant.
func (s Space) Spot(sched calendar.Schedule, loc *time.Location) (int, bool) {
	first, ok := sched.Next(reference)
	if !ok {
		return 0, false
	}
	if step := repeatStep(sched, first); step > 0 {
		return -step, true
	}
	w := first.In(loc)
	return (w.Hour()*60 + w.Minute()) % s.Size, true
}

// repeatStep returns, in whole minutes (at least 1), the step of a
// schedule whose first stepProbe occurrences from first are evenly spaced
// less than an hour apart, and 0 for any other schedule.
func repeatStep(sched calendar.Schedule, first time.Time) int {
	step := repeatGap(sched, first)
	if step == 0 {
		return 0
	}
	return max(int(step/time.Minute), 1)
}

// repeatGap returns the step of a schedule whose first stepProbe
// occurrences from first are evenly spaced less than an hour apart, and 0
// for any other schedule.
func repeatGap(sched calendar.Schedule, first time.Time) time.Duration {
	prev := first
	var step time.Duration
	for range stepProbe {
		next, ok := sched.Next(prev)
		if !ok {
			return 0
		}
		gap := next.Sub(prev)
		if step == 0 {
			step = gap
		}
		if gap != step || gap >= time.Hour {
			return 0
		}
		prev = next
	}
	return step
}

// OccurrenceSpot returns the regular spot of an occurrence at t of a
// schedule whose wall clock is in loc: (hour × 60 + minute) mod S. A
// repeated hour (when clocks go back) gives its two occurrences of a
// minute the same spot.
func (s Space) OccurrenceSpot(t time.Time, loc *time.Location) int {
	w := t.In(loc)
	return (w.Hour()*60 + w.Minute()) % s.Size
}

// Scattered returns, for a space that scatters repeaters and a schedule
// that is one, the schedule split by partition: one Filtered per regular
// partition its occurrences fall in, in partition order, each yielding
// only the occurrences it holds; and nil for any other schedule, which is
// placed whole by Spot.
//
// The partitions are those of the occurrences in the S minutes and the
// day after the schedule's first (after the reference instant): a day's
// minutes, wherever the hour falls. An occurrence that falls in another
// partition later (an interval whose step does not divide the day, or
// moved by a change of clocks) is held by the partition of the schedule's
// first occurrence, its home: every occurrence is held by exactly one
// Filtered.
func (s Space) Scattered(sched calendar.Schedule, loc *time.Location) []*Filtered {
	if !s.Scatter {
		return nil
	}
	first, ok := sched.Next(reference)
	if !ok {
		return nil
	}
	step := repeatGap(sched, first)
	if step == 0 {
		return nil
	}
	limit := int((time.Duration(s.Size)*time.Minute+24*time.Hour)/step) + 1
	seen := make([]bool, s.Partitions)
	home := s.OccurrenceSpot(first, loc) % s.Partitions
	seen[home] = true
	count := 1
	at := first
	for i := 1; i < limit && count < s.Partitions; i++ {
		next, ok := sched.Next(at)
		if !ok {
			break
		}
		if q := s.OccurrenceSpot(next, loc) % s.Partitions; !seen[q] {
			seen[q] = true
			count++
		}
		at = next
	}
	out := make([]*Filtered, 0, count)
	for q, ok := range seen {
		if ok {
			out = append(out, &Filtered{sched: sched, loc: loc, space: s, partition: q, home: q == home, seen: seen, limit: limit})
		}
	}
	return out
}

// Filtered is a scattered schedule as one partition holds it: the
// occurrences whose spot is in its partition (and, for the home partition,
// those in partitions the schedule was not found to reach). It is read
// with Scan, which bounds the work of each call; it is not a
// calendar.Schedule, whose Next answers false only for a schedule that
// never fires again. It is safe for concurrent use.
type Filtered struct {
	sched     calendar.Schedule
	loc       *time.Location
	space     Space
	partition int
	home      bool
	seen      []bool // the partitions that have a Filtered of the schedule
	limit     int    // occurrences scanned per call: those of S minutes and a day
}

// Partition returns the partition whose occurrences f yields.
func (f *Filtered) Partition() int { return f.partition }

// holds reports whether the occurrence at t is f's.
func (f *Filtered) holds(t time.Time) bool {
	q := f.space.OccurrenceSpot(t, f.loc) % f.space.Partitions
	return q == f.partition || f.home && !f.seen[q]
}

// Scan looks for f's first occurrence after t among the occurrences of
// the whole schedule, at most as many as fall in S minutes and a day: it
// returns that occurrence and true, or, when none of those is f's, the
// last it looked at and false (none of f's is before it: scan again from
// there); ok is false when the schedule never fires after t.
func (f *Filtered) Scan(t time.Time) (at time.Time, found, ok bool) {
	for range f.limit {
		next, ok := f.sched.Next(t)
		if !ok {
			return time.Time{}, false, false
		}
		if f.holds(next) {
			return next, true, true
		}
		t = next
	}
	return t, false, true
}
