package scheduler

import (
	"sync"
	"time"

	"github.com/gnomon-sched/gnomon/clock"
)

// Clock tells the time. Everything the scheduler decides or records reads
// the one Clock it was given: the loop, alert retries and the records of
// runs. The engine never reads a clock itself: the loop passes it the
// instant. It is clock.Clock, named here for the scheduler's users.
type Clock = clock.Clock

// SystemClock is the real clock (clock.System).
type SystemClock = clock.System

// VirtualClock is a clock that moves only when a Scheduler advances it
// (Scheduler.Advance), and never back. A scheduler on a virtual clock arms
// no timers: Advance delivers every due instant in order.
type VirtualClock struct {
	mu sync.Mutex
	t  time.Time
}

var _ Clock = (*VirtualClock)(nil)

// NewVirtualClock returns a virtual clock reading t.
func NewVirtualClock(t time.Time) *VirtualClock { return &VirtualClock{t: t} }

// Now returns the virtual time.
func (c *VirtualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// forward moves the clock to t if t is later, and returns the reading.
func (c *VirtualClock) forward(t time.Time) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.After(c.t) {
		c.t = t
	}
	return c.t
}
