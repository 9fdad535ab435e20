package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/store"
)

// querier is a pool or a transaction.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

const runColumns = `id, task, status, start_at, end_at, exit_code, result, message, bundle_run, trigger, scheduled, data, timeperiod, outcome,
	started_by, ended_by, attempt, retry_of, log_span, params`

func queryRuns(ctx context.Context, db querier, query string, args ...any) ([]job.Run, error) {
	rows, err := db.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return collect(rows, func(row pgx.CollectableRow, r *job.Run) error {
		var (
			status, result, data  string
			span, params          string
			start, end, scheduled int64
			exit                  int64
		)
		if err := row.Scan(&r.ID, &r.Task, &status, &start, &end, &exit, &result, &r.Message, &r.BundleRun, &r.Trigger,
			&scheduled, &data, &r.Timeperiod, &r.Outcome, &r.By, &r.EndedBy, &r.Attempt, &r.RetryOf, &span, &params); err != nil {
			return err
		}
		var err error
		if r.Params, err = store.DecodeParams(params); err != nil {
			return fmt.Errorf("run %d: %w", r.ID, err)
		}
		if r.Log, err = store.DecodeLogSpan(span); err != nil {
			return fmt.Errorf("run %d: %w", r.ID, err)
		}
		if r.Data, err = dataOf(data); err != nil {
			return fmt.Errorf("run %d: data: %w", r.ID, err)
		}
		if r.Status, err = job.ParseStatus(status); err != nil {
			return fmt.Errorf("run %d: %w", r.ID, err)
		}
		r.ExitCode, r.Result = int(exit), job.Result(result)
		r.Start, r.End, r.Scheduled = fromNanos(start), fromNanos(end), fromNanos(scheduled)
		return nil
	})
}

// where builds a WHERE clause with numbered parameters.
type where struct {
	conds []string
	args  []any
}

// add adds a condition whose parameters are written ?, in turn.
func (w *where) add(cond string, args ...any) {
	for _, arg := range args {
		w.args = append(w.args, arg)
		cond = strings.Replace(cond, "?", "$"+strconv.Itoa(len(w.args)), 1)
	}
	w.conds = append(w.conds, cond)
}

func (w *where) String() string {
	if len(w.conds) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(w.conds, " AND ")
}

// limit returns a LIMIT clause, none when n is 0.
func (w *where) limit(n int) string {
	if n <= 0 {
		return ""
	}
	w.args = append(w.args, n)
	return " LIMIT $" + strconv.Itoa(len(w.args))
}

// Runs returns run history, newest first.
func (s *Store) Runs(ctx context.Context, q store.RunQuery) ([]job.Run, error) {
	var w where
	if q.Task != "" {
		w.add("task = ?", q.Task)
	}
	if q.BundleRun != 0 {
		// bundle_run != 0 lets the partial index runs_bundle serve it.
		w.add("bundle_run = ? AND bundle_run != 0", q.BundleRun)
	}
	if q.Done {
		w.add("status != ?", job.Running.String())
	}
	if q.Before > 0 {
		w.add("id < ?", q.Before)
	}
	if !q.From.IsZero() {
		w.add("start_at >= ?", q.From.UnixNano())
	}
	if !q.To.IsZero() {
		w.add("start_at < ?", q.To.UnixNano())
	}
	query := `SELECT ` + runColumns + ` FROM runs` + w.String() + ` ORDER BY id DESC`
	query += w.limit(q.Limit)
	runs, err := queryRuns(ctx, s.pool, query, w.args...)
	if err != nil {
		return nil, s.failed("runs of "+q.Task, err)
	}
	return runs, nil
}

// Fires returns recorded occurrences, newest first.
func (s *Store) Fires(ctx context.Context, q store.FireQuery) ([]job.Fire, error) {
	var w where
	if q.Task != "" {
		w.add("task = ?", q.Task)
	}
	if !q.From.IsZero() {
		w.add("scheduled >= ?", q.From.UnixNano())
	}
	if !q.To.IsZero() {
		w.add("scheduled < ?", q.To.UnixNano())
	}
	query := `SELECT task, scheduled, fate, reason, at, run FROM fires` + w.String() + ` ORDER BY scheduled DESC, task`
	query += w.limit(q.Limit)
	rows, err := s.pool.Query(ctx, query, w.args...)
	if err != nil {
		return nil, s.failed("fires", err)
	}
	out, err := collect(rows, func(r pgx.CollectableRow, f *job.Fire) error {
		var (
			fate          string
			scheduled, at int64
		)
		err := r.Scan(&f.Task, &scheduled, &fate, &f.Reason, &at, &f.RunID)
		f.Fate, f.Scheduled, f.At = job.Fate(fate), fromNanos(scheduled), fromNanos(at)
		return err
	})
	if err != nil {
		return nil, s.failed("fires", err)
	}
	return out, nil
}

func (s *Store) entries(ctx context.Context, query string, args ...any) ([]store.Entry, error) {
	rows, err := s.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, s.failed("journal", err)
	}
	out, err := collect(rows, func(r pgx.CollectableRow, e *store.Entry) error {
		var (
			at   int64
			body []byte
		)
		err := r.Scan(&e.Seq, &at, &e.Kind, &body)
		e.At, e.Body = fromNanos(at), json.RawMessage(body)
		return err
	})
	if err != nil {
		return nil, s.failed("journal", err)
	}
	return out, nil
}

// Journal returns entries after a sequence number, oldest first.
func (s *Store) Journal(ctx context.Context, after int64, limit int) ([]store.Entry, error) {
	if limit <= 0 {
		limit = 1000
	}
	return s.entries(ctx, `SELECT seq, at, kind, body FROM journal WHERE seq > $1 ORDER BY seq LIMIT $2`, after, limit)
}

// JournalBefore returns entries of one kind (or of every kind) before a
// sequence number, newest first.
func (s *Store) JournalBefore(ctx context.Context, kind string, before int64, limit int) ([]store.Entry, error) {
	if limit <= 0 {
		limit = 1000
	}
	if before <= 0 {
		before = math.MaxInt64
	}
	if kind == "" {
		return s.entries(ctx, `SELECT seq, at, kind, body FROM journal WHERE seq < $1 ORDER BY seq DESC LIMIT $2`, before, limit)
	}
	return s.entries(ctx, `SELECT seq, at, kind, body FROM journal WHERE seq < $1 AND kind = $2 ORDER BY seq DESC LIMIT $3`, before, kind, limit)
}
