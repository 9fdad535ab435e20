// Package gcfloor keeps the garbage collector from running on a small heap
// as often as GOGC alone would make it.
//
// With GOGC=100 a process whose live heap is 5 MB collects after every
// 5 MB it allocates: a server answering tens of thousands of requests a
// second with a small state collects dozens of times a second, each time
// stopping its goroutines briefly and scanning their stacks. A floor lets
// the heap grow to at least the live heap plus the floor before the next
// collection. Once the live heap is larger than the floor over GOGC, GOGC
// alone decides, so a large process uses no more memory than before.
package gcfloor

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// minHeap is the runtime's least heap goal at GOGC=100; it scales with
// GOGC, so the floor's GOGC is capped where it makes this the floor.
const minHeap = 4 << 20

// Start keeps, until stop is called, the heap size that starts a
// collection at least floor bytes above the live heap. It adjusts GOGC
// after each collection; the GOGC in force when it starts (from the
// environment, or set by the program) is the least it sets, and what stop
// restores. It does nothing with the collector off (GOGC=off). One floor
// at a time.
func Start(floor uint64) (stop func()) {
	base := debug.SetGCPercent(100)
	debug.SetGCPercent(base)
	if base < 0 || floor == 0 {
		return func() {}
	}
	t := &tuner{floor: floor, base: base, max: max(int(floor*100/minHeap), base),
		live: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}}
	t.tune()
	t.arm()
	return func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		t.stopped = true
		debug.SetGCPercent(t.base)
	}
}

type tuner struct {
	floor     uint64
	base, max int // GOGC: the least and the most
	live      []metrics.Sample

	mu      sync.Mutex // stop runs beside the finalizer
	stopped bool
}

// sentinel is an object whose finalizer runs once after each collection
// that finds it unreachable. It holds a pointer so that it is never
// batched with other small objects, whose finalizers may never run.
type sentinel struct {
	_ *int
	_ int
}

// arm allocates a sentinel that tunes and arms the next one when the next
// collection frees it.
func (t *tuner) arm() {
	runtime.SetFinalizer(&sentinel{}, func(*sentinel) {
		t.mu.Lock()
		defer t.mu.Unlock()
		if !t.stopped {
			t.tune()
			t.arm()
		}
	})
}

// tune sets GOGC for the next cycle from the live heap the last one left.
func (t *tuner) tune() {
	metrics.Read(t.live)
	pct := t.base
	if t.live[0].Value.Kind() == metrics.KindUint64 {
		if live := t.live[0].Value.Uint64(); live == 0 {
			pct = t.max
		} else if p := t.floor * 100 / live; p > uint64(pct) {
			pct = int(min(p, uint64(t.max)))
		}
	}
	debug.SetGCPercent(pct)
}
