package postgres

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"github.com/gnomon-sched/gnomon/auth"
	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/store"
)

// lease sets the assignment lease, as a director taking the cluster does.
func (f *fixture) lease(t *testing.T, node string, epoch int64) {
	t.Helper()
	f.exec(t, `INSERT INTO cluster_leases (partition, node, epoch) VALUES (-1, $1, $2)
		ON CONFLICT (partition) DO UPDATE SET node = excluded.node, epoch = excluded.epoch`, node, epoch)
}

// waitLocked waits until a session of the database other than the
// fixture's own waits for a lock in a statement that contains what.
func (f *fixture) waitLocked(t *testing.T, what string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var n int
		err := f.db.QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity
			WHERE datname = $1 AND pid != pg_backend_pid() AND wait_event_type = 'Lock' AND strpos(query, $2) > 0`, f.dbase, what).Scan(&n)
		if err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no session waits for a lock in %q", what)
		}
		time.Sleep(5 * time.Millisecond) // polls the server: there is no signal to wait on
	}
}

// TestFencedCommit: a fenced store writes while its director holds the
// assignment lease at its epoch, and refuses every write once the lease
// moved (to another node, or to a new epoch of the same one): the error
// is store.ErrFenced naming both epochs, not store.ErrUnavailable, and
// nothing of the write is stored. A store that is not fenced commits
// whatever the lease, and sends no check.
func TestFencedCommit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := setup(t)
	f.lease(t, "d1", 1)
	if c, err := newCommit(everything(`{}`, 1), nil); err != nil || strings.Contains(sqlOf(c), "gnomon_fence") {
		t.Fatalf("an unfenced commit checks the lease (%v)", err)
	}
	f.s.Fence("d1", 1)
	if err := f.s.Commit(ctx, everything(`{"n":1}`, 1)); err != nil {
		t.Fatalf("a commit under the lease: %v", err)
	}
	if err := f.s.SetCursors(ctx, map[string]int64{"c": 1}); err != nil {
		t.Fatalf("cursors under the lease: %v", err)
	}
	tok := auth.Token{ID: "t1", Name: "ops", Role: auth.Admin, Hash: []byte("h1"), Created: t0}
	if err := f.s.AddToken(ctx, tok); err != nil {
		t.Fatalf("a token under the lease: %v", err)
	}
	if err := f.s.AddToken(ctx, tok); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("a token named again under the lease: %v, want ErrConflict", err)
	}
	for _, moved := range []struct {
		node  string
		epoch int64
		want  string
	}{
		{"d2", 2, "another director holds the cluster (d2 at epoch 2; this director, d1, held epoch 1)"},
		{"d1", 3, "another director holds the cluster (d1 at epoch 3; this director, d1, held epoch 1)"},
		{"", 3, "another director holds the cluster (no node at epoch 3; this director, d1, held epoch 1)"},
	} {
		f.lease(t, moved.node, moved.epoch)
		before := f.contents(t)
		err := f.s.Commit(ctx, everything(`{"n":2}`, 2))
		if !errors.Is(err, store.ErrFenced) || errors.Is(err, store.ErrUnavailable) || !strings.Contains(err.Error(), "fenced: "+moved.want) {
			t.Fatalf("a commit after the lease moved to %s at %d: %v", moved.node, moved.epoch, err)
		}
		if err := f.s.SetCursors(ctx, map[string]int64{"c": 2}); !errors.Is(err, store.ErrFenced) {
			t.Fatalf("cursors after the lease moved: %v", err)
		}
		if v, err := f.s.Cursor(ctx, "c"); err != nil || v != 1 {
			t.Fatalf("cursor %d (%v), want 1", v, err)
		}
		if err := f.s.AddToken(ctx, auth.Token{ID: "t2", Name: "late", Role: auth.Admin, Hash: []byte("h2"), Created: t0}); !errors.Is(err, store.ErrFenced) {
			t.Fatalf("a token added after the lease moved: %v", err)
		}
		if err := f.s.RevokeToken(ctx, "t1", t0); !errors.Is(err, store.ErrFenced) {
			t.Fatalf("a token revoked after the lease moved: %v", err)
		}
		a := &job.Alert{ID: 1, Task: "a", Created: t0, State: job.AlertSent}
		if err := f.s.RecordAttempt(ctx, a, job.Attempt{Alert: 1, At: t0}); !errors.Is(err, store.ErrFenced) {
			t.Fatalf("an alert's attempt after the lease moved: %v", err)
		}
		if diff := cmp.Diff(before, f.contents(t)); diff != "" {
			t.Errorf("fenced writes changed tables (-before +after):\n%s", diff)
		}
	}
	if got := seqs(t, f.s); !cmp.Equal(got, []int64{1}) {
		t.Errorf("journal %v, want only the commit under the lease", got)
	}
	// One server's store on the same database is not fenced.
	one, err := Open(ctx, f.url)
	if err != nil {
		t.Fatal(err)
	}
	defer one.Close()
	if err := one.Commit(ctx, everything(`{}`, 3)); err != nil {
		t.Fatalf("an unfenced store: %v", err)
	}
	// The director holds the lease again at its epoch: it commits, over
	// the same connections, numbered without a gap.
	f.lease(t, "d1", 1)
	b := everything(`{}`, 4)
	if err := f.s.Commit(ctx, b); err != nil || b.Entries[0].Seq != 3 {
		t.Fatalf("a commit under the lease again: seq %d, %v", b.Entries[0].Seq, err)
	}
	if err := f.s.RevokeToken(ctx, "t1", t0); err != nil {
		t.Fatalf("a token revoked under the lease again: %v", err)
	}
	if err := f.s.RevokeToken(ctx, "t1", t0); !errors.Is(err, store.ErrNoToken) {
		t.Fatalf("a token revoked twice: %v, want ErrNoToken", err)
	}
}

// sqlOf returns the statements of a commit.
func sqlOf(c *commit) string {
	var b strings.Builder
	for _, q := range c.q.QueuedQueries {
		b.WriteString(q.SQL)
		b.WriteString(";\n")
	}
	return b.String()
}

// TestFenceOrdersTakeover: a director taking the lease over waits for a
// fenced commit in flight, which lands (the new director's restore sees
// it); a commit that reaches the lease while the takeover is in flight
// waits for it, and is refused. Every commit is either before the
// takeover or refused.
func TestFenceOrdersTakeover(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := setup(t)
	f.lease(t, "d1", 1)
	f.s.Fence("d1", 1)
	if err := f.s.Commit(ctx, everything(`{"n":1}`, 1)); err != nil {
		t.Fatal(err)
	}
	other, err := pgx.Connect(ctx, f.url)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close(ctx)

	// A commit in flight: it holds the lease FOR SHARE and waits, further
	// on, for a task row the test holds.
	block, err := other.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := block.Exec(ctx, `SELECT 1 FROM tasks WHERE name = 't1' FOR UPDATE`); err != nil {
		t.Fatal(err)
	}
	committed := make(chan error, 1)
	go func() { committed <- f.s.Commit(ctx, everything(`{"n":2}`, 1)) }()
	f.waitLocked(t, "INSERT INTO tasks")
	took := make(chan error, 1)
	go func() {
		_, err := f.db.Exec(ctx, `UPDATE cluster_leases SET node = 'd2', epoch = epoch + 1 WHERE partition = -1`)
		took <- err
	}()
	// The takeover waits for the commit: it cannot end before it. It is
	// watched from a session of its own: inside block's transaction
	// pg_stat_activity would be read once and kept (the statistics'
	// snapshot lasts the transaction), missing a wait that began later.
	watch, err := pgx.Connect(ctx, f.url)
	if err != nil {
		t.Fatal(err)
	}
	defer watch.Close(ctx)
	deadline := time.Now().Add(30 * time.Second)
	for {
		var waiting int
		if err := watch.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = $1 AND wait_event_type = 'Lock'
			AND strpos(query, 'UPDATE cluster_leases') > 0`, f.dbase).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting > 0 {
			break
		}
		select {
		case err := <-took:
			t.Fatalf("the takeover did not wait for the commit in flight (%v)", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the takeover neither waits nor ends")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := block.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-committed; err != nil {
		t.Fatalf("the commit in flight before the takeover: %v", err)
	}
	if err := <-took; err != nil {
		t.Fatal(err)
	}
	if got := seqs(t, f.s); !cmp.Equal(got, []int64{1, 2}) {
		t.Fatalf("journal %v: the commit before the takeover is not there", got)
	}

	// A takeover in flight (not committed yet): a commit waits for it and
	// is refused once it commits.
	f.lease(t, "d1", 1)
	takeover, err := other.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := takeover.Exec(ctx, `UPDATE cluster_leases SET node = 'd2', epoch = 2 WHERE partition = -1`); err != nil {
		t.Fatal(err)
	}
	before := f.contents(t)
	go func() { committed <- f.s.Commit(ctx, everything(`{"n":3}`, 1)) }()
	f.waitLocked(t, "gnomon_fence")
	if err := takeover.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-committed; !errors.Is(err, store.ErrFenced) || !strings.Contains(err.Error(), "d2 at epoch 2") {
		t.Fatalf("a commit that waited for the takeover: %v, want store.ErrFenced", err)
	}
	if diff := cmp.Diff(before, f.contents(t)); diff != "" {
		t.Errorf("the refused commit changed tables (-before +after):\n%s", diff)
	}
}

