package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/store"
)

// Load reads every task, the runs still running, the checkpoint of the
// windows and the trees, in one repeatable-read transaction: one state of
// the database.
func (s *Store) Load(ctx context.Context) (*store.Snapshot, error) {
	snap := &store.Snapshot{}
	var op string
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead}, func(tx pgx.Tx) error {
		var err error
		op = "load tasks"
		if snap.Tasks, err = loadTasks(ctx, tx); err != nil {
			return err
		}
		op = "load runs"
		active, err := queryRuns(ctx, tx, `SELECT `+runColumns+` FROM runs WHERE status = 'running' ORDER BY id`)
		if err != nil {
			return err
		}
		for i := range active {
			snap.Active = append(snap.Active, &active[i])
		}
		if err := tx.QueryRow(ctx, `SELECT coalesce(max(id), 0) FROM runs`).Scan(&snap.LastRun); err != nil {
			return err
		}
		op = "load checkpoint"
		if err := loadWindows(ctx, tx, snap); err != nil {
			return err
		}
		op = "load trees"
		if err := loadTrees(ctx, tx, &snap.Trees); err != nil {
			return err
		}
		op = "load calendars"
		snap.Calendars, err = loadCalendars(ctx, tx)
		return err
	})
	if err != nil {
		if op == "" {
			op = "load"
		}
		return nil, s.failed(op, err)
	}
	return snap, nil
}

// slabSize is how much row data loadTasks copies into one allocation.
const slabSize = 1 << 20

// loadTasks streams every task, in one query, into a store.TaskDecoder,
// which decodes them on every CPU as they arrive.
func loadTasks(ctx context.Context, tx pgx.Tx) ([]job.Record, error) {
	var n int
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM tasks`).Scan(&n); err != nil {
		return nil, err
	}
	d := store.NewTaskDecoder(n)
	err := func() error {
		rows, err := tx.Query(ctx, `SELECT def, state FROM tasks`)
		if err != nil {
			return err
		}
		defer rows.Close()
		var slab []byte
		for rows.Next() {
			// The row's buffer is reused by the next row: the decoder gets
			// copies, carved from large slabs rather than one allocation
			// per row.
			v := rows.RawValues()
			def, state := v[0], v[1]
			k := len(def) + len(state)
			if k > cap(slab)-len(slab) {
				slab = make([]byte, 0, max(slabSize, k))
			}
			at := len(slab)
			slab = append(append(slab, def...), state...)
			if err := d.Add(slab[at:at+len(def):at+len(def)], slab[at+len(def):at+k:at+k]); err != nil {
				return err
			}
		}
		return rows.Err()
	}()
	recs, derr := d.Wait()
	if err = errors.Join(err, derr); err != nil {
		return nil, err
	}
	return recs, nil
}

// loadWindows reads the current checkpoint, after deleting the parts of a
// checkpoint that a stop interrupted.
func loadWindows(ctx context.Context, tx pgx.Tx, snap *store.Snapshot) error {
	if err := tx.QueryRow(ctx, `SELECT gen, seq FROM checkpoint WHERE id = 1`).Scan(&snap.WindowsGen, &snap.WindowsSeq); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `DELETE FROM checkpoint_parts WHERE gen != $1`, snap.WindowsGen); err != nil {
		return err
	}
	rows, err := tx.Query(ctx, `SELECT id, body FROM checkpoint_parts WHERE gen = $1 ORDER BY id`, snap.WindowsGen)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			id   int64
			body []byte
		)
		if err := rows.Scan(&id, &body); err != nil {
			return err
		}
		if snap.Windows, err = store.DecodeCheckpointPart(snap.Windows, body); err != nil {
			return fmt.Errorf("checkpoint part %d: %w", id, err)
		}
	}
	return rows.Err()
}

// loadTrees reads the stored state of the timeperiod trees, the log of
// every node oldest first.
func loadTrees(ctx context.Context, tx pgx.Tx, t *store.TreeSnapshot) error {
	rows, err := tx.Query(ctx, `SELECT name, text FROM tree_files ORDER BY name`)
	if err != nil {
		return err
	}
	if t.Files, err = collect(rows, func(r pgx.CollectableRow, f *store.TreeFile) error {
		return r.Scan(&f.Name, &f.Text)
	}); err != nil {
		return err
	}
	if rows, err = tx.Query(ctx, `SELECT process, timeperiod, state, body FROM tree_nodes`); err != nil {
		return err
	}
	if t.Nodes, err = collect(rows, func(r pgx.CollectableRow, n *store.NodeRow) error {
		return r.Scan(&n.Process, &n.Timeperiod, &n.State, &n.Body)
	}); err != nil {
		return err
	}
	if rows, err = tx.Query(ctx, `SELECT process, timeperiod, at, body FROM tree_log ORDER BY seq`); err != nil {
		return err
	}
	if t.Log, err = collect(rows, func(r pgx.CollectableRow, e *store.NodeLogRow) error {
		var at int64
		err := r.Scan(&e.Process, &e.Timeperiod, &at, &e.Body)
		e.At = fromNanos(at)
		return err
	}); err != nil {
		return err
	}
	err = tx.QueryRow(ctx, `SELECT body FROM tree_state WHERE id = 1`).Scan(&t.State)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	return err
}

// collect scans every row, returning nil when there is none (as a SQLite
// store does).
func collect[T any](rows pgx.Rows, scan func(pgx.CollectableRow, *T) error) ([]T, error) {
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (T, error) {
		var v T
		err := scan(r, &v)
		return v, err
	})
	if len(out) == 0 {
		out = nil
	}
	return out, err
}
