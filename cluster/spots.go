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
// # Partitions
//
// Spots are grouped into P partitions, the unit that is leased to a clock
// node: regular spot s is in partition s mod P, and dedicated spot -X in
// partition P + X - 1. The universe of partitions is fixed by S and P
// alone (P + 59 of them), so that it does not change as definitions do.
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
	return max(int(step/time.Minute), 1)
}
