package web

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/store"
	"github.com/gnomon-sched/gnomon/store/sqlite"
)

// countingTasker counts the queries the set makes and the tasks each
// names.
type countingTasker struct {
	runTasker
	queries, whole int
}

func (c *countingTasker) RunTasks(ctx context.Context, q store.RunPageQuery) ([]string, error) {
	c.queries++
	if len(q.Tasks) == 0 {
		c.whole++
	}
	return c.runTasker.RunTasks(ctx, q)
}

// TestRanSet: a walk over tasks in name order, asking a ranSet about
// every task or about some, gets the same answers as the runs say,
// whatever the batches and the budget, by one query a batch (that asks
// what the two of the whole range do) until the budget is spent, then
// by those two.
func TestRanSet(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "gnomon.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	from := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	to := from.Add(24 * time.Hour)
	rng := rand.New(rand.NewPCG(1, 2))
	var (
		names []string
		b     store.Batch
		want  = map[string]bool{}
	)
	for i := range 300 {
		name := fmt.Sprintf("t%03d", i)
		names = append(names, name)
		for range rng.IntN(3) {
			start := from.Add(time.Duration(rng.IntN(72)-36) * time.Hour)
			end := start.Add(time.Duration(rng.IntN(6)) * time.Hour)
			run := job.Run{ID: int64(len(b.Runs) + 1), Task: name, Status: job.Success, Start: start, End: end}
			if rng.IntN(10) == 0 {
				run.Status, run.End = job.Running, time.Time{}
			}
			b.Runs = append(b.Runs, run)
			in := !start.Before(from) && start.Before(to)
			runningInto := !start.Before(from.Add(-tlLookback)) && start.Before(from) && (run.End.IsZero() || !run.End.Before(from))
			want[name] = want[name] || in || runningInto
		}
	}
	if err := st.Commit(ctx, &b); err != nil {
		t.Fatal(err)
	}
	in := store.RunPageQuery{From: from, To: to}
	before := store.RunPageQuery{From: from.Add(-tlLookback), To: from, EndFrom: from}
	probe := store.RunPageQuery{From: from.Add(-tlLookback), To: to, EndFrom: from}
	for _, c := range []struct{ first, most, budget, every int }{
		{256, 4096, 16384, 1},
		{1, 1, 1000, 1},
		{3, 8, 40, 1},
		{3, 8, 40, 7},
		{5, 5, 0, 3},
		{2, 64, 100, 50},
	} {
		t.Run(fmt.Sprintf("%+v", c), func(t *testing.T) {
			t.Parallel()
			// ahead looks as the timeline's does: at the tasks the walk
			// asks about, at most n, looking at most ranLook × n tasks
			// past the first.
			ahead := func(name string, n int) ([]string, string) {
				i, _ := slices.BinarySearch(names, name)
				out := []string{name}
				for k := i + 1; k < len(names); k++ {
					if len(out) == n || k-i-1 == ranLook*n {
						return out, names[k-1]
					}
					if k%c.every == 0 {
						out = append(out, names[k])
					}
				}
				return out, ""
			}
			ct := &countingTasker{runTasker: st}
			s := newRanSet(ct, probe, []store.RunPageQuery{in, before}, ahead)
			s.batch, s.most, s.budget = c.first, c.most, c.budget
			asked := 0
			for i := 0; i < len(names); i += c.every {
				got, err := s.has(ctx, names[i])
				if err != nil {
					t.Fatal(err)
				}
				if got != want[names[i]] {
					t.Errorf("%s: has %v, want %v", names[i], got, want[names[i]])
				}
				asked++
			}
			if c.budget >= len(names) && ct.whole != 0 {
				t.Errorf("asked for the whole range %d times within the budget", ct.whole)
			}
			if c.budget < len(names) && (c.every == 1 || c.budget == 0) && ct.whole != len([]any{in, before}) {
				t.Errorf("asked for the whole range %d times past the budget, want once a query", ct.whole)
			}
			if c.first == 1 && c.most == 1 && ct.queries != asked {
				t.Errorf("%d queries for %d tasks asked one at a time, want %d", ct.queries, asked, asked)
			}
		})
	}
}
