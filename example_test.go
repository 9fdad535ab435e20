package gnomon_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/gnomon-sched/gnomon"
)

// A chain of Go functions: extract runs every day at 01:00; load runs ten
// seconds after each success of extract. The scheduler runs on a virtual
// clock here, so that a day passes in an instant; without SimulateFrom it
// follows the real one.
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "gnomon-example")
	defer os.RemoveAll(dir)

	s, err := gnomon.New(gnomon.Config{
		DataDir:      dir,
		Location:     time.UTC,
		SimulateFrom: time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC),
	})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Stop(ctx)
	s.Register("extract", func(ctx context.Context, run *gnomon.Run) error {
		run.Set("files", "3")
		return nil
	})
	s.Register("load", func(ctx context.Context, run *gnomon.Run) error {
		run.SetStatus("3 files loaded")
		return nil
	})
	if err := s.Start(ctx); err != nil {
		log.Fatal(err)
	}
	s.AddJob(ctx, gnomon.Job{Name: "extract", Function: "extract",
		Start: time.Date(2026, 3, 10, 1, 0, 0, 0, time.UTC), Every: "1 day"})
	s.AddJob(ctx, gnomon.Job{Name: "load", Function: "load",
		Condition: gnomon.OnSuccess("extract"), Delay: 10 * time.Second})

	s.Advance(ctx, time.Date(2026, 3, 11, 12, 0, 0, 0, time.UTC))

	for _, name := range []string{"extract", "load"} {
		runs, _ := s.Runs(ctx, name, 0)
		for i := len(runs) - 1; i >= 0; i-- {
			r := runs[i]
			fmt.Println(r.Task, r.Start.Format("Jan 2 15:04:05"), r.Status, r.Message, r.Data)
		}
	}
	// Output:
	// extract Mar 10 01:00:00 success  map[files:3]
	// extract Mar 11 01:00:00 success  map[files:3]
	// load Mar 10 01:00:10 success 3 files loaded map[]
	// load Mar 11 01:00:10 success 3 files loaded map[]
}

// Listeners hear of every run that starts and ends, and of jobs that did
// not start because the job they follow ended the other way.
func ExampleScheduler_Listen() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "gnomon-example")
	defer os.RemoveAll(dir)

	s, _ := gnomon.New(gnomon.Config{DataDir: dir})
	defer s.Stop(ctx)
	s.Register("check", func(ctx context.Context, run *gnomon.Run) error {
		return fmt.Errorf("3 rows are missing")
	})
	events := make(chan gnomon.Event, 10)
	s.Listen(func(e gnomon.Event) { events <- e })
	s.Start(ctx)
	s.AddJob(ctx, gnomon.Job{Name: "check", Function: "check"})
	s.AddJob(ctx, gnomon.Job{Name: "publish", Function: "log", Condition: gnomon.OnSuccess("check")})
	s.AddJob(ctx, gnomon.Job{Name: "repair", Function: "log", Condition: gnomon.OnFailure("check")})
	s.Send(ctx, "check", gnomon.ActStart)

	for range 5 {
		e := <-events
		switch e.Kind {
		case gnomon.EventFailed:
			fmt.Println(e.Job, e.Kind, e.Run.Message)
		case gnomon.EventNotStarted:
			fmt.Println(e.Job, e.Kind)
		default:
			fmt.Println(e.Job, e.Kind)
		}
	}
	// Output:
	// check started
	// check failed 3 rows are missing
	// publish not_started
	// repair started
	// repair succeeded
}

