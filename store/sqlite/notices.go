package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/store"
)

// commitNotices writes a batch's alerts and audit records.
func (s *Store) commitNotices(ctx context.Context, tx *sql.Tx, b *store.Batch) error {
	if len(b.Alerts) > 0 {
		st, err := s.prepare(ctx, tx, insAlert)
		if err != nil {
			return err
		}
		for i := range b.Alerts {
			a := &b.Alerts[i]
			a.ID = 0
			doc, err := json.Marshal(a)
			if err != nil {
				return err
			}
			res, err := st.ExecContext(ctx, a.Task, nanos(a.Created), string(a.State), nanos(a.NextAt), string(doc))
			if err != nil {
				return err
			}
			if a.ID, err = res.LastInsertId(); err != nil {
				return err
			}
		}
	}
	if len(b.Audit) > 0 {
		st, err := s.prepare(ctx, tx, insAudit)
		if err != nil {
			return err
		}
		for i := range b.Audit {
			a := &b.Audit[i]
			data, err := dataJSON(a.Data)
			if err != nil {
				return err
			}
			res, err := st.ExecContext(ctx, a.Task, a.RunID, nanos(a.Launch), nanos(a.Stop), string(a.Result), a.Status.String(), a.Message, data, a.By, a.EndedBy)
			if err != nil {
				return err
			}
			if a.Seq, err = res.LastInsertId(); err != nil {
				return err
			}
		}
	}
	return nil
}

func scanAlerts(rows *sql.Rows) ([]job.Alert, error) {
	defer rows.Close()
	var out []job.Alert
	for rows.Next() {
		var (
			id  int64
			doc string
		)
		if err := rows.Scan(&id, &doc); err != nil {
			return nil, err
		}
		var a job.Alert
		if err := json.Unmarshal([]byte(doc), &a); err != nil {
			return nil, fmt.Errorf("alert %d: %w", id, err)
		}
		a.ID = id
		out = append(out, a)
	}
	return out, rows.Err()
}

// Alerts returns alerts, newest first.
func (s *Store) Alerts(ctx context.Context, q store.AlertQuery) ([]job.Alert, error) {
	query, args := `SELECT id, doc FROM alerts WHERE true`, []any{}
	if q.Task != "" {
		query += ` AND task = ?`
		args = append(args, q.Task)
	}
	if q.Before > 0 {
		query += ` AND id < ?`
		args = append(args, q.Before)
	}
	query += ` ORDER BY id DESC`
	if q.Limit > 0 {
		query += ` LIMIT ?`
		args = append(args, q.Limit)
	}
	rows, err := s.r.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("alerts: %w", err)
	}
	out, err := scanAlerts(rows)
	if err != nil {
		return nil, fmt.Errorf("alerts: %w", err)
	}
	return out, nil
}

// PendingAlerts returns the pending alerts due at or before now, oldest
// first.
func (s *Store) PendingAlerts(ctx context.Context, now time.Time, limit int) ([]job.Alert, error) {
	if limit <= 0 {
		limit = 100
	}
	rows, err := s.r.QueryContext(ctx, `SELECT id, doc FROM alerts WHERE state = 'pending' AND next_at <= ? ORDER BY next_at, id LIMIT ?`,
		now.UnixNano(), limit)
	if err != nil {
		return nil, fmt.Errorf("pending alerts: %w", err)
	}
	out, err := scanAlerts(rows)
	if err != nil {
		return nil, fmt.Errorf("pending alerts: %w", err)
	}
	return out, nil
}

