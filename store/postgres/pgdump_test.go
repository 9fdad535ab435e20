package postgres

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gnomon-sched/gnomon/internal/pgtest"
	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/store"
)

// TestPgDumpRestore backs a store up with pg_dump, as docs/operations.md
// says to, restores the dump with pg_restore into a new database, and
// opens it: it holds what the first held, and goes on numbering after it.
func TestPgDumpRestore(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"pg_dump", "pg_restore"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is not installed, and CI runs every PostgreSQL test", tool)
			}
			t.Skipf("%s is not installed", tool)
		}
	}
	ctx := context.Background()
	src, dst := pgtest.URL(t), pgtest.URL(t)
	s, err := Open(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC)
	run := job.Run{ID: 1, Task: "load", Status: job.Failure, Start: t0, End: t0.Add(time.Minute), ExitCode: 2, Result: job.ResultNormal, Scheduled: t0}
	b := &store.Batch{
		Entries: []store.Entry{{At: t0, Kind: "define", Body: json.RawMessage(`{"file":"a.def"}`)}},
		Tasks:   []job.Record{{Def: &job.Task{Name: "load", Type: job.Callable, Command: "load.sh", OutLog: "/o", ErrLog: "/e"}, State: job.State{Status: job.Failure}}},
		Runs:    []job.Run{run, {ID: 2, Task: "load", Status: job.Running, Start: t0.Add(time.Hour)}},
		Fires:   []job.Fire{{Task: "load", Scheduled: t0, Fate: job.FateRan, At: t0}},
		Alerts:  []job.Alert{{Task: "load", Outcome: job.OutcomeFailure, RunID: 1, Created: t0, State: job.AlertPending}},
		Audit:   []job.AuditRecord{job.AuditOf(&run)},
	}
	if err := s.Commit(ctx, b); err != nil {
		t.Fatal(err)
	}
	want, err := store.ReadDump(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()

	dump := filepath.Join(t.TempDir(), "gnomon.dump")
	for _, cmd := range [][]string{{"pg_dump", "--format=custom", "--file=" + dump, src}, {"pg_restore", "--no-owner", "--dbname=" + dst, dump}} {
		if out, err := exec.CommandContext(ctx, cmd[0], cmd[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", cmd, err, out)
		}
	}
	r, err := Open(ctx, dst)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got, err := store.ReadDump(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("restored from pg_dump (-want +got):\n%s", diff)
	}
	next := &store.Batch{Entries: []store.Entry{{At: t0, Kind: "act", Body: json.RawMessage(`{}`)}}, Alerts: []job.Alert{{Task: "load", Created: t0, State: job.AlertSent}}}
	if err := r.Commit(ctx, next); err != nil {
		t.Fatal(err)
	}
	if next.Entries[0].Seq != 2 || next.Alerts[0].ID != 2 {
		t.Errorf("after the restore, entry %d and alert %d; want 2 and 2", next.Entries[0].Seq, next.Alerts[0].ID)
	}
}
