package cli

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/api"
	"github.com/gnomon-sched/gnomon/auth"
	"github.com/gnomon-sched/gnomon/job"
)

const backupDefs = `insert_task: every10
type: callable
command: true
out_log_file: @DIR@/e.out
err_log_file: @DIR@/e.err
cron: */10 * * * *

insert_task: long
type: callable
command: while [ ! -f @DIR@/release ]; do sleep 0.02; done
out_log_file: @DIR@/l.out
err_log_file: @DIR@/l.err
`

// TestBackupRestore backs a running server up while a run is in flight,
// lets it go on for an hour, then restores the backup into a new data
// directory and starts a server there: every run of the backup is there,
// the run in flight is recorded lost, and the hour after the backup runs
// each occurrence once.
func TestBackupRestore(t *testing.T) {
	t.Parallel()
	if testDB(t, "") != "" {
		t.Skip("a PostgreSQL database is backed up with pg_dump: see store/postgres's TestPgDumpRestore")
	}
	ctx := context.Background()
	f := setup(t, simulateFrom("2026-03-01 00:00"))
	f.mustRun("gnomon", "def", "-f", f.file("b.def", backupDefs))
	f.mustRun("gnomon", "clock", "advance", "--to", "2026-03-01 01:00")
	if err := f.client.Event(ctx, "long", "start"); err != nil {
		t.Fatal(err)
	}
	f.waitStatus("long", "running")
	runsOf := func(c *api.Client, task string) []api.RunView {
		t.Helper()
		rs, err := c.ListRuns(ctx, api.RunsQuery{Task: task, Count: 1000})
		if err != nil {
			t.Fatal(err)
		}
		return rs.Runs
	}
	atBackup := runsOf(f.client, "every10")

	backup := filepath.Join(t.TempDir(), "b.db")
	out := f.mustRun("gnomon", "--data", filepath.Join(f.dir, "data"), "backup", "--to", backup)
	if !strings.HasPrefix(out, "backed up ") {
		t.Errorf("backup: %s", out)
	}
	if _, _, code := f.run("gnomon", "--data", filepath.Join(f.dir, "data"), "backup", backup); code == 0 {
		t.Error("a backup over an existing file was not refused")
	}
	// The server goes on: the long run ends, another hour runs.
	f.file("release", "")
	f.waitStatus("long", "success")
	f.mustRun("gnomon", "clock", "advance", "--to", "2026-03-01 02:00")
	if n := len(runsOf(f.client, "every10")); n != len(atBackup)+6 {
		t.Fatalf("%d runs of every10 before the restore, want %d", n, len(atBackup)+6)
	}
	f.stop()

	// Restore into a new data directory, which the admin token goes to.
	g := &fixture{t: t, dir: t.TempDir()}
	data := filepath.Join(g.dir, "data")
	if err := os.MkdirAll(data, 0o700); err != nil {
		t.Fatal(err)
	}
	tok, err := os.ReadFile(filepath.Join(f.dir, "data", auth.AdminTokenFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, auth.AdminTokenFile), tok, 0o600); err != nil {
		t.Fatal(err)
	}
	out = g.mustRun("gnomon", "--data", data, "restore", "--from", backup)
	if !strings.Contains(out, "1 run(s) in flight at the backup") {
		t.Errorf("restore: %s", out)
	}
	if _, errs, code := g.run("gnomon", "--data", data, "restore", "--from", backup); code == 0 || !strings.Contains(errs, "exists") {
		t.Errorf("a restore over a database: exit %d, %s", code, errs)
	}
	g.start(simulateFrom("2026-03-01 00:00"))
	t.Cleanup(g.stop)
	// The run in flight at the backup is recorded lost.
	g.waitFor("the run in flight at the backup to be recorded", func() bool {
		rs := runsOf(g.client, "long")
		return len(rs) == 1 && rs[0].Status != job.Running
	})
	if r := runsOf(g.client, "long")[0]; r.Result != job.ResultLost || !strings.Contains(r.Message, "restored from a backup") {
		t.Errorf("the run in flight at the backup ended %s (%s), want lost", r.Result, r.Message)
	}
	// Every run of the backup is there, as it was.
	restored := runsOf(g.client, "every10")
	for _, r := range atBackup {
		if !slices.ContainsFunc(restored, func(s api.RunView) bool {
			return s.ID == r.ID && s.Status == r.Status && s.Scheduled.Equal(r.Scheduled)
		}) {
			t.Errorf("run %d of the backup is not restored", r.ID)
		}
	}
	// The hour after the backup runs once.
	g.mustRun("gnomon", "clock", "advance", "--to", "2026-03-01 02:00")
	seen := map[time.Time]int{}
	for _, r := range runsOf(g.client, "every10") {
		seen[r.Scheduled.UTC()]++
	}
	for at, n := range seen {
		if n != 1 {
			t.Errorf("the occurrence of %s ran %d times", at, n)
		}
	}
	if len(seen) != len(atBackup)+6 {
		t.Errorf("%d occurrences ran after the restore, want %d", len(seen), len(atBackup)+6)
	}
}
