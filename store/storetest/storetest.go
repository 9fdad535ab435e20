// Package storetest is the conformance suite every store.Store must pass.
package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/gnomon-sched/gnomon/auth"
	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/store"
)

// Open returns a fresh, empty store; reopen returns a new handle on the same
// data (after the first was closed).
type Open func(t *testing.T) (s store.Store, reopen func() store.Store)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.UTC)

// Run runs the conformance suite.
func Run(t *testing.T, open Open) {
	ctx := context.Background()
	t.Run("retention", func(t *testing.T) { t.Parallel(); RunRetention(t, open) })
	t.Run("empty", func(t *testing.T) {
		t.Parallel()
		s, _ := open(t)
		snap, err := s.Load(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(snap.Tasks) != 0 || len(snap.Active) != 0 || snap.LastRun != 0 {
			t.Errorf("empty store loaded %+v", snap)
		}
		if err := s.Commit(ctx, &store.Batch{}); err != nil {
			t.Errorf("empty commit: %v", err)
		}
	})
	t.Run("round trip survives reopen", func(t *testing.T) {
		t.Parallel()
		s, reopen := open(t)
		a := &job.Task{Name: "a", Type: job.Callable, Command: "echo 'x'", OutLog: "/o", ErrLog: "/e", Priority: job.Critical,
			RunDays: 0x22, StartTimes: []job.Clock{60, 600}, Timezone: "Europe/Paris", Extra: &job.Extra{StartDelay: job.Duration(time.Second)}}
		box := &job.Task{Name: "box", Type: job.Bundle, Window: &job.Window{Start: 23 * 60, End: 60}, StartMins: []int{0, 30}}
		running := job.Run{ID: 7, Task: "a", Status: job.Running, Start: t0, BundleRun: 6, Trigger: "start", By: "alice"}
		done := job.Run{ID: 6, Task: "box", Status: job.Failure, Start: t0, End: t0.Add(time.Second), ExitCode: 2,
			Result: job.ResultNormal, Message: "m", Scheduled: t0.Add(-time.Hour)}
		b := &store.Batch{
			Entries: []store.Entry{{At: t0, Kind: "act", Body: json.RawMessage(`{"task":"a"}`)}, {At: t0, Kind: "define", Body: json.RawMessage(`{}`)}},
			Tasks: []job.Record{
				// A start waiting for the run to end keeps who sent it.
				{Def: a, State: job.State{Status: job.Running, Start: job.At(t0), RunID: 7, BundleRun: 6,
					Pending: []job.Pending{{Trigger: "start", By: "bob"}, {Trigger: "schedule", Scheduled: t0}}}},
				{Def: box, State: job.State{Status: job.Ready, Trigger: "start", By: "carol", End: job.At(t0)}},
			},
			Runs: []job.Run{running, done},
		}
		if err := s.Commit(ctx, b); err != nil {
			t.Fatal(err)
		}
		if b.Entries[0].Seq == 0 || b.Entries[1].Seq <= b.Entries[0].Seq {
			t.Errorf("journal sequence numbers %d, %d", b.Entries[0].Seq, b.Entries[1].Seq)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		s = reopen()
		snap, err := s.Load(ctx)
		if err != nil {
			t.Fatal(err)
		}
		want := &store.Snapshot{Tasks: b.Tasks, Active: []*job.Run{&running}, LastRun: 7}
		if diff := cmp.Diff(want, snap); diff != "" {
			t.Errorf("Load after reopen (-want +got):\n%s", diff)
		}
		j, err := s.Journal(ctx, 0, 10)
		if err != nil || len(j) != 2 || j[0].Kind != "act" || string(j[0].Body) != `{"task":"a"}` || !j[0].At.Equal(t0) {
			t.Errorf("Journal = %+v, %v", j, err)
		}
		if j, _ := s.Journal(ctx, j[0].Seq, 10); len(j) != 1 {
			t.Errorf("Journal after first = %d entries", len(j))
		}
		// An abort names who sent it on the run while it still runs.
		running.EndedBy = "dave"
		if err := s.Commit(ctx, &store.Batch{Runs: []job.Run{running}}); err != nil {
			t.Fatal(err)
		}
		if snap, err := s.Load(ctx); err != nil || len(snap.Active) != 1 || !cmp.Equal(*snap.Active[0], running) {
			t.Errorf("Load after an abort: %+v, %v; want active %+v", snap.Active, err, running)
		}
		// Update and delete.
		running.Status, running.End, running.ExitCode, running.Result = job.Aborted, t0.Add(time.Minute), -1, job.ResultKilled
		ended := job.State{Status: job.Success, Start: job.At(t0), End: job.At(t0.Add(time.Minute))}
		if err := s.Commit(ctx, &store.Batch{Runs: []job.Run{running}, Deleted: []string{"box"}, States: []store.TaskState{{Name: "a", State: ended}}}); err != nil {
			t.Fatal(err)
		}
		snap, _ = s.Load(ctx)
		if len(snap.Tasks) != 1 || len(snap.Active) != 0 {
			t.Errorf("after update: %+v", snap)
		} else if diff := cmp.Diff(job.Record{Def: a, State: ended}, snap.Tasks[0]); diff != "" {
			t.Errorf("state-only update (-want +got):\n%s", diff)
		}
		if rs, err := s.Runs(ctx, store.RunQuery{Task: "a"}); err != nil || len(rs) != 1 || !cmp.Equal(rs[0], running) {
			t.Errorf("runs of a after its run ended: %+v, %v; want %+v", rs, err, running)
		}
		// The state of a task that is not stored is refused, with the rest
		// of its batch.
		if err := s.Commit(ctx, &store.Batch{States: []store.TaskState{{Name: "ghost", State: ended}}, Runs: []job.Run{{ID: 99, Task: "a", Status: job.Success, Start: t0}}}); err == nil {
			t.Error("the state of a task never stored was committed")
		}
		if rs, _ := s.Runs(ctx, store.RunQuery{Task: "a"}); len(rs) != 1 {
			t.Errorf("a refused batch left %d runs", len(rs))
		}
	})
	t.Run("runs query", func(t *testing.T) {
		t.Parallel()
		s, _ := open(t)
		var runs []job.Run
		for i := 1; i <= 6; i++ {
			r := job.Run{ID: int64(i), Task: "a", Status: job.Success, Start: t0.Add(time.Duration(i) * 12 * time.Hour), End: t0.Add(time.Duration(i)*12*time.Hour + time.Second)}
			if i == 6 {
				r.Status, r.End = job.Running, time.Time{}
			}
			if i%2 == 0 {
				r.BundleRun = 100
			}
			runs = append(runs, r)
		}
		runs = append(runs, job.Run{ID: 9, Task: "b", Status: job.Failure, Start: t0})
		if err := s.Commit(ctx, &store.Batch{Runs: runs}); err != nil {
			t.Fatal(err)
		}
		ids := func(q store.RunQuery) []int64 {
			t.Helper()
			rs, err := s.Runs(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			var out []int64
			for _, r := range rs {
				out = append(out, r.ID)
			}
			return out
		}
		check := func(name string, got, want []int64) {
			t.Helper()
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s (-want +got):\n%s", name, diff)
			}
		}
		check("all", ids(store.RunQuery{Task: "a"}), []int64{6, 5, 4, 3, 2, 1})
		check("done, limit", ids(store.RunQuery{Task: "a", Done: true, Limit: 2}), []int64{5, 4})
		day := time.Date(2026, 3, 3, 0, 0, 0, 0, time.UTC)
		check("one day", ids(store.RunQuery{Task: "a", From: day, To: day.AddDate(0, 0, 1)}), []int64{4, 3})
		check("bundle run", ids(store.RunQuery{Task: "a", BundleRun: 100}), []int64{6, 4, 2})
		check("before, a page", ids(store.RunQuery{Task: "a", Before: 5, Limit: 2}), []int64{4, 3})
		check("before, done", ids(store.RunQuery{Task: "a", Before: 7, Done: true}), []int64{5, 4, 3, 2, 1})
		check("other task", ids(store.RunQuery{Task: "b"}), []int64{9})
	})
	t.Run("fires", func(t *testing.T) {
		t.Parallel()
		s, reopen := open(t)
		at := func(h int) time.Time { return time.Date(2026, 3, 1, h, 0, 0, 0, time.UTC) }
		b := &store.Batch{
			Runs: []job.Run{{ID: 1, Task: "a", Status: job.Success, Start: at(1), Scheduled: at(1), Trigger: "schedule"}},
			Fires: []job.Fire{
				{Task: "a", Scheduled: at(1), Fate: job.FateRan, At: at(1)},
				{Task: "a", Scheduled: at(2), Fate: job.FateSkipped, Reason: "the task is frozen", At: at(2)},
				{Task: "b", Scheduled: at(2), Fate: job.FateMissed, Reason: "down", At: at(5)},
			},
		}
		if err := s.Commit(ctx, b); err != nil {
			t.Fatal(err)
		}
		// An occurrence keeps its first fate.
		again := &store.Batch{Fires: []job.Fire{{Task: "a", Scheduled: at(1), Fate: job.FateMissed, At: at(9)}}}
		if err := s.Commit(ctx, again); err != nil {
			t.Fatal(err)
		}
		// An occurrence that waited for a worker: its run starts in a
		// later batch, and is the one it started, not a run after it nor
		// the run's end. A skipped occurrence started no run.
		queued := job.Fire{Task: "a", Scheduled: at(3), Fate: job.FateRan, Reason: "waiting for a worker", At: at(3)}
		later := []*store.Batch{
			{Fires: []job.Fire{queued}},
			{Runs: []job.Run{{ID: 2, Task: "a", Status: job.Running, Start: at(4), Scheduled: at(3), Trigger: "schedule"}}},
			{Runs: []job.Run{
				{ID: 2, Task: "a", Status: job.Success, Start: at(4), End: at(5), Scheduled: at(3), Trigger: "schedule"},
				{ID: 3, Task: "a", Status: job.Success, Start: at(5), End: at(5), Scheduled: at(3), Trigger: "schedule"},
				{ID: 4, Task: "a", Status: job.Success, Start: at(5), End: at(5), Scheduled: at(2), Trigger: "schedule"},
			}},
			// Two runs of one occurrence in one batch, the later first:
			// the occurrence started the first.
			{Fires: []job.Fire{{Task: "a", Scheduled: at(6), Fate: job.FateRan, At: at(6)}}, Runs: []job.Run{
				{ID: 6, Task: "a", Status: job.Running, Start: at(6), Scheduled: at(6), Trigger: "schedule"},
				{ID: 5, Task: "a", Status: job.Running, Start: at(6), Scheduled: at(6), Trigger: "schedule"},
			}},
		}
		for _, l := range later {
			if err := s.Commit(ctx, l); err != nil {
				t.Fatal(err)
			}
		}
		s.Close()
		s = reopen()
		defer s.Close()
		got, err := s.Fires(ctx, store.FireQuery{Task: "a"})
		if err != nil {
			t.Fatal(err)
		}
		want := []job.Fire{{Task: "a", Scheduled: at(6), Fate: job.FateRan, At: at(6), RunID: 5}, queued, b.Fires[1], b.Fires[0]}
		want[1].RunID, want[3].RunID = 2, 1
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("fires of a (-want +got):\n%s", diff)
		}
		all, _ := s.Fires(ctx, store.FireQuery{From: at(2), To: at(3), Limit: 5})
		if len(all) != 2 || all[0].Task != "a" || all[1].Task != "b" {
			t.Errorf("fires at 02:00: %+v", all)
		}
	})
	t.Run("backfilled fires", func(t *testing.T) {
		t.Parallel()
		s, reopen := open(t)
		at := func(h int) time.Time { return time.Date(2026, 3, 1, h, 0, 0, 0, time.UTC) }
		fire := func(h int, fate job.Fate, reason string, run int64) job.Fire {
			return job.Fire{Task: "a", Scheduled: at(h), Fate: fate, Reason: reason, At: at(h + 10), RunID: run}
		}
		first := &store.Batch{Fires: []job.Fire{
			fire(1, job.FateRan, "", 0), fire(2, job.FateSkipped, "busy", 0), fire(3, job.FateMissed, "down", 0),
			fire(4, job.FateBackfilled, "asked", 4),
		}}
		if err := s.Commit(ctx, first); err != nil {
			t.Fatal(err)
		}
		// A backfill replaces a missed or skipped fate, and nothing else.
		second := &store.Batch{Fires: []job.Fire{
			fire(1, job.FateBackfilled, "no", 10), fire(2, job.FateBackfilled, "was skipped", 11), fire(3, job.FateBackfilled, "was missed", 12),
			fire(4, job.FateBackfilled, "again", 13), fire(2, job.FateMissed, "no", 0),
		}}
		if err := s.Commit(ctx, second); err != nil {
			t.Fatal(err)
		}
		// In one batch, each fire applies in turn: skipped, then
		// backfilled, then ran.
		third := &store.Batch{Fires: []job.Fire{
			fire(5, job.FateSkipped, "busy", 0), fire(5, job.FateBackfilled, "made up", 15), fire(5, job.FateRan, "no", 0),
			fire(6, job.FateBackfilled, "new", 16), fire(6, job.FateBackfilled, "twice", 17),
		}}
		if err := s.Commit(ctx, third); err != nil {
			t.Fatal(err)
		}
		s.Close()
		s = reopen()
		defer s.Close()
		got, err := s.Fires(ctx, store.FireQuery{Task: "a"})
		if err != nil {
			t.Fatal(err)
		}
		want := []job.Fire{
			fire(6, job.FateBackfilled, "new", 16), fire(5, job.FateBackfilled, "made up", 15), fire(4, job.FateBackfilled, "asked", 4),
			fire(3, job.FateBackfilled, "was missed", 12), fire(2, job.FateBackfilled, "was skipped", 11), fire(1, job.FateRan, "", 0),
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("fires (-want +got):\n%s", diff)
		}
	})
	t.Run("journal before", func(t *testing.T) {
		t.Parallel()
		s, _ := open(t)
		defer s.Close()
		b := &store.Batch{}
		for i := range 5 {
			kind := "data"
			if i == 2 {
				kind = "act"
			}
			b.Entries = append(b.Entries, store.Entry{At: t0, Kind: kind, Body: json.RawMessage(fmt.Sprintf(`{"i":%d}`, i))})
		}
		if err := s.Commit(ctx, b); err != nil {
			t.Fatal(err)
		}
		seqs := func(es []store.Entry) (out []int64) {
			for _, e := range es {
				out = append(out, e.Seq)
			}
			return out
		}
		all, err := s.JournalBefore(ctx, "data", 0, 10)
		if err != nil {
			t.Fatal(err)
		}
		want := []int64{b.Entries[4].Seq, b.Entries[3].Seq, b.Entries[1].Seq, b.Entries[0].Seq}
		if diff := cmp.Diff(want, seqs(all)); diff != "" {
			t.Errorf("data entries, newest first (-want +got):\n%s", diff)
		}
		page, _ := s.JournalBefore(ctx, "data", b.Entries[3].Seq, 1)
		if diff := cmp.Diff(want[2:3], seqs(page)); diff != "" || string(page[0].Body) != `{"i":1}` {
			t.Errorf("a page before entry 3: %+v", page)
		}
		every, err := s.JournalBefore(ctx, "", b.Entries[3].Seq, 2)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]int64{b.Entries[2].Seq, b.Entries[1].Seq}, seqs(every)); diff != "" || every[0].Kind != "act" {
			t.Errorf("entries of every kind before entry 3 (-want +got):\n%s", diff)
		}
	})
	t.Run("checkpoints", func(t *testing.T) {
		t.Parallel()
		s, reopen := open(t)
		v := func(task, dep string, sec int64) job.Validation {
			return job.Validation{Task: task, Dep: dep, TS: time.Unix(sec, 5).UTC()}
		}
		load := func() *store.Snapshot {
			t.Helper()
			s.Close()
			s = reopen()
			snap, err := s.Load(ctx)
			if err != nil {
				t.Fatal(err)
			}
			return snap
		}
		// An interrupted checkpoint is not current, and its rows go.
		if err := s.Commit(ctx, &store.Batch{Checkpoint: &store.Checkpoint{Gen: 1, Rows: []job.Validation{v("A", "TABLE:t", 1)}}}); err != nil {
			t.Fatal(err)
		}
		if snap := load(); len(snap.Windows) != 0 || snap.WindowsGen != 0 || snap.WindowsSeq != 0 {
			t.Errorf("after an interrupted checkpoint: %+v gen %d seq %d", snap.Windows, snap.WindowsGen, snap.WindowsSeq)
		}
		// A checkpoint in two parts.
		first := []job.Validation{v("B", "TABLE:t", 5), v("A", "FILE:/in", 10), v("A", "FILE:/in", -30)}
		second := []job.Validation{v("A", "TABLE:t", 0)}
		for _, c := range []*store.Checkpoint{{Gen: 1, Rows: first}, {Gen: 1, Rows: second, Done: true, Seq: 42}} {
			if err := s.Commit(ctx, &store.Batch{Checkpoint: c}); err != nil {
				t.Fatal(err)
			}
		}
		snap := load()
		want := []job.Validation{v("A", "FILE:/in", -30), v("A", "FILE:/in", 10), v("A", "TABLE:t", 0), v("B", "TABLE:t", 5)}
		if diff := cmp.Diff(want, snap.Windows, InAnyOrder); diff != "" || snap.WindowsGen != 1 || snap.WindowsSeq != 42 {
			t.Errorf("checkpoint gen %d seq %d (-want +got):\n%s", snap.WindowsGen, snap.WindowsSeq, diff)
		}
		// The next generation replaces it.
		if err := s.Commit(ctx, &store.Batch{Checkpoint: &store.Checkpoint{Gen: 2, Rows: first[:1], Done: true, Seq: 50}}); err != nil {
			t.Fatal(err)
		}
		snap = load()
		defer s.Close()
		if diff := cmp.Diff(first[:1], snap.Windows, InAnyOrder); diff != "" || snap.WindowsGen != 2 || snap.WindowsSeq != 50 {
			t.Errorf("second checkpoint gen %d seq %d (-want +got):\n%s", snap.WindowsGen, snap.WindowsSeq, diff)
		}
	})
	t.Run("failed commit changes nothing", func(t *testing.T) {
		t.Parallel()
		s, _ := open(t)
		ok := job.Run{ID: 1, Task: "a", Status: job.Success, Start: t0}
		if err := s.Commit(ctx, &store.Batch{Runs: []job.Run{ok}}); err != nil {
			t.Fatal(err)
		}
		// The second journal entry is not JSON: a store must refuse it, and
		// with it everything else in the batch.
		bad := &store.Batch{
			Entries: []store.Entry{{At: t0, Kind: "act", Body: json.RawMessage(`{}`)}, {At: t0, Kind: "act", Body: json.RawMessage(`{"trunc`)}},
			Tasks:   []job.Record{{Def: &job.Task{Name: "x", Type: job.Callable}}},
			Runs:    []job.Run{{ID: 2, Task: "a", Status: job.Success, Start: t0}},
		}
		if err := s.Commit(ctx, bad); err == nil {
			t.Fatal("a batch with a malformed journal entry was committed")
		}
		if rs, _ := s.Runs(ctx, store.RunQuery{Task: "a"}); len(rs) != 1 {
			t.Errorf("a failed commit left %d runs, want 1", len(rs))
		}
		snap, _ := s.Load(ctx)
		j, _ := s.Journal(ctx, 0, 10)
		if len(snap.Tasks) != 0 || len(j) != 0 {
			t.Errorf("a failed commit left %d tasks and %d journal entries", len(snap.Tasks), len(j))
		}
	})
	t.Run("numbers have no gaps", func(t *testing.T) {
		t.Parallel()
		s, reopen := open(t)
		batch := func(ghost bool) *store.Batch {
			b := &store.Batch{
				Entries: []store.Entry{{At: t0, Kind: "act", Body: json.RawMessage(`{}`)}, {At: t0, Kind: "act", Body: json.RawMessage(`[]`)}},
				Alerts:  []job.Alert{{Task: "a", Created: t0, State: job.AlertPending}},
				Audit:   []job.AuditRecord{{Task: "a", RunID: 1, Launch: t0, Stop: t0, Result: job.ResultNormal, Status: job.Success}},
				Trees:   &store.Trees{Log: []store.NodeLogRow{{Process: "h", Timeperiod: 1, At: t0, Body: json.RawMessage(`{}`)}}},
			}
			if ghost { // refused, after its entries, alerts and audit records
				b.States = []store.TaskState{{Name: "ghost"}}
			}
			return b
		}
		numbers := func(b *store.Batch) []int64 {
			return []int64{b.Entries[0].Seq, b.Entries[1].Seq, b.Alerts[0].ID, b.Audit[0].Seq}
		}
		first := batch(false)
		if err := s.Commit(ctx, first); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]int64{1, 2, 1, 1}, numbers(first)); diff != "" {
			t.Errorf("the first numbers (-want +got):\n%s", diff)
		}
		if err := s.Commit(ctx, batch(true)); err == nil {
			t.Fatal("the state of a task never stored was committed")
		}
		s.Close()
		s = reopen()
		third := batch(false)
		if err := s.Commit(ctx, third); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]int64{3, 4, 2, 2}, numbers(third)); diff != "" {
			t.Errorf("the numbers after a refused batch (-want +got):\n%s", diff)
		}
		j, _ := s.Journal(ctx, 0, 10)
		a, _ := s.Alerts(ctx, store.AlertQuery{})
		au, _ := s.Audit(ctx, 0, 10)
		if len(j) != 4 || j[3].Seq != 4 || string(j[3].Body) != `[]` || len(a) != 2 || a[0].ID != 2 || len(au) != 2 || au[1].Seq != 2 {
			t.Errorf("stored: journal %+v, alerts %+v, audit %+v", j, a, au)
		}
	})
	t.Run("one batch writes a row twice", func(t *testing.T) {
		t.Parallel()
		s, reopen := open(t)
		at := func(h int) time.Time { return time.Date(2026, 3, 1, h, 0, 0, 0, time.UTC) }
		def := func(name, cmd string) *job.Task { return &job.Task{Name: name, Type: job.Callable, Command: cmd} }
		if err := s.Commit(ctx, &store.Batch{Tasks: []job.Record{{Def: def("gone", "old")}}}); err != nil {
			t.Fatal(err)
		}
		b := &store.Batch{
			// Deleted and defined again: deletions come first.
			Deleted: []string{"gone"},
			Tasks: []job.Record{
				{Def: def("a", "first"), State: job.State{Status: job.Running}},
				{Def: def("gone", "new")},
				{Def: def("a", "second"), State: job.State{Status: job.Success}},
			},
			States: []store.TaskState{{Name: "gone", State: job.State{Status: job.Failure}}, {Name: "gone", State: job.State{Status: job.Success}}},
			// An occurrence keeps its first fate.
			Fires: []job.Fire{{Task: "a", Scheduled: at(1), Fate: job.FateRan, At: at(1)}, {Task: "a", Scheduled: at(1), Fate: job.FateSkipped, Reason: "busy", At: at(2)}},
			// Started and ended in one group commit.
			Runs: []job.Run{
				{ID: 1, Task: "a", Status: job.Running, Start: at(1), Scheduled: at(1), Trigger: "retry", By: "alice", Attempt: 2, RetryOf: 7},
				{ID: 1, Task: "a", Status: job.Success, Start: at(1), End: at(2), Result: job.ResultNormal, Message: "done", Scheduled: at(1),
					Trigger: "retry", Data: map[string]string{"k": "v"}, By: "alice", EndedBy: "bob", Attempt: 2, RetryOf: 7,
					Log: &job.LogSpan{OutFrom: -1, OutTo: 120, ErrFrom: 7, ErrTo: 7, Node: "w1"}},
			},
			Trees: &store.Trees{
				Files: []store.TreeFile{{Name: "f", Text: "1"}, {Name: "f", Text: "2"}},
				Nodes: []store.NodeRow{{Process: "h", Timeperiod: 1, State: "embryo", Body: json.RawMessage(`{"n":1}`)},
					{Process: "h", Timeperiod: 1, State: "processed", Body: json.RawMessage(`{"n":2}`)}},
			},
		}
		if err := s.Commit(ctx, b); err != nil {
			t.Fatal(err)
		}
		s.Close()
		s = reopen()
		snap, err := s.Load(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, r := range snap.Tasks {
			got[r.Def.Name] = r.Def.Command + " " + r.State.Status.String()
		}
		if diff := cmp.Diff(map[string]string{"a": "second success", "gone": "new success"}, got); diff != "" {
			t.Errorf("tasks (-want +got):\n%s", diff)
		}
		if len(snap.Active) != 0 || snap.LastRun != 1 {
			t.Errorf("active %+v, last run %d", snap.Active, snap.LastRun)
		}
		runs, _ := s.Runs(ctx, store.RunQuery{Task: "a"})
		want := []job.Run{b.Runs[1]}
		if diff := cmp.Diff(want, runs); diff != "" {
			t.Errorf("runs (-want +got):\n%s", diff)
		}
		fires, _ := s.Fires(ctx, store.FireQuery{})
		if diff := cmp.Diff([]job.Fire{{Task: "a", Scheduled: at(1), Fate: job.FateRan, At: at(1), RunID: 1}}, fires); diff != "" {
			t.Errorf("fires (-want +got):\n%s", diff)
		}
		tr := snap.Trees
		if len(tr.Files) != 1 || tr.Files[0].Text != "2" || len(tr.Nodes) != 1 || tr.Nodes[0].State != "processed" || string(tr.Nodes[0].Body) != `{"n":2}` {
			t.Errorf("trees: files %+v, nodes %+v", tr.Files, tr.Nodes)
		}
	})
	t.Run("alerts", func(t *testing.T) {
		t.Parallel()
		s, reopen := open(t)
		run := job.Run{ID: 3, Task: "a", Status: job.Failure, Start: t0, End: t0.Add(time.Second), ExitCode: 1,
			Result: job.ResultNormal, Message: "disk full", Data: map[string]string{"rows": "12"}}
		a := job.Alert{Task: "a", Outcome: job.OutcomeFailure, RunID: 3, Created: t0, To: []string{"x@example.com", "y@example.com"},
			Sources: []string{"a", "g"}, Start: run.Start, End: run.End, ExitCode: 1, Message: "disk full", Data: run.Data, State: job.AlertPending}
		b := job.Alert{Task: "b", Outcome: job.OutcomeNotStarted, Created: t0, To: []string{"z@example.com"}, Sources: []string{"b"},
			Template: "/t.tmpl", State: job.AlertPending, NextAt: t0.Add(time.Hour)}
		batch := &store.Batch{Runs: []job.Run{run}, Alerts: []job.Alert{a, b}}
		if err := s.Commit(ctx, batch); err != nil {
			t.Fatal(err)
		}
		if batch.Alerts[0].ID == 0 || batch.Alerts[1].ID <= batch.Alerts[0].ID {
			t.Fatalf("alert ids %d, %d", batch.Alerts[0].ID, batch.Alerts[1].ID)
		}
		a.ID, b.ID = batch.Alerts[0].ID, batch.Alerts[1].ID
		due, err := s.PendingAlerts(ctx, t0, 10)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]job.Alert{a}, due); diff != "" {
			t.Errorf("PendingAlerts at t0 (-want +got):\n%s", diff)
		}
		if due, _ := s.PendingAlerts(ctx, t0.Add(time.Hour), 10); len(due) != 2 {
			t.Errorf("PendingAlerts an hour later = %d alerts, want 2", len(due))
		}
		// A failed attempt, then a successful one.
		a.Attempts, a.LastError, a.NextAt = 1, "dial tcp: connection refused", t0.Add(time.Minute)
		if err := s.RecordAttempt(ctx, &a, job.Attempt{Alert: a.ID, At: t0, Error: a.LastError}); err != nil {
			t.Fatal(err)
		}
		if due, _ := s.PendingAlerts(ctx, t0, 10); len(due) != 0 {
			t.Errorf("an alert to retry later is due now: %+v", due)
		}
		a.Attempts, a.LastError, a.State, a.SentAt, a.NextAt = 2, "", job.AlertSent, t0.Add(time.Minute), time.Time{}
		if err := s.RecordAttempt(ctx, &a, job.Attempt{Alert: a.ID, At: t0.Add(time.Minute)}); err != nil {
			t.Fatal(err)
		}
		if err := s.RecordAttempt(ctx, &job.Alert{ID: 999}, job.Attempt{Alert: 999, At: t0}); err == nil {
			t.Error("an attempt at an unknown alert was recorded")
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		s = reopen()
		all, err := s.Alerts(ctx, store.AlertQuery{})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]job.Alert{b, a}, all); diff != "" {
			t.Errorf("Alerts after reopen (-want +got):\n%s", diff)
		}
		if got, _ := s.Alerts(ctx, store.AlertQuery{Task: "a", Limit: 5}); len(got) != 1 || got[0].ID != a.ID {
			t.Errorf("Alerts of a = %+v", got)
		}
		if got, _ := s.Alerts(ctx, store.AlertQuery{Before: b.ID}); len(got) != 1 || got[0].ID != a.ID {
			t.Errorf("Alerts before %d = %+v, want alert %d", b.ID, got, a.ID)
		}
		att, err := s.Attempts(ctx, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		want := []job.Attempt{{Alert: a.ID, At: t0, Error: "dial tcp: connection refused"}, {Alert: a.ID, At: t0.Add(time.Minute)}}
		if diff := cmp.Diff(want, att); diff != "" {
			t.Errorf("Attempts (-want +got):\n%s", diff)
		}
		rs, _ := s.Runs(ctx, store.RunQuery{Task: "a"})
		if len(rs) != 1 || rs[0].Data["rows"] != "12" {
			t.Errorf("run data did not survive: %+v", rs)
		}
	})
	t.Run("audit", func(t *testing.T) {
		t.Parallel()
		s, _ := open(t)
		recs := []job.AuditRecord{
			{Task: "a", RunID: 1, Launch: t0, Stop: t0.Add(time.Second), Result: job.ResultNormal, Status: job.Success, Data: map[string]string{"rows": "3"}},
			{Task: "b", RunID: 2, Launch: t0, Stop: t0, Result: job.ResultKilled, Status: job.Aborted, Message: "signal: killed", By: "alice", EndedBy: "bob"},
		}
		b := &store.Batch{Audit: recs}
		if err := s.Commit(ctx, b); err != nil {
			t.Fatal(err)
		}
		if b.Audit[0].Seq == 0 || b.Audit[1].Seq <= b.Audit[0].Seq {
			t.Fatalf("audit sequence numbers %d, %d", b.Audit[0].Seq, b.Audit[1].Seq)
		}
		got, err := s.Audit(ctx, 0, 10)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(b.Audit, got); diff != "" {
			t.Errorf("Audit (-want +got):\n%s", diff)
		}
		if got, _ := s.Audit(ctx, b.Audit[0].Seq, 10); len(got) != 1 || got[0].Task != "b" {
			t.Errorf("Audit after the first = %+v", got)
		}
		if v, err := s.Cursor(ctx, "audit.log"); err != nil || v != 0 {
			t.Errorf("unset cursor = %d, %v", v, err)
		}
		for _, v := range []int64{5, 9} {
			if err := s.SetCursors(ctx, map[string]int64{"audit.log": v, "audit.log size": v * 100}); err != nil {
				t.Fatal(err)
			}
		}
		if v, err := s.Cursor(ctx, "audit.log"); err != nil || v != 9 {
			t.Errorf("cursor = %d, %v; want 9", v, err)
		}
		if v, err := s.Cursor(ctx, "audit.log size"); err != nil || v != 900 {
			t.Errorf("cursor = %d, %v; want 900", v, err)
		}
	})

	t.Run("trees", func(t *testing.T) {
		t.Parallel()
		s, reopen := open(t)
		node := func(p string, k int64, state string) store.NodeRow {
			return store.NodeRow{Process: p, Timeperiod: k, State: state, Body: json.RawMessage(fmt.Sprintf(`{"state":%q}`, state))}
		}
		first := &store.Batch{
			Runs: []job.Run{{ID: 3, Task: "h", Status: job.Running, Start: t0, Trigger: "timeperiod", Scheduled: t0.Add(-time.Hour),
				Timeperiod: "2026030111"}},
			Trees: &store.Trees{
				Files: []store.TreeFile{{Name: "a.json", Text: `{"trees":[]}`}, {Name: "b.json", Text: `{"trees":[1]}`}},
				Nodes: []store.NodeRow{node("h", 2026030110, "processed"), node("h", 2026030111, "in_progress"), node("d", 2026030100, "embryo")},
				State: json.RawMessage(`{"now":1}`),
			},
		}
		for i := range store.MaxNodeLog + 5 {
			first.Trees.Log = append(first.Trees.Log, store.NodeLogRow{Process: "h", Timeperiod: 2026030110, At: t0.Add(time.Duration(i)),
				Body: json.RawMessage(fmt.Sprintf(`{"n":%d}`, i))})
		}
		first.Trees.Log = append(first.Trees.Log, store.NodeLogRow{Process: "d", Timeperiod: 2026030100, At: t0, Body: json.RawMessage(`{"n":0}`)})
		if err := s.Commit(ctx, first); err != nil {
			t.Fatal(err)
		}
		// Drop the hours before 11, which takes 10 and its log; change 11;
		// remove a file and keep the state.
		second := &store.Batch{Trees: &store.Trees{
			DeletedFiles: []string{"b.json"},
			Dropped:      []store.DroppedNodes{{Process: "h", Before: 2026030111}},
			Nodes:        []store.NodeRow{node("h", 2026030111, "processed")},
			Log:          []store.NodeLogRow{{Process: "h", Timeperiod: 2026030111, At: t0, Body: json.RawMessage(`{"n":1}`)}},
		}}
		if err := s.Commit(ctx, second); err != nil {
			t.Fatal(err)
		}
		check := func(s store.Store, logOfH10 int) {
			t.Helper()
			snap, err := s.Load(ctx)
			if err != nil {
				t.Fatal(err)
			}
			tr := snap.Trees
			if len(tr.Files) != 1 || tr.Files[0] != (store.TreeFile{Name: "a.json", Text: `{"trees":[]}`}) {
				t.Errorf("files = %+v", tr.Files)
			}
			var keys []string
			for _, n := range tr.Nodes {
				keys = append(keys, fmt.Sprintf("%s %d %s %s", n.Process, n.Timeperiod, n.State, n.Body))
			}
			want := []string{`d 2026030100 embryo {"state":"embryo"}`, `h 2026030111 processed {"state":"processed"}`}
			if diff := cmp.Diff(want, keys, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
				t.Errorf("nodes (-want +got):\n%s", diff)
			}
			logs := map[string]int{}
			for _, e := range tr.Log {
				logs[fmt.Sprintf("%s %d", e.Process, e.Timeperiod)]++
			}
			if logs["h 2026030110"] != logOfH10 || logs["d 2026030100"] != 1 || logs["h 2026030111"] != 1 {
				t.Errorf("log entries per node = %v", logs)
			}
			if string(tr.State) != `{"now":1}` {
				t.Errorf("state = %s", tr.State)
			}
			if len(snap.Active) != 1 || snap.Active[0].Timeperiod != "2026030111" {
				t.Errorf("active = %+v", snap.Active)
			}
		}
		check(s, 0)
		s.Close()
		check(reopen(), 0)
	})
	t.Run("calendars", func(t *testing.T) {
		t.Parallel()
		s, reopen := open(t)
		public := job.Calendar{Name: "public", Description: "public holidays", Dates: []string{"2026-12-25", "2027-01-01"}}
		monthEnd := job.Calendar{Name: "month_end", Rules: []string{"last business day of month", "2nd tuesday of month"},
			Holidays: []string{"public", "2026-12-24"}, Workdays: "mo,tu,we,th,fr,sa"}
		old := job.Calendar{Name: "old", Rules: []string{"daily"}}
		if err := s.Commit(ctx, &store.Batch{Calendars: []job.Calendar{public, old, monthEnd}}); err != nil {
			t.Fatal(err)
		}
		// One batch writes a calendar twice, deletes one and writes one
		// it deletes.
		public2 := public.Clone()
		public2.Dates = append(public2.Dates, "2027-05-01")
		second := &store.Batch{DeletedCalendars: []string{"old", "month_end"},
			Calendars: []job.Calendar{public, *public2, monthEnd}}
		if err := s.Commit(ctx, second); err != nil {
			t.Fatal(err)
		}
		check := func(s store.Store) {
			t.Helper()
			snap, err := s.Load(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]job.Calendar{monthEnd, *public2}, snap.Calendars); diff != "" {
				t.Errorf("calendars (-want +got):\n%s", diff)
			}
		}
		check(s)
		s.Close()
		check(reopen())
	})
	t.Run("node log keeps the newest", func(t *testing.T) {
		t.Parallel()
		s, _ := open(t)
		b := &store.Batch{Trees: &store.Trees{Nodes: []store.NodeRow{{Process: "h", Timeperiod: 1, State: "embryo", Body: json.RawMessage(`{}`)}}}}
		for i := range store.MaxNodeLog + 5 {
			b.Trees.Log = append(b.Trees.Log, store.NodeLogRow{Process: "h", Timeperiod: 1, At: t0, Body: json.RawMessage(fmt.Sprintf(`{"n":%d}`, i))})
		}
		if err := s.Commit(ctx, b); err != nil {
			t.Fatal(err)
		}
		one := &store.Batch{Trees: &store.Trees{Log: []store.NodeLogRow{{Process: "h", Timeperiod: 1, At: t0, Body: json.RawMessage(`{"n":-1}`)}}}}
		if err := s.Commit(ctx, one); err != nil {
			t.Fatal(err)
		}
		snap, err := s.Load(ctx)
		if err != nil {
			t.Fatal(err)
		}
		log := snap.Trees.Log
		if len(log) != store.MaxNodeLog || string(log[0].Body) != `{"n":6}` || string(log[len(log)-1].Body) != `{"n":-1}` {
			t.Errorf("%d entries kept, from %s to %s; want the newest %d, oldest first", len(log), log[0].Body, log[len(log)-1].Body, store.MaxNodeLog)
		}
	})
	t.Run("tokens", func(t *testing.T) {
		t.Parallel()
		s, reopen := open(t)
		if got, err := s.Tokens(ctx); err != nil || len(got) != 0 {
			t.Fatalf("Tokens of an empty store = %v, %v", got, err)
		}
		admin := auth.Token{ID: "00000000000000a1", Name: "admin", Role: auth.Admin, Hash: []byte{1, 2, 3}, Created: t0, CreatedBy: "gnomon"}
		batch := auth.Token{ID: "00000000000000d4", Name: "batch", Role: auth.Admin, Scope: auth.Scope{"batch_*"}, Owners: auth.Owners{"batch_*", "etl:staff"},
			Hash: []byte{6}, Created: t0.Add(3 * time.Second), CreatedBy: "admin"}
		fin := auth.Token{ID: "00000000000000b2", Name: "fin", Role: auth.Operator, Scope: auth.Scope{"finance_*", "group:ops"},
			Hash: []byte{4, 5}, Rate: auth.Unlimited, Created: t0.Add(time.Second), Expires: t0.Add(time.Hour), CreatedBy: "admin"}
		for _, tok := range []auth.Token{admin, fin, batch} {
			if err := s.AddToken(ctx, tok); err != nil {
				t.Fatal(err)
			}
		}
		again := fin
		again.ID = "00000000000000c3"
		if err := s.AddToken(ctx, again); !errors.Is(err, store.ErrConflict) {
			t.Errorf("a second token named fin: %v, want ErrConflict", err)
		}
		if err := s.RevokeToken(ctx, fin.ID, t0.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		if err := s.RevokeToken(ctx, fin.ID, t0.Add(2*time.Minute)); !errors.Is(err, store.ErrNoToken) {
			t.Errorf("revoking twice: %v, want ErrNoToken", err)
		}
		// Once revoked, the name is free again; the revoked token stays.
		if err := s.AddToken(ctx, again); err != nil {
			t.Fatalf("a new token named fin after revoking the old: %v", err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		s = reopen()
		got, err := s.Tokens(ctx)
		if err != nil {
			t.Fatal(err)
		}
		fin.Revoked = t0.Add(time.Minute)
		if diff := cmp.Diff([]auth.Token{admin, fin, again, batch}, got); diff != "" {
			t.Errorf("Tokens after reopen (-want +got):\n%s", diff)
		}
	})
}

// InAnyOrder compares the windows of two snapshots, which a store returns
// in no particular order.
var InAnyOrder = cmpopts.SortSlices(func(a, b job.Validation) bool {
	if a.Task != b.Task {
		return a.Task < b.Task
	}
	if a.Dep != b.Dep {
		return a.Dep < b.Dep
	}
	return a.TS.Before(b.TS)
})
