package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/store"
)

// Statements of the named calendars.
const (
	delCalendars = `DELETE FROM calendars WHERE name = ANY($1::text[])`
	upsCalendars = `INSERT INTO calendars (name, def) SELECT * FROM unnest($1::text[], $2::text[])
		ON CONFLICT (name) DO UPDATE SET def = excluded.def`
)

// queueCalendars queues the deletes, then the writes of a batch's named
// calendars (the last of one name is the one written).
func queueCalendars(q *pgx.Batch, b *store.Batch) error {
	if len(b.DeletedCalendars) > 0 {
		q.Queue(delCalendars, b.DeletedCalendars)
	}
	if len(b.Calendars) == 0 {
		return nil
	}
	cals := lastOf(b.Calendars, func(c *job.Calendar) string { return c.Name })
	name, def := make([]string, len(cals)), make([]string, len(cals))
	for i := range cals {
		d, err := store.EncodeCalendar(&cals[i])
		if err != nil {
			return err
		}
		name[i], def[i] = cals[i].Name, string(d)
	}
	q.Queue(upsCalendars, name, def)
	return nil
}

// loadCalendars reads every named calendar, by name.
func loadCalendars(ctx context.Context, tx pgx.Tx) ([]job.Calendar, error) {
	rows, err := tx.Query(ctx, `SELECT def FROM calendars ORDER BY name`)
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

// Calendars returns every named calendar, for a cluster's clock nodes,
// whose schedules name them.
func (s *Store) Calendars(ctx context.Context) ([]job.Calendar, error) {
	var cals []job.Calendar
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		var err error
		cals, err = loadCalendars(ctx, tx)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: calendars: %w", err)
	}
	return cals, nil
}
