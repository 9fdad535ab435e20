package postgres

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/clock"
	"github.com/gnomon-sched/gnomon/cluster"
	"github.com/gnomon-sched/gnomon/internal/pgtest"
	"github.com/jackc/pgx/v5"
)

// clusterT0 is where the cluster tests' clocks start.
var clusterT0 = time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)

// registry opens a fresh database, migrated by the store, and a registry
// on it with a small space.
func registry(t testing.TB, space cluster.Space) *Registry {
	t.Helper()
	return registryFor(t, space, 5*time.Second)
}

// registryFor is registry with nodes dead after timeout of silence.
func registryFor(t testing.TB, space cluster.Space, timeout time.Duration) *Registry {
	t.Helper()
	ctx := context.Background()
	st, err := Open(ctx, pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	r, err := NewRegistry(ctx, st.Pool(), space, timeout)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func register(t *testing.T, r *Registry, id string, at time.Time, roles ...string) {
	t.Helper()
	if err := r.Register(context.Background(), cluster.Node{ID: id, Roles: roles, Version: "test"}, at); err != nil {
		t.Fatal(err)
	}
}

// rebalance is director's round at at, as a director node plays it: it
// takes the assignment lease first if it does not hold it and can take it
// (as a director does when it starts), then rebalances at its epoch.
func rebalance(t *testing.T, r *Registry, director string, at time.Time) cluster.Balance {
	t.Helper()
	b, err := r.Rebalance(context.Background(), director, directorEpoch(t, r, director, at), at, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// directorEpoch returns the epoch at which director holds the assignment
// lease, taking it at at first if it does not hold it and can take it;
// if another director holds it, it returns the holder's epoch.
func directorEpoch(t testing.TB, r *Registry, director string, at time.Time) int64 {
	t.Helper()
	ctx := context.Background()
	var holder string
	var epoch int64
	if err := r.pool.QueryRow(ctx, `SELECT node, epoch FROM cluster_leases WHERE partition = -1`).Scan(&holder, &epoch); err != nil {
		t.Fatal(err)
	}
	if holder != director {
		e, err := r.TakeDirector(ctx, cluster.Node{ID: director}, at)
		switch {
		case errors.Is(err, cluster.ErrOtherDirector):
		case err != nil:
			t.Fatal(err)
		default:
			epoch = e
		}
	}
	return epoch
}

// soleClock registers id as the director and the only clock node of r
// (a space of one spot and one partition, so 60 partitions with the
// dedicated ones) and returns its leases.
func soleClock(t *testing.T, r *Registry, id string) []cluster.Lease {
	t.Helper()
	register(t, r, id, clusterT0, cluster.RoleClock, cluster.RoleDirector)
	rebalance(t, r, id, clusterT0)
	ls, err := r.Heartbeat(context.Background(), id, clusterT0)
	if err != nil || len(ls) != 60 {
		t.Fatalf("%s's leases: %v (%v)", id, ls, err)
	}
	return ls
}

func owned(t *testing.T, r *Registry) map[string][]int {
	t.Helper()
	nodes, err := r.Nodes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]int{}
	for _, n := range nodes {
		out[n.ID] = n.Partitions
	}
	return out
}

// Nodes register, share the partitions evenly, and a node that falls
// silent is found dead after the timeout: its partitions go to the others
// at a new epoch, the moves say why, and its heartbeat is refused until
// it registers again.
func TestRegistrationAndHealth(t *testing.T) {
	ctx := context.Background()
	r := registry(t, cluster.Space{Size: 4, Partitions: 4}) // 4 + 59 partitions
	register(t, r, "d1", clusterT0, cluster.RoleDirector)
	register(t, r, "c1", clusterT0, cluster.RoleClock, cluster.RoleWorker)
	register(t, r, "c2", clusterT0, cluster.RoleClock)
	b := rebalance(t, r, "d1", clusterT0)
	if !b.Leader || len(b.Moves) != 63 || len(b.Dead) != 0 {
		t.Fatalf("first rebalance: leader %v, %d moves, dead %v", b.Leader, len(b.Moves), b.Dead)
	}
	own := owned(t, r)
	if len(own["c1"])+len(own["c2"]) != 63 || len(own["c1"]) < 31 || len(own["c2"]) < 31 || len(own["d1"]) != 0 {
		t.Fatalf("owned: %v", own)
	}
	if b := rebalance(t, r, "d2", clusterT0); b.Leader {
		t.Fatal("a second director took the assignment while the first holds it")
	}

	// c2 goes silent; c1 and d1 heartbeat.
	at := clusterT0.Add(4 * time.Second)
	for _, id := range []string{"c1", "d1"} {
		if _, err := r.Heartbeat(ctx, id, at); err != nil {
			t.Fatal(err)
		}
	}
	if b := rebalance(t, r, "d1", at); len(b.Dead) != 0 || len(b.Moves) != 0 {
		t.Fatalf("before the timeout: %+v", b)
	}
	at = clusterT0.Add(5*time.Second + time.Millisecond)
	leases, err := r.Heartbeat(ctx, "c1", at)
	if err != nil {
		t.Fatal(err)
	}
	before := map[int]int64{}
	for _, l := range leases {
		before[l.Partition] = l.Epoch
	}
	r.Heartbeat(ctx, "d1", at)
	b = rebalance(t, r, "d1", at)
	if !slices.Equal(b.Dead, []string{"c2"}) || len(b.Moves) != len(own["c2"]) {
		t.Fatalf("after the timeout: dead %v, %d moves", b.Dead, len(b.Moves))
	}
	for _, m := range b.Moves {
		if m.From != "c2" || m.To != "c1" {
			t.Fatalf("move %+v", m)
		}
	}
	leases, err = r.Heartbeat(ctx, "c1", at)
	if err != nil || len(leases) != 63 {
		t.Fatalf("c1 owns %d partitions (%v)", len(leases), err)
	}
	for _, l := range leases {
		if e, kept := before[l.Partition]; kept && e != l.Epoch {
			t.Fatalf("a partition c1 kept changed epoch: %+v, was %d", l, e)
		}
	}
	if _, err := r.Heartbeat(ctx, "c2", at); !errors.Is(err, cluster.ErrNotRegistered) {
		t.Fatalf("a dead node's heartbeat: %v", err)
	}
	moves, err := r.Moves(ctx, 1)
	if err != nil || len(moves) != 1 || moves[0].Reason != "node c2 died" || moves[0].Epoch != 2 {
		t.Fatalf("the last move: %+v (%v)", moves, err)
	}
	nodes, _ := r.Nodes(ctx)
	for _, n := range nodes {
		if n.ID == "c2" && (n.State != cluster.Dead || !n.Ended.Equal(at)) {
			t.Fatalf("c2: %+v", n)
		}
	}

	// The director falls silent too: another takes the assignment once its
	// lease has expired, and c2, back, gets its share again.
	register(t, r, "c2", at, cluster.RoleClock)
	if b := rebalance(t, r, "d2", at.Add(time.Second)); b.Leader {
		t.Fatal("d2 took the assignment before d1's lease expired")
	}
	later := at.Add(6 * time.Second)
	r.Heartbeat(ctx, "c1", later)
	r.Heartbeat(ctx, "c2", later)
	register(t, r, "d2", later, cluster.RoleDirector)
	b = rebalance(t, r, "d2", later)
	if !b.Leader || !slices.Equal(b.Dead, []string{"d1"}) || len(b.Moves) != 31 {
		t.Fatalf("d2's rebalance: %+v", b)
	}
}

// A standby takes the cluster over from a director whose lease expired
// only after watching it a node timeout unrenewed: a director back from
// an outage of the database renews it meanwhile and keeps the cluster.
func TestTakeOverWatchesAnExpiredLease(t *testing.T) {
	ctx := context.Background()
	r0 := registry(t, cluster.Space{Size: 60, Partitions: 4})
	const timeout = 2 * time.Second
	r, err := NewRegistry(ctx, r0.pool, r0.space, timeout)
	if err != nil {
		t.Fatal(err)
	}
	// d1's lease expired a second ago (it could not renew it).
	e1, err := r.TakeDirector(ctx, cluster.Node{ID: "d1"}, time.Now().Add(-timeout-time.Second))
	if err != nil {
		t.Fatal(err)
	}
	// d1 is alive: it renews at its next round, while d2 watches.
	renewed := make(chan error, 1)
	log, watching := watchLog()
	go func() {
		<-watching
		_, err := r.Rebalance(ctx, "d1", e1, time.Now(), time.Time{})
		renewed <- err
	}()
	if _, err := cluster.TakeOver(ctx, r, cluster.Node{ID: "d2"}, clock.Wall, log); !errors.Is(err, cluster.ErrOtherDirector) {
		t.Fatalf("a standby starting as the director's lease is renewed: %v, want ErrOtherDirector", err)
	}
	if !closed(watching) {
		t.Fatal("TakeOver did not watch the expired lease")
	}
	if err := <-renewed; err != nil {
		t.Fatal(err)
	}
	// d1 is gone: its last renewal expired a second ago, and nothing
	// renews it while d2 watches.
	if _, err := r.Rebalance(ctx, "d1", e1, time.Now().Add(-timeout-time.Second), time.Time{}); err != nil {
		t.Fatal(err)
	}
	e2, err := cluster.TakeOver(ctx, r, cluster.Node{ID: "d2"}, clock.Wall, nil)
	if err != nil || e2 != e1+1 {
		t.Fatalf("a standby after a dead director: epoch %d (%v), want %d", e2, err, e1+1)
	}
	// A lease renewed while it was watched, though expired again by the
	// end of the watch, is not taken: its holder is alive.
	if _, err := r.Rebalance(ctx, "d2", e2, time.Now().Add(-timeout-time.Second), time.Time{}); err != nil {
		t.Fatal(err)
	}
	log, watching = watchLog()
	go func() {
		<-watching
		_, err := r.Rebalance(ctx, "d2", e2, time.Now().Add(-timeout-time.Second/2), time.Time{})
		renewed <- err
	}()
	if _, err := cluster.TakeOver(ctx, r, cluster.Node{ID: "d1"}, clock.Wall, log); !errors.Is(err, cluster.ErrOtherDirector) {
		t.Fatalf("a standby watching a lease renewed meanwhile: %v, want ErrOtherDirector", err)
	}
	if !closed(watching) {
		t.Fatal("TakeOver did not watch the expired lease")
	}
	if err := <-renewed; err != nil {
		t.Fatal(err)
	}
	// The director itself, restarted under its name, takes its expired
	// lease back without watching it (which this context would cut off).
	quick, cancel := context.WithTimeout(ctx, timeout/2)
	defer cancel()
	if e3, err := cluster.TakeOver(quick, r, cluster.Node{ID: "d2"}, clock.Func(func() time.Time { return time.Now().Add(time.Hour) }), nil); err != nil || e3 != e2+1 {
		t.Fatalf("the holder again: epoch %d (%v)", e3, err)
	}
}

// watchLog returns a logger for TakeOver, and a channel closed once
// TakeOver has read an expired lease and begins to watch it: a renewal
// after that comes during the watch, however slow the machine.
func watchLog() (*slog.Logger, <-chan struct{}) {
	h := &watchHandler{watching: make(chan struct{})}
	return slog.New(h), h.watching
}

// closed reports whether ch is closed.
func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

type watchHandler struct {
	once     sync.Once
	watching chan struct{}
}

func (h *watchHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h *watchHandler) WithAttrs([]slog.Attr) slog.Handler { return h }

func (h *watchHandler) WithGroup(string) slog.Handler { return h }

func (h *watchHandler) Handle(_ context.Context, r slog.Record) error {
	if strings.Contains(r.Message, "the director's lease has expired: watching it") {
		h.once.Do(func() { close(h.watching) })
	}
	return nil
}

// A standby waits while the director renews its lease, and takes the
// cluster over as soon as the director leaves, or once its lease expired
// and stayed unrenewed for a timeout.
func TestAwaitDirector(t *testing.T) {
	ctx := context.Background()
	r0 := registry(t, cluster.Space{Size: 60, Partitions: 4})
	const timeout = time.Second
	r, err := NewRegistry(ctx, r0.pool, r0.space, timeout)
	if err != nil {
		t.Fatal(err)
	}
	await := func(id string) <-chan int64 {
		took := make(chan int64, 1)
		go func() {
			e, err := cluster.AwaitDirector(ctx, r, cluster.Node{ID: id}, clock.Wall, nil)
			if err != nil {
				t.Errorf("%s: %v", id, err)
			}
			took <- e
		}()
		return took
	}
	e1, err := r.TakeDirector(ctx, cluster.Node{ID: "d1"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	took := await("d2")
	// d1 renews for three timeouts: d2 waits.
	for range 15 {
		if _, err := r.Rebalance(ctx, "d1", e1, time.Now(), time.Time{}); err != nil {
			t.Fatal(err)
		}
		select {
		case e := <-took:
			t.Fatalf("d2 took the cluster at epoch %d while d1 renewed its lease", e)
		case <-time.After(timeout / 5):
		}
	}
	// d1 leaves: d2 takes over at its next read of the lease.
	if err := r.Leave(ctx, "d1", e1, time.Now()); err != nil {
		t.Fatal(err)
	}
	var e2 int64
	select {
	case e2 = <-took:
	case <-time.After(2 * timeout):
		t.Fatal("d2 did not take the cluster over within two beats of d1 leaving")
	}
	if d, err := r.Director(ctx); err != nil || d.ID != "d2" || d.Epoch != e2 || e2 != e1+1 {
		t.Fatalf("the director after d1 left: %+v (%v), want d2 at epoch %d", d, err, e1+1)
	}
	// d2 dies: d3 takes over once the lease expired and it watched it
	// unrenewed for a timeout.
	renewed := time.Now()
	if _, err := r.Rebalance(ctx, "d2", e2, renewed, time.Time{}); err != nil {
		t.Fatal(err)
	}
	e3 := <-await("d3")
	if waited := time.Since(renewed); e3 != e2+1 || waited < 2*timeout {
		t.Fatalf("d3 took the cluster at epoch %d, %s after d2's last renewal; want epoch %d, after two timeouts", e3, waited, e2+1)
	}
}

// A node is found dead only for a silence within the director's watch:
// after a break (the database was down, every node silent with it), each
// has a timeout to heartbeat again.
func TestSilenceWithinWatch(t *testing.T) {
	ctx := context.Background()
	r := registry(t, cluster.Space{Size: 4, Partitions: 4})
	register(t, r, "d1", clusterT0, cluster.RoleDirector)
	register(t, r, "c1", clusterT0, cluster.RoleClock)
	register(t, r, "c2", clusterT0, cluster.RoleClock)
	rebalance(t, r, "d1", clusterT0)
	epoch := directorEpoch(t, r, "d1", clusterT0)
	// Every node silent for 30 s; the director's watch starts again as
	// the database comes back.
	back := clusterT0.Add(30 * time.Second)
	r.Heartbeat(ctx, "d1", back)
	for _, at := range []time.Time{back, back.Add(5 * time.Second)} {
		b, err := r.Rebalance(ctx, "d1", epoch, at, back)
		if err != nil || !b.Leader || len(b.Dead) != 0 || len(b.Moves) != 0 {
			t.Fatalf("at %s, watching since the database came back: %+v, %v", at.Sub(clusterT0), b, err)
		}
	}
	// c1 heartbeats within the timeout of the watch; c2 does not.
	r.Heartbeat(ctx, "c1", back.Add(3*time.Second))
	at := back.Add(5*time.Second + time.Millisecond)
	r.Heartbeat(ctx, "d1", at)
	b, err := r.Rebalance(ctx, "d1", epoch, at, back)
	if err != nil || !slices.Equal(b.Dead, []string{"c2"}) {
		t.Fatalf("a timeout into the watch: dead %v, want c2 (%v)", b.Dead, err)
	}
}

// A fire is recorded once per occurrence, only under the current owner's
// lease at its epoch: a node that lost the partition is fenced off even
// if it does not know yet, and the new owner records what is new.
func TestFencedFires(t *testing.T) {
	ctx := context.Background()
	r := registry(t, cluster.Space{Size: 1, Partitions: 1})
	la := soleClock(t, r, "a")
	f := cluster.Fire{Task: "nightly", Scheduled: clusterT0}
	if ok, err := r.Record(ctx, "a", la[0], f, clusterT0); !ok || err != nil {
		t.Fatalf("first record: %v, %v", ok, err)
	}
	if ok, err := r.Record(ctx, "a", la[0], f, clusterT0); ok || err != nil {
		t.Fatalf("the same occurrence again: %v, %v", ok, err)
	}
	// b joins; a is paused and does not hear of it.
	register(t, r, "b", clusterT0, cluster.RoleClock)
	b := rebalance(t, r, "a", clusterT0.Add(time.Second))
	stale := la[len(la)-1] // a keeps its lower half
	var moved cluster.Move
	for _, m := range b.Moves {
		if m.Partition == stale.Partition {
			moved = m
		}
	}
	if moved.To == "b" {
		f2 := cluster.Fire{Task: "nightly", Scheduled: clusterT0.Add(time.Hour)}
		if _, err := r.Record(ctx, "a", stale, f2, clusterT0.Add(time.Hour)); !errors.Is(err, cluster.ErrFenced) {
			t.Fatalf("a fire under a lost lease: %v", err)
		}
		lb, _ := r.Heartbeat(ctx, "b", clusterT0.Add(time.Hour))
		i := slices.IndexFunc(lb, func(l cluster.Lease) bool { return l.Partition == stale.Partition })
		if i < 0 || lb[i].Epoch != stale.Epoch+1 {
			t.Fatalf("b's leases %v", lb)
		}
		if ok, err := r.Record(ctx, "b", lb[i], f2, clusterT0.Add(time.Hour)); !ok || err != nil {
			t.Fatalf("the new owner's record: %v, %v", ok, err)
		}
	} else {
		t.Fatalf("partition %d stayed with %q: %+v", stale.Partition, moved.To, b.Moves)
	}
	last, err := r.Last(ctx, []string{"nightly", "other"})
	if err != nil || len(last) != 1 || !last["nightly"].Equal(clusterT0.Add(time.Hour)) {
		t.Fatalf("last: %v (%v)", last, err)
	}
	fires, err := r.Fires(ctx, 0, 10)
	if err != nil || len(fires) != 2 || fires[0].Node != "a" || fires[1].Node != "b" {
		t.Fatalf("fires: %+v (%v)", fires, err)
	}
}

// Two nodes race to record the same occurrences while the partition moves
// back and forth between them: every occurrence is recorded exactly once,
// and never under a lease its recorder had lost when it was recorded.
func TestFiresRaceMoves(t *testing.T) {
	// A bound for a hang: on a loaded machine the race of a hundred
	// occurrences takes minutes.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	r := registry(t, cluster.Space{Size: 1, Partitions: 1})
	const n = 100
	var wg sync.WaitGroup
	stop := make(chan struct{})
	// The director moves partition 0 between a and b by draining and
	// re-registering them in turn.
	register(t, r, "a", clusterT0, cluster.RoleClock)
	register(t, r, "b", clusterT0, cluster.RoleClock)
	rebalance(t, r, "d", clusterT0)
	var epoch int64
	if err := r.pool.QueryRow(ctx, `SELECT epoch FROM cluster_leases WHERE partition = -1`).Scan(&epoch); err != nil {
		t.Fatal(err)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			who := []string{"a", "b"}[i%2]
			if err := r.Drain(ctx, who); err != nil {
				t.Error(err)
				cancel()
				return
			}
			if _, err := r.Rebalance(ctx, "d", epoch, clusterT0, time.Time{}); err != nil {
				t.Error(err)
				cancel()
				return
			}
			if err := r.Register(ctx, cluster.Node{ID: who, Roles: []string{cluster.RoleClock}}, clusterT0); err != nil {
				t.Error(err)
				cancel()
				return
			}
		}
	}()
	var workers sync.WaitGroup
	for _, node := range []string{"a", "b"} {
		workers.Add(1)
		go func() {
			defer workers.Done()
			for i := 0; i < n && ctx.Err() == nil; {
				leases, err := r.Heartbeat(ctx, node, clusterT0)
				if err != nil || len(leases) == 0 || leases[0].Partition != 0 {
					continue // not the owner of partition 0 now
				}
				_, err = r.Record(ctx, node, leases[0], cluster.Fire{Task: "t", Scheduled: clusterT0.Add(time.Duration(i) * time.Minute)}, clusterT0)
				switch {
				case errors.Is(err, cluster.ErrFenced):
					continue // moved meanwhile: ask again
				case err != nil:
					t.Error(err)
					return
				}
				i++ // recorded, by this node or the other
			}
		}()
	}
	workers.Wait()
	close(stop)
	wg.Wait()
	fires, err := r.Fires(ctx, 0, 2*n)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[time.Time]bool{}
	for _, f := range fires {
		if seen[f.Scheduled] {
			t.Fatalf("occurrence %s recorded twice", f.Scheduled)
		}
		seen[f.Scheduled] = true
	}
	if len(fires) != n {
		t.Fatalf("%d occurrences recorded, want %d", len(fires), n)
	}
	// Every fire carries the epoch its recorder held then: the moves'
	// epochs say who owned partition 0 at each epoch.
	moves, err := r.Moves(ctx, 100000)
	if err != nil {
		t.Fatal(err)
	}
	owner := map[int64]string{}
	for _, m := range moves {
		if m.Partition == 0 {
			owner[m.Epoch] = m.To
		}
	}
	for _, f := range fires {
		if owner[f.Epoch] != f.Node {
			t.Fatalf("fire %+v recorded by %s at epoch %d, which %q held", f.Fire, f.Node, f.Epoch, owner[f.Epoch])
		}
	}
}

// TestOneDirector: a second director cannot start while the first holds
// the lease; it can once the first left, or once its lease expired.
func TestOneDirector(t *testing.T) {
	ctx := context.Background()
	r := registry(t, cluster.Space{Size: 60, Partitions: 4})
	d1, d2 := cluster.Node{ID: "d1"}, cluster.Node{ID: "d2"}
	if _, err := r.TakeDirector(ctx, d1, clusterT0); err != nil {
		t.Fatal(err)
	}
	if _, err := r.TakeDirector(ctx, d1, clusterT0.Add(time.Second)); err != nil {
		t.Fatalf("the holder again: %v", err)
	}
	if _, err := r.TakeDirector(ctx, d2, clusterT0.Add(2*time.Second)); !errors.Is(err, cluster.ErrOtherDirector) {
		t.Fatalf("a second director: %v, want ErrOtherDirector", err)
	}
	// d1's lease (taken at clusterT0+1s, for 5 s) expires.
	e2, err := r.TakeDirector(ctx, d2, clusterT0.Add(7*time.Second))
	if err != nil {
		t.Fatalf("after the lease expired: %v", err)
	}
	register(t, r, "d2", clusterT0.Add(7*time.Second), cluster.RoleDirector)
	if err := r.Leave(ctx, "d2", e2, clusterT0.Add(8*time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := r.TakeDirector(ctx, d1, clusterT0.Add(8*time.Second)); err != nil {
		t.Fatalf("after the holder left: %v", err)
	}
}

// leaseOf returns the assignment lease as stored.
func leaseOf(t *testing.T, r *Registry) (node string, epoch, expires int64) {
	t.Helper()
	if err := r.pool.QueryRow(context.Background(), `SELECT node, epoch, expires_at FROM cluster_leases WHERE partition = -1`).
		Scan(&node, &epoch, &expires); err != nil {
		t.Fatal(err)
	}
	return node, epoch, expires
}

// TestDirectorEpochs: every take of the assignment lease moves its epoch
// on, by the same node too; a director that lost it (to a restart of its
// own name, or to a standby once it expired) rebalances nothing and frees
// nothing at its old epoch, even once the new holder's lease expired,
// while the holder renews at its epoch whether or not it expired.
func TestDirectorEpochs(t *testing.T) {
	ctx := context.Background()
	r := registry(t, cluster.Space{Size: 4, Partitions: 4})
	register(t, r, "c1", clusterT0, cluster.RoleClock)
	e1, err := r.TakeDirector(ctx, cluster.Node{ID: "d1"}, clusterT0)
	if err != nil {
		t.Fatal(err)
	}
	// d1 is started again under its name: a new holder.
	e2, err := r.TakeDirector(ctx, cluster.Node{ID: "d1"}, clusterT0.Add(time.Second))
	if err != nil || e2 != e1+1 {
		t.Fatalf("the same node again: epoch %d (%v), want %d", e2, err, e1+1)
	}
	_, _, expires := leaseOf(t, r)
	b, err := r.Rebalance(ctx, "d1", e1, clusterT0.Add(2*time.Second), time.Time{})
	if err != nil || b.Leader || b.Holder != "d1" || b.Epoch != e2 || len(b.Moves) != 0 {
		t.Fatalf("a rebalance at the former epoch: %+v (%v)", b, err)
	}
	if _, _, e := leaseOf(t, r); e != expires {
		t.Fatalf("the former epoch renewed the lease: expires %d, was %d", e, expires)
	}
	if own := owned(t, r); len(own["c1"]) != 0 {
		t.Fatalf("the former epoch assigned partitions: %v", own)
	}

	// d1 (at e2) is paused past its lease; d2 takes the cluster over.
	late := clusterT0.Add(10 * time.Second)
	e3, err := r.TakeDirector(ctx, cluster.Node{ID: "d2"}, late)
	if err != nil || e3 != e2+1 {
		t.Fatalf("the standby: epoch %d (%v), want %d", e3, err, e2+1)
	}
	// d1 resumes after d2's lease expired too: it does not take it back.
	later := late.Add(time.Minute)
	if b, err := r.Rebalance(ctx, "d1", e2, later, time.Time{}); err != nil || b.Leader || b.Holder != "d2" || b.Epoch != e3 {
		t.Fatalf("the deposed director's rebalance: %+v (%v)", b, err)
	}
	if node, epoch, _ := leaseOf(t, r); node != "d2" || epoch != e3 {
		t.Fatalf("lease %s at %d after the deposed director's rebalance", node, epoch)
	}
	// Nor does it free it when it leaves.
	if err := r.Leave(ctx, "d1", e2, later); err != nil {
		t.Fatal(err)
	}
	if node, epoch, _ := leaseOf(t, r); node != "d2" || epoch != e3 {
		t.Fatalf("lease %s at %d after the deposed director left", node, epoch)
	}
	// The holder renews at its epoch, expired or not.
	if _, err := r.Heartbeat(ctx, "c1", later); err != nil {
		t.Fatal(err)
	}
	b, err = r.Rebalance(ctx, "d2", e3, later, time.Time{})
	if err != nil || !b.Leader || len(b.Moves) == 0 {
		t.Fatalf("the holder's rebalance: %+v (%v)", b, err)
	}
	if _, err := r.TakeDirector(ctx, cluster.Node{ID: "d3"}, later.Add(time.Second)); !errors.Is(err, cluster.ErrOtherDirector) {
		t.Fatalf("a third director while d2 renewed: %v", err)
	}
	// Leaving at its epoch frees it.
	if err := r.Leave(ctx, "d2", e3, later.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if e4, err := r.TakeDirector(ctx, cluster.Node{ID: "d3"}, later.Add(time.Second)); err != nil || e4 != e3+1 {
		t.Fatalf("after d2 left: epoch %d (%v)", e4, err)
	}
}

// TestNodeSettings: a clock node must run with the director's zone and
// space; one that does not is refused when it registers, or at its
// heartbeat when a director with other settings took the cluster over,
// and the error names both values and the flag to fix. Workers, directors
// and zones without a name are not checked.
func TestNodeSettings(t *testing.T) {
	ctx := context.Background()
	r := registry(t, cluster.DefaultSpace)
	wide, err := NewRegistry(ctx, r.pool, cluster.Space{Size: 1440, Partitions: 60}, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	// Before any director recorded its settings, nothing is compared.
	if err := wide.Register(ctx, cluster.Node{ID: "early", Roles: []string{cluster.RoleClock}, Zone: "Asia/Tokyo"}, clusterT0); err != nil {
		t.Fatal(err)
	}
	if _, err := r.TakeDirector(ctx, cluster.Node{ID: "dir", Zone: "Europe/Paris"}, clusterT0); err != nil {
		t.Fatal(err)
	}
	// The early node learns it at its next heartbeat.
	_, err = wide.Heartbeat(ctx, "early", clusterT0)
	for _, want := range []string{"node early runs with --timezone Asia/Tokyo but the director (dir) with --timezone Europe/Paris: start it with the director's --timezone",
		"node early runs with --space 1440 but the director (dir) with --space 60: start it with the director's --space"} {
		if !errors.Is(err, cluster.ErrSettings) || !strings.Contains(err.Error(), want) {
			t.Fatalf("the early node's heartbeat: %v, want %q", err, want)
		}
	}
	for _, tc := range []struct {
		name string
		reg  *Registry
		node cluster.Node
		want string // "" when it registers
	}{
		{"same", r, cluster.Node{ID: "c1", Roles: []string{cluster.RoleClock}, Zone: "Europe/Paris"}, ""},
		{"zone", r, cluster.Node{ID: "c2", Roles: []string{cluster.RoleClock, cluster.RoleWorker}, Zone: "UTC"},
			"node c2 runs with --timezone UTC but the director (dir) with --timezone Europe/Paris: start it with the director's --timezone"},
		{"space", wide, cluster.Node{ID: "c3", Roles: []string{cluster.RoleClock}, Zone: "Europe/Paris"},
			"node c3 runs with --space 1440 but the director (dir) with --space 60: start it with the director's --space"},
		{"unnamed zone", r, cluster.Node{ID: "c4", Roles: []string{cluster.RoleClock}, Zone: "Local"}, ""},
		{"worker", wide, cluster.Node{ID: "w1", Roles: []string{cluster.RoleWorker}, Zone: "UTC"}, ""},
		// The director is held to its lease's epoch; its settings are
		// those it recorded.
		{"director", wide, cluster.Node{ID: "dir", Roles: []string{cluster.RoleDirector, cluster.RoleClock}, Zone: "UTC"}, ""},
		// A standby would impose its own on taking the cluster over.
		{"standby", wide, cluster.Node{ID: "d9", Roles: []string{cluster.RoleDirector, cluster.RoleWorker}, Zone: "Europe/Paris"},
			"node d9 runs with --space 1440 but the director (dir) with --space 60: start it with the director's --space"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.reg.Register(ctx, tc.node, clusterT0)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want == "":
			case !errors.Is(err, cluster.ErrSettings) || !strings.Contains(err.Error(), tc.want):
				t.Fatalf("got %v, want ErrSettings with %q", err, tc.want)
			}
		})
	}
	partitions, err := NewRegistry(ctx, r.pool, cluster.Space{Size: 60, Partitions: 30}, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	err = partitions.Register(ctx, cluster.Node{ID: "c5", Roles: []string{cluster.RoleClock}, Zone: "Europe/Paris"}, clusterT0)
	if want := "node c5 runs with --partitions 30 but the director (dir) with --partitions 60: start it with the director's --partitions"; !errors.Is(err, cluster.ErrSettings) || !strings.Contains(err.Error(), want) {
		t.Fatalf("other partitions: %v", err)
	}
	if _, err := r.Heartbeat(ctx, "c1", clusterT0); err != nil {
		t.Fatalf("a matching node's heartbeat: %v", err)
	}
	// Another director takes the cluster over with another zone: c1
	// differs from it now.
	if _, err := r.TakeDirector(ctx, cluster.Node{ID: "dir2", Zone: "America/New_York"}, clusterT0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	_, err = r.Heartbeat(ctx, "c1", clusterT0.Add(time.Minute))
	if want := "node c1 runs with --timezone Europe/Paris but the director (dir2) with --timezone America/New_York"; !errors.Is(err, cluster.ErrSettings) || !strings.Contains(err.Error(), want) {
		t.Fatalf("c1's heartbeat under dir2: %v", err)
	}
	if _, err := r.Heartbeat(ctx, "w1", clusterT0.Add(time.Minute)); err != nil {
		t.Fatalf("a worker's heartbeat: %v", err)
	}
}

// TestNodeSettingsScatter: a clock node must scatter the repeaters if and
// only if the director does, checked when it registers and, when a
// director that does otherwise took the cluster over, at its heartbeat.
func TestNodeSettingsScatter(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := registry(t, cluster.DefaultSpace)
	scattered := cluster.DefaultSpace
	scattered.Scatter = true
	sr, err := NewRegistry(ctx, r.pool, scattered, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.TakeDirector(ctx, cluster.Node{ID: "dir", Zone: "UTC"}, clusterT0); err != nil {
		t.Fatal(err)
	}
	err = sr.Register(ctx, cluster.Node{ID: "c1", Roles: []string{cluster.RoleClock}, Zone: "UTC"}, clusterT0)
	if want := "node c1 runs with --scatter-steps but the director (dir) without: start it without --scatter-steps"; !errors.Is(err, cluster.ErrSettings) || !strings.Contains(err.Error(), want) {
		t.Fatalf("a scattering node under a director that does not: %v", err)
	}
	if err := r.Register(ctx, cluster.Node{ID: "c2", Roles: []string{cluster.RoleClock}, Zone: "UTC"}, clusterT0); err != nil {
		t.Fatal(err)
	}
	// A director that scatters takes the cluster over: c2 differs now.
	if _, err := sr.TakeDirector(ctx, cluster.Node{ID: "dir2", Zone: "UTC"}, clusterT0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	_, err = r.Heartbeat(ctx, "c2", clusterT0.Add(time.Minute))
	if want := "node c2 runs without --scatter-steps but the director (dir2) with: start it with --scatter-steps"; !errors.Is(err, cluster.ErrSettings) || !strings.Contains(err.Error(), want) {
		t.Fatalf("c2's heartbeat under dir2: %v", err)
	}
	if err := sr.Register(ctx, cluster.Node{ID: "c1", Roles: []string{cluster.RoleClock}, Zone: "UTC"}, clusterT0.Add(time.Minute)); err != nil {
		t.Fatalf("a scattering node under a director that does: %v", err)
	}
	if _, err := sr.Heartbeat(ctx, "c1", clusterT0.Add(time.Minute)); err != nil {
		t.Fatalf("its heartbeat: %v", err)
	}
}

// fireAt is task's occurrence h hours after clusterT0.
func fireAt(task string, h int) cluster.Fire {
	return cluster.Fire{Task: task, Scheduled: clusterT0.Add(time.Duration(h) * time.Hour)}
}

// The fires one statement records share its ID; a statement of
// occurrences all recorded already takes none. The director reads whole
// statements, and pruning them frees their occurrences' keys.
func TestFireStatements(t *testing.T) {
	ctx := context.Background()
	r := registry(t, cluster.Space{Size: 1, Partitions: 1})
	la := soleClock(t, r, "a")
	record := func(want int, recordedAt time.Time, fs ...cluster.Fire) {
		t.Helper()
		if n, err := r.RecordAll(ctx, "a", la[0], fs, recordedAt); n != want || err != nil {
			t.Fatalf("recorded %d of %v (%v), want %d", n, fs, err, want)
		}
	}
	record(3, clusterT0, fireAt("x", 0), fireAt("y", 0), fireAt("z", 0))
	record(1, clusterT0, fireAt("x", 0), fireAt("x", 1), fireAt("y", 0))
	record(0, clusterT0, fireAt("x", 1), fireAt("z", 0)) // takes no ID
	record(2, clusterT0.Add(3*time.Hour), fireAt("x", 2), fireAt("y", 2))

	type fire struct {
		id   int64
		task string
		h    int
	}
	read := func(after int64, limit int) []fire {
		t.Helper()
		fs, err := r.Fires(ctx, after, limit)
		if err != nil {
			t.Fatal(err)
		}
		var out []fire
		for _, f := range fs {
			out = append(out, fire{f.ID, f.Task, int(f.Scheduled.Sub(clusterT0) / time.Hour)})
		}
		return out
	}
	all := []fire{{1, "x", 0}, {1, "y", 0}, {1, "z", 0}, {2, "x", 1}, {3, "x", 2}, {3, "y", 2}}
	for _, c := range []struct {
		after int64
		limit int
		want  []fire
	}{
		{0, 100, all},
		{0, 1, all[:3]}, // the first statement whole
		{0, 3, all[:3]},
		{0, 4, all[:4]},
		{0, 5, all},
		{1, 1, all[3:4]},
		{2, 1, all[4:]},
		{3, 100, nil},
	} {
		if got := read(c.after, c.limit); !slices.Equal(got, c.want) {
			t.Errorf("fires after %d, limit %d: %v, want %v", c.after, c.limit, got, c.want)
		}
	}
	if got, err := r.FiresByID(ctx, []int64{3, 2, 9}); err != nil || len(got) != 3 || got[0].ID != 2 || got[2].Task != "y" {
		t.Errorf("fires of statements 3, 2 and 9: %+v (%v)", got, err)
	}
	st, err := r.Status(ctx, clusterT0.Add(3*time.Hour))
	if err != nil || st.FiresByNode["a"] != 2 {
		t.Errorf("fires of the last hour by node: %v (%v), want a: 2", st.FiresByNode, err)
	}
	// Statements up to 2 recorded before 1h are taken in and pruned: their
	// keys go with them, the third statement's stay.
	epoch := directorEpoch(t, r, "a", clusterT0)
	if err := r.Prune(ctx, "b", epoch, 2, clusterT0.Add(time.Hour)); !errors.Is(err, cluster.ErrDeposed) {
		t.Fatalf("pruning by a director that does not hold the cluster: %v", err)
	}
	if got := read(0, 100); !slices.Equal(got, all) {
		t.Errorf("fires after a refused pruning: %v, want %v", got, all)
	}
	if err := r.Prune(ctx, "a", epoch, 2, clusterT0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if got := read(0, 100); !slices.Equal(got, all[4:]) {
		t.Errorf("fires after pruning: %v, want %v", got, all[4:])
	}
	last, err := r.Last(ctx, []string{"x", "y", "z"})
	if err != nil || len(last) != 2 || !last["x"].Equal(clusterT0.Add(2*time.Hour)) || !last["y"].Equal(clusterT0.Add(2*time.Hour)) {
		t.Errorf("last fires after pruning: %v (%v)", last, err)
	}
	record(1, clusterT0.Add(3*time.Hour), fireAt("z", 0), fireAt("x", 2))
}

// A turn records each partition's batch under its lease in one
// transaction: a batch whose lease is lost changes nothing while the
// others are recorded, and a statement that fails leaves none recorded.
func TestRecordTurn(t *testing.T) {
	ctx := context.Background()
	r := registry(t, cluster.Space{Size: 1, Partitions: 1})
	la := soleClock(t, r, "a")
	stale := la[1]
	stale.Epoch--
	got, err := r.RecordTurn(ctx, "a", []cluster.Batch{
		{Lease: la[0], Fires: []cluster.Fire{fireAt("x", 0)}},
		{Lease: stale, Fires: []cluster.Fire{fireAt("y", 0)}},
		{Lease: la[2], Fires: []cluster.Fire{fireAt("z", 0), fireAt("x", 0)}}, // x's occurrence claimed by the first
	}, clusterT0)
	if err != nil || !slices.Equal(got, []int{1, -1, 1}) {
		t.Fatalf("turn: %v (%v), want [1 -1 1]", got, err)
	}
	if _, err := r.RecordAll(ctx, "a", stale, []cluster.Fire{fireAt("y", 0)}, clusterT0); !errors.Is(err, cluster.ErrFenced) {
		t.Fatalf("a batch under a lost lease: %v, want ErrFenced", err)
	}
	// A task name PostgreSQL refuses fails its statement, after the first
	// was recorded in the same transaction.
	if _, err := r.RecordTurn(ctx, "a", []cluster.Batch{
		{Lease: la[0], Fires: []cluster.Fire{fireAt("w", 1)}},
		{Lease: la[2], Fires: []cluster.Fire{fireAt("bad\x00name", 1)}},
	}, clusterT0); err == nil {
		t.Fatal("a turn with a refused statement reported no error")
	}
	last, err := r.Last(ctx, []string{"x", "y", "z", "w"})
	if err != nil || len(last) != 2 || !last["x"].Equal(clusterT0) || !last["z"].Equal(clusterT0) {
		t.Fatalf("recorded: %v (%v), want x and z at %s", last, err, clusterT0)
	}
}

// TestFrozenNodeHoldsNoLock: a node frozen inside a registry transaction
// with its row locked holds up another writer of the row only for about
// as long as a node may be silent: PostgreSQL ends the idle transaction,
// and the frozen node's next statement fails when it resumes.
func TestFrozenNodeHoldsNoLock(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := registryFor(t, cluster.Space{Size: 60, Partitions: 4}, time.Second)
	register(t, r, "c1", clusterT0, cluster.RoleClock)
	locked, resume, done := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		done <- r.inTx(ctx, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `UPDATE cluster_nodes SET heartbeat_at = heartbeat_at WHERE id = 'c1'`); err != nil {
				return err
			}
			close(locked)
			<-resume // frozen, the row locked
			_, err := tx.Exec(ctx, `SELECT 1`)
			return err
		})
	}()
	select {
	case <-locked:
	case err := <-done:
		t.Fatalf("the transaction ended before it froze: %v", err)
	}
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	_, err := r.pool.Exec(wctx, `UPDATE cluster_nodes SET state = 'dead' WHERE id = 'c1'`)
	close(resume)
	frozen := <-done
	if err != nil {
		t.Fatalf("the row stayed locked by the frozen node: %v", err)
	}
	if frozen == nil {
		t.Error("the frozen node's transaction went on after PostgreSQL ended it")
	}
}
