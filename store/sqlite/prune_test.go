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
	s, err := Open(ctx, filepath.Join(t.TempDir(), "gnomon.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
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
	for i, q := range db.queries {
		table := strings.Fields(q[strings.Index(q, " FROM ")+len(" FROM "):])[0]
		w, ok := want[table]
		if !ok {
			t.Errorf("a query of %s: %s", table, q)
			continue
		}
		delete(want, table)
		text := queryPlan(t, s, q, db.args[i]...)
		if !strings.Contains(text, "SEARCH "+table+" USING") || !strings.Contains(text, w) || strings.Contains(text, "SCAN "+table) || strings.Contains(text, "TEMP B-TREE") {
			t.Errorf("%s: plan %q, want %q and no sort", q, text, w)
		}
	}
	for table := range want {
		t.Errorf("%s: not read", table)
	}
}
