package scheduler

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/engine"
	"github.com/gnomon-sched/gnomon/periods"
)

// yearChain is ten trees of one hourly level each, for external workers,
// tree i depending on tree i-1 with blocking dependencies, from
// 2025-01-01: a year later, 87,600 nodes.
func yearChain() string {
	var trees []string
	for i := range 10 {
		deps := ""
		if i > 0 {
			deps = fmt.Sprintf(`"t%d"`, i-1)
		}
		trees = append(trees, fmt.Sprintf(`{"name": "t%d", "dependentOn": [%s], "levels": [{"process": "p%d", "qualifier": "hourly", "blocking": "dependencies"}]}`,
			i, deps, i))
	}
	return `{"settings": {"startTimeperiod": "2025010100"}, "trees": [` + strings.Join(trees, ", ") + `]}`
}

// completeAll plays the external workers: it reports every outstanding
// run processed, all at once, until none is left, and returns how many
// it reported.
func completeAll(tb testing.TB, s *Scheduler) int {
	ctx := context.Background()
	n := 0
	for {
		var out []periods.Node
		if err := s.readTrees(ctx, func(f *periods.Forest, _ *engine.Engine) { out = f.Outstanding() }); err != nil {
			tb.Fatal(err)
		}
		if len(out) == 0 {
			return n
		}
		var wg sync.WaitGroup
		for _, node := range out {
			wg.Go(func() {
				if _, err := s.Trees(ctx, periods.RunResult{Process: node.Process, Timeperiod: node.Timeperiod, RunID: node.RunID,
					Outcome: periods.OutcomeProcessed}); err != nil {
					tb.Error(err)
				}
			})
		}
		wg.Wait()
		n += len(out)
	}
}

// BenchmarkTreeYearStored is the year of hourly nodes for ten processes
// through the scheduler and its SQLite store: the definition builds and
// stores 87,600 nodes, then external workers report every run (each
// result a durable request, group-committed). It reports the time to
// define, to settle, and the heap the scheduler holds after.
func BenchmarkTreeYearStored(b *testing.B) {
	for b.Loop() {
		b.StopTimer()
		dir := b.TempDir()
		var before runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		m := openSim(b, dir, time.Date(2026, 1, 1, 0, 6, 0, 0, time.UTC), nil)
		b.StartTimer()
		t0 := time.Now()
		if _, err := m.s.Define(context.Background(), DefineFile{File: "year.json", Text: yearChain()}); err != nil {
			b.Fatal(err)
		}
		defined := time.Since(t0)
		if n := completeAll(b, m.s); n != 87_600 {
			b.Fatalf("%d runs reported, want 87,600", n)
		}
		settled := time.Since(t0) - defined
		b.StopTimer()
		var after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(defined.Seconds(), "s-define")
		b.ReportMetric(settled.Seconds(), "s-settle")
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "MiB-held")
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/87_600, "B-held/node")
		m.stop()
		b.StartTimer()
	}
}

// BenchmarkTreeCascadeStored skips, then reprocesses, one hour of the
// first process in a settled, stored year: each a durable request whose
// cascade reaches that hour of the nine others. The reprocessed runs are
// completed, untimed.
func BenchmarkTreeCascadeStored(b *testing.B) {
	dir := b.TempDir()
	m := openSim(b, dir, time.Date(2026, 1, 1, 0, 6, 0, 0, time.UTC), nil)
	defer m.stop()
	ctx := context.Background()
	if _, err := m.s.Define(ctx, DefineFile{File: "year.json", Text: yearChain()}); err != nil {
		b.Fatal(err)
	}
	completeAll(b, m.s)
	i := 0
	for b.Loop() {
		k := periods.Hourly.Add(2025010100, int64(i%8760)).String()
		i++
		if _, err := m.s.Trees(ctx, periods.Skip{Process: "p0", Timeperiods: []string{k}}); err != nil {
			b.Fatal(err)
		}
		out, err := m.s.Trees(ctx, periods.Reprocess{Process: "p0", Timeperiod: k})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if len(out.Changes) < 10 {
			b.Fatalf("reprocess changed %d nodes", len(out.Changes))
		}
		completeAll(b, m.s)
		b.StartTimer()
	}
}
