package web

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gnomon-sched/gnomon/engine"
)

// fakeLoop runs reads one at a time, as the scheduler's loop does; a read
// queued on it waits until it is taken.
type fakeLoop struct {
	in chan func()
}

func newFakeLoop(t *testing.T) *fakeLoop {
	l := &fakeLoop{in: make(chan func())}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for f := range l.in {
			f()
		}
	}()
	t.Cleanup(func() { close(l.in); <-done })
	return l
}

func (l *fakeLoop) Read(ctx context.Context, fn func(*engine.Engine)) error {
	ran := make(chan struct{})
	select {
	case l.in <- func() { fn(nil); close(ran) }:
	case <-ctx.Done():
		return ctx.Err()
	}
	<-ran
	return nil
}

// hold keeps the loop busy until the returned function is called.
func (l *fakeLoop) hold() (release func()) {
	gate := make(chan struct{})
	go l.Read(context.Background(), func(*engine.Engine) { <-gate })
	synctest.Wait()
	return func() { close(gate) }
}

func TestSharedRead(t *testing.T) {
	t.Parallel()
	// count returns a read that answers how many reads ran before it and
	// itself.
	count := func() func(*engine.Engine) int {
		var n atomic.Int64
		return func(*engine.Engine) int { return int(n.Add(1)) }
	}
	t.Run("requests that come while a read waits share it", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			l := newFakeLoop(t)
			var s sharedRead[string, int]
			fn := count()
			release := l.hold()
			got := make([]int, 10)
			var wg sync.WaitGroup
			for i := range got {
				wg.Go(func() {
					v, err := s.read(t.Context(), l, "k", fn)
					if err != nil {
						t.Error(err)
					}
					got[i] = v
				})
			}
			synctest.Wait()
			release()
			wg.Wait()
			for i, v := range got {
				if v != 1 {
					t.Errorf("request %d got read %d, want all the first", i, v)
				}
			}
			if v, _ := s.read(t.Context(), l, "k", fn); v != 2 {
				t.Errorf("a request after them got read %d, want a new one, 2", v)
			}
		})
	})
	t.Run("a request that comes while the read runs shares it, one that comes after it makes its own", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			l := newFakeLoop(t)
			var s sharedRead[string, int]
			var n atomic.Int64
			inside, gate := make(chan struct{}), make(chan struct{})
			fn := func(*engine.Engine) int {
				if n.Add(1) == 1 {
					close(inside)
					<-gate
				}
				return int(n.Load())
			}
			first := make(chan int)
			go func() {
				v, _ := s.read(t.Context(), l, "k", fn)
				first <- v
			}()
			<-inside
			second := make(chan int)
			go func() {
				v, _ := s.read(t.Context(), l, "k", fn)
				second <- v
			}()
			synctest.Wait()
			close(gate)
			if a, b := <-first, <-second; a != 1 || b != 1 {
				t.Errorf("reads %d and %d, want both the first", a, b)
			}
			if v, _ := s.read(t.Context(), l, "k", fn); v != 2 {
				t.Errorf("a request after the read ended got read %d, want a new one, 2", v)
			}
		})
	})
	t.Run("keys do not share", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			l := newFakeLoop(t)
			var s sharedRead[string, int]
			fn := count()
			release := l.hold()
			got := make(chan int, 2)
			for _, k := range []string{"a", "b"} {
				go func() {
					v, _ := s.read(t.Context(), l, k, fn)
					got <- v
				}()
			}
			synctest.Wait()
			release()
			if a, b := <-got, <-got; a+b != 3 {
				t.Errorf("reads %d and %d, want 1 and 2", a, b)
			}
		})
	})
	t.Run("when the request that queued the read goes away the others still get one", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			l := newFakeLoop(t)
			var s sharedRead[string, int]
			fn := count()
			release := l.hold()
			ctx, cancel := context.WithCancel(t.Context())
			leader := make(chan error)
			go func() {
				_, err := s.read(ctx, l, "k", fn)
				leader <- err
			}()
			synctest.Wait()
			joiner := make(chan int)
			go func() {
				v, err := s.read(t.Context(), l, "k", fn)
				if err != nil {
					t.Error(err)
				}
				joiner <- v
			}()
			synctest.Wait()
			cancel()
			if err := <-leader; !errors.Is(err, context.Canceled) {
				t.Errorf("the request that went away got %v", err)
			}
			synctest.Wait()
			release()
			if v := <-joiner; v != 1 {
				t.Errorf("the request that stayed got read %d, want 1", v)
			}
		})
	})
}

func TestUntilTick(t *testing.T) {
	t.Parallel()
	tick := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC) // a tick: a whole second
	for _, c := range []struct {
		after, want time.Duration // after a tick, until the next one
	}{
		{0, liveEvery},
		{time.Millisecond, liveEvery - time.Millisecond},
		{liveEvery/2 - time.Millisecond, liveEvery/2 + time.Millisecond},
		// Too close to the next tick: the one after it.
		{liveEvery / 2, 3 * liveEvery / 2},
		{liveEvery - time.Millisecond, liveEvery + time.Millisecond},
	} {
		if got := untilTick(tick.Add(c.after)); got != c.want {
			t.Errorf("%s after a tick: wait %s, want %s", c.after, got, c.want)
		}
	}
}
