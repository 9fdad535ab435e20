package executor

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/job"
)

// TestStopSaysWhatDidNotEnd checks that Stop returns nil when the function
// runs return once cancelled, and says how many had not when one ignores
// its cancellation past the grace period.
func TestStopSaysWhatDidNotEnd(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	started := make(chan struct{}, 2)
	functions := func(name string) Func {
		switch name {
		case "polite": // returns when cancelled
			return func(ctx context.Context, _ *Call) error { started <- struct{}{}; <-ctx.Done(); return ctx.Err() }
		case "deaf": // returns only when released
			return func(context.Context, *Call) error { started <- struct{}{}; <-release; return nil }
		}
		return nil
	}
	// A grace that a loaded machine cannot outlast for the run that
	// returns; a short one for the run that cannot return before it.
	runner := func(grace time.Duration) *Local {
		l, err := NewLocal(LocalConfig{Dir: filepath.Join(t.TempDir(), "runs"), Grace: grace, Functions: functions})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(l.Wait)
		return l
	}
	exits := make(chan Exit, 4)
	report := func(e Exit) { exits <- e }

	l := runner(time.Minute)
	l.Start(job.Launch{RunID: 1, Task: "p", Function: "polite"}, report)
	<-started
	if err := l.Stop(context.Background()); err != nil {
		t.Fatalf("a run that returns when cancelled: %v", err)
	}
	<-exits

	l = runner(50 * time.Millisecond)
	l.Start(job.Launch{RunID: 2, Task: "d", Function: "deaf"}, report)
	<-started
	err := l.Stop(context.Background())
	close(release)
	if err == nil || !strings.Contains(err.Error(), "1 function runs had not returned") {
		t.Fatalf("a run that ignores its cancellation: %v", err)
	}
	<-exits
}
