package gcfloor

import (
	"runtime"
	"runtime/metrics"
	"testing"
	"time"
)

var sink []byte

// cycles returns how many collections allocating n bytes of garbage in
// small pieces takes.
func cycles(n int) uint32 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range n / 4096 {
		sink = make([]byte, 4096)
	}
	runtime.ReadMemStats(&after)
	return after.NumGC - before.NumGC
}

// gogc returns the GOGC in force.
func gogc() int {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return int(s[0].Value.Uint64())
}

// settle runs collections until the finalizer that follows one has set
// GOGC to want, or a hundred of them did not, and returns GOGC.
func settle(want int) int {
	for range 100 {
		runtime.GC()
		if gogc() == want {
			break
		}
		time.Sleep(time.Millisecond) // the finalizer runs on its own goroutine
	}
	return gogc()
}

// TestFloor checks that a small heap collects far less often with a floor,
// and that a heap larger than the floor is left to GOGC.
func TestFloor(t *testing.T) {
	const floor = 64 << 20
	runtime.GC()
	without := cycles(512 << 20)
	stop := Start(floor)
	defer stop()
	runtime.GC() // the first cycle under the floor
	runtime.GC()
	with := cycles(512 << 20)
	t.Logf("512 MiB of garbage: %d collections without a floor, %d with one", without, with)
	// 512 MiB over a 64 MiB floor is at most about 8 cycles; GOGC=100 on
	// this test's small live heap makes dozens.
	if with > 12 || with*3 > without {
		t.Errorf("%d collections with a floor of 64 MiB, %d without", with, without)
	}
	// Once quiet, the live heap is under the runtime's 4 MiB minimum: GOGC
	// is where that minimum, which scales with it, is the floor. (During
	// the allocations above, what was allocated while a cycle marked
	// counted as live, and GOGC was lower.)
	if pct := settle(1600); pct != 1600 {
		t.Errorf("GOGC %d on a small heap with a floor of 64 MiB, want 1600", pct)
	}

	// A live heap of twice the floor: GOGC alone decides again.
	live := make([]byte, 2*floor)
	for i := range live {
		live[i] = 1
	}
	if pct := settle(100); pct != 100 {
		t.Errorf("GOGC %d with a live heap twice the floor, want 100", pct)
	}
	runtime.KeepAlive(live)
	live = nil

	// Stopped: GOGC is what it was, whatever the heap.
	stop()
	runtime.GC()
	if pct := gogc(); pct != 100 {
		t.Errorf("GOGC %d after stop, want 100", pct)
	}
	// 128 MiB of garbage over GOGC=100 and a live heap of a few MiB is
	// dozens of cycles; a floor left in place would make at most two.
	if n := cycles(128 << 20); n < 4 {
		t.Errorf("%d collections for 128 MiB of garbage after stop", n)
	}
}
