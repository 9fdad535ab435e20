package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/gnomon-sched/gnomon/internal/pgtest"
)

// gnomon cluster grants makes the four roles on a database, migrated
// first, and may be run again; --print writes the SQL; a database that
// is not PostgreSQL or a prefix that is not a name are refused, naming
// the flag.
func TestClusterGrants(t *testing.T) {
	db := pgtest.URL(t)
	var b [4]byte
	rand.Read(b[:])
	prefix := "gnomon_c" + hex.EncodeToString(b[:]) + "_"
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, r := range []string{"director", "clock", "worker", "reader"} {
			conn.Exec(context.Background(), "DROP OWNED BY "+prefix+r)
			conn.Exec(context.Background(), "DROP ROLE IF EXISTS "+prefix+r)
		}
		conn.Close(context.Background())
	})
	for range 2 {
		out, errs, code := runAlone("gnomon", "cluster", "grants", "--db", db, "--prefix", prefix)
		if code != 0 || !strings.Contains(out, "role "+prefix+"worker granted") {
			t.Fatalf("cluster grants: exit %d\n%s%s", code, out, errs)
		}
	}
	var canWrite, canRead bool
	if err := conn.QueryRow(ctx, `SELECT has_table_privilege($1, 'tasks', 'INSERT'), has_table_privilege($1, 'cluster_runs', 'UPDATE')`, prefix+"worker").Scan(&canWrite, &canRead); err != nil {
		t.Fatal(err)
	}
	if canWrite || !canRead {
		t.Errorf("the worker role: INSERT on tasks %v (want false), UPDATE on cluster_runs %v (want true)", canWrite, canRead)
	}
	if out, _, code := runAlone("gnomon", "cluster", "grants", "--print"); code != 0 || !strings.Contains(out, "GRANT SELECT, UPDATE ON TABLE cluster_runs TO gnomon_worker;") {
		t.Errorf("--print: exit %d\n%s", code, out)
	}
	if _, errs, code := runAlone("gnomon", "cluster", "grants", "--db", "/var/lib/gnomon"); code != 2 || !strings.Contains(errs, "--db") {
		t.Errorf("a database that is not PostgreSQL: exit %d %s", code, errs)
	}
	if _, errs, code := runAlone("gnomon", "cluster", "grants", "--print", "--prefix", "x; DROP"); code != 2 || !strings.Contains(errs, "--prefix") {
		t.Errorf("a prefix that is not a name: exit %d %s", code, errs)
	}
}
