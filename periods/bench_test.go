package periods

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

// chainFile is ten trees of one hourly level each, tree i depending on
// tree i-1 with blocking dependencies: ten processes, each waiting for
// the previous one's hour.
func chainFile() string {
	var trees []string
	for i := range 10 {
		deps := ""
		if i > 0 {
			deps = fmt.Sprintf(`"t%d"`, i-1)
		}
		trees = append(trees, tr(fmt.Sprintf("t%d", i), deps, lv(fmt.Sprintf("p%d", i), "hourly", `, "blocking": "dependencies"`)))
	}
	return `{"settings": {"startTimeperiod": "2025010100"}, "trees": [` + strings.Join(trees, ", ") + `]}`
}

// settle runs every outstanding run to processed until none is left, and
// returns the number of results applied.
func settleRuns(tb testing.TB, f *Forest, now time.Time, out *Output) int {
	n := 0
	var queue []StartRun
	for {
		for _, e := range out.Effects {
			if sr, ok := e.(StartRun); ok {
				queue = append(queue, sr)
			}
		}
		if len(queue) == 0 {
			return n
		}
		sr := queue[0]
		queue = queue[1:]
		var err error
		out, err = f.Apply(RunResult{Process: sr.Process, Timeperiod: sr.Timeperiod, RunID: sr.RunID, Outcome: OutcomeProcessed}, now)
		if err != nil {
			tb.Fatal(err)
		}
		n++
	}
}

// hourlyForest defines the chain at 2025-01-01 00:00 and moves the clock
// hour by hour, each run processed as soon as it is requested, until
// hours have been processed by every process.
func hourlyForest(tb testing.TB, hours int) (*Forest, time.Time) {
	f := New(Config{})
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	if _, err := f.Apply(Define{File: "chain.json", Text: chainFile()}, now); err != nil {
		tb.Fatal(err)
	}
	for range hours {
		now = now.Add(time.Hour)
		out, err := f.Apply(Tick{}, now.Add(5*time.Minute+time.Nanosecond))
		if err != nil {
			tb.Fatal(err)
		}
		settleRuns(tb, f, now.Add(5*time.Minute+time.Nanosecond), out)
	}
	return f, now.Add(5*time.Minute + time.Nanosecond)
}

// BenchmarkYear builds and settles a year of hourly nodes for ten
// processes (87,600 nodes) on a simulated clock: 8,760 ticks and 87,600
// run results. It reports the heap the forest holds afterwards.
func BenchmarkYear(b *testing.B) {
	var held uint64
	for b.Loop() {
		var before runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		f, _ := hourlyForest(b, 8760)
		b.StopTimer()
		var after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&after)
		held = after.HeapAlloc - before.HeapAlloc
		if c := f.procs["p9"].counts[Processed]; c != 8760 {
			b.Fatalf("p9 processed %d hours", c)
		}
		runtime.KeepAlive(f)
		b.StartTimer()
	}
	b.ReportMetric(float64(held)/(1<<20), "MiB-held")
	b.ReportMetric(float64(held)/87610, "B-held/node")
}

var yearly struct {
	f   *Forest
	now time.Time
}

func settledYear(b *testing.B) (*Forest, time.Time) {
	if yearly.f == nil {
		yearly.f, yearly.now = hourlyForest(b, 8760)
	}
	return yearly.f, yearly.now
}

// BenchmarkSkipCascade skips one hour of the first process, in progress,
// in a settled year: the cascade reaches that hour of the nine others.
// The hour is reprocessed first, untimed, so that there is something to
// skip.
func BenchmarkSkipCascade(b *testing.B) {
	f, now := settledYear(b)
	i := 0
	for b.Loop() {
		b.StopTimer()
		k := Hourly.Add(2025010100, int64(i%8760)).String()
		i++
		if _, err := f.Apply(Reprocess{Process: "p0", Timeperiod: k}, now); err != nil {
			b.Fatal(err)
		}
		before := f.visits
		b.StartTimer()
		out, err := f.Apply(Skip{Process: "p0", Timeperiods: []string{k}}, now)
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if len(out.Changes) != 10 {
			b.Fatalf("skip changed %d nodes", len(out.Changes))
		}
		b.ReportMetric(float64(f.visits-before), "visits/op")
		b.StartTimer()
	}
}

// BenchmarkReprocessCascade reprocesses one hour of the first process in
// a settled year: it and that hour of the nine others go back to embryo,
// and the first starts again. The runs are then processed, untimed.
func BenchmarkReprocessCascade(b *testing.B) {
	f, now := settledYear(b)
	i := 0
	for b.Loop() {
		k := Hourly.Add(2025010100, int64(i%8760)).String()
		i++
		before := f.visits
		out, err := f.Apply(Reprocess{Process: "p0", Timeperiod: k}, now)
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if len(out.Changes) != 11 { // ten resets, one start
			b.Fatalf("reprocess changed %d nodes:%s", len(out.Changes), changes(out))
		}
		b.ReportMetric(float64(f.visits-before), "visits/op")
		settleRuns(b, f, now, out)
		b.StartTimer()
	}
}

// TestCascadeWorkIsLocal checks that a cascade visits the nodes it
// concerns and not the rest: the same skip and reprocess visit as many
// nodes in a forest of ten days as in one of forty.
func TestCascadeWorkIsLocal(t *testing.T) {
	t.Parallel()
	var got [2][2]int
	for i, days := range []int{10, 40} {
		f, now := hourlyForest(t, days*24)
		k := "2025010305"
		before := f.visits
		out, err := f.Apply(Reprocess{Process: "p0", Timeperiod: k}, now)
		if err != nil {
			t.Fatal(err)
		}
		got[i][0] = f.visits - before
		if len(out.Changes) != 11 {
			t.Fatalf("reprocess:%s", changes(out))
		}
		before = f.visits
		out, err = f.Apply(Skip{Process: "p0", Timeperiods: []string{k}}, now)
		if err != nil {
			t.Fatal(err)
		}
		got[i][1] = f.visits - before
		if len(out.Changes) != 10 {
			t.Fatalf("skip:%s", changes(out))
		}
		checkForest(t, f)
	}
	if got[0] != got[1] {
		t.Errorf("visits (reprocess, skip) with 10 days %v, with 40 days %v", got[0], got[1])
	}
	// Ten nodes in the cascade, ten levels' next nodes: a few visits each.
	for _, v := range got[0] {
		if v > 60 {
			t.Errorf("a cascade of 10 nodes visited %d", v)
		}
	}
	t.Logf("visits (reprocess, skip): %v", got[0])
}
