package sqlite

import (
	"context"
	"database/sql"

	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/store"
)

// commitCalendars deletes then writes the named calendars of a batch.
func (s *Store) commitCalendars(ctx context.Context, tx *sql.Tx, b *store.Batch) error {
	for _, name := range b.DeletedCalendars {
		if _, err := tx.ExecContext(ctx, `DELETE FROM calendars WHERE name = ?`, name); err != nil {
			return err
		}
	}
	for i := range b.Calendars {
		c := &b.Calendars[i]
		def, err := store.EncodeCalendar(c)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO calendars (name, def) VALUES (?, ?)
			ON CONFLICT (name) DO UPDATE SET def = excluded.def`, c.Name, string(def)); err != nil {
			return err
		}
	}
	return nil
}

// loadCalendars reads every named calendar, by name.
func (s *Store) loadCalendars(ctx context.Context) ([]job.Calendar, error) {
	rows, err := s.w.QueryContext(ctx, `SELECT def FROM calendars ORDER BY name`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []job.Calendar
	for rows.Next() {
		var def []byte
		if err := rows.Scan(&def); err != nil {
			return nil, err
		}
		c, err := store.DecodeCalendar(def)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}
