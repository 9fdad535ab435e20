package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/store"
)

func alertsOf(rows pgx.Rows) ([]job.Alert, error) {
	return collect(rows, func(r pgx.CollectableRow, a *job.Alert) error {
		var (
			id  int64
			doc []byte
		)
		if err := r.Scan(&id, &doc); err != nil {
			return err
		}
		if err := json.Unmarshal(doc, a); err != nil {
			return fmt.Errorf("alert %d: %w", id, err)
		}
		a.ID = id
		return nil
	})
}

// Alerts returns alerts, newest first.
func (s *Store) Alerts(ctx context.Context, q store.AlertQuery) ([]job.Alert, error) {
	var w where
	if q.Task != "" {
		w.add("task = ?", q.Task)
	}
	if q.Before > 0 {
		w.add("id < ?", q.Before)
	}
	query := `SELECT id, doc FROM alerts` + w.String() + ` ORDER BY id DESC`
	query += w.limit(q.Limit)
	rows, err := s.pool.Query(ctx, query, w.args...)
	if err != nil {
		return nil, s.failed("alerts", err)
	}
	out, err := alertsOf(rows)
	if err != nil {
		return nil, s.failed("alerts", err)
	}
	return out, nil
}

// PendingAlerts returns the pending alerts due at or before now, oldest
// first.
func (s *Store) PendingAlerts(ctx context.Context, now time.Time, limit int) ([]job.Alert, error) {
	if limit <= 0 {
		limit = 100
	}
	rows, err := s.pool.Query(ctx, `SELECT id, doc FROM alerts WHERE state = 'pending' AND next_at <= $1 ORDER BY next_at, id LIMIT $2`,
		now.UnixNano(), limit)
	if err != nil {
		return nil, s.failed("pending alerts", err)
	}
	out, err := alertsOf(rows)
	if err != nil {
		return nil, s.failed("pending alerts", err)
	}
	return out, nil
}

// RecordAttempt records an attempt and the alert's delivery state after
// it, in one transaction.
func (s *Store) RecordAttempt(ctx context.Context, a *job.Alert, at job.Attempt) error {
	doc, err := json.Marshal(a)
	if err != nil {
		return fmt.Errorf("record attempt: %w", err)
	}
	fc := s.fence.Load()
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if fc != nil {
			if _, err := tx.Exec(ctx, FenceStatement, fc.node, fc.epoch); err != nil {
				return fenced(err)
			}
		}
		tag, err := tx.Exec(ctx, `UPDATE alerts SET state = $1, next_at = $2, doc = $3 WHERE id = $4`, string(a.State), nanos(a.NextAt), string(doc), a.ID)
		if err != nil {
			return err
		}
		if tag.RowsAffected() != 1 {
			return fmt.Errorf("alert %d not found", a.ID)
		}
		_, err = tx.Exec(ctx, `INSERT INTO alert_attempts (alert, at, error) VALUES ($1, $2, $3)`, a.ID, nanos(at.At), text(at.Error))
		return err
	})
	if err != nil {
		return s.failed("record attempt", err)
	}
	return nil
}

// Attempts returns the attempts at sending an alert, oldest first.
func (s *Store) Attempts(ctx context.Context, alert int64) ([]job.Attempt, error) {
	rows, err := s.pool.Query(ctx, `SELECT at, error FROM alert_attempts WHERE alert = $1 ORDER BY at, id`, alert)
	if err != nil {
		return nil, s.failed("attempts", err)
	}
	out, err := collect(rows, func(r pgx.CollectableRow, a *job.Attempt) error {
		var at int64
		err := r.Scan(&at, &a.Error)
		a.Alert, a.At = alert, fromNanos(at)
		return err
	})
	if err != nil {
		return nil, s.failed("attempts", err)
	}
	return out, nil
}

// Audit returns audit records after a sequence number, oldest first.
func (s *Store) Audit(ctx context.Context, after int64, limit int) ([]job.AuditRecord, error) {
	if limit <= 0 {
		limit = 1000
	}
	return s.queryAudit(ctx, `SELECT `+auditColumns+` FROM audit WHERE seq > $1 ORDER BY seq LIMIT $2`, after, limit)
}

