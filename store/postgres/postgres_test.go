package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/gnomon-sched/gnomon/internal/pgtest"
	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/store"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.UTC)

// fixture is a store on a fresh database, and a connection of its own to
// that database.
type fixture struct {
	s     *Store
	url   string
	db    *pgx.Conn
	dbase string // the database's name
}

func setup(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	f := &fixture{url: pgtest.URL(t)}
	var err error
	if f.s, err = Open(ctx, f.url); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.s.Close() })
	if f.db, err = pgx.Connect(ctx, f.url); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.db.Close(context.Background()) })
	if err := f.db.QueryRow(ctx, `SELECT current_database()`).Scan(&f.dbase); err != nil {
		t.Fatal(err)
	}
	return f
}

// exec runs statements on the fixture's own connection.
func (f *fixture) exec(t *testing.T, sql string, args ...any) {
	t.Helper()
	if _, err := f.db.Exec(context.Background(), sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// contents returns a digest of every table, to tell whether a commit
// changed anything.
func (f *fixture) contents(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, table := range append(tables, "checkpoint", "last_commit") {
		var digest string
		q := `SELECT count(*) || ' ' || coalesce(md5(string_agg(t::text, ',' ORDER BY t::text)), '') FROM ` + table + ` t`
		if err := f.db.QueryRow(context.Background(), q).Scan(&digest); err != nil {
			t.Fatal(err)
		}
		out[table] = digest
	}
	return out
}

// everything is a batch that writes every kind of row, its journal entry
// carrying body.
func everything(body string, runID int64) *store.Batch {
	return &store.Batch{
		Entries:    []store.Entry{{At: t0, Kind: "act", Body: json.RawMessage(body)}},
		Tasks:      []job.Record{{Def: &job.Task{Name: fmt.Sprintf("t%d", runID), Type: job.Callable, Command: "true"}, State: job.State{Status: job.Success}}},
		Runs:       []job.Run{{ID: runID, Task: "a", Status: job.Running, Start: t0, Scheduled: t0.Add(time.Duration(runID) * time.Hour)}},
		Fires:      []job.Fire{{Task: "a", Scheduled: t0.Add(time.Duration(runID) * time.Hour), Fate: job.FateRan, At: t0}},
		Checkpoint: &store.Checkpoint{Gen: runID, Rows: []job.Validation{{Task: "c", Dep: "FILE:/x", TS: t0}}, Done: true, Seq: runID},
		Alerts:     []job.Alert{{Task: "a", Created: t0, State: job.AlertPending}},
		Audit:      []job.AuditRecord{{Task: "a", RunID: runID, Launch: t0, Stop: t0, Result: job.ResultNormal, Status: job.Success}},
		Trees: &store.Trees{
			Files: []store.TreeFile{{Name: "f", Text: body}},
			Nodes: []store.NodeRow{{Process: "h", Timeperiod: runID, State: "embryo", Body: json.RawMessage(`{}`)}},
			Log:   []store.NodeLogRow{{Process: "h", Timeperiod: runID, At: t0, Body: json.RawMessage(`{}`)}},
			State: json.RawMessage(body),
		},
	}
}

// seqs returns the sequence numbers of the stored journal.
func seqs(t *testing.T, s store.Store) []int64 {
	t.Helper()
	es, err := s.Journal(context.Background(), 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var out []int64
	for _, e := range es {
		out = append(out, e.Seq)
	}
	return out
}

func TestMigrationsIdempotent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := setup(t)
	if err := f.s.Commit(ctx, everything(`{"n":1}`, 1)); err != nil {
		t.Fatal(err)
	}
	f.s.Close()
	for range 2 {
		s, err := Open(ctx, f.url)
		if err != nil {
			t.Fatalf("open again: %v", err)
		}
		if got := seqs(t, s); !cmp.Equal(got, []int64{1}) {
			t.Errorf("journal after reopening: %v", got)
		}
		s.Close()
	}
	var applied int
	if err := f.db.QueryRow(ctx, `SELECT count(*) FROM goose_db_version WHERE version_id > 0`).Scan(&applied); err != nil {
		t.Fatal(err)
	}
	files, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		t.Fatal(err)
	}
	if applied != len(files) {
		t.Errorf("%d migrations recorded, want one per file, %d", applied, len(files))
	}
}

// TestOpenTogether opens one fresh database from several stores at once:
// goose's session lock lets one migrate while the others wait, and every
// one opens.
func TestOpenTogether(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() {
			s, err := Open(context.Background(), url)
			if err != nil {
				errs[i] = err
				return
			}
			defer s.Close()
			// Writers that commit together, each from its own store.
			for range 25 {
				e := store.Entry{At: t0, Kind: "act", Body: json.RawMessage(`{}`)}
				if err := s.Commit(context.Background(), &store.Batch{Entries: []store.Entry{e, e, e}}); err != nil {
					errs[i] = err
					return
				}
			}
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("store %d: %v", i, err)
		}
	}
	s, err := Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// The commit lock numbered the four stores' entries one after
	// another, without a gap.
	got := seqs(t, s)
	want := make([]int64, 4*25*3)
	for i := range want {
		want[i] = int64(i + 1)
	}
	if !cmp.Equal(got, want) {
		t.Errorf("journal: %v", got)
	}
}

func TestOpenErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	u, _ := url.Parse(pgtest.URL(t))
	u.User = url.UserPassword("nobody", "s3cret")
	u.Path = "/gnomon_no_such_database"
	_, err := Open(ctx, u.String())
	if err == nil {
		t.Fatal("opened a database that does not exist")
	}
	if msg := err.Error(); strings.Contains(msg, "s3cret") || !strings.Contains(msg, "nobody:xxxxx@") {
		t.Errorf("the error does not name the redacted URL: %v", err)
	}
	if _, err := Open(ctx, "postgres://u:s3cret@127.0.0.1:port/db"); err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("an unparsable URL: %v", err)
	}
}

// TestFailedCommitChangesNothing refuses a batch at its last statement:
// nothing of it is stored, the error is not store.ErrUnavailable (the
// same batch would fail again), and the next commit numbers on without a
// gap over the same connections.
func TestFailedCommitChangesNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := setup(t)
	if err := f.s.Commit(ctx, everything(`{"n":1}`, 1)); err != nil {
		t.Fatal(err)
	}
	f.exec(t, `CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused by the test'; END $$`)
	f.exec(t, `CREATE TRIGGER refuse BEFORE UPDATE ON tree_state FOR EACH ROW WHEN (NEW.body = '"refuse"') EXECUTE FUNCTION refuse()`)
	before := f.contents(t)
	bad := everything(`"refuse"`, 2)
	err := f.s.Commit(ctx, bad)
	if err == nil || !strings.Contains(err.Error(), "refused by the test") {
		t.Fatalf("commit = %v, want the trigger's refusal", err)
	}
	if errors.Is(err, store.ErrUnavailable) {
		t.Errorf("a refused batch is reported unavailable: %v", err)
	}
	if diff := cmp.Diff(before, f.contents(t)); diff != "" {
		t.Errorf("a refused commit changed tables (-before +after):\n%s", diff)
	}
	for i := range 3 {
		b := everything(`{"n":3}`, int64(3+i))
		if err := f.s.Commit(ctx, b); err != nil {
			t.Fatal(err)
		}
		if b.Entries[0].Seq != int64(2+i) || b.Alerts[0].ID != int64(2+i) || b.Audit[0].Seq != int64(2+i) {
			t.Errorf("commit %d numbered %d, %d, %d", i, b.Entries[0].Seq, b.Alerts[0].ID, b.Audit[0].Seq)
		}
	}
}

