package cluster

import (
	"context"
	"sync"

	"github.com/gnomon-sched/gnomon/internal/startstop"
)

// Member is this process's node of a cluster, with the lifecycle every
// long-lived part of gnomon has: Start once; Stop any number of times,
// started or not. From Start to Stop the node registers, heartbeats and
// plays its roles (see runNode); it may also stop by itself when it
// cannot go on, which Done and Err tell.
type Member struct {
	cfg  Config
	done chan struct{}

	life startstop.Guard
	// cancel ends the node; Start sets it, and Stop reads it, under life.
	cancel context.CancelFunc
	mu     sync.Mutex
	err    error // guarded by mu
}

// NewMember returns the node cfg describes, not started.
func NewMember(cfg Config) *Member { return &Member{cfg: cfg, done: make(chan struct{})} }

// Start starts the node and returns: it runs until Stop, or until it
// cannot go on. A second Start, one after Stop, or one whose ctx is done
// is refused. The node outlives ctx: only Stop ends it.
func (m *Member) Start(ctx context.Context) error {
	return m.life.Start(ctx, "cluster node", "cluster.NewMember", func() error { return m.start(ctx) })
}

// start is Start's work, done once.
func (m *Member) start(ctx context.Context) error {
	nctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	m.cancel = cancel
	go func() {
		err := runNode(nctx, m.cfg)
		cancel()
		m.mu.Lock()
		m.err = err
		m.mu.Unlock()
		close(m.done)
	}()
	return nil
}

// Stop makes the node leave the cluster and waits until it has, or until
// ctx is done. It returns why the node stopped by itself, if it did
// before (ErrDeposed, ErrSettings, ...). A node never started is only
// marked stopped.
func (m *Member) Stop(ctx context.Context) error {
	if started, _ := m.life.Stop(); !started {
		return nil
	}
	m.cancel()
	select {
	case <-m.done:
	case <-ctx.Done():
		return ctx.Err()
	}
	return m.Err()
}

// Done is closed once a started node has stopped, by Stop or by itself.
func (m *Member) Done() <-chan struct{} { return m.done }

// Err returns why the node stopped by itself, nil while it runs or if
// Stop stopped it.
func (m *Member) Err() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.err
}
