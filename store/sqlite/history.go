package sqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/store"
)

// The history pages read through the indexes of migration 0017: the runs
// of every task by start (runs_start), of some tasks (runs_task_start), in
// a status (runs_status_start), and the audit records of a task or a
// status (audit_task, audit_status). A page costs the rows it returns and
// the ones its other filters pass over, never the whole table.

// filter builds a WHERE clause.
type filter struct {
	conds []string
	args  []any
}

func (f *filter) add(cond string, args ...any) {
	f.conds = append(f.conds, cond)
	f.args = append(f.args, args...)
}

func (f *filter) String() string {
	if len(f.conds) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(f.conds, " AND ")
}

// in adds a condition that column holds one of values: one parameter, a
// JSON array, however many values there are.
func (f *filter) in(column string, values []string) {
	switch len(values) {
	case 0:
	case 1:
		f.add(column+" = ?", values[0])
	default:
		list, _ := json.Marshal(values)
		f.add(column+" IN (SELECT value FROM json_each(?))", string(list))
	}
}

func statusNames(list []job.Status) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = s.String()
	}
	return out
}

// RunPage returns a page of the history of every task's runs.
func (s *Store) RunPage(ctx context.Context, q store.RunPageQuery) ([]job.Run, error) {
	query, args := runPageQuery(q)
	runs, err := s.queryRuns(ctx, s.r, query, args...)
	if err != nil {
		return nil, fmt.Errorf("run history: %w", err)
	}
	if q.Newer != nil {
		slices.Reverse(runs)
	}
	return runs, nil
}

// mergedTasks is the most tasks whose runs a page reads task by task,
// each through runs_task_start, merging their first pages: past it, the
// page reads the runs of every task by start and keeps those of the
// tasks asked for, which are then many.
const mergedTasks = 64

// RunTasks returns the tasks that have runs q selects.
func (s *Store) RunTasks(ctx context.Context, q store.RunPageQuery) ([]string, error) {
	q.Older, q.Newer, q.Limit = nil, nil, 0
	f := runFilter(q, true)
	rows, err := s.r.QueryContext(ctx, `SELECT DISTINCT task FROM runs`+f.String()+` ORDER BY task`, f.args...)
	if err != nil {
		return nil, fmt.Errorf("tasks run: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, fmt.Errorf("tasks run: %w", err)
		}
		out = append(out, name)
	}
	return out, rows.Err()
}

// runsFirstFrom is the number of the first run, in start order, that
// started at or after an instant, through runs_start, whose entries hold
// the run's number (the rowid); the next number when none did.
const runsFirstFrom = `SELECT coalesce((SELECT id FROM runs INDEXED BY runs_start WHERE start_at >= ? ORDER BY start_at, id LIMIT 1),
	(SELECT coalesce(max(id), 0) + 1 FROM runs))`

// RunsAbout returns about how many runs started in [from, to).
func (s *Store) RunsAbout(ctx context.Context, from, to time.Time) (int64, error) {
	var first [2]int64
	for i, t := range []time.Time{from, to} {
		if err := s.r.QueryRowContext(ctx, runsFirstFrom, t.UnixNano()).Scan(&first[i]); err != nil {
			return 0, fmt.Errorf("runs about: %w", err)
		}
	}
	return max(first[1]-first[0], 0), nil
}

