package web

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/gnomon-sched/gnomon/engine"
	"github.com/gnomon-sched/gnomon/scheduler"
)

// sharedRead lets the requests for one page share the reads of the
// scheduler it needs. The read of a page that lists every task runs on
// the scheduler's loop, which does nothing else meanwhile: when several
// browsers show the page, each change notice (see live) brings their
// requests together, and one read serves them all.
//
// A request joins the read of the same key that is queued on the loop or
// running there, and gets what it reads: the state at or after the
// request arrived, as a read of its own would. A queued read begins after
// the request arrived; while a read runs, the loop commits nothing, so
// everything committed before the request arrived (everything a change
// notice can have told its browser of) is in what the read sees. Without
// such a read, the request queues its own, which those that come until it
// ends join. K tells apart the reads of one page (its filter); the T a
// read returns is shared, and read only.
//
// The zero value is ready for use; it is safe for concurrent use.
type sharedRead[K comparable, T any] struct {
	mu sync.Mutex
	// current is the read of each key that is queued or running.
	current map[K]*pendingRead[T]
}

// reader runs a function on the scheduler's loop: a
// *scheduler.Scheduler.
type reader interface {
	Read(ctx context.Context, fn func(*engine.Engine)) error
}

var _ reader = (*scheduler.Scheduler)(nil)

// pendingRead is one read: its result, once done is closed.
type pendingRead[T any] struct {
	done chan struct{}
	val  T
	err  error
}

// read returns fn's result on the scheduler's loop, or that of a read
// shared with other requests, as sharedRead describes.
func (s *sharedRead[K, T]) read(ctx context.Context, sched reader, key K, fn func(*engine.Engine) T) (T, error) {
	for {
		s.mu.Lock()
		p := s.current[key]
		if p == nil {
			p = &pendingRead[T]{done: make(chan struct{})}
			if s.current == nil {
				s.current = map[K]*pendingRead[T]{}
			}
			s.current[key] = p
			s.mu.Unlock()
			return s.run(ctx, sched, key, p, fn)
		}
		s.mu.Unlock()
		select {
		case <-p.done:
		case <-ctx.Done():
			var zero T
			return zero, ctx.Err()
		}
		// The request that queued the read went away before the loop took
		// it: this one queues another.
		if (errors.Is(p.err, context.Canceled) || errors.Is(p.err, context.DeadlineExceeded)) && ctx.Err() == nil {
			continue
		}
		return p.val, p.err
	}
}

// run makes the read p on the loop, for this request and those that join
// it until it ends.
func (s *sharedRead[K, T]) run(ctx context.Context, sched reader, key K, p *pendingRead[T], fn func(*engine.Engine) T) (T, error) {
	ended := func() {
		s.mu.Lock()
		if s.current[key] == p {
			delete(s.current, key)
		}
		s.mu.Unlock()
	}
	p.err = sched.Read(ctx, func(e *engine.Engine) {
		p.val = fn(e)
		// Still on the loop: a request that comes from now on may come
		// after a commit, and needs a read of its own.
		ended()
	})
	ended() // if the read failed before it ran
	close(p.done)
	return p.val, p.err
}

// untilTick returns how long a page's change stream waits after a notice
// before it may send the next: until a tick of a clock every stream
// shares, which beats every liveEvery, the first at least liveEvery/2
// away. A busy scheduler changes at once after each tick, so that every
// open page is told of it at the same moment, and the pages that show the
// same thing share one read of it (sharedRead): however many browsers
// keep the overview open, the scheduler reads it for them about twice a
// second. A page opened at any moment keeps to the beat from its second
// notice on.
func untilTick(now time.Time) time.Duration {
	return now.Add(liveEvery / 2).Truncate(liveEvery).Add(liveEvery).Sub(now)
}
