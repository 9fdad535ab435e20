package scheduler

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/engine"
	"github.com/gnomon-sched/gnomon/executor"
	"github.com/gnomon-sched/gnomon/internal/pgtest"
	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/store"
	"github.com/gnomon-sched/gnomon/store/postgres"
	"github.com/gnomon-sched/gnomon/store/sqlite"
)

// retentionStores open a fresh store of each kind; reopen opens the same
// data again.
var retentionStores = []struct {
	name string
	open func(t *testing.T) func() store.Store
}{
	{"sqlite", func(t *testing.T) func() store.Store {
		path := filepath.Join(t.TempDir(), "gnomon.db")
		return func() store.Store {
			st, err := sqlite.Open(context.Background(), path)
			if err != nil {
				t.Fatal(err)
			}
			return st
		}
	}},
	{"postgres", func(t *testing.T) func() store.Store {
		url := pgtest.URL(t)
		return func() store.Store {
			st, err := postgres.Open(context.Background(), url)
			if err != nil {
				t.Fatal(err)
			}
			return st
		}
	}},
}

// retentionDefs are an hourly task, another whose group keeps its
// history forever, and a configuration with a data window of two hours.
const retentionDefs = `insert_task: hourly
type: callable
function: ok
cron: 0 * * * *

insert_task: kept
type: callable
function: ok
cron: 30 * * * *

insert_group: regulated
jobs: kept
keep_history: forever

insert_task: conf
type: configuration
function: ok
dependencies: [{"type":"FILE","resourceId":"/in/","lifeDuration":7200}]
`

