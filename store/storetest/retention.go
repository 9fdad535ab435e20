package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/store"
)

// RunRetention runs the conformance tests of store.Pruner: what each
// horizon removes, what no horizon ever removes, and passes in batches.
func RunRetention(t *testing.T, open Open) {
	ctx := context.Background()
	day := 24 * time.Hour
	pruner := func(t *testing.T, s store.Store) store.Pruner {
		t.Helper()
		p, ok := s.(store.Pruner)
		if !ok {
			t.Fatalf("%T is not a store.Pruner", s)
		}
		return p
	}
	// prune runs passes until none has more, and adds up what they did.
	prune := func(t *testing.T, p store.Pruner, pr store.Prune) store.Pruned {
		t.Helper()
		var total store.Pruned
		for i := 0; ; i++ {
			n, err := p.Prune(ctx, pr)
			if err != nil {
				t.Fatal(err)
			}
			total.Add(n)
			if !n.More || pr.DryRun {
				return total
			}
			if i > 1000 {
				t.Fatal("prune passes never end")
			}
		}
	}

	t.Run("records by age", func(t *testing.T) {
		t.Parallel()
		s, reopen := open(t)
		// Day i's records, for days 0 to 9, of tasks "a" (every day),
		// "kept" and "short" (days with a horizon of their own).
		var b store.Batch
		id := int64(0)
		at := func(d int) time.Time { return t0.Add(time.Duration(d) * day) }
		for d := range 10 {
			for _, task := range []string{"a", "kept", "short"} {
				id++
				r := job.Run{ID: id, Task: task, Status: job.Success, Start: at(d), End: at(d).Add(time.Minute), Scheduled: at(d)}
				b.Runs = append(b.Runs, r)
				b.Fires = append(b.Fires, job.Fire{Task: task, Scheduled: at(d), Fate: job.FateRan, At: at(d)})
				b.Audit = append(b.Audit, job.AuditOf(&r))
				b.Alerts = append(b.Alerts, job.Alert{Task: task, Outcome: job.OutcomeFailure, RunID: id, Created: at(d), State: job.AlertSent})
			}
		}
		// A run that started on day 0 and still runs, an alert of day 0
		// not sent yet.
		b.Runs = append(b.Runs, job.Run{ID: 1000, Task: "a", Status: job.Running, Start: at(0)})
		b.Alerts = append(b.Alerts, job.Alert{Task: "a", Outcome: job.OutcomeFailure, Created: at(0), State: job.AlertPending})
		b.Trees = &store.Trees{Nodes: []store.NodeRow{{Process: "h", Timeperiod: 1, State: "embryo", Body: json.RawMessage(`{}`)}}}
		for d := range 10 {
			b.Trees.Log = append(b.Trees.Log, store.NodeLogRow{Process: "h", Timeperiod: 1, At: at(d), Body: json.RawMessage(fmt.Sprintf(`{"d":%d}`, d))})
		}
		if err := s.Commit(ctx, &b); err != nil {
			t.Fatal(err)
		}
		// An attempt at an alert that goes goes with it.
		first := b.Alerts[0]
		first.Attempts = 1
		if err := s.RecordAttempt(ctx, &first, job.Attempt{Alert: first.ID, At: at(0)}); err != nil {
			t.Fatal(err)
		}
		auditUpTo := b.Audit[len(b.Audit)-1].Seq - 3 // the last day's not in audit.log yet
		horizon := at(5)                             // days 0 to 4 go
		pr := store.Prune{Runs: horizon, Fires: horizon, Audit: horizon, Alerts: horizon, NodeLog: horizon, AuditUpTo: auditUpTo,
			Keep: []store.Keep{{Task: "kept"}, {Task: "short", Before: at(8)}}, Limit: 4}
		dry := pr
		dry.DryRun = true
		p := pruner(t, s)
		want := store.Pruned{Runs: 5 + 8, Fires: 5 + 8, Audit: 5 + 8, Alerts: 5 + 8, NodeLog: 5}
		if got := prune(t, p, dry); got != want {
			t.Errorf("dry run = %+v, want %+v", got, want)
		}
		if rs, _ := s.Runs(ctx, store.RunQuery{Task: "a"}); len(rs) != 11 {
			t.Fatalf("a dry run removed runs: %d left of 11", len(rs))
		}
		if got := prune(t, p, pr); got != want {
			t.Errorf("prune = %+v, want %+v", got, want)
		}
		if got := prune(t, p, pr); got.Total() != 0 {
			t.Errorf("a second pass removed %+v", got)
		}
		s.Close()
		s = reopen()
		defer s.Close()

		days := func(task string) []int {
			rs, err := s.Runs(ctx, store.RunQuery{Task: task})
			if err != nil {
				t.Fatal(err)
			}
			var out []int
			for _, r := range rs {
				out = append(out, int(r.Start.Sub(t0)/day))
			}
			slices.Sort(out)
			return out
		}
		for task, want := range map[string][]int{"a": {0, 5, 6, 7, 8, 9}, "kept": {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, "short": {8, 9}} {
			if got := days(task); !slices.Equal(got, want) {
				t.Errorf("days of the runs of %s left = %v, want %v", task, got, want)
			}
		}
		if snap, err := s.Load(ctx); err != nil || len(snap.Active) != 1 || snap.Active[0].ID != 1000 {
			t.Errorf("the run still running was pruned: %+v, %v", snap, err)
		}
		fires, err := s.Fires(ctx, store.FireQuery{Task: "short"})
		if err != nil || len(fires) != 2 || !fires[1].Scheduled.Equal(at(8)) {
			t.Errorf("fires of short left = %+v, %v; want days 8 and 9", fires, err)
		}
		if fires, _ := s.Fires(ctx, store.FireQuery{}); len(fires) != 30-13 {
			t.Errorf("%d fires left, want %d", len(fires), 30-13)
		}
		audit, err := s.Audit(ctx, 0, 100)
		if err != nil || len(audit) != 30-13 || audit[len(audit)-1].Seq != b.Audit[len(b.Audit)-1].Seq {
			t.Errorf("%d audit records left (%v), want %d, the last one among them", len(audit), err, 30-13)
		}
		alerts, err := s.Alerts(ctx, store.AlertQuery{})
		if err != nil || len(alerts) != 31-13 || !slices.ContainsFunc(alerts, func(a job.Alert) bool { return a.State == job.AlertPending }) {
			t.Errorf("%d alerts left (%v), want %d, the pending one among them", len(alerts), err, 31-13)
		}
		if snap, _ := s.Load(ctx); len(snap.Trees.Log) != 5 || string(snap.Trees.Log[0].Body) != `{"d":5}` {
			t.Errorf("node log left = %d entries, want days 5 to 9", len(snap.Trees.Log))
		}
		// Numbers go on after the last ones, pruned or not.
		more := store.Batch{Audit: []job.AuditRecord{b.Audit[0]}, Alerts: []job.Alert{b.Alerts[0]}}
		if err := s.Commit(ctx, &more); err != nil {
			t.Fatal(err)
		}
		if more.Audit[0].Seq != b.Audit[len(b.Audit)-1].Seq+1 || more.Alerts[0].ID != b.Alerts[len(b.Alerts)-1].ID+1 {
			t.Errorf("after pruning, audit seq %d and alert id %d; want %d and %d", more.Audit[0].Seq, more.Alerts[0].ID,
				b.Audit[len(b.Audit)-1].Seq+1, b.Alerts[len(b.Alerts)-1].ID+1)
		}
	})

	t.Run("a pass in calls goes on where the call before stopped", func(t *testing.T) {
		t.Parallel()
		s, _ := open(t)
		// Three tasks with ten fires a day apart, five of each before the
		// horizon: the calls take them two at a time, oldest first, each
		// from where the one before stopped, and stop at the horizon.
		var b store.Batch
		for _, task := range []string{"a", "b", "c"} {
			for i := range 10 {
				at := t0.Add(time.Duration(i) * day)
				b.Fires = append(b.Fires, job.Fire{Task: task, Scheduled: at, Fate: job.FateRan, At: at})
			}
		}
		if err := s.Commit(ctx, &b); err != nil {
			t.Fatal(err)
		}
		horizon := t0.Add(5 * day)
		p, cursor := pruner(t, s), &store.PruneCursor{}
		var total store.Pruned
		calls := 0
		for more := true; more; calls++ {
			n, err := p.Prune(ctx, store.Prune{Fires: horizon, Limit: 2, Cursor: cursor})
			if err != nil {
				t.Fatal(err)
			}
			total.Add(n)
			more = n.More
		}
		if total.Fires != 15 || calls != 8 {
			t.Errorf("%d fires pruned in %d calls of 2, want 15 in 8", total.Fires, calls)
		}
		fires, err := s.Fires(ctx, store.FireQuery{})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range fires {
			if f.Scheduled.Before(horizon) {
				t.Errorf("%s's fire at %v, before the horizon, is left", f.Task, f.Scheduled)
			}
		}
		if len(fires) != 15 {
			t.Errorf("%d fires left, want 15", len(fires))
		}
	})

	t.Run("the last of each kind stays", func(t *testing.T) {
		t.Parallel()
		s, _ := open(t)
		r := job.Run{ID: 7, Task: "a", Status: job.Success, Start: t0, End: t0}
		b := &store.Batch{Runs: []job.Run{r, {ID: 5, Task: "b", Status: job.Success, Start: t0, End: t0},
			{ID: 6, Task: "b", Status: job.Failure, Start: t0, End: t0}}, Audit: []job.AuditRecord{job.AuditOf(&r)},
			Alerts: []job.Alert{{Task: "a", Created: t0, State: job.AlertSent}}}
		if err := s.Commit(ctx, b); err != nil {
			t.Fatal(err)
		}
		later := t0.Add(100 * day)
		got := prune(t, pruner(t, s), store.Prune{Runs: later, Audit: later, Alerts: later, AuditUpTo: 100})
		if got != (store.Pruned{Runs: 1}) {
			t.Errorf("pruned %+v: the last run of each task, the last audit record and alert must stay", got)
		}
		if snap, err := s.Load(ctx); err != nil || snap.LastRun != 7 {
			t.Errorf("last run = %+v, %v; want 7", snap, err)
		}
		if rs, err := s.Runs(ctx, store.RunQuery{Task: "b"}); err != nil || len(rs) != 1 || rs[0].ID != 6 {
			t.Errorf("runs of b = %+v, %v; want its last, 6", rs, err)
		}
	})

	t.Run("journal behind the checkpoint", func(t *testing.T) {
		t.Parallel()
		s, reopen := open(t)
		// 20 entries, one a minute: even ones data events, odd ones
		// definitions, every fifth an action.
		var b store.Batch
		for i := range 20 {
			kind := "define"
			switch {
			case i%5 == 0:
				kind = "act"
			case i%2 == 0:
				kind = "data"
			}
			b.Entries = append(b.Entries, store.Entry{At: t0.Add(time.Duration(i) * time.Minute), Kind: kind, Body: json.RawMessage(fmt.Sprintf(`{"i":%d}`, i))})
		}
		if err := s.Commit(ctx, &b); err != nil {
			t.Fatal(err)
		}
		seq := func(i int) int64 { return b.Entries[i].Seq }
		// The checkpoint is as of entry 15: entries 15 to 19 stay.
		if err := s.Commit(ctx, &store.Batch{Checkpoint: &store.Checkpoint{Gen: 1, Done: true, Seq: seq(15)}}); err != nil {
			t.Fatal(err)
		}
		p := pruner(t, s)
		// Data events and actions of minute 6 on stay.
		pr := store.Prune{Journal: true, Data: t0.Add(6 * time.Minute), Limit: 3}
		kept := []int{6, 8, 10, 12, 14, 15, 16, 17, 18, 19}
		dry := pr
		dry.DryRun = true
		if got := prune(t, p, dry); got.Journal != int64(20-len(kept)) {
			t.Errorf("dry run would remove %d entries, want %d", got.Journal, 20-len(kept))
		}
		if got := prune(t, p, pr); got.Journal != int64(20-len(kept)) {
			t.Errorf("prune removed %d entries, want %d", got.Journal, 20-len(kept))
		}
		left := func() []int {
			t.Helper()
			es, err := s.Journal(ctx, 0, 100)
			if err != nil {
				t.Fatal(err)
			}
			var out []int
			for _, e := range es {
				var v struct{ I int }
				if err := json.Unmarshal(e.Body, &v); err != nil {
					t.Fatal(err)
				}
				out = append(out, v.I)
			}
			return out
		}
		if got := left(); !slices.Equal(got, kept) {
			t.Errorf("entries left = %v, want %v", got, kept)
		}
		// A definition after the cursor, behind a later checkpoint, goes;
		// an action stays, and the entries the cursor passed are not
		// counted again.
		if err := s.Commit(ctx, &store.Batch{Checkpoint: &store.Checkpoint{Gen: 2, Done: true, Seq: seq(19)}}); err != nil {
			t.Fatal(err)
		}
		if got := prune(t, p, pr); got.Journal != 1 {
			t.Errorf("second pass removed %d entries, want 1 (17)", got.Journal)
		}
		if got := left(); !slices.Equal(got, []int{6, 8, 10, 12, 14, 15, 16, 18, 19}) {
			t.Errorf("entries left = %v", got)
		}
		// Without a data horizon, data events and actions stay.
		if got := prune(t, p, store.Prune{Journal: true}); got.Journal != 0 {
			t.Errorf("without a data horizon, %d entries removed", got.Journal)
		}
		// With a later one, every entry before the checkpoint goes, and
		// the journal goes on from its last number.
		if got := prune(t, p, store.Prune{Journal: true, Data: t0.Add(time.Hour)}); got.Journal != 8 {
			t.Errorf("with every data event past its horizon, %d entries removed, want 8", got.Journal)
		}
		s.Close()
		s = reopen()
		defer s.Close()
		if got := left(); !slices.Equal(got, []int{19}) {
			t.Errorf("entries left = %v, want the checkpoint's", got)
		}
		next := &store.Batch{Entries: []store.Entry{{At: t0.Add(time.Hour), Kind: "act", Body: json.RawMessage(`{"i":20}`)}}}
		if err := s.Commit(ctx, next); err != nil {
			t.Fatal(err)
		}
		if next.Entries[0].Seq != seq(19)+1 {
			t.Errorf("next entry numbered %d, want %d", next.Entries[0].Seq, seq(19)+1)
		}
		if snap, err := s.Load(ctx); err != nil || snap.WindowsSeq != seq(19) {
			t.Errorf("checkpoint after pruning: %+v, %v", snap, err)
		}
		if diff := cmp.Diff([]int{19, 20}, left()); diff != "" {
			t.Errorf("journal (-want +got):\n%s", diff)
		}
	})

	// Tens of thousands of tasks with horizons of their own: more than
	// either store takes parameters in one statement (SQLite 32766,
	// PostgreSQL 65535).
	t.Run("keep list of 40000 tasks", func(t *testing.T) {
		t.Parallel()
		s, _ := open(t)
		defer s.Close()
		const n = 40000
		at := func(d int) time.Time { return t0.Add(time.Duration(d) * day) }
		// The even tasks keep 5 days, the odd ones everything; "a" has
		// the default horizon. One task in 100 ran, on days 0 and 9: the
		// statements name all 40000, whatever rows there are.
		var b store.Batch
		var keep []store.Keep
		id := int64(0)
		name := func(i int) string { return fmt.Sprintf("t%05d", i) }
		ran := 0
		for i := range n + 1 {
			task := name(i)
			switch {
			case i == n:
				task = "a"
			case i%2 == 0:
				keep = append(keep, store.Keep{Task: task, Before: at(5)})
			default:
				keep = append(keep, store.Keep{Task: task})
			}
			if i%100 > 1 && i != n {
				continue
			}
			ran++
			for _, d := range []int{0, 9} {
				id++
				b.Runs = append(b.Runs, job.Run{ID: id, Task: task, Status: job.Success, Start: at(d), End: at(d).Add(time.Minute), Scheduled: at(d)})
			}
		}
		if err := s.Commit(ctx, &b); err != nil {
			t.Fatal(err)
		}
		pr := store.Prune{Runs: at(5), Keep: keep, Limit: 5000}
		if got, want := prune(t, pruner(t, s), pr), (store.Pruned{Runs: int64(ran/2 + 1)}); got != want {
			t.Errorf("prune = %+v, want %+v", got, want)
		}
		for _, task := range []string{name(0), name(1), name(n - 100), name(n - 99), "a"} {
			rs, err := s.Runs(ctx, store.RunQuery{Task: task})
			if err != nil {
				t.Fatal(err)
			}
			want := 1
			if task == name(1) || task == name(n-99) {
				want = 2
			}
			if len(rs) != want {
				t.Errorf("%s has %d runs left, want %d", task, len(rs), want)
			}
		}
	})
}