// RunCounts counts the runs in the statuses q names that started in its
// range, by status and step, through runs_status_start alone.
func (s *Store) RunCounts(ctx context.Context, q store.RunCountQuery) ([]store.RunCount, error) {
	if err := q.Valid(); err != nil {
		return nil, err
	}
	query, args := runCountQuery(q)
	rows, err := s.r.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("run counts: %w", err)
	}
	defer rows.Close()
	var out []store.RunCount
	for rows.Next() {
		var (
			c      store.RunCount
			status string
		)
		if err := rows.Scan(&status, &c.Step, &c.Runs); err != nil {
			return nil, fmt.Errorf("run counts: %w", err)
		}
		if c.Status, err = job.ParseStatus(status); err != nil {
			return nil, fmt.Errorf("run counts: %w", err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

func runCountQuery(q store.RunCountQuery) (string, []any) {
	var f filter
	f.in("status", statusNames(q.Statuses))
	f.add("start_at >= ?", q.From.UnixNano())
	f.add("start_at < ?", q.To.UnixNano())
	args := append([]any{q.From.UnixNano(), q.StepNanos()}, f.args...)
	return `SELECT status, (start_at - ?) / ? AS step, COUNT(*) FROM runs` + f.String() + ` GROUP BY status, step ORDER BY status, step`, args
}

func runPageQuery(q store.RunPageQuery) (string, []any) {
	// The order: by start (runs_start, runs_task_start,
	// runs_status_start), or by how long the runs took (runs_took).
	key := "start_at"
	if q.ByTook {
		key = "end_at - start_at"
	}
	if n := len(q.Tasks); n > 1 && n <= mergedTasks && q.Limit > 0 {
		var (
			parts []string
			args  []any
		)
		for _, task := range q.Tasks {
			one := q
			one.Tasks = []string{task}
			sub, a := runPageQuery(one)
			parts = append(parts, `SELECT * FROM (`+sub+`)`)
			args = append(args, a...)
		}
		order := "DESC"
		if q.Newer != nil {
			order = "ASC"
		}
		return `SELECT * FROM (` + strings.Join(parts, ` UNION ALL `) + `) ORDER BY ` + key + ` ` + order + `, id ` + order + ` LIMIT ?`, append(args, q.Limit)
	}
	f := runFilter(q, false)
	if q.ByTook {
		f.add("end_at <> 0")
	}
	order := "DESC"
	switch {
	case q.Newer != nil:
		f.add("("+key+", id) > (?, ?)", q.Newer.Value(q), q.Newer.ID)
		order = "ASC"
	case q.Older != nil:
		f.add("("+key+", id) < (?, ?)", q.Older.Value(q), q.Older.ID)
	}
	query := `SELECT ` + runColumns + ` FROM runs` + f.String() + ` ORDER BY ` + key + ` ` + order + `, id ` + order
	if q.Limit > 0 {
		query += ` LIMIT ?`
		f.args = append(f.args, q.Limit)
	}
	return query, f.args
}

// runFilter selects the runs of q, but for its page. A page of many
// tasks' runs reads every task's by start (see mergedTasks); with
// byTask, the runs of each task are read through runs_task_start, in no
// order, as the tasks that ran are.
func runFilter(q store.RunPageQuery, byTask bool) filter {
	var f filter
	if len(q.Tasks) > 1 && !byTask {
		// Not through runs_task_start (the unary +): see mergedTasks.
		list, _ := json.Marshal(q.Tasks)
		f.add("+task IN (SELECT value FROM json_each(?))", string(list))
	} else {
		f.in("task", q.Tasks)
	}
	f.in("status", statusNames(q.Statuses))
	if !q.From.IsZero() {
		f.add("start_at >= ?", q.From.UnixNano())
	}
	if !q.To.IsZero() {
		f.add("start_at < ?", q.To.UnixNano())
	}
	if !q.EndFrom.IsZero() {
		f.add("(end_at >= ? OR end_at = 0)", q.EndFrom.UnixNano())
	}
	return f
}

// auditRange adds the range of stop times of q. The records are read in
// the order of their numbers (the primary key, audit_task or
// audit_status), between the lowest and the highest number of a record
// in the range, which audit_stop gives from the index alone: records are
// written as their runs stop, so the numbers between are nearly all in
// the range. The stop times themselves are then checked (the unary +
// keeps the page off audit_stop, which would sort the whole range).
func auditRange(f *filter, q store.AuditQuery) {
	if q.From.IsZero() && q.To.IsZero() {
		return
	}
	var (
		r     filter
		stops []any
	)
	if !q.From.IsZero() {
		r.add("stop >= ?", q.From.UnixNano())
	}
	if !q.To.IsZero() {
		r.add("stop < ?", q.To.UnixNano())
	}
	stops = r.args
	// Each bound of numbers is needed only with its bound of times: the
	// records out of the range the other way end the page by its limit.
	if !q.From.IsZero() {
		f.add("seq >= (SELECT min(seq) FROM audit INDEXED BY audit_stop"+r.String()+")", stops...)
	}
	if !q.To.IsZero() {
		f.add("seq <= (SELECT max(seq) FROM audit INDEXED BY audit_stop"+r.String()+")", stops...)
	}
	for i, c := range r.conds {
		f.add("+"+c, stops[i])
	}
}

// AuditPage returns a page of audit records, newest first.
func (s *Store) AuditPage(ctx context.Context, q store.AuditQuery) ([]job.AuditRecord, error) {
	query, args := auditPageQuery(q)
	recs, err := s.queryAudit(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	if q.After > 0 {
		slices.Reverse(recs)
	}
	return recs, nil
}

func auditPageQuery(q store.AuditQuery) (string, []any) {
	if n := len(q.Tasks); n > 1 && n <= mergedTasks && q.Limit > 0 {
		// The first page of each task, through audit_task, merged (as
		// the runs of a few tasks are: see mergedTasks).
		var (
			parts []string
			args  []any
		)
		for _, task := range q.Tasks {
			one := q
			one.Tasks = []string{task}
			sub, a := auditPageQuery(one)
			parts = append(parts, `SELECT * FROM (`+sub+`)`)
			args = append(args, a...)
		}
		order := "DESC"
		if q.After > 0 {
			order = "ASC"
		}
		return `SELECT * FROM (` + strings.Join(parts, ` UNION ALL `) + `) ORDER BY seq ` + order + ` LIMIT ?`, append(args, q.Limit)
	}
	var f filter
	if q.Task != "" {
		f.add("task = ?", q.Task)
	}
	if len(q.Tasks) > 1 {
		// Not through audit_task (the unary +): many tasks' records are
		// read by number, and those of the tasks kept.
		list, _ := json.Marshal(q.Tasks)
		f.add("+task IN (SELECT value FROM json_each(?))", string(list))
	} else {
		f.in("task", q.Tasks)
	}
	f.in("status", statusNames(q.Statuses))
	auditRange(&f, q)
	order := "DESC"
	switch {
	case q.After > 0:
		f.add("seq > ?", q.After)
		order = "ASC"
	case q.Before > 0:
		f.add("seq < ?", q.Before)
	}
	query := `SELECT ` + auditColumns + ` FROM audit` + f.String() + ` ORDER BY seq ` + order
	if q.Limit > 0 {
		query += ` LIMIT ?`
		f.args = append(f.args, q.Limit)
	}
	return query, f.args
}
