package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/store"
	"github.com/gnomon-sched/gnomon/store/storetest"
)

func TestMigrationsIdempotent(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "gnomon.db")
	// The newest version is that of the last migration file.
	files, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil || len(files) == 0 {
		t.Fatal(files, err)
	}
	slices.Sort(files)
	newest, err := strconv.Atoi(strings.SplitN(strings.TrimPrefix(files[len(files)-1], "migrations/"), "_", 2)[0])
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		s, err := Open(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		var v int
		if err := s.r.QueryRow(`SELECT max(version) FROM schema_migrations`).Scan(&v); err != nil || v != newest {
			t.Fatalf("schema version %d, want %d, %v", v, newest, err)
		}
		s.Close()
	}
}

// atSchema creates a database at path with the migrations up to version n applied,
// as a version of gnomon that had only those left it.
func atSchema(t *testing.T, path string, n int) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	files, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(files)
	for _, f := range files {
		// The file's number is its version (some numbers are missing).
		v, err := strconv.Atoi(strings.SplitN(strings.TrimPrefix(f, "migrations/"), "_", 2)[0])
		if err != nil {
			t.Fatal(err)
		}
		if v > n {
			break
		}
		body, err := migrations.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(string(body)); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if _, err := db.Exec(`INSERT INTO schema_migrations VALUES (?, 0)`, v); err != nil {
			t.Fatal(err)
		}
	}
	return db
}

// TestMigrateStartedBy opens a database of schema 8, from before runs
// named who started them: its runs and audit records read back naming no
// one, and new ones name their identity.
func TestMigrateStartedBy(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "gnomon.db")
	db := atSchema(t, path, 8)
	for _, q := range []string{
		`INSERT INTO runs (id, task, status, start_at, end_at, trigger) VALUES (1, 'a', 'success', 10, 11, 'start')`,
		`INSERT INTO audit (seq, task, run, launch, stop, result, status) VALUES (1, 'a', 1, 10, 11, 'normal', 'success')`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	b := &store.Batch{
		Runs:  []job.Run{{ID: 2, Task: "a", Status: job.Success, Start: time.Unix(0, 20), End: time.Unix(0, 21), Trigger: "start", By: "alice"}},
		Audit: []job.AuditRecord{{Task: "a", RunID: 2, Launch: time.Unix(0, 20), Stop: time.Unix(0, 21), Result: job.ResultNormal, Status: job.Success, By: "alice"}},
	}
	if err := s.Commit(ctx, b); err != nil {
		t.Fatal(err)
	}
	runs, err := s.Runs(ctx, store.RunQuery{Task: "a"})
	if err != nil || len(runs) != 2 || runs[0].By != "alice" || runs[1].By != "" {
		t.Errorf("runs %+v, %v", runs, err)
	}
	audit, err := s.Audit(ctx, 0, 10)
	if err != nil || len(audit) != 2 || audit[0].By != "" || audit[1].By != "alice" {
		t.Errorf("audit %+v, %v", audit, err)
	}
}

// TestMigrateEndedBy opens a database of schema 9, from before runs named
// who ended them: its runs, the running one included, and its audit
// records read back naming no one; an abort written later names its
// sender on the run that was running, and on its audit record.
func TestMigrateEndedBy(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "gnomon.db")
	db := atSchema(t, path, 9)
	for _, q := range []string{
		`INSERT INTO runs (id, task, status, start_at, end_at, result, trigger, started_by) VALUES (1, 'a', 'aborted', 10, 11, 'killed', 'start', 'bob')`,
		`INSERT INTO runs (id, task, status, start_at, trigger, started_by) VALUES (2, 'a', 'running', 20, 'start', 'bob')`,
		`INSERT INTO audit (seq, task, run, launch, stop, result, status, started_by) VALUES (1, 'a', 1, 10, 11, 'killed', 'aborted', 'bob')`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ended := job.Run{ID: 2, Task: "a", Status: job.Aborted, Start: time.Unix(0, 20), End: time.Unix(0, 21), Result: job.ResultKilled, Trigger: "start",
		By: "bob", EndedBy: "alice"}
	b := &store.Batch{Runs: []job.Run{ended}, Audit: []job.AuditRecord{job.AuditOf(&ended)}}
	if err := s.Commit(ctx, b); err != nil {
		t.Fatal(err)
	}
	runs, err := s.Runs(ctx, store.RunQuery{Task: "a"})
	if err != nil || len(runs) != 2 || runs[0].EndedBy != "alice" || runs[0].By != "bob" || runs[1].EndedBy != "" || runs[1].By != "bob" {
		t.Errorf("runs %+v, %v", runs, err)
	}
	audit, err := s.Audit(ctx, 0, 10)
	if err != nil || len(audit) != 2 || audit[0].EndedBy != "" || audit[1].EndedBy != "alice" || audit[1].By != "bob" {
		t.Errorf("audit %+v, %v", audit, err)
	}
}

