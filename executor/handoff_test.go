package executor

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// BenchmarkHandoff measures how long Start takes to hand a run to a
// supervisor: from the call until the run's lock is in the supervisor's
// hands (Start returns then). A server killed within it leaves the run
// lost. "spare": a spare supervisor waits, as one does for each worker
// once the server has run a command; "cold": none does (the first command
// after a start, or more runs at once than spares), so one is started.
func BenchmarkHandoff(b *testing.B) {
	for _, cold := range []bool{false, true} {
		name := "spare"
		if cold {
			name = "cold"
		}
		b.Run(name, func(b *testing.B) {
			dir := b.TempDir()
			exits := make(chan Exit, 1)
			x, err := New(Config{Dir: filepath.Join(dir, "runs"), Report: func(e Exit) { exits <- e }})
			if err != nil {
				b.Fatal(err)
			}
			defer x.Wait()
			defer x.Stop(context.Background())
			spec := Spec{Task: "t", Command: "true", OutLog: "/dev/null", ErrLog: "/dev/null"}
			took := make([]time.Duration, 0, b.N)
			for i := range b.N {
				if !cold {
					// Wait, off the clock, until a spare is ready.
					b.StopTimer()
					x.refill()
					for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Millisecond) {
						if _, spare := x.Supervisors(); spare > 0 {
							break
						}
						if time.Now().After(deadline) {
							b.Fatal("no spare supervisor")
						}
					}
					b.StartTimer()
				} else {
					x.mu.Lock()
					x.closed = true // no refill: every run starts its own supervisor
					x.mu.Unlock()
				}
				spec.RunID = int64(i + 1)
				began := time.Now()
				x.Start(spec)
				took = append(took, time.Since(began))
				b.StopTimer()
				<-exits
				x.Forget(spec.RunID)
				b.StartTimer()
			}
			slices.Sort(took)
			for _, q := range []struct {
				unit string
				at   float64
			}{{"µs-p50", 0.5}, {"µs-p99", 0.99}, {"µs-max", 1}} {
				b.ReportMetric(float64(took[int(q.at*float64(len(took)-1))].Microseconds()), q.unit)
			}
		})
	}
}
