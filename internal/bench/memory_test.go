package bench

import (
	"runtime"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/defs"
	"github.com/gnomon-sched/gnomon/engine"
)

// TestTaskMemory measures the live heap an engine holds per task of the
// start-up mix (calendars, intervals, cron, conditions) as applied (the
// definitions' strings share their file's text), and keeps it from
// growing unnoticed. -v prints the figure.
func TestTaskMemory(t *testing.T) {
	const n = 40000
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	e := engine.New(engine.Config{})
	for first := 0; first < n; first += 20000 {
		p, err := defs.PlanFile("mix.def", Mix(first, 20000), defs.Told, defs.AsWritten, e.Definitions(), &defs.Env{Calendars: e.Calendars()}, defs.Server{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.Apply(engine.Define{File: "mix.def", Plan: p.Plan}, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	per := (after.HeapAlloc - before.HeapAlloc) / n
	t.Logf("%d bytes of heap per task", per)
	if per > 1300 {
		t.Errorf("%d bytes of heap per task; it was about 1,000", per)
	}
	runtime.KeepAlive(e)
}