// TestMigrateValidations opens a database of schema 4, whose checkpoint
// is one row per accepted event, and checks that the current generation
// comes over as checkpoint parts and an interrupted one does not.
func TestMigrateValidations(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "gnomon.db")
	db := atSchema(t, path, 4)
	for _, q := range []string{
		`UPDATE checkpoint SET gen = 3, seq = 77`,
		`INSERT INTO validations VALUES (3, 'b', 'TABLE:t', 5), (3, 'a', 'FILE:/in "x"', 10), (3, 'a', 'FILE:/in "x"', -30),
			(3, 'a', 'TABLE:t', 0), (4, 'a', 'TABLE:t', 99)`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	snap, err := s.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	v := func(task, dep string, ns int64) job.Validation {
		return job.Validation{Task: task, Dep: dep, TS: time.Unix(0, ns).UTC()}
	}
	want := []job.Validation{v("a", `FILE:/in "x"`, -30), v("a", `FILE:/in "x"`, 10), v("a", "TABLE:t", 0), v("b", "TABLE:t", 5)}
	if diff := cmp.Diff(want, snap.Windows, storetest.InAnyOrder); diff != "" || snap.WindowsGen != 3 || snap.WindowsSeq != 77 {
		t.Errorf("migrated checkpoint gen %d seq %d (-want +got):\n%s", snap.WindowsGen, snap.WindowsSeq, diff)
	}
}

// TestMigrateFewerPages opens a database of schema 5 and checks migration
// 6: fires name the run they started, the index that found it is gone,
// and the journal and the audit trail keep their numbers and go on from
// the last one without AUTOINCREMENT.
func TestMigrateFewerPages(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "gnomon.db")
	db := atSchema(t, path, 5)
	for _, q := range []string{
		`INSERT INTO runs (id, task, status, start_at, scheduled) VALUES (7, 'a', 'success', 10, 100), (8, 'a', 'success', 20, 100),
			(9, 'a', 'success', 30, 200), (10, 'b', 'success', 40, 100)`,
		`INSERT INTO fires (task, scheduled, fate, at) VALUES ('a', 100, 'ran', 5), ('a', 200, 'skipped', 6), ('a', 300, 'ran', 7)`,
		`INSERT INTO journal (at, kind, body) VALUES (1, 'data', '[]'), (2, 'define', '{}'), (3, 'data', '[]')`,
		`DELETE FROM journal WHERE seq = 2`,
		`INSERT INTO audit (task, run, launch, stop, result, status) VALUES ('a', 7, 10, 11, 'normal', 'success'), ('a', 8, 20, 21, 'normal', 'success')`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	fires, err := s.Fires(ctx, store.FireQuery{Task: "a"})
	if err != nil {
		t.Fatal(err)
	}
	var runs []int64
	for _, f := range fires {
		runs = append(runs, f.RunID)
	}
	if !slices.Equal(runs, []int64{0, 0, 7}) { // 300: none yet; 200: skipped; 100: the first run
		t.Errorf("runs of the fires of a, newest first: %v", runs)
	}
	var schema string
	if err := s.r.QueryRow(`SELECT group_concat(sql, ';') FROM sqlite_master`).Scan(&schema); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(schema, "runs_scheduled") || strings.Contains(schema, "journal_new") || strings.Contains(schema, "audit_new") {
		t.Errorf("schema after migration 6:\n%s", schema)
	}
	for _, q := range []string{`SELECT sql FROM sqlite_master WHERE name = 'journal'`, `SELECT sql FROM sqlite_master WHERE name = 'audit'`} {
		var sql string
		if err := s.r.QueryRow(q).Scan(&sql); err != nil || strings.Contains(sql, "AUTOINCREMENT") {
			t.Errorf("%s: %s, %v", q, sql, err)
		}
	}
	b := &store.Batch{
		Entries: []store.Entry{{At: time.Unix(0, 4), Kind: "data", Body: json.RawMessage(`[]`)}},
		Audit:   []job.AuditRecord{{Task: "a", RunID: 9, Launch: time.Unix(0, 30), Stop: time.Unix(0, 31), Result: job.ResultNormal, Status: job.Success}},
	}
	if err := s.Commit(ctx, b); err != nil {
		t.Fatal(err)
	}
	entries, err := s.Journal(ctx, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	var seqs []int64
	for _, e := range entries {
		seqs = append(seqs, e.Seq)
	}
	if !slices.Equal(seqs, []int64{1, 3, 4}) {
		t.Errorf("journal numbers after the migration and one commit: %v", seqs)
	}
	audit, err := s.Audit(ctx, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(audit) != 3 || audit[0].Seq != 1 || audit[2].Seq != 3 || audit[2].RunID != 9 {
		t.Errorf("audit after the migration and one commit: %+v", audit)
	}
}

// TestWriterSettings checks the writer's durability and checkpoint
// settings, which its connection gets from the DSN.
func TestWriterSettings(t *testing.T) {
	t.Parallel()
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "gnomon.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for pragma, want := range map[string]string{"journal_mode": "wal", "synchronous": "2", "wal_autocheckpoint": fmt.Sprint(walCheckpoint)} {
		var got string
		if err := s.w.QueryRow(`PRAGMA ` + pragma).Scan(&got); err != nil || got != want {
			t.Errorf("PRAGMA %s = %q (%v), want %q", pragma, got, err, want)
		}
	}
}
