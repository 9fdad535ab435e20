package gnomon_test

import (
	"context"
	"fmt"
	"os"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gnomon-sched/gnomon"
)

// A program with a Prometheus registry of its own passes it as
// Config.Metrics: gnomon registers its metrics there (docs/metrics.md),
// and the program serves them with its own.
func ExampleConfig_metrics() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "gnomon-example")
	defer os.RemoveAll(dir)

	reg := prometheus.NewRegistry()
	s, _ := gnomon.New(gnomon.Config{DataDir: dir, Metrics: reg})
	defer s.Stop(ctx)
	s.Register("work", func(ctx context.Context, run *gnomon.Run) error { return nil })
	done := make(chan struct{})
	s.Listen(func(e gnomon.Event) {
		if e.Kind == gnomon.EventSucceeded {
			close(done)
		}
	})
	s.Start(ctx)
	s.AddJob(ctx, gnomon.Job{Name: "work", Function: "work"})
	s.Send(ctx, "work", gnomon.ActStart)
	<-done

	fams, _ := reg.Gather()
	for _, f := range fams {
		for _, m := range f.GetMetric() {
			if v := m.GetCounter().GetValue(); v > 0 && (f.GetName() == "gnomon_runs_started_total" || f.GetName() == "gnomon_runs_ended_total") {
				fmt.Print(f.GetName())
				for _, l := range m.GetLabel() {
					fmt.Printf(" %s=%s", l.GetName(), l.GetValue())
				}
				fmt.Println(":", v)
			}
		}
	}
	// Output:
	// gnomon_runs_ended_total result=normal status=success: 1
	// gnomon_runs_started_total: 1
}
