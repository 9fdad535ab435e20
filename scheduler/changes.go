package scheduler

import "sync"

// changes tells watchers that the engine's state changed: a generation
// that grows with every commit that changed something, and a channel
// closed at the next one. It costs a commit nothing when no one watches.
type changes struct {
	mu  sync.Mutex
	gen uint64
	ch  chan struct{} // nil while no one waits
}

func (c *changes) bump() {
	c.mu.Lock()
	c.gen++
	if c.ch != nil {
		close(c.ch)
		c.ch = nil
	}
	c.mu.Unlock()
}

func (c *changes) watch() (uint64, <-chan struct{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ch == nil {
		c.ch = make(chan struct{})
	}
	return c.gen, c.ch
}

// Changed returns the generation of the scheduler's state, which grows
// with every durable change (an event applied, a run started or ended, a
// definition, a tick of the trees), and a channel closed when it next
// grows. A page that shows the state reads it again then.
func (s *Scheduler) Changed() (gen uint64, next <-chan struct{}) { return s.changes.watch() }
