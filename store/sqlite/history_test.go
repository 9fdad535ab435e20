package sqlite

import (
	"context"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/store"
)

// TestHistoryPlans checks that each page of the history is read through
// an index, in the order of the page: never by reading the whole table,
// nor by sorting what the filters pass; and that the tasks that ran in a
// range are read from an index alone.
func TestHistoryPlans(t *testing.T) {
	t.Parallel()
	s := openFresh(t)
	day := time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)
	key := &store.RunKey{Start: day, ID: 7}
	failed := []job.Status{job.Failure}
	day1 := day.AddDate(0, 0, 1)
	var many []string
	for i := range mergedTasks + 1 {
		many = append(many, "t"+strconv.Itoa(i))
	}
	for _, c := range []struct {
		name  string
		runs  *store.RunPageQuery
		audit *store.AuditQuery
		index string // "": the primary key
		// merged: the pages of a few tasks, each read through the
		// index, sorted together (at most mergedTasks pages).
		merged bool
		// tasks: the tasks that ran (RunTasks), from the index alone.
		tasks bool
	}{
		{"runs", &store.RunPageQuery{Limit: 101}, nil, "runs_start", false, false},
		{"runs, next page", &store.RunPageQuery{Older: key, Limit: 101}, nil, "runs_start", false, false},
		{"runs of a day", &store.RunPageQuery{From: day, To: day1, Limit: 101}, nil, "runs_start", false, false},
		{"runs running into a day", &store.RunPageQuery{From: day.Add(-24 * time.Hour), To: day, EndFrom: day, Limit: 101}, nil, "runs_start", false, false},
		{"runs of a task", &store.RunPageQuery{Tasks: []string{"t1"}, Older: key, Limit: 101}, nil, "runs_task_start", false, false},
		{"runs of a few tasks", &store.RunPageQuery{Tasks: []string{"t1", "t2", "t3"}, Older: key, Limit: 101}, nil, "runs_task_start", true, false},
		{"runs of many tasks", &store.RunPageQuery{Tasks: many, Limit: 101}, nil, "runs_start", false, false},
		{"failed runs", &store.RunPageQuery{Statuses: failed, Limit: 101}, nil, "runs_status_start", false, false},
		{"failed runs of a day, the page before", &store.RunPageQuery{Statuses: failed, From: day, To: day1, Newer: key, Limit: 101}, nil, "runs_status_start", false, false},
		{"tasks that ran in a day", &store.RunPageQuery{From: day, To: day1}, nil, "runs_start", false, true},
		{"which of many tasks ran in a day", &store.RunPageQuery{Tasks: many, From: day, To: day1}, nil, "runs_task_start", false, true},
		{"runs by how long they took", &store.RunPageQuery{ByTook: true, Limit: 101}, nil, "runs_took", false, false},
		{"runs by how long they took, the page before", &store.RunPageQuery{ByTook: true, Newer: &store.RunKey{Took: time.Minute, ID: 7}, Limit: 101}, nil, "runs_took", false, false},
		{"runs of a few tasks by how long they took", &store.RunPageQuery{ByTook: true, Tasks: []string{"t1", "t2"}, Limit: 101}, nil, "runs_task", true, false},
		{"audit", nil, &store.AuditQuery{Before: 900, Limit: 101}, "", false, false},
		{"audit of a task", nil, &store.AuditQuery{Task: "t1", Before: 900, Limit: 101}, "audit_task", false, false},
		{"failed audit records, the page before", nil, &store.AuditQuery{Statuses: failed, After: 900, Limit: 101}, "audit_status", false, false},
		{"audit of a few tasks", nil, &store.AuditQuery{Tasks: []string{"t1", "t2", "t3"}, Before: 900, Limit: 101}, "audit_task", true, false},
		{"audit of many tasks", nil, &store.AuditQuery{Tasks: many, After: 900, Limit: 101}, "", false, false},
		{"audit of a day", nil, &store.AuditQuery{From: day, To: day1, Limit: 101}, "", false, false},
		{"audit of a task in a day, the next page", nil, &store.AuditQuery{Task: "t1", From: day, To: day1, Before: 900, Limit: 101}, "audit_task", false, false},
		{"failed audit records from a day", nil, &store.AuditQuery{Statuses: failed, From: day, Limit: 101}, "audit_status", false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var (
				q    string
				args []any
			)
			switch {
			case c.tasks:
				f := runFilter(*c.runs, true)
				q, args = `SELECT DISTINCT task FROM runs`+f.String()+` ORDER BY task`, f.args
			case c.runs != nil:
				q, args = runPageQuery(*c.runs)
			default:
				q, args = auditPageQuery(*c.audit)
			}
			text := queryPlan(t, s, q, args...)
			// A sort of the runs that started at one instant by ID
			// ("LAST TERM", "RIGHT PART") is not a sort of the page.
			// The tasks that ran are gathered, names only.
			whole := strings.NewReplacer("TEMP B-TREE FOR LAST TERM", "", "TEMP B-TREE FOR RIGHT PART", "", "TEMP B-TREE FOR DISTINCT", "").Replace(text)
			if strings.Contains(whole, "TEMP B-TREE") && !c.merged {
				t.Errorf("%s sorts: %s", q, text)
			}
			want := "USING INDEX " + c.index
			if c.tasks {
				want = "USING COVERING INDEX " + c.index
			}
			if c.index == "" {
				want = "USING INTEGER PRIMARY KEY"
			}
			if !strings.Contains(text, want) {
				t.Errorf("%s: plan %q, want it %s", q, text, want)
			}
			// The range of numbers of a range of days comes from
			// audit_stop alone.
			if c.audit != nil && strings.Count(text, "USING COVERING INDEX audit_stop") != bounds(*c.audit) {
				t.Errorf("%s: plan %q, want the range of numbers from audit_stop", q, text)
			}
		})
	}
}