// RecordAttempt records an attempt and the alert's delivery state after it.
func (s *Store) RecordAttempt(ctx context.Context, a *job.Alert, at job.Attempt) (err error) {
	doc, err := json.Marshal(a)
	if err != nil {
		return err
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("record attempt: %w", err)
	}
	defer func() {
		if err != nil {
			tx.Rollback()
			err = fmt.Errorf("record attempt: %w", err)
		}
	}()
	res, err := tx.ExecContext(ctx, `UPDATE alerts SET state = ?, next_at = ?, doc = ? WHERE id = ?`, string(a.State), nanos(a.NextAt), string(doc), a.ID)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n != 1 {
		return fmt.Errorf("alert %d not found", a.ID)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO alert_attempts (alert, at, error) VALUES (?, ?, ?)`, a.ID, nanos(at.At), at.Error); err != nil {
		return err
	}
	return tx.Commit()
}

// Attempts returns the attempts at sending an alert, oldest first.
func (s *Store) Attempts(ctx context.Context, alert int64) ([]job.Attempt, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT at, error FROM alert_attempts WHERE alert = ? ORDER BY at, rowid`, alert)
	if err != nil {
		return nil, fmt.Errorf("attempts: %w", err)
	}
	defer rows.Close()
	var out []job.Attempt
	for rows.Next() {
		a := job.Attempt{Alert: alert}
		var at int64
		if err := rows.Scan(&at, &a.Error); err != nil {
			return nil, fmt.Errorf("attempts: %w", err)
		}
		a.At = fromNanos(at)
		out = append(out, a)
	}
	return out, rows.Err()
}

// Audit returns audit records after a sequence number, oldest first.
func (s *Store) Audit(ctx context.Context, after int64, limit int) ([]job.AuditRecord, error) {
	if limit <= 0 {
		limit = 1000
	}
	return s.queryAudit(ctx, `SELECT `+auditColumns+` FROM audit WHERE seq > ? ORDER BY seq LIMIT ?`, after, limit)
}

const auditColumns = `seq, task, run, launch, stop, result, status, message, data, started_by, ended_by`

// queryAudit answers a query of auditColumns.
func (s *Store) queryAudit(ctx context.Context, query string, args ...any) ([]job.AuditRecord, error) {
	rows, err := s.r.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	defer rows.Close()
	var out []job.AuditRecord
	for rows.Next() {
		var (
			a                    job.AuditRecord
			launch, stop         int64
			result, status, data string
		)
		if err := rows.Scan(&a.Seq, &a.Task, &a.RunID, &launch, &stop, &result, &status, &a.Message, &data, &a.By, &a.EndedBy); err != nil {
			return nil, fmt.Errorf("audit: %w", err)
		}
		if data != "" {
			if err := json.Unmarshal([]byte(data), &a.Data); err != nil {
				return nil, fmt.Errorf("audit %d: data: %w", a.Seq, err)
			}
		}
		if a.Status, err = job.ParseStatus(status); err != nil {
			return nil, fmt.Errorf("audit: %w", err)
		}
		a.Launch, a.Stop, a.Result = fromNanos(launch), fromNanos(stop), job.Result(result)
		out = append(out, a)
	}
	return out, rows.Err()
}

// Cursor returns a named position, 0 if never set.
func (s *Store) Cursor(ctx context.Context, name string) (int64, error) {
	var v int64
	err := s.r.QueryRowContext(ctx, `SELECT value FROM cursors WHERE name = ?`, name).Scan(&v)
	if err == sql.ErrNoRows {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("cursor %s: %w", name, err)
	}
	return v, nil
}

// SetCursors sets named positions in one transaction; 0 deletes one.
func (s *Store) SetCursors(ctx context.Context, values map[string]int64) (err error) {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("cursors: %w", err)
	}
	defer func() {
		if err != nil {
			tx.Rollback()
			err = fmt.Errorf("cursors: %w", err)
		}
	}()
	for name, v := range values {
		if v == 0 {
			if _, err := tx.ExecContext(ctx, `DELETE FROM cursors WHERE name = ?`, name); err != nil {
				return err
			}
			continue
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO cursors (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value`, name, v); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// dataJSON encodes message data as a column holds it: ” when empty.
func dataJSON(d map[string]string) (string, error) {
	if len(d) == 0 {
		return "", nil
	}
	b, err := json.Marshal(d)
	return string(b), err
}

// Cursors returns every cursor set, by name.
func (s *Store) Cursors(ctx context.Context) (map[string]int64, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT name, value FROM cursors`)
	if err != nil {
		return nil, fmt.Errorf("cursors: %w", err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var (
			name string
			v    int64
		)
		if err := rows.Scan(&name, &v); err != nil {
			return nil, fmt.Errorf("cursors: %w", err)
		}
		out[name] = v
	}
	return out, rows.Err()
}
