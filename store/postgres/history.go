package postgres

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/store"
)

// The history pages read through the indexes of migration 00017: the
// runs of every task by start (runs_start), of some tasks
// (runs_task_start), in a status (runs_status_start), and the audit
// records of a task or a status (audit_task, audit_status).

// in adds a condition that column holds one of values.
func (w *where) in(column string, values []string) {
	switch len(values) {
	case 0:
	case 1:
		w.add(column+" = ?", values[0])
	default:
		w.add(column+" = ANY(?)", values)
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
	runs, err := queryRuns(ctx, s.pool, query, args...)
	if err != nil {
		return nil, s.failed("run history", err)
	}
	if q.Newer != nil {
		slices.Reverse(runs)
	}
	return runs, nil
}

func runPageQuery(q store.RunPageQuery) (string, []any) {
	// The order: by start, or by how long the runs took (runs_took).
	key := "start_at"
	w := runFilter(q)
	if q.ByTook {
		key = "(end_at - start_at)"
		w.add("end_at <> 0")
	}
	order := "DESC"
	switch {
	case q.Newer != nil:
		w.add("("+key+", id) > (?, ?)", q.Newer.Value(q), q.Newer.ID)
		order = "ASC"
	case q.Older != nil:
		w.add("("+key+", id) < (?, ?)", q.Older.Value(q), q.Older.ID)
	}
	query := `SELECT ` + runColumns + ` FROM runs` + w.String() + ` ORDER BY ` + key + ` ` + order + `, id ` + order + w.limit(q.Limit)
	return query, w.args
}

// runFilter selects the runs of q, but for its page.
func runFilter(q store.RunPageQuery) where {
	var w where
	w.in("task", q.Tasks)
	w.in("status", statusNames(q.Statuses))
	if !q.From.IsZero() {
		w.add("start_at >= ?", q.From.UnixNano())
	}
	if !q.To.IsZero() {
		w.add("start_at < ?", q.To.UnixNano())
	}
	if !q.EndFrom.IsZero() {
		w.add("(end_at >= ? OR end_at = 0)", q.EndFrom.UnixNano())
	}
	return w
}

// RunTasks returns the tasks that have runs q selects.
func (s *Store) RunTasks(ctx context.Context, q store.RunPageQuery) ([]string, error) {
	w := runFilter(q)
	rows, err := s.pool.Query(ctx, `SELECT DISTINCT task FROM runs`+w.String()+` ORDER BY task`, w.args...)
	if err != nil {
		return nil, s.failed("tasks run", err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, s.failed("tasks run", err)
	}
	return out, nil
}

// RunsAbout returns about how many runs started in [from, to), through
// runs_start, which holds the run's number.
func (s *Store) RunsAbout(ctx context.Context, from, to time.Time) (int64, error) {
	const q = `SELECT coalesce((SELECT id FROM runs WHERE start_at >= $1 ORDER BY start_at, id LIMIT 1),
		(SELECT coalesce(max(id), 0) + 1 FROM runs))`
	var first [2]int64
	for i, t := range []time.Time{from, to} {
		if err := s.pool.QueryRow(ctx, q, t.UnixNano()).Scan(&first[i]); err != nil {
			return 0, s.failed("runs about", err)
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
	rows, err := s.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, s.failed("run counts", err)
	}
	defer rows.Close()
	var out []store.RunCount
	for rows.Next() {
		var (
			status      string
			step, count int64
		)
		if err := rows.Scan(&status, &step, &count); err != nil {
			return nil, s.failed("run counts", err)
		}
		st, err := job.ParseStatus(status)
		if err != nil {
			return nil, fmt.Errorf("run counts: %w", err)
		}
		out = append(out, store.RunCount{Step: int(step), Status: st, Runs: int(count)})
	}
	if err := rows.Err(); err != nil {
		return nil, s.failed("run counts", err)
	}
	return out, nil
}

func runCountQuery(q store.RunCountQuery) (string, []any) {
	var w where
	w.in("status", statusNames(q.Statuses))
	w.add("start_at >= ?", q.From.UnixNano())
	w.add("start_at < ?", q.To.UnixNano())
	n := len(w.args)
	args := append(w.args, q.From.UnixNano(), q.StepNanos())
	return fmt.Sprintf(`SELECT status, (start_at - $%d::bigint) / $%d::bigint AS step, count(*) FROM runs%s GROUP BY status, step ORDER BY status, step`, n+1, n+2, w.String()), args
}

// auditRange adds the range of stop times of q. The records are read in
// the order of their numbers (the primary key, audit_task or
// audit_status), between the lowest and the highest number of a record
// in the range, which audit_stop gives from the index alone; the stop
// times themselves are then checked (stop + 0 keeps the page off
// audit_stop, which would sort the whole range).
func auditRange(w *where, q store.AuditQuery) {
	if q.From.IsZero() && q.To.IsZero() {
		return
	}
	var (
		conds []string
		args  []any
	)
	if !q.From.IsZero() {
		conds, args = append(conds, "stop >= ?"), append(args, q.From.UnixNano())
	}
	if !q.To.IsZero() {
		conds, args = append(conds, "stop < ?"), append(args, q.To.UnixNano())
	}
	in := strings.Join(conds, " AND ")
	// Each bound of numbers is needed only with its bound of times: the
	// records out of the range the other way end the page by its limit.
	if !q.From.IsZero() {
		w.add("seq >= (SELECT min(seq) FROM audit WHERE "+in+")", args...)
	}
	if !q.To.IsZero() {
		w.add("seq <= (SELECT max(seq) FROM audit WHERE "+in+")", args...)
	}
	for i, c := range conds {
		w.add(strings.Replace(c, "stop", "stop + 0", 1), args[i])
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
	var w where
	if q.Task != "" {
		w.add("task = ?", q.Task)
	}
	w.in("task", q.Tasks)
	w.in("status", statusNames(q.Statuses))
	auditRange(&w, q)
	order := "DESC"
	switch {
	case q.After > 0:
		w.add("seq > ?", q.After)
		order = "ASC"
	case q.Before > 0:
		w.add("seq < ?", q.Before)
	}
	return `SELECT ` + auditColumns + ` FROM audit` + w.String() + ` ORDER BY seq ` + order + w.limit(q.Limit), w.args
}