const auditColumns = `seq, task, run, launch, stop, result, status, message, data, started_by, ended_by`

// queryAudit answers a query of auditColumns.
func (s *Store) queryAudit(ctx context.Context, query string, args ...any) ([]job.AuditRecord, error) {
	rows, err := s.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, s.failed("audit", err)
	}
	out, err := collect(rows, func(r pgx.CollectableRow, a *job.AuditRecord) error {
		var (
			launch, stop         int64
			result, status, data string
		)
		if err := r.Scan(&a.Seq, &a.Task, &a.RunID, &launch, &stop, &result, &status, &a.Message, &data, &a.By, &a.EndedBy); err != nil {
			return err
		}
		var err error
		if a.Data, err = dataOf(data); err != nil {
			return fmt.Errorf("audit %d: data: %w", a.Seq, err)
		}
		if a.Status, err = job.ParseStatus(status); err != nil {
			return fmt.Errorf("audit %d: %w", a.Seq, err)
		}
		a.Launch, a.Stop, a.Result = fromNanos(launch), fromNanos(stop), job.Result(result)
		return nil
	})
	if err != nil {
		return nil, s.failed("audit", err)
	}
	return out, nil
}

// Cursor returns a named position, 0 if never set.
func (s *Store) Cursor(ctx context.Context, name string) (int64, error) {
	var v int64
	err := s.pool.QueryRow(ctx, `SELECT value FROM cursors WHERE name = $1`, encodeName(name)).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, s.failed("cursor "+name, err)
	}
	return v, nil
}

// SetCursors sets several cursors in one transaction; 0 deletes one.
func (s *Store) SetCursors(ctx context.Context, values map[string]int64) error {
	if len(values) == 0 {
		return nil
	}
	names, vals := make([]string, 0, len(values)), make([]int64, 0, len(values))
	for name, v := range values {
		names, vals = append(names, encodeName(name)), append(vals, v)
	}
	const set = `WITH v AS (SELECT * FROM unnest($1::text[], $2::bigint[]) AS t (name, value)),
		gone AS (DELETE FROM cursors c USING v WHERE c.name = v.name AND v.value = 0)
		INSERT INTO cursors (name, value) SELECT name, value FROM v WHERE value <> 0
		ON CONFLICT (name) DO UPDATE SET value = excluded.value`
	if _, err := s.exec(ctx, set, names, vals); err != nil {
		return s.failed("cursors", err)
	}
	return nil
}

// exec runs one statement as a transaction of its own and returns its
// command tag. When the store is fenced, the transaction checks the
// fence first, in the same round trip, and a write refused by it fails
// with store.ErrFenced.
func (s *Store) exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	f := s.fence.Load()
	if f == nil {
		return s.pool.Exec(ctx, sql, args...)
	}
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return pgconn.CommandTag{}, err
	}
	defer conn.Release()
	var q pgx.Batch
	q.Queue("BEGIN")
	q.Queue(FenceStatement, f.node, f.epoch)
	q.Queue(sql, args...)
	q.Queue("COMMIT")
	res := conn.SendBatch(ctx, &q)
	var tag pgconn.CommandTag
	for i := range q.Len() {
		var t pgconn.CommandTag
		if t, err = res.Exec(); err != nil {
			break
		}
		if i == 2 {
			tag = t
		}
	}
	if cerr := res.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		pc := conn.Conn().PgConn()
		if !pc.IsClosed() && pc.TxStatus() != 'I' {
			conn.Exec(context.WithoutCancel(ctx), "ROLLBACK") // or the pool drops the connection
		}
		return tag, fenced(err)
	}
	return tag, nil
}

// Cursors returns every cursor set, by name.
func (s *Store) Cursors(ctx context.Context) (map[string]int64, error) {
	rows, err := s.pool.Query(ctx, `SELECT name, value FROM cursors`)
	if err != nil {
		return nil, s.failed("cursors", err)
	}
	out := map[string]int64{}
	var (
		name string
		v    int64
	)
	_, err = pgx.ForEachRow(rows, []any{&name, &v}, func() error {
		out[decodeName(name)] = v
		return nil
	})
	if err != nil {
		return nil, s.failed("cursors", err)
	}
	return out, nil
}
