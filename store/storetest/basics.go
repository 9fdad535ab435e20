package storetest

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/store"
)

// testBasics checks the empty store, what a commit writes and a reopen reads
// back, and the guarantees of a commit: all or nothing, numbers without gaps,
// the last write of a row in one batch wins.
func testBasics(t *testing.T, open Open) {
	ctx := context.Background()
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
				{ID: 1, Task: "a", Status: job.Running, Start: at(1), Scheduled: at(1), Trigger: "retry", By: "alice", Attempt: 2, RetryOf: 7,
					Params: []job.Var{{Name: "region", Value: "eu, \"west\""}, {Name: "day", Value: ""}}},
				{ID: 1, Task: "a", Status: job.Success, Start: at(1), End: at(2), Result: job.ResultNormal, Message: "done", Scheduled: at(1),
					Trigger: "retry", Data: map[string]string{"k": "v"}, By: "alice", EndedBy: "bob", Attempt: 2, RetryOf: 7,
					Log:    &job.LogSpan{OutFrom: -1, OutTo: 120, ErrFrom: 7, ErrTo: 7, Node: "w1"},
					Params: []job.Var{{Name: "region", Value: "eu, \"west\""}, {Name: "day", Value: ""}}},
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
}