// waitGone waits until no session of the database but f's own is left.
func (f *fixture) waitGone(t *testing.T) {
	t.Helper()
	for {
		var n int
		err := f.db.QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity WHERE datname = $1 AND pid != pg_backend_pid()`,
			f.dbase).Scan(&n)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
		time.Sleep(5 * time.Millisecond) // polls the server: there is no signal to wait on
	}
}

// TestCommitAfterConnectionLoss ends every session of the store while it
// is idle: the next commit, on a connection the server dropped, fails as
// unavailable with nothing written, and the one after succeeds on a new
// connection, numbered without a gap.
func TestCommitAfterConnectionLoss(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := setup(t)
	ok := 0
	for i := range 3 {
		if err := f.s.Commit(ctx, everything(`{}`, int64(10*i+1))); err != nil {
			t.Fatal(err)
		}
		ok++
		f.exec(t, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid != pg_backend_pid()`, f.dbase)
		f.waitGone(t)
		err := f.s.Commit(ctx, everything(`{}`, int64(10*i+2)))
		if !errors.Is(err, store.ErrUnavailable) {
			t.Fatalf("commit %d on a dropped connection: %v, want store.ErrUnavailable", i, err)
		}
		if err := f.s.Commit(ctx, everything(`{}`, int64(10*i+3))); err != nil {
			t.Fatalf("the commit after it: %v", err)
		}
		ok++
	}
	want := []int64{}
	for i := range ok {
		want = append(want, int64(i+1))
	}
	if got := seqs(t, f.s); !cmp.Equal(got, want) {
		t.Errorf("journal %v, want %v", got, want)
	}
}

// TestCommitEndedAtCommit ends the session in the middle of COMMIT (a
// deferred trigger terminates its own backend): the commit is reported
// unavailable, having written nothing.
func TestCommitEndedAtCommit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := setup(t)
	f.exec(t, `CREATE FUNCTION die() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_terminate_backend(pg_backend_pid()); RETURN NULL; END $$`)
	f.exec(t, `CREATE CONSTRAINT TRIGGER die AFTER INSERT ON journal DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
		WHEN (NEW.body = '{"die":1}') EXECUTE FUNCTION die()`)
	if err := f.s.Commit(ctx, everything(`{}`, 1)); err != nil {
		t.Fatal(err)
	}
	before := f.contents(t)
	if err := f.s.Commit(ctx, everything(`{"die":1}`, 2)); !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("a commit whose session ended: %v, want store.ErrUnavailable", err)
	}
	if diff := cmp.Diff(before, f.contents(t)); diff != "" {
		t.Errorf("the lost commit changed tables (-before +after):\n%s", diff)
	}
	b := everything(`{}`, 3)
	if err := f.s.Commit(ctx, b); err != nil || b.Entries[0].Seq != 2 {
		t.Fatalf("the next commit: seq %d, %v", b.Entries[0].Seq, err)
	}
}

// proxy forwards TCP connections to PostgreSQL and, when armed, loses
// what one connection sends next (the request, or the answer to it).
type proxy struct {
	ln     net.Listener
	target string
	// loseRequest and loseAnswer are armed by a test; the connection that
	// disarms one closes its client side.
	loseRequest, loseAnswer atomic.Bool
	wg                      sync.WaitGroup
}

// proxied opens a second store on the fixture's database, through a
// proxy that the test can make lose what passes; it is closed when the
// test ends.
func (f *fixture) proxied(t *testing.T) (*Store, *proxy) {
	t.Helper()
	u, _ := url.Parse(f.url)
	p := newProxy(t, u.Host)
	u.Host = p.ln.Addr().String()
	s, err := Open(context.Background(), u.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, p
}

func newProxy(t *testing.T, target string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, target: target}
	p.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.wg.Go(func() { p.serve(c) })
		}
	})
	t.Cleanup(func() {
		ln.Close()
		p.wg.Wait()
	})
	return p
}

