package gnomon_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon"
	"github.com/gnomon-sched/gnomon/internal/pgtest"
	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/store/sqlite"
)

// backupDef is a task that backs the database up at 02:00 into dir.
func backupDef(params string) string {
	return "insert_task: backup\ntype: callable\nfunction: gnomon_backup\nparams: " + params + "\ncron: 0 2 * * *\n"
}

// TestBackupFunc schedules gnomon_backup on a simulated clock: three
// nightly backups, two kept, the oldest removed, each a SQLite database
// that opens and holds the task that made it.
func TestBackupFunc(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := startSQLite(t, gnomon.Config{SimulateFrom: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)})
	dir := filepath.Join(t.TempDir(), "backups")
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Apply(ctx, "backup.def", backupDef("dir="+dir+", keep=2")); err != nil {
		t.Fatal(err)
	}
	if err := s.Advance(ctx, time.Date(2026, 3, 3, 12, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	runs, err := s.Runs(ctx, "backup", 10)
	if err != nil || len(runs) != 3 {
		t.Fatalf("%d runs, %v", len(runs), err)
	}
	for _, r := range runs {
		if r.Status != job.Success || !strings.Contains(r.Message, "backed up to "+dir) {
			t.Errorf("run %d: %s %q", r.ID, r.Status, r.Message)
		}
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if want := []string{"gnomon-20260302T020000Z.db", "gnomon-20260303T020000Z.db"}; !slices.Equal(names, want) {
		t.Fatalf("backups = %v, want %v (the oldest removed)", names, want)
	}
	for _, n := range names {
		st, err := sqlite.Open(ctx, filepath.Join(dir, n))
		if err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		snap, err := st.Load(ctx)
		st.Close()
		if err != nil || !slices.ContainsFunc(snap.Tasks, func(r job.Record) bool { return r.Def.Name == "backup" }) {
			t.Errorf("%s: %d tasks, %v", n, len(snap.Tasks), err)
		}
	}
}

// TestBackupFuncRefuses: a run of gnomon_backup fails, saying why, on
// PostgreSQL (pointing to pg_dump) and without a directory.
func TestBackupFuncRefuses(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for name, tc := range map[string]struct {
		db, params, want string
	}{
		"postgres": {db: "postgres", params: "dir=/nonexistent/b", want: "back PostgreSQL up with pg_dump"},
		"no dir":   {params: "dir=backups", want: `dir="backups" should be the absolute path`},
		"bad keep": {params: "dir=/tmp/b, keep=none", want: `keep="none" should be how many backups are kept`},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cfg := gnomon.Config{SimulateFrom: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), DataDir: t.TempDir()}
			if tc.db == "postgres" {
				cfg.DB = pgtest.URL(t)
			}
			s := startSQLite(t, cfg)
			if err := s.Start(ctx); err != nil {
				t.Fatal(err)
			}
			if err := s.Apply(ctx, "backup.def", backupDef(tc.params)); err != nil {
				t.Fatal(err)
			}
			if err := s.Advance(ctx, time.Date(2026, 3, 1, 3, 0, 0, 0, time.UTC)); err != nil {
				t.Fatal(err)
			}
			runs, err := s.Runs(ctx, "backup", 10)
			if err != nil || len(runs) != 1 || runs[0].Status != job.Failure || !strings.Contains(runs[0].Message, tc.want) {
				t.Fatalf("runs %+v, %v; want a failure saying %q", runs, err, tc.want)
			}
		})
	}
}