// TestFencedAnswerLost: a fenced commit whose answer is lost did not land:
// it is reported unavailable, and the commit retried is refused as
// fenced, not left in doubt.
func TestFencedAnswerLost(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := setup(t)
	s, p := f.proxied(t)
	f.lease(t, "d1", 1)
	s.Fence("d1", 1)
	// The same statements once, so that the armed commit sends no
	// preparation of its own.
	if err := s.Commit(ctx, everything(`{}`, 1)); err != nil {
		t.Fatal(err)
	}
	f.lease(t, "d2", 2)
	p.loseAnswer.Store(true)
	b := everything(`{"lost":"answer"}`, 2)
	if err := s.Commit(ctx, b); !errors.Is(err, store.ErrUnavailable) || errors.Is(err, store.ErrFenced) {
		t.Fatalf("a fenced commit whose answer was lost: %v, want store.ErrUnavailable", err)
	}
	if p.loseAnswer.Load() {
		t.Fatal("no answer was lost")
	}
	if s.doubt != nil {
		t.Fatal("the refused commit is left in doubt")
	}
	if err := s.Commit(ctx, b); !errors.Is(err, store.ErrFenced) {
		t.Fatalf("the commit retried: %v, want store.ErrFenced", err)
	}
	if got := seqs(t, s); !cmp.Equal(got, []int64{1}) {
		t.Errorf("journal %v", got)
	}
}
