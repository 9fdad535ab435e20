package engine

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/job"
)

// BenchmarkResourceStorm: 100,000 tasks ready at once, all taking one
// resource of 10 units; each iteration ends a run, which releases its
// unit and starts the next task in order. The cost per run end must not
// grow with the tasks waiting (compare -run count with
// BenchmarkResourceStormSmall).
func BenchmarkResourceStorm(b *testing.B)      { benchResourceStorm(b, 100_000) }
func BenchmarkResourceStormSmall(b *testing.B) { benchResourceStorm(b, 1_000) }

func benchResourceStorm(b *testing.B, n int) {
	e := New(Config{Workers: 100})
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	if _, err := apply(e, file{"w.def", "insert_resource: w\namount: 10\n"}, now); err != nil {
		b.Fatal(err)
	}
	for from := 0; from < n; from += 10_000 {
		var text strings.Builder
		for i := from; i < min(n, from+10_000); i++ {
			fmt.Fprintf(&text, "insert_task: t%06d\ntype: callable\ncommand: x\nout_log_file: /tmp/o\nerr_log_file: /tmp/e\npriority: %d\nresources: w\n\n", i, i%4)
		}
		if _, err := apply(e, file{"storm.def", text.String()}, now); err != nil {
			b.Fatal(err)
		}
	}
	for i := range n {
		if _, err := e.Apply(Act{Task: fmt.Sprintf("t%06d", i), Action: job.ActStart}, now); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		runs := e.ActiveRuns()
		if len(runs) == 0 {
			b.StopTimer()
			for j := range n {
				e.Apply(Act{Task: fmt.Sprintf("t%06d", j), Action: job.ActStart}, now)
			}
			b.StartTimer()
			runs = e.ActiveRuns()
		}
		if _, err := e.Apply(RunExited{RunID: runs[0].ID, Result: job.ResultNormal}, now); err != nil {
			b.Fatal(err)
		}
	}
}