// openRetentionSim starts a simulating scheduler on st, with a function
// "ok" and checkpoints every few events.
func openRetentionSim(t *testing.T, st store.Store, from time.Time, r Retention) (*sim, error) {
	t.Helper()
	dir := t.TempDir()
	m := &sim{t: t, dir: dir, clock: NewVirtualClock(from), st: st}
	ok := func(context.Context, *executor.Call) error { return nil }
	runner, err := executor.NewLocal(executor.LocalConfig{Dir: filepath.Join(dir, "runs"), Clock: m.clock,
		Functions: func(name string) executor.Func {
			if name == "ok" {
				return ok
			}
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(runner.Wait)
	m.s, err = New(context.Background(), Config{Store: st, Runner: runner, DataDir: dir, Clock: m.clock, Location: time.UTC,
		Functions: func(name string) bool { return name == "ok" }, Retention: r})
	if err != nil {
		return nil, err
	}
	m.s.ckpt.every = 20
	if err := m.s.Start(context.Background()); err != nil {
		return nil, err
	}
	return m, nil
}

// TestRetentionOnVirtualTime runs five simulated days of hourly tasks
// and data events, prunes with two-day horizons, and checks what went and
// what stayed: the history of the group that keeps it, the journal after
// the checkpoint, the data events of the last day; then that a restart on
// the pruned store resumes without losing or repeating a run, and that a
// backfill into the pruned past is refused.
func TestRetentionOnVirtualTime(t *testing.T) {
	t.Parallel()
	for _, kind := range retentionStores {
		t.Run(kind.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			reopen := kind.open(t)
			st := reopen()
			two := job.Duration(48 * time.Hour)
			r := Retention{Runs: two, Fires: two, Audit: two, Alerts: two, NodeLog: two, Data: job.Duration(24 * time.Hour)}
			m, err := openRetentionSim(t, st, t0, r)
			if err != nil {
				t.Fatal(err)
			}
			m.define(DefineFile{File: "r.def", Text: retentionDefs})
			end := t0.Add(5 * 24 * time.Hour)
			for at := t0.Add(10 * time.Minute); at.Before(end); at = at.Add(time.Hour) {
				m.advance(at)
				if _, err := m.s.Post(ctx, engine.Data{Type: "FILE", Resource: "/in/x", At: at}); err != nil {
					t.Fatal(err)
				}
			}
			m.advance(end)
			before := len(m.runs("hourly"))
			kept := len(m.runs("kept"))
			if before < 5*24 || kept != 5*24 {
				t.Fatalf("%d runs of hourly and %d of kept, want %d each", before, kept, 5*24)
			}

			// Audit records go once audit.log holds them: wait until it
			// holds the last.
			recs, err := st.Audit(ctx, 0, 1_000_000)
			if err != nil || len(recs) == 0 {
				t.Fatalf("%d audit records, %v", len(recs), err)
			}
			for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
				if n, err := st.Cursor(ctx, auditSeq); err != nil || n >= recs[len(recs)-1].Seq {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("audit.log never caught up with the audit records")
				}
			}
			dry, err := m.s.Prune(ctx, true)
			if err != nil {
				t.Fatal(err)
			}
			if dry.Runs == 0 || dry.Journal == 0 || dry.Fires == 0 || dry.Audit == 0 {
				t.Fatalf("a dry run finds nothing to prune: %+v", dry)
			}
			if n := len(m.runs("hourly")); n != before {
				t.Fatalf("a dry run removed runs: %d left of %d", n, before)
			}
			done, err := m.s.Prune(ctx, false)
			if err != nil {
				t.Fatal(err)
			}
			if done != dry {
				t.Errorf("prune removed %+v, the dry run said %+v", done, dry)
			}
			horizon := end.Add(-48 * time.Hour)
			for _, r := range m.runs("hourly") {
				if r.End.Before(horizon) {
					t.Errorf("run %d of hourly ended at %s, before the horizon %s", r.ID, r.End, horizon)
				}
			}
			if n := len(m.runs("hourly")); n < 47 || n > 49 {
				t.Errorf("%d runs of hourly left, want the last two days'", n)
			}
			if n := len(m.runs("kept")); n != kept {
				t.Errorf("%d runs of kept left, want all %d: its group keeps them forever", n, kept)
			}
			if n := len(m.runs("conf")); n == 0 || n > 50 {
				t.Errorf("%d runs of conf left", n)
			}
			snap, err := st.Load(ctx)
			if err != nil {
				t.Fatal(err)
			}
			entries, err := st.Journal(ctx, 0, 100_000)
			if err != nil {
				t.Fatal(err)
			}
			dataFrom := end.Add(-24 * time.Hour)
			for _, e := range entries {
				if e.Seq < snap.WindowsSeq && (e.Kind != "data" && e.Kind != "act" || e.At.Before(dataFrom)) {
					t.Errorf("journal entry %d (%s at %s) is behind the checkpoint %d and past its horizon", e.Seq, e.Kind, e.At, snap.WindowsSeq)
				}
			}
			if again, err := m.s.Prune(ctx, false); err != nil || again.Total() != 0 {
				t.Errorf("a second pass removed %+v, %v", again, err)
			}

			// A backfill into the pruned past is refused, with the reason;
			// one of the task whose history is kept is not.
			_, err = m.s.Backfill(ctx, engine.Backfill{Task: "hourly", From: t0, To: t0.Add(time.Hour)}, true)
			if !errors.Is(err, engine.ErrRefused) || !strings.Contains(err.Error(), "fire ledger") {
				t.Errorf("backfill into the pruned past: %v; want it refused for the fire ledger", err)
			}
			if _, err := m.s.Backfill(ctx, engine.Backfill{Task: "kept", From: t0, To: t0.Add(time.Hour)}, true); err != nil {
				t.Errorf("backfill of a task whose history is kept: %v", err)
			}
			_, err = m.s.Backfill(ctx, engine.Backfill{Task: "conf", From: end.Add(-30 * time.Hour), To: end}, true)
			if !errors.Is(err, engine.ErrRefused) || !strings.Contains(err.Error(), "data events") {
				t.Errorf("backfill of a configuration into pruned data events: %v; want it refused", err)
			}

			// A restart on the pruned store resumes: the next hour runs
			// once, with a new ID.
			last := m.runs("hourly")[0]
			m.stop()
			st = reopen()
			m, err = openRetentionSim(t, st, end, r)
			if err != nil {
				t.Fatal(err)
			}
			defer m.stop()
			m.advance(end.Add(time.Hour + time.Minute))
			rs := m.runs("hourly")
			if rs[0].ID <= last.ID || !rs[0].Scheduled.Equal(end.Add(time.Hour)) || rs[1].ID != last.ID {
				t.Errorf("after a restart, runs %d (%s) then %d; want a new one for %s after %d", rs[0].ID, rs[0].Scheduled, rs[1].ID, end.Add(time.Hour), last.ID)
			}
		})
	}
}

// TestRetentionFloors tries horizons at and below their floors.
func TestRetentionFloors(t *testing.T) {
	t.Parallel()
	reopen := retentionStores[0].open(t)
	st := reopen()
	m, err := openRetentionSim(t, st, t0, Retention{})
	if err != nil {
		t.Fatal(err)
	}
	m.define(DefineFile{File: "r.def", Text: retentionDefs})
	m.stop()
	for _, c := range []struct {
		r    Retention
		want string // "" for accepted
	}{
		{Retention{Runs: job.Duration(24 * time.Hour), Fires: job.Duration(24 * time.Hour), Audit: job.Duration(24 * time.Hour),
			Alerts: job.Duration(24 * time.Hour), NodeLog: job.Duration(24 * time.Hour), Data: job.Duration(2 * time.Hour)}, ""},
		{Retention{Runs: job.Forever, Data: job.Forever, Journal: job.Forever}, ""},
		{Retention{Runs: job.Duration(23 * time.Hour)}, "retention runs=23h0m0s is below its floor of 1d"},
		{Retention{NodeLog: job.Duration(time.Hour)}, "retention node-log=1h0m0s is below its floor of 1d"},
		{Retention{Alerts: job.Duration(24 * time.Hour), Runs: job.Duration(48 * time.Hour)}, ""},
		// The data window of conf is two hours.
		{Retention{Data: job.Duration(119 * time.Minute)}, "retention data=1h59m0s is below its floor of 2h0m0s: configuration conf has a data window of 2h0m0s"},
	} {
		st := reopen()
		m, err := openRetentionSim(t, st, t0, c.r)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%v refused: %v", c.r, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%v: error %v, want %q", c.r, err, c.want)
		}
		var re *RetentionError
		if c.want != "" && !errors.As(err, &re) {
			t.Errorf("%v: error %v is no *RetentionError", c.r, err)
		}
		if err == nil {
			m.stop()
		} else {
			st.Close()
		}
	}
}

// TestRetentionSet parses the horizons as --retention gives them.
func TestRetentionSet(t *testing.T) {
	t.Parallel()
	var r Retention
	for _, s := range []string{"runs=400d", "data=2w", "journal=forever", "audit=7y", "node-log=forever"} {
		if err := r.Set(s); err != nil {
			t.Fatalf("Set(%q): %v", s, err)
		}
	}
	if got, want := r.withDefaults().String(), "journal=forever data=14d runs=400d fires=90d audit=7y alerts=90d node-log=forever"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	for _, s := range []string{"runs", "run=3d", "runs=0d", "journal=3d", "data=soon", "=3d"} {
		if err := r.Set(s); err == nil {
			t.Errorf("Set(%q) accepted", s)
		}
	}
}
