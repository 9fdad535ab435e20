package cli

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/gnomon-sched/gnomon/job"
)

// TestRunsInProgress checks that a run is history from the moment it
// starts: the API and gnomon runs list it while it runs, and a bundle run
// lists its children's runs in progress.
func TestRunsInProgress(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.mustRun("schd_def", "-f", f.file("long.def", `insert_task: a1
type: callable
command: sleep 30
out_log_file: @DIR@/a1.out
err_log_file: @DIR@/a1.err

insert_task: box
type: bundle

insert_task: k1
type: callable
parent: box
command: sleep 30
out_log_file: @DIR@/k1.out
err_log_file: @DIR@/k1.err
`))
	f.mustRun("schd_event", "-j", "a1", "-e", "start")
	f.mustRun("schd_event", "-j", "box", "-e", "start")
	f.waitStatus("a1", "running")
	f.waitStatus("k1", "running")
	ctx := context.Background()

	rs, err := f.client.Runs(ctx, "a1", 5, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(rs.Runs) != 1 || rs.Runs[0].Status != job.Running || !rs.Runs[0].End.IsZero() || rs.Runs[0].Start.IsZero() {
		t.Fatalf("runs of a1 while it runs: %+v", rs.Runs)
	}
	out := f.mustRun("schd_runs", "-j", "a1", "-c", "5")
	if !strings.Contains(out, "\na1 ") || !strings.HasSuffix(strings.TrimSpace(out), "running    admin") { // started with the admin token
		t.Errorf("schd_runs while a1 runs:\n%s", out)
	}

	bs, err := f.client.Runs(ctx, "box", 1, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(bs.Runs) != 1 || bs.Runs[0].Status != job.Running || len(bs.Runs[0].Children) != 1 || bs.Runs[0].Children[0].Status != job.Running {
		t.Fatalf("runs of box while k1 runs: %+v", bs.Runs)
	}
	out = f.mustRun("gnomon", "runs", "-j", "box")
	if !regexp.MustCompile(`\n\d+ +box +[^\n]*\n\d+ +  k1 `).MatchString(out) {
		t.Errorf("gnomon runs of box while k1 runs:\n%s", out)
	}

	f.mustRun("schd_event", "-j", "a1", "-e", "abort")
	f.mustRun("schd_event", "-j", "box", "-e", "abort")
	f.waitFor("the aborted run", func() bool {
		rs, err := f.client.Runs(ctx, "a1", 5, "")
		return err == nil && len(rs.Runs) == 1 && rs.Runs[0].Status == job.Aborted && !rs.Runs[0].End.IsZero()
	})
}

// TestEmptyListings checks that every listing prints its header and a line
// saying there is nothing yet, rather than nothing at all.
func TestEmptyListings(t *testing.T) {
	t.Parallel()
	f := setup(t, simulateFrom("2026-06-01T09:00:00Z"))
	f.mustRun("schd_def", "-f", f.file("hb.def", `insert_task: demo_heartbeat
type: callable
command: true
out_log_file: @DIR@/hb.out
err_log_file: @DIR@/hb.err
cron: 0 * * * *

insert_task: landing
type: configuration
dependencies: [{"type":"FILE","resourceId":"/landing/","lifeDuration":60}]
`))
	tests := []struct {
		golden string
		args   []string
	}{
		{"empty_runs", []string{"schd_runs", "-j", "demo_heartbeat"}},
		{"empty_runs_day", []string{"gnomon", "runs", "demo_heartbeat", "-d", "2001-01-01"}},
		{"empty_fires", []string{"gnomon", "runs", "-j", "demo_heartbeat", "--fires"}},
		{"empty_fires_day", []string{"gnomon", "runs", "demo_heartbeat", "--fires", "-d", "2001-01-01"}},
		{"empty_events", []string{"gnomon", "events"}},
		{"empty_events_configuration", []string{"gnomon", "events", "-j", "landing"}},
		{"empty_alerts", []string{"gnomon", "alerts"}},
		{"empty_alerts_task", []string{"gnomon", "alerts", "-j", "demo_heartbeat"}},
		{"empty_audit", []string{"gnomon", "audit"}},
		{"empty_audit_after", []string{"gnomon", "audit", "--after", "7"}},
	}
	for _, tt := range tests {
		f.golden(tt.golden, f.mustRun(tt.args...))
	}
}
