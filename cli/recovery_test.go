package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/api"
	"github.com/gnomon-sched/gnomon/executor"
	"github.com/gnomon-sched/gnomon/job"
)

// TestOutcomeWhileDownBeforeOverdueFires kills the server (SIGKILL) just
// after a run of an every-second task starts; the run's command ends
// while the server is down, and its supervisor records the outcome. The
// restarted server takes that outcome in before it decides the
// occurrences that fell due meanwhile: the run is recorded with its real
// outcome, the first of those occurrences runs late (within the misfire
// grace), the others are skipped as the task is ready for that late run
// (overlap skip), and none is skipped for the run that had ended.
func TestOutcomeWhileDownBeforeOverdueFires(t *testing.T) {
	t.Parallel()
	singleServer(t, killedProcess)
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	addr := freePort(t)
	p := startProcess(t, data, addr)
	ctx := context.Background()

	// A run holds while the file hold exists: it writes its id to held and
	// waits for the file go. Without hold, a run ends at once.
	hold, held, release := filepath.Join(dir, "hold"), filepath.Join(dir, "held"), filepath.Join(dir, "go")
	def := fmt.Sprintf(`insert_task: tick
type: callable
command: if [ -e %[1]s ]; then echo $GNOMON_RUN_ID > %[2]s.tmp; mv %[2]s.tmp %[2]s; while [ ! -e %[3]s ]; do sleep 0.02; done; fi
out_log_file: %[4]s/tick.out
err_log_file: %[4]s/tick.err
start_date: 2026-01-01 00:00
interval: 1 second
`, hold, held, release, dir)
	if _, err := p.client.Define(ctx, "tick.def", def, false); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(hold, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var n int64
	waitUntil(t, "a run of tick holds", func() bool {
		b, err := os.ReadFile(held)
		n, _ = strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		return err == nil && n > 0
	})
	time.Sleep(100 * time.Millisecond) // the scenario: killed 0.1 s after the run started
	p.kill()
	killed := time.Now()

	// The command ends while the server is down; its supervisor records
	// the outcome.
	os.Remove(hold)
	if err := os.WriteFile(release, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	runFile := filepath.Join(data, "runs", strconv.FormatInt(n, 10))
	waitUntil(t, fmt.Sprintf("the outcome of run %d is recorded", n), func() bool {
		rec, _ := executor.ReadRecord(runFile)
		return rec.Exit != nil
	})
	// Down long enough for a few occurrences to fall due meanwhile.
	if d := 3*time.Second - time.Since(killed); d > 0 {
		time.Sleep(d)
	}

	restarted := time.Now()
	p = startProcess(t, data, addr)
	var run job.Run
	waitUntil(t, fmt.Sprintf("run %d is recorded ended", n), func() bool {
		runs, err := p.client.Runs(ctx, "tick", 1000, "")
		if err != nil {
			return false
		}
		i := slices.IndexFunc(runs.Runs, func(r api.RunView) bool { return r.ID == n })
		if i < 0 {
			return false
		}
		run = runs.Runs[i].Run
		return run.Done()
	})
	if run.Status != job.Success || run.Result != job.ResultNormal {
		t.Fatalf("run %d after the restart: %+v; want its real outcome, a success", n, run)
	}

	// The occurrences decided by the restarted server that fell due
	// before it started, earliest first.
	var overdue []job.Fire
	waitUntil(t, "the restarted server decided the overdue occurrences", func() bool {
		fs, err := p.client.Fires(ctx, "tick", 1000, "")
		if err != nil {
			return false
		}
		overdue = overdue[:0]
		for _, f := range fs.Fires {
			if !f.At.Before(restarted) && f.Scheduled.Before(restarted) {
				overdue = append(overdue, f)
			}
		}
		slices.SortFunc(overdue, func(a, b job.Fire) int { return a.Scheduled.Compare(b.Scheduled) })
		// One tick decides them all: one runs, the others are skipped.
		return len(overdue) >= 2
	})
	ended := fmt.Sprintf("with run %d ", n)
	for _, f := range overdue {
		if strings.Contains(f.Reason, ended) {
			t.Errorf("occurrence %s: %s %q, though run %d had ended before the restart", f.Scheduled.Format(time.RFC3339Nano), f.Fate, f.Reason, n)
		}
	}
	first := overdue[0]
	if first.Fate != job.FateRan || first.RunID == 0 || first.RunID == n {
		t.Fatalf("the first overdue occurrence: %+v; want it run late, by a new run", first)
	}
	// One tick decides them all: the task the first made ready is still
	// ready for the others.
	for _, f := range overdue[1:] {
		if f.Fate != job.FateSkipped || f.Reason != "the task is ready (overlap skip)" {
			t.Errorf("overdue occurrence %s: %s %q; want skipped as the task is ready", f.Scheduled.Format(time.RFC3339Nano), f.Fate, f.Reason)
		}
	}
}
