package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/gnomon-sched/gnomon/cluster"
	"github.com/gnomon-sched/gnomon/internal/pgtest"
	"github.com/gnomon-sched/gnomon/job"
)

// roleLogins sets up a fresh database with the group roles of
// Grants under a prefix of the test's own (roles belong to the
// whole PostgreSQL server), and a login role in each; it returns the
// owner's store and the URL of each login, by group.
func roleLogins(t *testing.T) (*Store, map[string]string) {
	t.Helper()
	ctx := context.Background()
	base := pgtest.URL(t)
	owner, err := Open(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	var b [4]byte
	rand.Read(b[:])
	prefix := "gnomon_t" + hex.EncodeToString(b[:]) + "_"
	if err := owner.Grant(ctx, prefix); err != nil {
		t.Fatal(err)
	}
	logins := map[string]string{}
	var made []string
	t.Cleanup(func() {
		for _, r := range append(made, prefixed(prefix, GrantRoles)...) {
			owner.Pool().Exec(context.Background(), "DROP OWNED BY "+r) // takes back its grants in this database
			owner.Pool().Exec(context.Background(), "DROP ROLE IF EXISTS "+r)
		}
		owner.Close()
	})
	for _, g := range GrantRoles {
		login := prefix + g + "_login"
		if _, err := owner.Pool().Exec(ctx, "CREATE ROLE "+login+" LOGIN IN ROLE "+prefix+g); err != nil {
			t.Fatal(err)
		}
		made = append(made, login)
		u, err := url.Parse(base)
		if err != nil {
			t.Fatal(err)
		}
		u.User = url.User(login)
		logins[g] = u.String()
	}
	return owner, logins
}

func prefixed(prefix string, names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = prefix + n
	}
	return out
}

