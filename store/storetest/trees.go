package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/store"
)

// testTrees checks timeperiod trees, calendars and the node log.
func testTrees(t *testing.T, open Open) {
	ctx := context.Background()
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
}