// A function reports its progress while it runs: Running shows it, and the
// last status becomes the run's message.
func ExampleRun_SetStatus() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "gnomon-example")
	defer os.RemoveAll(dir)

	s, _ := gnomon.New(gnomon.Config{DataDir: dir})
	defer s.Stop(ctx)
	halfway, finish := make(chan struct{}), make(chan struct{})
	s.Register("copy", func(ctx context.Context, run *gnomon.Run) error {
		run.SetStatus("copying")
		run.Set("done", "50%")
		close(halfway)
		<-finish
		run.SetStatus("1200 rows copied")
		return nil
	})
	done := make(chan gnomon.Event, 1)
	s.Listen(func(e gnomon.Event) {
		if e.Kind == gnomon.EventSucceeded {
			done <- e
		}
	})
	s.Start(ctx)
	s.AddJob(ctx, gnomon.Job{Name: "copy", Function: "copy"})
	s.Send(ctx, "copy", gnomon.ActStart)

	<-halfway
	running, _ := s.Running(ctx)
	for _, r := range running {
		fmt.Println(r.Run.Task, r.RunningStatus, r.Data["done"])
	}
	close(finish)
	fmt.Println((<-done).Run.Message)
	// Output:
	// copy copying 50%
	// 1200 rows copied
}

// Definitions may also be written in gnomon's definition language, the
// format of "gnomon def": here an interval job with an end date, which
// runs at 03:15, 04:15, 05:15, 06:15 and 07:15 (seed 004's example).
func ExampleScheduler_Apply() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "gnomon-example")
	defer os.RemoveAll(dir)

	s, _ := gnomon.New(gnomon.Config{DataDir: dir, Location: time.UTC,
		SimulateFrom: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)})
	defer s.Stop(ctx)
	s.Start(ctx)
	err := s.Apply(ctx, "hourly.def", `
insert_task: hourly
type: callable
function: log
start_date: 2026-03-01 03:15
end_date: 2026-03-01 07:30
interval: 1 hour
`)
	if err != nil {
		log.Fatal(err)
	}
	s.Advance(ctx, time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC))
	runs, _ := s.Runs(ctx, "hourly", 0)
	for i := len(runs) - 1; i >= 0; i-- {
		fmt.Println(runs[i].Start.Format("15:04"))
	}
	// Output:
	// 03:15
	// 04:15
	// 05:15
	// 06:15
	// 07:15
}

// Invalid definitions are refused with an error that names the problem;
// nothing changes.
func ExampleScheduler_AddJob_invalid() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "gnomon-example")
	defer os.RemoveAll(dir)

	s, _ := gnomon.New(gnomon.Config{DataDir: dir, Location: time.UTC})
	defer s.Stop(ctx)
	s.Start(ctx)
	err := s.AddJob(ctx, gnomon.Job{Name: "nightly", Function: "log",
		Start: time.Date(2026, 3, 2, 1, 0, 0, 0, time.UTC), End: time.Date(2026, 3, 1, 1, 0, 0, 0, time.UTC), Every: "1 day"})
	fmt.Println(err)
	err = s.AddJob(ctx, gnomon.Job{Name: "report", Function: "report"})
	fmt.Println(err)
	// Output:
	// gnomon: job nightly: end_date: 2026-03-01 01:00 is before start_date 2026-03-02 01:00
	// gnomon: job report: function: report is not registered with this scheduler
}

// Alerts go by email through an SMTP server. A job alerts on its own
// outcomes, and a group on those of each of its jobs: a recipient named by
// both gets one mail.
func ExampleGroup() {
	ctx := context.Background()
	s, err := gnomon.New(gnomon.Config{
		DataDir: "state",
		SMTP:    &gnomon.SMTP{Addr: "mail.example.com:587", From: "gnomon@example.com"},
	})
	if err != nil {
		log.Fatal(err)
	}
	s.Start(ctx)
	defer s.Stop(ctx)
	s.AddJob(ctx, gnomon.Job{Name: "backup", Command: "/usr/local/bin/backup", OutLog: "backup.out", ErrLog: "backup.err",
		Cron: "0 2 * * *", AlertOn: []gnomon.Outcome{gnomon.Failure}, AlertTo: []string{"oncall@example.com"}})
	s.AddGroup(ctx, gnomon.Group{Name: "nightly", Jobs: []string{"backup"},
		AlertOn: []gnomon.Outcome{gnomon.Success, gnomon.Failure}, AlertTo: []string{"team@example.com"}})
}
