package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gnomon-sched/gnomon/internal/pgtest"
	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/store"
	"github.com/gnomon-sched/gnomon/store/postgres"
	"github.com/gnomon-sched/gnomon/store/sqlite"
	"github.com/gnomon-sched/gnomon/store/storetest"
)

// opener returns a function that opens one store's data, fresh for the
// test: a SQLite file in a temporary directory, or a new PostgreSQL
// database on the test server.
type opener func(t *testing.T) func() (store.Store, error)

var stores = []struct {
	name string
	at   opener
}{
	{"sqlite", func(t *testing.T) func() (store.Store, error) {
		path := filepath.Join(t.TempDir(), "gnomon.db")
		return func() (store.Store, error) { return sqlite.Open(context.Background(), path) }
	}},
	{"postgres", func(t *testing.T) func() (store.Store, error) {
		url := pgtest.URL(t)
		return func() (store.Store, error) { return postgres.Open(context.Background(), url) }
	}},
}

// open opens a fresh store, closed when the test ends.
func (o opener) open(t *testing.T) store.Store {
	t.Helper()
	s, err := o(t)()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestConformance runs the conformance suite on every store.
func TestConformance(t *testing.T) {
	t.Parallel()
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			t.Parallel()
			storetest.Run(t, func(t *testing.T) (store.Store, func() store.Store) {
				at := st.at(t)
				open := func() store.Store {
					s, err := at()
					if err != nil {
						t.Fatal(err)
					}
					t.Cleanup(func() { s.Close() })
					return s
				}
				return open(), open
			})
		})
	}
}

// TestStoresAgree commits the same seeded-random batches, full of rows
// written twice, updated and deleted, to every store, and compares
// everything they read back after each: the stores are interchangeable.
func TestStoresAgree(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var ss []store.Store
	for _, st := range stores {
		ss = append(ss, opener(st.at).open(t))
	}
	rng := rand.New(rand.NewPCG(2026, 3))
	g := &gen{rng: rng}
	for step := range 150 {
		b := g.batch()
		errs := make([]error, len(ss))
		for i, s := range ss {
			c := clone(b) // a store numbers the batch it is given
			errs[i] = s.Commit(ctx, c)
			if i == 0 {
				b = c
			}
		}
		for i := range ss[1:] {
			if (errs[0] == nil) != (errs[i+1] == nil) {
				t.Fatalf("step %d: %s says %v, %s says %v", step, stores[0].name, errs[0], stores[i+1].name, errs[i+1])
			}
		}
		if errs[0] == nil {
			for _, a := range b.Alerts {
				g.alerts = append(g.alerts, a.ID)
			}
		}
		if len(g.alerts) > 0 && rng.IntN(4) == 0 {
			a := job.Alert{ID: g.alerts[rng.IntN(len(g.alerts))], Task: "a", State: job.AlertSent, Attempts: 1, SentAt: g.instant()}
			at := job.Attempt{Alert: a.ID, At: g.instant(), Error: g.pick("", "timeout")}
			for _, s := range ss {
				if err := s.RecordAttempt(ctx, &a, at); err != nil {
					t.Fatal(err)
				}
			}
		}
		if rng.IntN(5) == 0 {
			c := map[string]int64{g.pick("x", "y"): rng.Int64N(100)}
			for _, s := range ss {
				if err := s.SetCursors(ctx, c); err != nil {
					t.Fatal(err)
				}
			}
		}
		want := contents(t, ss[0])
		for i, s := range ss[1:] {
			if diff := cmp.Diff(want, contents(t, s)); diff != "" {
				t.Fatalf("step %d: %s and %s differ (-%s +%s):\n%s", step, stores[0].name, stores[i+1].name, stores[0].name, stores[i+1].name, diff)
			}
		}
	}
}

