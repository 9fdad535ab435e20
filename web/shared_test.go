package web

import (
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

func TestSharedRead(t *testing.T) {
	t.Parallel()
	t.Run("requests on the View a read is computing share it", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			var s sharedRead[string, int]
			var n atomic.Int64
			gate := make(chan struct{})
			fn := func() int {
				<-gate
				return int(n.Add(1))
			}
			got := make([]int, 10)
			var wg sync.WaitGroup
			for i := range got {
				wg.Go(func() { got[i] = s.read(7, "k", fn) })
			}
			synctest.Wait() // one computes, the others wait for it
			close(gate)
			wg.Wait()
			for i, v := range got {
				if v != 1 {
					t.Errorf("request %d got read %d, want all the first", i, v)
				}
			}
			if v := s.read(7, "k", fn); v != 1 {
				t.Errorf("a later request on the same View got read %d, want the first, 1", v)
			}
			if v := s.read(8, "k", fn); v != 2 {
				t.Errorf("a request on a later View got read %d, want a new one, 2", v)
			}
		})
	})
	t.Run("keys do not share", func(t *testing.T) {
		var s sharedRead[string, int]
		var n atomic.Int64
		fn := func() int { return int(n.Add(1)) }
		if a, b := s.read(1, "a", fn), s.read(1, "b", fn); a != 1 || b != 2 {
			t.Errorf("reads %d and %d, want 1 and 2", a, b)
		}
	})
	t.Run("a request on an older View does not displace the newer read", func(t *testing.T) {
		var s sharedRead[string, int]
		var n atomic.Int64
		fn := func() int { return int(n.Add(1)) }
		s.read(5, "k", fn)
		s.read(4, "k", fn)
		if v := s.read(5, "k", fn); v != 1 {
			t.Errorf("a request on View 5 got read %d, want the first, 1", v)
		}
	})
}

// TestBeatSeq: the number history is read at follows the View at most
// once a liveEvery, and never stays behind a View for longer.
func TestBeatSeq(t *testing.T) {
	t.Parallel()
	var b beatSeq
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	steps := []struct {
		seq   uint64
		after time.Duration // since t0
		want  uint64
	}{
		{1, 0, 1},                           // the first request takes its View
		{1, 10 * time.Millisecond, 1},       // the same View
		{7, 100 * time.Millisecond, 1},      // a newer View within the beat: history as of View 1
		{9, liveEvery - time.Nanosecond, 1}, // still within it
		{9, liveEvery, 9},                   // a beat on: the newest View
		{9, 10 * liveEvery, 9},              // the View unchanged: no new read
		{12, 10*liveEvery + 1, 12},          // long after the last move: at once
	}
	for i, s := range steps {
		if got := b.of(s.seq, t0.Add(s.after)); got != s.want {
			t.Errorf("step %d: View %d at +%s read at %d, want %d", i, s.seq, s.after, got, s.want)
		}
	}
}