func (p *proxy) serve(client net.Conn) {
	defer client.Close()
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	defer server.Close()
	// forward copies src to dst until src ends; once lose is disarmed by
	// it, it closes the client's side and discards the rest.
	forward := func(dst, src net.Conn, lose *atomic.Bool) {
		buf := make([]byte, 64<<10)
		cut := false
		for {
			n, err := src.Read(buf)
			if n > 0 && !cut && lose.CompareAndSwap(true, false) {
				cut = true
				client.Close()
			}
			if n > 0 && !cut {
				if _, err := dst.Write(buf[:n]); err != nil {
					return
				}
			}
			if err != nil {
				return
			}
		}
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		forward(server, client, &p.loseRequest)
		server.(*net.TCPConn).CloseWrite()
	})
	forward(client, server, &p.loseAnswer)
	client.Close()
	wg.Wait()
}

// TestCommitAnswerLost loses a commit's request, then another commit's
// answer, on the way between the store and the server: the first did not
// land and is reported unavailable; the second landed, and Commit learns
// so, numbers its entries and succeeds.
func TestCommitAnswerLost(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := setup(t)
	s, p := f.proxied(t)
	// The same statements once, so that the armed commits send no
	// preparation of their own: their first bytes are the batch.
	if err := s.Commit(ctx, everything(`{}`, 1)); err != nil {
		t.Fatal(err)
	}
	p.loseRequest.Store(true)
	lost := everything(`{"lost":"request"}`, 2)
	if err := s.Commit(ctx, lost); !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("a commit whose request was lost: %v, want store.ErrUnavailable", err)
	}
	if err := s.Commit(ctx, everything(`{}`, 3)); err != nil { // warms a new connection
		t.Fatal(err)
	}
	p.loseAnswer.Store(true)
	landed := everything(`{"lost":"answer"}`, 4)
	if err := s.Commit(ctx, landed); err != nil {
		t.Fatalf("a commit that landed, its answer lost: %v", err)
	}
	if p.loseAnswer.Load() {
		t.Fatal("no answer was lost")
	}
	if landed.Entries[0].Seq != 3 || landed.Alerts[0].ID != 3 || landed.Audit[0].Seq != 3 {
		t.Errorf("the landed commit numbered %d, %d, %d; want 3", landed.Entries[0].Seq, landed.Alerts[0].ID, landed.Audit[0].Seq)
	}
	es, err := s.Journal(ctx, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	var bodies []string
	for _, e := range es {
		bodies = append(bodies, fmt.Sprintf("%d %s", e.Seq, e.Body))
	}
	if diff := cmp.Diff([]string{`1 {}`, `2 {}`, `3 {"lost":"answer"}`}, bodies); diff != "" {
		t.Errorf("journal (-want +got):\n%s", diff)
	}
}

// TestReadOnlyDatabase refuses commits as unavailable while the database
// is read-only, and takes them again after.
func TestReadOnlyDatabase(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := setup(t)
	setRO := func(v string) {
		f.exec(t, `ALTER DATABASE `+pgx.Identifier{f.dbase}.Sanitize()+` SET default_transaction_read_only = `+v)
		f.s.pool.Reset() // new sessions take the setting
	}
	setRO("on")
	if err := f.s.Commit(ctx, everything(`{}`, 1)); !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("a commit into a read-only database: %v", err)
	}
	setRO("off")
	if err := f.s.Commit(ctx, everything(`{}`, 1)); err != nil {
		t.Fatalf("a commit once writable again: %v", err)
	}
	if got := seqs(t, f.s); !cmp.Equal(got, []int64{1}) {
		t.Fatalf("journal after: %v", got)
	}
}

// TestTextOutsideUTF8 stores free texts that PostgreSQL's TEXT cannot
// hold as they are.
func TestTextOutsideUTF8(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := setup(t)
	r := job.Run{ID: 1, Task: "a", Status: job.Failure, Start: t0, End: t0, Message: "bad \xff bytes\x00"}
	if err := f.s.Commit(ctx, &store.Batch{Runs: []job.Run{r}}); err != nil {
		t.Fatal(err)
	}
	rs, err := f.s.Runs(ctx, store.RunQuery{Task: "a"})
	if err != nil || len(rs) != 1 || rs[0].Message != "bad \uFFFD bytes\uFFFD" {
		t.Fatalf("runs = %+v, %v", rs, err)
	}
}