// TestMigrateCopiesEverything migrates a SQLite store filled with
// seeded-random batches into an empty PostgreSQL one: the copy reads back
// as the source does, who started and who ended each run included.
func TestMigrateCopiesEverything(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src, dst := opener(stores[0].at).open(t), opener(stores[1].at).open(t)
	g := &gen{rng: rand.New(rand.NewPCG(2026, 4))}
	for range 60 {
		src.Commit(ctx, g.batch()) // a batch the store refuses leaves nothing
	}
	if _, err := store.Migrate(ctx, src, dst); err != nil {
		t.Fatal(err)
	}
	want := contents(t, src)
	if diff := cmp.Diff(want, contents(t, dst)); diff != "" {
		t.Errorf("the copy differs (-source +copy):\n%s", diff)
	}
	by, endedBy := 0, 0
	for _, r := range want.Runs {
		if r.By != "" {
			by++
		}
		if r.EndedBy != "" {
			endedBy++
		}
	}
	if by == 0 || endedBy == 0 {
		t.Errorf("%d runs name who started them, %d who ended them: the batches do not cover both", by, endedBy)
	}
}

// gen makes random batches over few keys, so that they collide.
type gen struct {
	rng    *rand.Rand
	gen    int64   // the last checkpoint generation
	alerts []int64 // the alerts stored
}

func (g *gen) pick(s ...string) string { return s[g.rng.IntN(len(s))] }

func (g *gen) instant() time.Time {
	return time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(g.rng.Int64N(int64(72 * time.Hour))))
}

func (g *gen) n(k int) int { return g.rng.IntN(k + 1) }

func (g *gen) status() job.Status {
	return []job.Status{job.Running, job.Success, job.Failure, job.Aborted}[g.rng.IntN(4)]
}

func (g *gen) batch() *store.Batch {
	r := g.rng
	b := &store.Batch{}
	for range g.n(3) {
		b.Entries = append(b.Entries, store.Entry{At: g.instant(), Kind: g.pick("act", "data"), Body: json.RawMessage(fmt.Sprintf(`{"n":%d}`, r.IntN(9)))})
	}
	for range g.n(3) {
		def := &job.Task{Name: g.pick("a", "b", "c"), Type: job.Callable, Command: g.pick("true", "false", "echo x")}
		b.Tasks = append(b.Tasks, job.Record{Def: def, State: job.State{Status: g.status(), RunID: r.Int64N(5), By: g.pick("", "alice")}})
	}
	for range g.n(2) {
		b.States = append(b.States, store.TaskState{Name: g.pick("a", "b", "c", "a", "b", "c", "ghost"), State: job.State{Status: g.status()}})
	}
	if r.IntN(6) == 0 {
		b.Deleted = append(b.Deleted, g.pick("a", "b", "c"))
	}
	for range g.n(3) {
		b.Fires = append(b.Fires, job.Fire{Task: g.pick("a", "b"), Scheduled: time.Date(2026, 3, 1, r.IntN(4), 0, 0, 0, time.UTC),
			Fate: job.Fate(g.pick("ran", "skipped", "missed")), Reason: g.pick("", "busy"), At: g.instant(), RunID: r.Int64N(3)})
	}
	for range g.n(4) {
		run := job.Run{ID: 1 + r.Int64N(8), Task: g.pick("a", "b"), Status: g.status(), Start: g.instant(), ExitCode: r.IntN(3) - 1,
			Result: job.Result(g.pick("", "normal")), Message: g.pick("", "m"), BundleRun: r.Int64N(3), Trigger: g.pick("start", "schedule"),
			Timeperiod: g.pick("", "2026030101"), Outcome: g.pick("", "processed"), By: g.pick("", "alice"),
			EndedBy: g.pick("", "bob")}
		if run.Status != job.Running {
			run.End = g.instant()
		}
		if r.IntN(2) == 0 {
			run.Scheduled = time.Date(2026, 3, 1, r.IntN(4), 0, 0, 0, time.UTC)
		}
		if r.IntN(3) == 0 {
			run.Data = map[string]string{"k": g.pick("1", "2")}
		}
		b.Runs = append(b.Runs, run)
	}
	if r.IntN(4) == 0 {
		if r.IntN(2) == 0 {
			g.gen++
		}
		ck := &store.Checkpoint{Gen: g.gen, Done: r.IntN(2) == 0, Seq: r.Int64N(50)}
		for range g.n(3) {
			ck.Rows = append(ck.Rows, job.Validation{Task: g.pick("c1", "c2"), Dep: g.pick("FILE:/a", "TABLE:t"), TS: g.instant()})
		}
		b.Checkpoint = ck
	}
	for range g.n(1) {
		b.Alerts = append(b.Alerts, job.Alert{Task: g.pick("a", "b"), Outcome: job.OutcomeFailure, Created: g.instant(), To: []string{"x@example.com"},
			State: job.AlertState(g.pick("pending", "sent")), NextAt: g.instant()})
	}
	for range g.n(1) {
		b.Audit = append(b.Audit, job.AuditRecord{Task: g.pick("a", "b"), RunID: r.Int64N(8), Launch: g.instant(), Stop: g.instant(),
			Result: job.ResultNormal, Status: job.Success, Message: g.pick("", "m"), By: g.pick("", "alice"),
			EndedBy: g.pick("", "bob")})
	}
	if r.IntN(2) == 0 {
		tr := &store.Trees{}
		for range g.n(2) {
			tr.Files = append(tr.Files, store.TreeFile{Name: g.pick("f1", "f2"), Text: g.pick("x", "y")})
		}
		if r.IntN(5) == 0 {
			tr.DeletedFiles = []string{g.pick("f1", "f2")}
		}
		if r.IntN(5) == 0 {
			tr.Dropped = []store.DroppedNodes{{Process: g.pick("h", "d"), Before: r.Int64N(4)}}
		}
		node := func() (string, int64) { return g.pick("h", "d"), 1 + r.Int64N(3) }
		for range g.n(3) {
			p, k := node()
			tr.Nodes = append(tr.Nodes, store.NodeRow{Process: p, Timeperiod: k, State: g.pick("embryo", "processed"), Body: json.RawMessage(`{}`)})
		}
		for range g.n(2) {
			p, k := node()
			for range g.n(store.MaxNodeLog / 2) {
				tr.Log = append(tr.Log, store.NodeLogRow{Process: p, Timeperiod: k, At: g.instant(), Body: json.RawMessage(fmt.Sprintf(`{"n":%d}`, r.IntN(1000)))})
			}
		}
		if r.IntN(3) == 0 {
			tr.State = json.RawMessage(fmt.Sprintf(`{"now":%d}`, r.IntN(9)))
		}
		b.Trees = tr
	}
	return b
}

