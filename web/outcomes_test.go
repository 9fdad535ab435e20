package web

import (
	"context"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/store"
)

// countingStore answers RunCounts with one success a step, and records
// the queries.
type countingStore struct {
	store.Store
	queries []store.RunCountQuery
}

func (s *countingStore) RunCounts(_ context.Context, q store.RunCountQuery) ([]store.RunCount, error) {
	s.queries = append(s.queries, q)
	var out []store.RunCount
	for i := 0; q.From.Add(time.Duration(i) * q.Step).Before(q.To); i++ {
		out = append(out, store.RunCount{Step: i, Status: job.Success, Runs: 1})
	}
	return out, nil
}

// TestHourCounts: the chart's hours are counted once, then only those
// that may still change, the hours that ended less than ocSettle before
// they were counted; a settled hour is counted again after ocRecheck, at
// most ocRecheckHours a read.
func TestHourCounts(t *testing.T) {
	t.Parallel()
	st := &countingStore{}
	var c hourCounts
	now := time.Date(2026, 11, 28, 10, 30, 0, 0, time.UTC)
	hours, first, err := c.count(context.Background(), st, now, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	if len(hours) != ocHours || !first.Equal(time.Date(2026, 11, 21, 11, 0, 0, 0, time.UTC)) || len(st.queries) != 1 || hours[0].Success != 1 || hours[ocHours-1].Success != 1 {
		t.Fatalf("first read: %d hours from %s, %d queries", len(hours), first, len(st.queries))
	}
	// A minute on: the hours from 08:00 (which ended at 09:00, less
	// than ocSettle before it was counted) to now.
	st.queries = nil
	if _, _, err := c.count(context.Background(), st, now.Add(time.Minute), time.UTC); err != nil {
		t.Fatal(err)
	}
	if len(st.queries) != 1 || !st.queries[0].From.Equal(time.Date(2026, 11, 28, 8, 0, 0, 0, time.UTC)) || !st.queries[0].To.After(now) {
		t.Errorf("second read: %+v, want the hours from 08:00 only", st.queries)
	}
	// Two hours on, every settled hour is due again: 24 of them, and the
	// hours that are not settled, are counted.
	st.queries = nil
	if _, _, err := c.count(context.Background(), st, now.Add(2*time.Hour), time.UTC); err != nil {
		t.Fatal(err)
	}
	counted := 0
	for _, q := range st.queries {
		counted += int((q.To.Sub(q.From) + time.Hour - 1) / time.Hour)
	}
	if counted > ocRecheckHours+6 || counted < ocRecheckHours {
		t.Errorf("two hours on, %d hours counted in %d queries, want about %d", counted, len(st.queries), ocRecheckHours+4)
	}
}