// queryPlan returns SQLite's plan of a query, its steps joined by "; ".
func queryPlan(t *testing.T, s *Store, q string, args ...any) string {
	t.Helper()
	rows, err := s.r.QueryContext(context.Background(), "EXPLAIN QUERY PLAN "+q, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	return strings.Join(plan, "; ")
}

// TestRunsAboutPlan checks that RunsAbout reads runs_start alone, at a
// bound, sorting only the runs that started at its instant.
func TestRunsAboutPlan(t *testing.T) {
	t.Parallel()
	s := openFresh(t)
	text := queryPlan(t, s, runsFirstFrom, int64(1))
	if !strings.Contains(text, "SEARCH runs USING COVERING INDEX runs_start (start_at>?)") ||
		strings.Contains(strings.NewReplacer("TEMP B-TREE FOR LAST TERM", "", "TEMP B-TREE FOR RIGHT PART", "").Replace(text), "TEMP B-TREE") ||
		strings.Contains(text, "SCAN runs") {
		t.Errorf("plan %q, want a search of runs_start, sorting the runs of one instant only", text)
	}
}

// TestRunCountPlan checks that the counts of runs by status and step are
// read from the index of statuses alone, over the range.
func TestRunCountPlan(t *testing.T) {
	t.Parallel()
	s := openFresh(t)
	day := time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)
	for _, statuses := range [][]job.Status{{job.Failure}, {job.Success, job.Failure, job.Aborted}} {
		q, args := runCountQuery(store.RunCountQuery{From: day, To: day.AddDate(0, 0, 1), Step: time.Hour, Statuses: statuses})
		if text := queryPlan(t, s, q, args...); !strings.Contains(text, "USING COVERING INDEX runs_status_start (status=? AND start_at>? AND start_at<?)") {
			t.Errorf("%d statuses: plan %q, want the range of runs_status_start alone", len(statuses), text)
		}
	}
}

// TestMigrateHistoryIndexes opens a database of schema 14, from before the
// history pages: its runs and audit records are paged through the new
// indexes.
func TestMigrateHistoryIndexes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "gnomon.db")
	db := atSchema(t, path, 14)
	for _, q := range []string{
		`INSERT INTO runs (id, task, status, start_at, end_at, trigger) VALUES (1, 'a', 'success', 10, 11, 'start'), (2, 'b', 'failure', 20, 21, 'start'), (3, 'a', 'failure', 30, 31, 'start')`,
		`INSERT INTO audit (seq, task, run, launch, stop, result, status) VALUES (1, 'a', 1, 10, 11, 'normal', 'success'), (2, 'b', 2, 20, 21, 'normal', 'failure')`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var n int
	if err := s.r.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name IN ('runs_start', 'runs_task_start', 'runs_status_start', 'audit_task', 'audit_status')`).Scan(&n); err != nil || n != 5 {
		t.Fatalf("%d of the 5 history indexes, %v", n, err)
	}
	runs, err := s.RunPage(ctx, store.RunPageQuery{Statuses: []job.Status{job.Failure}})
	if err != nil || len(runs) != 2 || runs[0].ID != 3 || runs[1].ID != 2 {
		t.Errorf("failed runs %+v, %v; want 3 then 2", runs, err)
	}
	recs, err := s.AuditPage(ctx, store.AuditQuery{Task: "a"})
	if err != nil || len(recs) != 1 || recs[0].Seq != 1 {
		t.Errorf("audit of a %+v, %v", recs, err)
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

// TestMigrateAuditStop opens a database of schema 17, from before the
// audit of a range of days: its records are chosen by their stop through
// the new index.
func TestMigrateAuditStop(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "gnomon.db")
	db := atSchema(t, path, 17)
	q := `INSERT INTO audit (seq, task, run, launch, stop, result, status) VALUES (1, 'a', 1, 10, 11, 'normal', 'success'), (2, 'b', 2, 20, 21, 'normal', 'failure'), (3, 'a', 3, 30, 31, 'normal', 'failure')`
	if _, err := db.Exec(q); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	db.Close()
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var n int
	if err := s.r.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = 'audit_stop'`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("%d audit_stop indexes, %v", n, err)
	}
	recs, err := s.AuditPage(ctx, store.AuditQuery{From: time.Unix(0, 15), To: time.Unix(0, 31)})
	if err != nil || len(recs) != 1 || recs[0].Seq != 2 {
		t.Errorf("audit stopped in [15, 31) %+v, %v; want record 2", recs, err)
	}
}

// TestMigrateRunsTook opens a database of schema 18, from before the runs
// page ordered by how long the runs took: its runs are read through the
// new index, the longest first, those still running left out.
func TestMigrateRunsTook(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "gnomon.db")
	db := atSchema(t, path, 18)
	q := `INSERT INTO runs (id, task, status, start_at, end_at, trigger) VALUES (1, 'a', 'success', 10, 15, 'start'), (2, 'b', 'failure', 20, 40, 'start'), (3, 'a', 'running', 30, 0, 'start'), (4, 'c', 'success', 35, 40, 'start')`
	if _, err := db.Exec(q); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	db.Close()
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var n int
	if err := s.r.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = 'runs_took'`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("%d runs_took indexes, %v", n, err)
	}
	runs, err := s.RunPage(ctx, store.RunPageQuery{ByTook: true})
	var ids []int64
	for _, r := range runs {
		ids = append(ids, r.ID)
	}
	if err != nil || !slices.Equal(ids, []int64{2, 4, 1}) {
		t.Errorf("runs by how long they took %v, %v; want 2, 4, 1", ids, err)
	}
}
