package web

import (
	"sync"
	"time"
)

// sharedRead lets the requests for one page share what they compute from
// one View of the scheduler: a page that lists every task costs a pass
// over them, and when several browsers show the page, each change notice
// (see live) brings their requests together. A request takes the View
// published when it arrives; if another request computed (or is
// computing) the same key from that View, it gets that result, otherwise
// it computes its own, which later requests on the same View share. So
// each request sees the state as of a commit at or after its arrival, as
// a read of its own would. K tells apart the reads of one page (its
// filter); the T a read returns is shared, and read only.
//
// The zero value is ready for use; it is safe for concurrent use.
type sharedRead[K comparable, T any] struct {
	mu sync.Mutex
	// current is the latest read of each key.
	current map[K]*pendingRead[T]
}

// pendingRead is one read: the View it reads, and its result once done is
// closed.
type pendingRead[T any] struct {
	seq  uint64
	done chan struct{}
	val  T
}

// read returns fn's result, fn reading the View numbered seq
// (scheduler.View.Seq), or that of a read of the same key and View, as
// sharedRead describes.
func (s *sharedRead[K, T]) read(seq uint64, key K, fn func() T) T {
	s.mu.Lock()
	p := s.current[key]
	if p != nil && p.seq == seq {
		s.mu.Unlock()
		<-p.done
		return p.val
	}
	p = &pendingRead[T]{seq: seq, done: make(chan struct{})}
	if s.current == nil {
		s.current = map[K]*pendingRead[T]{}
	}
	if old := s.current[key]; old == nil || old.seq < p.seq {
		s.current[key] = p
	}
	s.mu.Unlock()
	p.val = fn()
	close(p.done)
	return p.val
}

// beatSeq holds a View's number for the reads of history from the store
// that a page shows beside the View (the overview's failures and chart of
// the last day's runs). A storm of runs publishes a View at every commit,
// hundreds a second, and those reads, which count thousands of runs,
// would be made again for nearly every request; the number moves to the
// newest View at most once a liveEvery instead, so that they are read at
// most twice a second however often pages are asked for, and are never
// more than liveEvery behind what the View shows. A page's live updates
// come on that beat anyway (untilTick).
//
// The zero value is ready for use; it is safe for concurrent use.
type beatSeq struct {
	mu  sync.Mutex
	seq uint64
	at  time.Time // when seq was taken, by the wall clock
}

// of returns the number to read history at for a request that sees View
// number seq at now (the wall clock's reading).
func (b *beatSeq) of(seq uint64, now time.Time) uint64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	if seq != b.seq && (b.at.IsZero() || now.Sub(b.at) >= liveEvery) {
		b.seq, b.at = seq, now
	}
	return b.seq
}

// untilTick returns how long a page's change stream waits after a notice
// before it may send the next: until a tick of a clock every stream
// shares, which beats every liveEvery, the first at least liveEvery/2
// away. A busy scheduler changes at once after each tick, so that every
// open page is told of it at the same moment, and the pages that show the
// same thing share one read of it (sharedRead): however many browsers
// keep the overview open, it is computed for them about twice a second. A page opened at any moment keeps to the beat from its second
// notice on.
func untilTick(now time.Time) time.Duration {
	return now.Add(liveEvery / 2).Truncate(liveEvery).Add(liveEvery).Sub(now)
}
