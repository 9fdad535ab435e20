package postgres

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/store"
)

// TestHistoryPlans checks that an index can serve each page of the
// history in the order of the page, without sorting what the filters
// pass: with scans of the whole table ruled out, the plan reads the
// expected index and has no Sort. (On the few rows of a test, PostgreSQL
// would rather read the table.)
func TestHistoryPlans(t *testing.T) {
	t.Parallel()
	f := setup(t)
	ctx := context.Background()
	f.exec(t, `SET enable_seqscan = off`)
	f.exec(t, `SET enable_bitmapscan = off`)
	day := time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)
	key := &store.RunKey{Start: day, ID: 7}
	failed := []job.Status{job.Failure}
	for _, c := range []struct {
		name  string
		runs  *store.RunPageQuery
		audit *store.AuditQuery
		index string
	}{
		{"runs", &store.RunPageQuery{Limit: 101}, nil, "runs_start"},
		{"runs, next page", &store.RunPageQuery{Older: key, Limit: 101}, nil, "runs_start"},
		{"runs of a day, the page before", &store.RunPageQuery{From: day, To: day.AddDate(0, 0, 1), Newer: key, Limit: 101}, nil, "runs_start"},
		{"runs of a task", &store.RunPageQuery{Tasks: []string{"t1"}, Older: key, Limit: 101}, nil, "runs_task_start"},
		{"failed runs of a day", &store.RunPageQuery{Statuses: failed, From: day, To: day.AddDate(0, 0, 1), Limit: 101}, nil, "runs_status_start"},
		{"runs by how long they took", &store.RunPageQuery{ByTook: true, Limit: 101}, nil, "runs_took"},
		{"runs by how long they took, the next page", &store.RunPageQuery{ByTook: true, Older: &store.RunKey{Took: time.Minute, ID: 7}, Limit: 101}, nil, "runs_took"},
		{"audit of a task", nil, &store.AuditQuery{Task: "t1", Before: 900, Limit: 101}, "audit_task"},
		{"failed audit records, the page before", nil, &store.AuditQuery{Statuses: failed, After: 900, Limit: 101}, "audit_status"},
		{"audit of a day", nil, &store.AuditQuery{From: day, To: day.AddDate(0, 0, 1), Limit: 101}, "audit_pkey"},
		{"audit of a task in a day, the next page", nil, &store.AuditQuery{Task: "t1", From: day, To: day.AddDate(0, 0, 1), Before: 900, Limit: 101}, "audit_task"},
		{"failed audit records before a day", nil, &store.AuditQuery{Statuses: failed, To: day, Limit: 101}, "audit_status"},
	} {
		var (
			q    string
			args []any
		)
		if c.runs != nil {
			q, args = runPageQuery(*c.runs)
		} else {
			q, args = auditPageQuery(*c.audit)
		}
		rows, err := f.db.Query(ctx, "EXPLAIN "+q, args...)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var plan []string
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, strings.TrimSpace(line))
		}
		rows.Close()
		text := strings.Join(plan, "; ")
		if strings.Contains(text, "Sort") || !strings.Contains(text, "Index Scan") || !strings.Contains(text, "using "+c.index+" ") {
			t.Errorf("%s: plan %q, want an index scan of %s without a sort", c.name, text, c.index)
		}
		// The bounds of numbers of a range of days come from an index:
		// audit_stop, or the primary key read from the newest when the
		// planner finds that cheaper.
		if c.audit != nil && strings.Count(text, "Index Only Scan using audit_stop ")+strings.Count(text, "Index Scan Backward using audit_pkey on audit audit_") != bounds(*c.audit) {
			t.Errorf("%s: plan %q, want each bound of numbers read from an index", c.name, text)
		}
	}
	// The counts of runs by status and step read the range of start times
	// through an index (of starts, or of statuses and starts, as the
	// planner finds cheaper), never the whole table.
	q, args := runCountQuery(store.RunCountQuery{From: day, To: day.AddDate(0, 0, 1), Step: time.Hour, Statuses: []job.Status{job.Success, job.Failure, job.Aborted}})
	rows, err := f.db.Query(ctx, "EXPLAIN "+q, args...)
	if err != nil {
		t.Fatalf("run counts: %v", err)
	}
	var plan []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, strings.TrimSpace(line))
	}
	rows.Close()
	text := strings.Join(plan, "; ")
	byIndex := strings.Contains(text, "using runs_start ") || strings.Contains(text, "using runs_status_start ")
	if strings.Contains(text, "Seq Scan") || !byIndex || !strings.Contains(text, "start_at >= ") {
		t.Errorf("run counts: plan %q, want an index scan of the range of runs_start or runs_status_start", text)
	}
}

// bounds is how many bounds of time an audit query has: each is read from
// audit_stop.
func bounds(q store.AuditQuery) int {
	n := 0
	for _, t := range []time.Time{q.From, q.To} {
		if !t.IsZero() {
			n++
		}
	}
	return n
}
