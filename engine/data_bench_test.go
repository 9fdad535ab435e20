package engine

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/job"
)

// configured returns an engine restored with n configurations shaped like
// the load generator's: TABLE table_K, FILE /landing/K and TIME_BASED
// cron_K each.
func configured(tb testing.TB, n int) *Engine {
	tb.Helper()
	recs := make([]job.Record, n)
	for k := range n {
		recs[k] = job.Record{Def: &job.Task{Name: fmt.Sprintf("C%d", k), Type: job.Configuration, Extra: &job.Extra{Deps: []job.DataDep{
			{Type: job.Table, Resource: fmt.Sprintf("table_%d", k), Life: 3600},
			{Type: job.File, Resource: fmt.Sprintf("/landing/%d", k), Life: 3600},
			{Type: job.TimeBased, Resource: fmt.Sprintf("cron_%d", k)},
		}}}}
	}
	e := New(Config{})
	if err := restore(e, recs, nil, 0, nil); err != nil {
		tb.Fatal(err)
	}
	return e
}

// BenchmarkDataEvent measures one data event through the engine: match,
// accept, evaluate and, for one event in ten, a trigger. The cost must not
// depend on the number of configurations the event does not match.
func BenchmarkDataEvent(b *testing.B) {
	for _, n := range []int{3, 10_000, 1_000_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			e := configured(b, n)
			start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			now := start
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				k := (i * 7919) % n
				var ev Data
				switch i % 10 {
				case 0, 1, 2, 3, 4, 5:
					ev = Data{Type: job.Table, Resource: fmt.Sprintf("table_%d", k)}
				case 6, 7, 8:
					ev = Data{Type: job.File, Resource: fmt.Sprintf("/landing/%d/part=3/f.csv", k)}
				default:
					ev = Data{Type: job.TimeBased, Resource: fmt.Sprintf("cron_%d", k)}
				}
				ev.At = start.Add(time.Duration(i) * time.Millisecond)
				if _, err := e.Apply(ev, now); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestConfigurationMemory bounds the heap a configuration costs, so that
// a million of them stay within a few GiB.
func TestConfigurationMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates 100,000 configurations")
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	e := configured(t, 100_000)
	runtime.GC()
	runtime.ReadMemStats(&after)
	per := float64(after.HeapAlloc-before.HeapAlloc) / 100_000
	t.Logf("%.0f bytes of heap per configuration", per)
	// 1,481 bytes before tasks' definitions carried resources, webhooks,
	// an environment and a retention (job.Extra grew by 72 bytes, a size
	// class): 1,617 since.
	if per > 1700 {
		t.Errorf("%.0f bytes of heap per configuration, want at most 1700", per)
	}
	runtime.KeepAlive(e)
}

// BenchmarkCheckpointStart measures what starting a checkpoint costs the
// loop with 10^6 configurations of which 200,000 hold events: listing
// them (WindowRefs), against copying all their events at once (what a
// checkpoint started with before, and now spreads over its parts).
func BenchmarkCheckpointStart(b *testing.B) {
	e := configured(b, 1_000_000)
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 200_000 {
		k := (i * 7919) % 1_000_000
		ev := Data{Type: job.Table, Resource: fmt.Sprintf("table_%d", k), At: start.Add(time.Duration(i) * time.Millisecond)}
		if _, err := e.Apply(ev, start); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("refs", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			if n := len(e.WindowRefs()); n != 200_000 {
				b.Fatalf("%d configurations hold events, want 200000", n)
			}
		}
	})
	b.Run("copy", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			n := 0
			for _, ref := range e.WindowRefs() {
				if _, ok := e.Window(ref); ok {
					n++
				}
			}
			if n != 200_000 {
				b.Fatalf("%d configurations hold events, want 200000", n)
			}
		}
	})
}
