package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/gnomon-sched/gnomon/internal/pgtest"
	"github.com/gnomon-sched/gnomon/job"
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

// A cluster whose director, clock node and worker each connect as a user
// of the role of its job does its work: the clock node records the fires
// of an every-second task, the worker runs what they start and a start
// sent to the director, and no node is refused a statement.
func TestClusterUnderDatabaseRoles(t *testing.T) {
	skipOnOtherStores(t)
	db := pgtest.URL(t)
	var b [4]byte
	rand.Read(b[:])
	prefix := "gnomon_e" + hex.EncodeToString(b[:]) + "_"
	ctx := context.Background()
	if out, errs, code := runAlone("gnomon", "cluster", "grants", "--db", db, "--prefix", prefix); code != 0 {
		t.Fatalf("cluster grants: exit %d\n%s%s", code, out, errs)
	}
	conn := registryConn(t, db)
	logins := map[string]string{}
	t.Cleanup(func() { // after the nodes are gone: cleanups run last first
		for _, r := range []string{"director", "clock", "worker", "reader"} {
			for _, name := range []string{prefix + r + "_login", prefix + r} {
				conn.Exec(context.Background(), "DROP OWNED BY "+name)
				conn.Exec(context.Background(), "DROP ROLE IF EXISTS "+name)
			}
		}
	})
	for _, r := range []string{"director", "clock", "worker"} {
		login := prefix + r + "_login"
		if _, err := conn.Exec(ctx, "CREATE ROLE "+login+" LOGIN IN ROLE "+prefix+r); err != nil {
			t.Fatal(err)
		}
		u, err := url.Parse(db)
		if err != nil {
			t.Fatal(err)
		}
		u.User = url.User(login)
		logins[r] = u.String()
	}
	dir := t.TempDir()
	c, nodes := startNodesOn(t, db,
		nodeSpec{name: "dir", roles: "director", flags: []string{"--db", logins["director"]}},
		nodeSpec{name: "c1", roles: "clock", flags: []string{"--db", logins["clock"]}},
		nodeSpec{name: "w1", roles: "worker", flags: []string{"--db", logins["worker"]}})
	if _, err := c.Define(ctx, "tick.def", tickDef+"\ninsert_task: once\ntype: callable\ncommand: touch "+dir+"/once\nout_log_file: /dev/null\nerr_log_file: /dev/null\n", false); err != nil {
		t.Fatal(err)
	}
	if err := c.Event(ctx, "once", "start"); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the worker ran once, and tick ran three times", func() bool {
		st, err := c.Status(ctx, "once")
		if err != nil || st.Rows[0].Status.String() != "success" {
			return false
		}
		fires, err := c.Fires(ctx, "tick", 50, "")
		ran := 0
		for _, f := range fires.Fires {
			if f.Fate == job.FateRan {
				ran++
			}
		}
		return err == nil && ran >= 3
	})
	if _, err := os.Stat(filepath.Join(dir, "once")); err != nil {
		t.Errorf("once's command did not run: %v", err)
	}
	for name, n := range nodes {
		log, _ := os.ReadFile(n.log)
		if strings.Contains(string(log), "permission denied") || strings.Contains(string(log), "42501") {
			t.Errorf("node %s was refused a statement:\n%s", name, log)
		}
	}
}
