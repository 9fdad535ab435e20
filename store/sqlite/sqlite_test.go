package sqlite

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/store"
	"github.com/gnomon-sched/gnomon/store/storetest"
)

func TestConformance(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) (store.Store, func() store.Store) {
		path := filepath.Join(t.TempDir(), "gnomon.db")
		open := func() store.Store {
			s, err := Open(context.Background(), path)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		}
		return open(), open
	})
}

func TestMigrationsIdempotent(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "gnomon.db")
	for range 2 {
		s, err := Open(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		var v int
		if err := s.r.QueryRow(`SELECT max(version) FROM schema_migrations`).Scan(&v); err != nil || v != 5 {
			t.Fatalf("schema version %d, %v", v, err)
		}
		s.Close()
	}
}

// TestMigrateValidations opens a database of schema 4, whose checkpoint
// is one row per accepted event, and checks that the current generation
// comes over as checkpoint parts and an interrupted one does not.
func TestMigrateValidations(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "gnomon.db")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	for v, f := range []string{"0001_initial.sql", "0002_fires.sql", "0003_validations.sql", "0004_alerts_audit.sql"} {
		body, err := migrations.ReadFile("migrations/" + f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(string(body)); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if _, err := db.Exec(`INSERT INTO schema_migrations VALUES (?, 0)`, v+1); err != nil {
			t.Fatal(err)
		}
	}
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

func TestAppendPart(t *testing.T) {
	at := func(ns int64) time.Time { return time.Unix(0, ns).UTC() }
	rows := []job.Validation{{Task: "a", Dep: "TABLE:t", TS: at(1)}, {Task: "a", Dep: "TABLE:t", TS: at(-2)},
		{Task: "a", Dep: `FILE:/é "q"`, TS: at(3)}, {Task: "b", Dep: "TABLE:t", TS: at(4)}}
	got := string(appendPart(nil, rows))
	want := `[{"task":"a","dep":"TABLE:t","ts":[1,-2]},{"task":"a","dep":"FILE:/é \"q\"","ts":[3]},{"task":"b","dep":"TABLE:t","ts":[4]}]`
	if got != want {
		t.Errorf("appendPart:\n got %s\nwant %s", got, want)
	}
	if got := string(appendPart(nil, nil)); got != "[]" {
		t.Errorf("appendPart of no rows: %s", got)
	}
}