// clone copies a batch deeply enough for a store to number it.
func clone(b *store.Batch) *store.Batch {
	c := *b
	c.Entries, c.Alerts, c.Audit = slices.Clone(b.Entries), slices.Clone(b.Alerts), slices.Clone(b.Audit)
	return &c
}

// everything is what a store reads back, in an order both keep.
type everything struct {
	Snap     *store.Snapshot
	Runs     []job.Run
	Fires    []job.Fire
	Journal  []store.Entry
	Alerts   []job.Alert
	Attempts map[int64][]job.Attempt
	Audit    []job.AuditRecord
	Cursors  map[string]int64
}

func contents(t *testing.T, s store.Store) everything {
	t.Helper()
	ctx := context.Background()
	d, err := store.ReadDump(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	snap := d.Snapshot
	// Rows a store returns in no particular order.
	slices.SortFunc(snap.Tasks, func(a, b job.Record) int { return strings.Compare(a.Def.Name, b.Def.Name) })
	slices.SortFunc(snap.Windows, func(a, b job.Validation) int {
		return strings.Compare(fmt.Sprint(a.Task, a.Dep, a.TS.UnixNano()), fmt.Sprint(b.Task, b.Dep, b.TS.UnixNano()))
	})
	slices.SortFunc(snap.Trees.Nodes, func(a, b store.NodeRow) int {
		return strings.Compare(fmt.Sprint(a.Process, a.Timeperiod), fmt.Sprint(b.Process, b.Timeperiod))
	})
	return everything{Snap: snap, Runs: d.Runs, Fires: d.Fires, Journal: d.Journal, Alerts: d.Alerts, Attempts: d.Attempts, Audit: d.Audit, Cursors: d.Cursors}
}
