// Package startstop is the lifecycle every long-lived part of gnomon
// has: Start once; Stop any number of times, started or not.
package startstop

import (
	"context"
	"fmt"
	"sync"
)

// Guard tells a part's Start and Stop what state it is in. The zero value
// is a part never started.
type Guard struct {
	mu               sync.Mutex
	started, stopped bool
}

// Start runs start, with the part marked started, unless ctx is done or
// the part was started or stopped before: the error names the part
// (what) and, after a Stop, the function that makes a new one (maker). A
// Stop waits for start to return, so it never sees a part half started.
// The part stays marked started when start fails: what start began,
// Stop ends.
func (g *Guard) Start(ctx context.Context, what, maker string, start func() error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case g.stopped:
		return fmt.Errorf("%s: Start after Stop: a stopped one does not start again; make a new one with %s", what, maker)
	case g.started:
		return fmt.Errorf("%s: already started", what)
	}
	g.started = true
	return start()
}

// Stop marks the part stopped and reports whether it was started, and
// whether this is its first Stop.
func (g *Guard) Stop() (started, first bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	first = !g.stopped
	g.stopped = true
	return g.started, first
}
