package sqlite

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/store"
)

// planDB records the queries the pruner reads rows with.
type planDB struct {
	pruneDB
	queries []string
	args    [][]any
}

func (d *planDB) Keys(ctx context.Context, query string, args ...any) ([][]any, error) {
	d.queries, d.args = append(d.queries, query), append(d.args, args)
	return d.pruneDB.Keys(ctx, query, args...)
}

// TestPrunePlans checks that the pruner reads each table oldest first
// from an index, up to the horizon, and never the whole table nor a
// sort of it: a call costs what it removes, not what the table holds.
func TestPrunePlans(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openFresh(t)
	at := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	db := &planDB{pruneDB: pruneDB{s}}
	p := store.Prune{Runs: at, Fires: at, Audit: at, Alerts: at, NodeLog: at, AuditUpTo: 1 << 40, Cursor: &store.PruneCursor{}}
	if _, err := store.PruneWith(ctx, db, p); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"runs":     "INDEX runs_start (start_at<?)",
		"fires":    "INDEX fires_scheduled (scheduled<?)",
		"audit":    "INDEX audit_stop (stop<?)",
		"alerts":   "INDEX alerts_created (created<?)",
		"tree_log": "INDEX tree_log_at (at<?)",
	}
	checkPrunePlans(t, s, db, want, false)
}

// TestPrunePlansAfterCursor checks the same of a call that goes on where
// the call before stopped: the cursor narrows the index's range.
func TestPrunePlansAfterCursor(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openFresh(t)
	for i := int64(1); i <= 3; i++ {
		if _, err := s.w.ExecContext(ctx, `INSERT INTO runs (id, task, status, start_at, end_at) VALUES (?, 'a', 'success', ?, ?)`, i, i, i); err != nil {
			t.Fatal(err)
		}
		if _, err := s.w.ExecContext(ctx, `INSERT INTO fires (task, scheduled, fate, at) VALUES ('a', ?, 'ran', 0)`, i); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.w.ExecContext(ctx, `INSERT INTO runs (id, task, status, start_at, end_at) VALUES (4, 'a', 'success', 1000, 1000)`); err != nil {
		t.Fatal(err)
	}
	at := time.Unix(0, 100)
	p := store.Prune{Runs: at, Fires: at, Limit: 1, Cursor: &store.PruneCursor{}}
	if out, err := store.PruneWith(ctx, pruneDB{s}, p); err != nil || out.Runs != 1 || out.Fires != 1 || !out.More {
		t.Fatalf("the first call: %+v %v, want a run and a fire and more", out, err)
	}
	db := &planDB{pruneDB: pruneDB{s}}
	out, err := store.PruneWith(ctx, db, p)
	if err != nil || out.Runs != 1 || out.Fires != 1 {
		t.Fatalf("the second call: %+v %v, want a run and a fire", out, err)
	}
	want := map[string]string{
		"runs":  "INDEX runs_start ((start_at,task)>(?,?) AND start_at<?)",
		"fires": "INDEX fires_scheduled ((scheduled,task)>(?,?) AND scheduled<?)",
	}
	checkPrunePlans(t, s, db, want, true)
}

// checkPrunePlans checks that the pruner read each table of want (its
// plan's index and range) once, by a search of that index, without a sort;
// after a cursor, that its query goes on from it. A table not in want may
// be read only after a cursor (which a call reads for every kind).
func checkPrunePlans(t *testing.T, s *Store, db *planDB, want map[string]string, cursor bool) {
	t.Helper()
	for i, q := range db.queries {
		table := strings.Fields(q[strings.Index(q, " FROM ")+len(" FROM "):])[0]
		w, ok := want[table]
		if !ok {
			if !cursor {
				t.Errorf("a query of %s: %s", table, q)
			}
			continue
		}
		delete(want, table)
		if cursor && !strings.Contains(q, ") > (") {
			t.Errorf("%s: no cursor", q)
		}
		text := queryPlan(t, s, q, db.args[i]...)
		if !strings.Contains(text, "SEARCH "+table+" USING") || !strings.Contains(text, w) || strings.Contains(text, "SCAN "+table) || strings.Contains(text, "TEMP B-TREE") {
			t.Errorf("%s: plan %q, want %q and no sort", q, text, w)
		}
	}
	for table := range want {
		t.Errorf("%s: not read", table)
	}
}

// openFresh opens a new store in the test's directory, closed when the
// test ends.
func openFresh(t *testing.T) *Store {
	t.Helper()
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "gnomon.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