// pool connects as a login.
func pool(t *testing.T, u string) *pgxpool.Pool {
	t.Helper()
	p, err := pgxpool.New(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

// denied checks that err is PostgreSQL's refusal for want of a privilege.
func denied(t *testing.T, what string, err error) {
	t.Helper()
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "42501" {
		t.Errorf("%s: %v; want permission denied (42501)", what, err)
	}
}

// Each role of a cluster's database does its node's job, as the cluster's
// own code does it, and cannot do the others': a worker claims, starts and
// ends runs but cannot write definitions, the journal or the queue, nor
// read the tokens; a clock node records fires and reads the time
// triggers but cannot queue runs or write definitions; the reporting role
// reads the history and changes nothing; the director does everything
// but change the tables themselves, which stay the owner's.
func TestDatabaseRoles(t *testing.T) {
	ctx := context.Background()
	owner, logins := roleLogins(t)
	tables, err := owner.Tables(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(tables) < 20 {
		t.Fatalf("tables: %v", tables)
	}
	space := cluster.Space{Size: 1, Partitions: 1}

	// The director: opens the store (the migrations are applied: it
	// only reads their table), writes its state, queues runs and assigns
	// the clock's partitions.
	dirStore, err := Open(ctx, logins[RoleDirector])
	if err != nil {
		t.Fatalf("the director opening the store: %v", err)
	}
	t.Cleanup(func() { dirStore.Close() })
	if err := dirStore.SetCursors(ctx, map[string]int64{"test": 1}); err != nil {
		t.Errorf("the director writing a cursor: %v", err)
	}
	dir, err := NewRegistry(ctx, dirStore.Pool(), space, 5*time.Second)
	if err != nil {
		t.Fatalf("the director's registry: %v", err)
	}
	if err := dir.Register(ctx, cluster.Node{ID: "dir", Roles: []string{cluster.RoleDirector}, Version: "test"}, clusterT0); err != nil {
		t.Fatalf("the director registering: %v", err)
	}
	epoch, err := dir.TakeDirector(ctx, cluster.Node{ID: "dir"}, clusterT0)
	if err != nil {
		t.Fatalf("the director taking the cluster: %v", err)
	}
	if err := dir.Enqueue(ctx, "dir", epoch, []job.Launch{{RunID: 1, Task: "a", Priority: job.Normal}}, clusterT0); err != nil {
		t.Errorf("the director queueing a run: %v", err)
	}
	_, err = dirStore.Pool().Exec(ctx, "ALTER TABLE runs ADD COLUMN intruder INT")
	denied(t, "the director altering a table", err)

	// The clock node: registers, is given the partition, records a fire,
	// reads the definitions and their version.
	clockStore, err := Open(ctx, logins[RoleClock])
	if err != nil {
		t.Fatalf("the clock node opening the store: %v", err)
	}
	t.Cleanup(func() { clockStore.Close() })
	clk, err := NewRegistry(ctx, clockStore.Pool(), space, 5*time.Second)
	if err != nil {
		t.Fatalf("the clock node's registry: %v", err)
	}
	if err := clk.Register(ctx, cluster.Node{ID: "c1", Roles: []string{cluster.RoleClock}, Version: "test", Zone: "UTC"}, clusterT0); err != nil {
		t.Fatalf("the clock node registering: %v", err)
	}
	if _, err := dir.Rebalance(ctx, "dir", epoch, clusterT0, time.Time{}); err != nil {
		t.Fatalf("the director assigning partitions: %v", err)
	}
	leases, err := clk.Heartbeat(ctx, "c1", clusterT0)
	if err != nil || len(leases) == 0 {
		t.Fatalf("the clock node's heartbeat: %v %v", leases, err)
	}
	if n, err := clk.RecordAll(ctx, "c1", leases[0], []cluster.Fire{{Task: "a", Scheduled: clusterT0}}, clusterT0); n != 1 || err != nil {
		t.Errorf("the clock node recording a fire: %d %v", n, err)
	}
	if _, err := clockStore.Definitions(ctx); err != nil {
		t.Errorf("the clock node reading the definitions: %v", err)
	}
	if _, err := clockStore.DefinitionsVersion(ctx); err != nil {
		t.Errorf("the clock node reading their version: %v", err)
	}
	err = clk.Enqueue(ctx, "dir", epoch, []job.Launch{{RunID: 2, Task: "b"}}, clusterT0)
	denied(t, "the clock node queueing a run", err)
	err = clk.Prune(ctx, "dir", epoch, 1<<62, clusterT0.Add(time.Hour))
	denied(t, "the clock node pruning the fires", err)
	for _, stmt := range []string{
		`INSERT INTO journal (kind, body) VALUES ('define', '{}')`,
		`UPDATE tasks SET def = def`,
		`SELECT hash FROM tokens`,
		`UPDATE runs SET status = status`,
	} {
		_, err := clockStore.Pool().Exec(ctx, stmt)
		denied(t, "the clock node: "+stmt, err)
	}

	// The worker: registers, claims the run, starts and ends it.
	workerStore, err := Open(ctx, logins[RoleWorker])
	if err != nil {
		t.Fatalf("the worker opening the store: %v", err)
	}
	t.Cleanup(func() { workerStore.Close() })
	w, err := NewRegistry(ctx, workerStore.Pool(), space, 5*time.Second)
	if err != nil {
		t.Fatalf("the worker's registry: %v", err)
	}
	if err := w.Register(ctx, cluster.Node{ID: "w1", Roles: []string{cluster.RoleWorker}, Version: "test"}, clusterT0); err != nil {
		t.Fatalf("the worker registering: %v", err)
	}
	if _, err := w.Heartbeat(ctx, "w1", clusterT0); err != nil {
		t.Errorf("the worker's heartbeat: %v", err)
	}
	cs, err := w.Claim(ctx, "w1", nil, 1, clusterT0)
	if err != nil || len(cs) != 1 {
		t.Fatalf("the worker claiming a run: %v %v", cs, err)
	}
	if ok, err := w.MarkStarted(ctx, "w1", cs[0], clusterT0); !ok || err != nil {
		t.Errorf("the worker starting the run: %v %v", ok, err)
	}
	if ok, err := w.End(ctx, "w1", cs[0].Attempt, job.Exit{RunID: 1, Result: job.ResultNormal, End: clusterT0.Add(time.Second)}); !ok || err != nil {
		t.Errorf("the worker ending the run: %v %v", ok, err)
	}
	// Its file watchers read the definitions, record what they find
	// and remember it; only the director marks a file taken.
	if _, err := workerStore.Definitions(ctx); err != nil {
		t.Errorf("the worker reading the definitions: %v", err)
	}
	if _, err := workerStore.DefinitionsVersion(ctx); err != nil {
		t.Errorf("the worker reading their version: %v", err)
	}
	if _, err := w.FileFound(ctx, cluster.FoundFile{Task: "a", Path: "/in/a.csv", Version: 1, Node: "w1", FoundAt: clusterT0}); err != nil {
		t.Errorf("the worker recording a file: %v", err)
	}
	if err := w.SetWatchMemory(ctx, "w1", map[string]int64{"watch\x00a\x00/in/a.csv": 1}); err != nil {
		t.Errorf("the worker remembering a file: %v", err)
	}
	if v, err := w.WatchMemory(ctx, "w1", "watch\x00a\x00/in/a.csv"); v != 1 || err != nil {
		t.Errorf("the worker reading its memory: %d %v", v, err)
	}
	if err := dir.FilesTaken(ctx, "dir", epoch, []int64{1}, clusterT0); err != nil {
		t.Errorf("the director marking a file taken: %v", err)
	}
	err = w.Enqueue(ctx, "dir", epoch, []job.Launch{{RunID: 3, Task: "c"}}, clusterT0)
	denied(t, "the worker queueing a run", err)
	_, err = w.RecordAll(ctx, "c1", leases[0], []cluster.Fire{{Task: "a", Scheduled: clusterT0.Add(time.Hour)}}, clusterT0)
	denied(t, "the worker recording a fire", err)
	for _, stmt := range []string{
		`INSERT INTO tasks (name, def, state) VALUES ('intruder', '{}', '{}')`,
		`UPDATE tasks SET def = def`,
		`DELETE FROM calendars`,
		`INSERT INTO journal (kind, body) VALUES ('define', '{}')`,
		`SELECT hash FROM tokens`,
		`UPDATE cluster_files SET taken_at = 1`,
		`DELETE FROM cluster_files`,
		`UPDATE cluster_settings SET director = 'w1'`,
		`UPDATE runs SET status = status`,
	} {
		_, err := workerStore.Pool().Exec(ctx, stmt)
		denied(t, "the worker: "+stmt, err)
	}
	if err := workerStore.SetCursors(ctx, map[string]int64{"test": 2}); err == nil {
		t.Error("the worker wrote a cursor")
	}

	// The reporting role reads the history and the queue, and writes
	// nothing.
	rp := pool(t, logins[RoleReader])
	for _, table := range []string{"runs", "journal", "tasks", "audit", "fires", "alerts", "cluster_runs", "cluster_nodes", "tree_nodes"} {
		if _, err := rp.Exec(ctx, "SELECT count(*) FROM "+table); err != nil {
			t.Errorf("the reporting role reading %s: %v", table, err)
		}
	}
	for _, stmt := range []string{
		`SELECT hash FROM tokens`,
		`INSERT INTO journal (kind, body) VALUES ('define', '{}')`,
		`UPDATE runs SET status = status`,
		`UPDATE cluster_runs SET state = state`,
		`DELETE FROM audit`,
	} {
		_, err := rp.Exec(ctx, stmt)
		denied(t, "the reporting role: "+stmt, err)
	}
	if _, err := NewRegistry(ctx, rp, space, 5*time.Second); err == nil {
		t.Error("the reporting role made a registry (it inserts the leases)")
	}
}

// Every table and sequence the migrations make has its place in the
// roles' grants: a new one must be given to the roles that need it.
func TestDatabaseRolesCoverEveryTable(t *testing.T) {
	ctx := context.Background()
	owner, _ := roleLogins(t)
	tables, err := owner.Tables(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sql, err := Grants("gnomon_")
	if err != nil {
		t.Fatal(err)
	}
	for _, table := range tables {
		if !strings.Contains(sql, " "+table+",") && !strings.Contains(sql, " "+table+" ") {
			t.Errorf("table %s is not in the grants:\n%s", table, sql)
		}
	}
	rows, err := owner.Pool().Query(ctx, `SELECT sequencename FROM pg_sequences WHERE schemaname = current_schema() AND sequencename != 'goose_db_version_id_seq' ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var s string
		rows.Scan(&s)
		if !strings.Contains(sql, s) {
			t.Errorf("sequence %s is not in the grants", s)
		}
	}
	if _, err := Grants("Robert'); DROP TABLE students;--"); err == nil {
		t.Error("a prefix that is not a name was taken")
	}
	if !slices.Equal(GrantRoles, []string{"director", "clock", "worker", "reader"}) {
		t.Errorf("roles: %v", GrantRoles)
	}
}
