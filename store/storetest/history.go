package storetest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/store"
)

// testHistory checks the history of runs and fires: queries over runs, the
// fire ledger and backfilled occurrences.
func testHistory(t *testing.T, open Open) {
	ctx := context.Background()
	t.Run("runs about", func(t *testing.T) {
		t.Parallel()
		s, _ := open(t)
		if n, err := s.RunsAbout(ctx, t0, t0.Add(time.Hour)); err != nil || n != 0 {
			t.Errorf("no runs: %d, %v; want 0", n, err)
		}
		// Runs numbered as they start, two at some instants; one still
		// running.
		var runs []job.Run
		for i := range 30 {
			r := job.Run{ID: int64(i + 1), Task: fmt.Sprint("t", 3-i%4), Status: job.Success, Start: t0.Add(time.Duration(i/2*2) * 10 * time.Minute)}
			r.End = r.Start.Add(time.Minute)
			if i == 29 {
				r.Status, r.End = job.Running, time.Time{}
			}
			runs = append(runs, r)
		}
		if err := s.Commit(ctx, &store.Batch{Runs: runs}); err != nil {
			t.Fatal(err)
		}
		for _, c := range [][2]time.Time{
			{t0, t0.Add(time.Hour)},
			{t0.Add(-time.Hour), t0.Add(time.Minute)},
			{t0.Add(25 * time.Minute), t0.Add(95 * time.Minute)},
			{t0.Add(4 * time.Hour), t0.Add(5 * time.Hour)},
			{t0.Add(-time.Hour), t0.Add(10 * time.Hour)},
			{t0.Add(time.Hour), t0},
		} {
			want := int64(0)
			for _, r := range runs {
				if !r.Start.Before(c[0]) && r.Start.Before(c[1]) {
					want++
				}
			}
			if n, err := s.RunsAbout(ctx, c[0], c[1]); err != nil || n != want {
				t.Errorf("from %v to %v: %d, %v; want %d", c[0], c[1], n, err, want)
			}
		}
	})
	t.Run("run counts", func(t *testing.T) {
		t.Parallel()
		s, _ := open(t)
		// Runs every 20 minutes over three hours from t0, one in three
		// failed, one running; one an instant before the range and one
		// at its end, neither counted.
		var runs []job.Run
		for i := range 9 {
			r := job.Run{ID: int64(i + 1), Task: "a", Status: job.Success, Start: t0.Add(time.Duration(i) * 20 * time.Minute)}
			r.End = r.Start.Add(time.Minute)
			switch {
			case i%3 == 1:
				r.Status = job.Failure
			case i == 8:
				r.Status, r.End = job.Running, time.Time{}
			}
			runs = append(runs, r)
		}
		runs = append(runs,
			job.Run{ID: 20, Task: "b", Status: job.Success, Start: t0.Add(-time.Nanosecond), End: t0},
			job.Run{ID: 21, Task: "b", Status: job.Failure, Start: t0.Add(3 * time.Hour), End: t0.Add(3 * time.Hour)})
		if err := s.Commit(ctx, &store.Batch{Runs: runs}); err != nil {
			t.Fatal(err)
		}
		q := store.RunCountQuery{From: t0, To: t0.Add(3 * time.Hour), Step: time.Hour, Statuses: []job.Status{job.Success, job.Failure, job.Aborted}}
		got, err := s.RunCounts(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		sortCounts := func(cs []store.RunCount) {
			slices.SortFunc(cs, func(a, b store.RunCount) int {
				if a.Step != b.Step {
					return a.Step - b.Step
				}
				return int(a.Status) - int(b.Status)
			})
		}
		sortCounts(got)
		want := []store.RunCount{
			{Step: 0, Status: job.Success, Runs: 2}, {Step: 0, Status: job.Failure, Runs: 1},
			{Step: 1, Status: job.Success, Runs: 2}, {Step: 1, Status: job.Failure, Runs: 1},
			{Step: 2, Status: job.Success, Runs: 1}, {Step: 2, Status: job.Failure, Runs: 1},
		}
		sortCounts(want)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("by the hour (-want +got):\n%s", diff)
		}
		q.Step = 0
		got, err = s.RunCounts(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		sortCounts(got)
		want = []store.RunCount{{Status: job.Success, Runs: 5}, {Status: job.Failure, Runs: 3}}
		sortCounts(want)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("the whole range (-want +got):\n%s", diff)
		}
		for _, bad := range []store.RunCountQuery{{To: t0, Statuses: q.Statuses}, {From: t0, To: t0, Statuses: q.Statuses}, {From: t0, To: t0.Add(time.Hour)}, {From: t0, To: t0.Add(time.Hour), Step: -1, Statuses: q.Statuses}} {
			if _, err := s.RunCounts(ctx, bad); err == nil {
				t.Errorf("%+v: no error", bad)
			}
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
	t.Run("run history pages", func(t *testing.T) {
		t.Parallel()
		s, _ := open(t)
		// 60 runs of four tasks, three of them at each instant, so that
		// runs started together are ordered by ID; IDs are given out of
		// start order, as a clock set back would.
		var all []job.Run
		for i := range 60 {
			r := job.Run{ID: int64(1 + (i*37)%60), Task: string(rune('a' + i%4)), Status: []job.Status{job.Success, job.Failure, job.Aborted}[i%3],
				Start: t0.Add(time.Duration(i/3) * time.Hour), End: t0.Add(time.Duration(i/3)*time.Hour + time.Duration(1+i%5)*time.Minute)}
			if i == 7 {
				r.Status, r.End = job.Running, time.Time{} // still running
			}
			all = append(all, r)
		}
		if err := s.Commit(ctx, &store.Batch{Runs: all}); err != nil {
			t.Fatal(err)
		}
		// want is the selection by sorting every run.
		want := func(q store.RunPageQuery) []int64 {
			var out []job.Run
			for _, r := range all {
				if len(q.Tasks) > 0 && !slices.Contains(q.Tasks, r.Task) || len(q.Statuses) > 0 && !slices.Contains(q.Statuses, r.Status) ||
					!q.From.IsZero() && r.Start.Before(q.From) || !q.To.IsZero() && !r.Start.Before(q.To) ||
					!q.EndFrom.IsZero() && !r.End.IsZero() && r.End.Before(q.EndFrom) ||
					q.ByTook && r.End.IsZero() {
					continue
				}
				out = append(out, r)
			}
			slices.SortFunc(out, func(a, b job.Run) int {
				if q.ByTook {
					if c := b.End.Sub(b.Start) - a.End.Sub(a.Start); c != 0 {
						return int(c / time.Second)
					}
					return int(b.ID - a.ID)
				}
				if c := b.Start.Compare(a.Start); c != 0 {
					return c
				}
				return int(b.ID - a.ID)
			})
			var ids []int64
			for _, r := range out {
				ids = append(ids, r.ID)
			}
			return ids
		}
		for _, q := range []store.RunPageQuery{
			{},
			{Tasks: []string{"b"}},
			{Tasks: []string{"a", "c"}, Statuses: []job.Status{job.Failure}},
			{Statuses: []job.Status{job.Aborted, job.Failure}},
			{From: t0.Add(3 * time.Hour), To: t0.Add(9 * time.Hour)},
			{Tasks: []string{"d"}, From: t0.Add(5 * time.Hour)},
			{Tasks: []string{"nobody"}},
			{To: t0.Add(12 * time.Hour), EndFrom: t0.Add(5*time.Hour + 30*time.Second)},
			{ByTook: true},
			{ByTook: true, Tasks: []string{"a", "b"}},
			{ByTook: true, Statuses: []job.Status{job.Failure}, From: t0.Add(2 * time.Hour)},
		} {
			// Page forward by 7 to the end, then back from the last page.
			var pages [][]job.Run
			q.Limit = 7
			for {
				page, err := s.RunPage(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				if len(page) == 0 {
					break
				}
				pages = append(pages, page)
				k := store.Key(page[len(page)-1])
				q.Older = &k
			}
			var got []int64
			for _, p := range pages {
				for _, r := range p {
					got = append(got, r.ID)
				}
			}
			q.Older = nil
			if diff := cmp.Diff(want(q), got); diff != "" {
				t.Errorf("%+v, paged forward (-want +got):\n%s", q, diff)
			}
			// The tasks that have runs it selects.
			var tasks []string
			for _, r := range all {
				if slices.Contains(want(q), r.ID) && !slices.Contains(tasks, r.Task) {
					tasks = append(tasks, r.Task)
				}
			}
			slices.Sort(tasks)
			if got, err := s.RunTasks(ctx, q); !q.ByTook && (err != nil || !slices.Equal(got, tasks)) {
				t.Errorf("%+v: tasks run %v, %v; want %v", q, got, err, tasks)
			}
			for i := len(pages) - 1; i > 0; i-- {
				k := store.Key(pages[i][0])
				q.Newer = &k
				back, err := s.RunPage(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(pages[i-1], back); diff != "" {
					t.Errorf("%+v, the page before page %d (-want +got):\n%s", q, i, diff)
				}
			}
		}
	})
}