func TestClosed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := setup(t)
	f.s.Close()
	if err := f.s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := f.s.Commit(ctx, everything(`{}`, 1)); !errors.Is(err, store.ErrClosed) {
		t.Errorf("commit after Close: %v", err)
	}
	if _, err := f.s.Runs(ctx, store.RunQuery{}); !errors.Is(err, store.ErrClosed) {
		t.Errorf("runs after Close: %v", err)
	}
}

// TestFireStatementsMigration moves fires kept one a row (migration 11)
// to statements with their keys apart (12), and back: every fire keeps
// its ID when its statement holds it alone, every key stays unique, and
// the sequence goes on above every ID.
func TestFireStatementsMigration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := setup(t)
	db := stdlib.OpenDBFromPool(f.s.Pool())
	defer db.Close()
	p, err := migrator(db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.DownTo(ctx, 11); err != nil {
		t.Fatal(err)
	}
	f.exec(t, `INSERT INTO cluster_fires (task, scheduled, partition, node, epoch, recorded_at) VALUES
		('a', 10, 1, 'c1', 1, 100), ('b', 10, 2, 'c1', 1, 100), ('a', 20, 1, 'c2', 2, 200)`)
	if _, err := p.UpTo(ctx, 12); err != nil {
		t.Fatal(err)
	}
	type statement struct {
		ID        int64
		Node      string
		N         int
		Tasks     []string
		Scheduled []int64
	}
	statements := func() []statement {
		t.Helper()
		rows, err := f.db.Query(ctx, `SELECT id, node, n, tasks, scheduled FROM cluster_fires ORDER BY id`)
		if err != nil {
			t.Fatal(err)
		}
		out, err := pgx.CollectRows(rows, pgx.RowToStructByPos[statement])
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	want := []statement{{1, "c1", 1, []string{"a"}, []int64{10}}, {2, "c1", 1, []string{"b"}, []int64{10}}, {3, "c2", 1, []string{"a"}, []int64{20}}}
	if got := statements(); !cmp.Equal(got, want) {
		t.Fatalf("statements after migrating up: %s", cmp.Diff(want, got))
	}
	var claims int
	if err := f.db.QueryRow(ctx, `SELECT count(*) FROM cluster_claims WHERE (task, scheduled) IN (('a', 10), ('b', 10), ('a', 20))`).Scan(&claims); err != nil || claims != 3 {
		t.Fatalf("%d keys claimed (%v), want 3", claims, err)
	}
	f.exec(t, `INSERT INTO cluster_claims VALUES ('c', 30), ('d', 30)`)
	f.exec(t, `INSERT INTO cluster_fires (partition, node, epoch, recorded_at, n, tasks, scheduled) VALUES (3, 'c2', 2, 300, 2, '{c,d}', '{30,30}')`)
	if got := statements(); len(got) != 4 || got[3].ID != 4 {
		t.Fatalf("a new statement after the migrated ones: %+v", got)
	}

	if _, err := p.DownTo(ctx, 11); err != nil {
		t.Fatal(err)
	}
	rows, err := f.db.Query(ctx, `SELECT id, task, scheduled FROM cluster_fires ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	type fire struct {
		ID        int64
		Task      string
		Scheduled int64
	}
	got, err := pgx.CollectRows(rows, pgx.RowToStructByPos[fire])
	if err != nil {
		t.Fatal(err)
	}
	// The statement of two fires gave them new IDs: the director takes
	// them in again, and counts each occurrence once.
	wantDown := []fire{{1, "a", 10}, {2, "b", 10}, {3, "a", 20}, {5, "c", 30}, {6, "d", 30}}
	if !cmp.Equal(got, wantDown) {
		t.Fatalf("fires after migrating down: %s", cmp.Diff(wantDown, got))
	}
	if _, err := f.db.Exec(ctx, `INSERT INTO cluster_fires (task, scheduled, partition, node, epoch, recorded_at) VALUES ('a', 10, 1, 'c3', 3, 400)`); err == nil {
		t.Fatal("an occurrence recorded twice after migrating down")
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatal(err)
	}
}
