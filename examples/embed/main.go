// Command embed runs gnomon inside a Go program: a Go function as a daily
// job, and a shell command that starts 10 seconds after each of its
// successes. It rehearses two days on a simulated clock and prints what
// its listener hears.
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"time"

	"github.com/gnomon-sched/gnomon"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, out io.Writer) error {
	dir, err := os.MkdirTemp("", "gnomon-embed")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	firstRun := time.Date(2026, 3, 1, 7, 0, 0, 0, time.UTC)
	s, err := gnomon.New(gnomon.Config{DataDir: dir, Location: time.UTC, SimulateFrom: firstRun.Add(-time.Hour)})
	if err != nil {
		return err
	}
	s.Register("extract", func(ctx context.Context, run *gnomon.Run) error {
		run.SetStatus("3 files read") // shown while it runs; its message when it ends
		return nil
	})
	s.Listen(func(e gnomon.Event) { fmt.Fprintln(out, e.Run.Start.Format(time.DateTime), e.Job, e.Kind) })
	if err := s.Start(ctx); err != nil {
		return err
	}
	defer s.Stop(ctx)
	if err := s.AddJob(ctx, gnomon.Job{Name: "A", Function: "extract", Start: firstRun, Every: "1 day"}); err != nil {
		return err
	}
	err = s.AddJob(ctx, gnomon.Job{Name: "B", Command: "echo loaded", OutLog: "b.out", ErrLog: "b.err", // under DataDir/logs
		Condition: gnomon.OnSuccess("A"), Delay: 10 * time.Second,
		AlertOn: []gnomon.Outcome{gnomon.Failure}, AlertTo: []string{"oncall@example.com"}})
	if err != nil {
		return err
	}
	return s.Advance(ctx, firstRun.Add(25*time.Hour)) // two days: A at 07:00, B at 07:00:10
}
