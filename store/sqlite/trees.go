package sqlite

import (
	"context"
	"database/sql"

	"github.com/gnomon-sched/gnomon/store"
)

// commitTrees writes what a batch changes of the timeperiod trees: files,
// dropped nodes, then nodes and log entries, trimming each node's log to
// its newest store.MaxNodeLog entries.
func (s *Store) commitTrees(ctx context.Context, tx *sql.Tx, t *store.Trees) error {
	if t.Empty() {
		return nil
	}
	for _, name := range t.DeletedFiles {
		if _, err := tx.ExecContext(ctx, `DELETE FROM tree_files WHERE name = ?`, name); err != nil {
			return err
		}
	}
	for _, f := range t.Files {
		if _, err := tx.ExecContext(ctx, `INSERT INTO tree_files (name, text) VALUES (?, ?)
			ON CONFLICT (name) DO UPDATE SET text = excluded.text`, f.Name, f.Text); err != nil {
			return err
		}
	}
	for _, d := range t.Dropped {
		cond, args := `process = ?`, []any{d.Process}
		if d.Before != 0 {
			cond, args = cond+` AND timeperiod < ?`, append(args, d.Before)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM tree_nodes WHERE `+cond, args...); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM tree_log WHERE `+cond, args...); err != nil {
			return err
		}
	}
	if len(t.Nodes) > 0 {
		st, err := tx.PrepareContext(ctx, `INSERT INTO tree_nodes (process, timeperiod, state, body) VALUES (?, ?, ?, ?)
			ON CONFLICT (process, timeperiod) DO UPDATE SET state = excluded.state, body = excluded.body`)
		if err != nil {
			return err
		}
		defer st.Close()
		for _, n := range t.Nodes {
			if _, err := st.ExecContext(ctx, n.Process, n.Timeperiod, n.State, string(n.Body)); err != nil {
				return err
			}
		}
	}
	if len(t.Log) > 0 {
		ins, err := tx.PrepareContext(ctx, `INSERT INTO tree_log (process, timeperiod, at, body) VALUES (?, ?, ?, ?)`)
		if err != nil {
			return err
		}
		defer ins.Close()
		trim, err := tx.PrepareContext(ctx, `DELETE FROM tree_log WHERE process = ?1 AND timeperiod = ?2 AND seq <=
			(SELECT seq FROM tree_log WHERE process = ?1 AND timeperiod = ?2 ORDER BY seq DESC LIMIT 1 OFFSET ?3)`)
		if err != nil {
			return err
		}
		defer trim.Close()
		type node struct {
			process    string
			timeperiod int64
		}
		touched := map[node]bool{}
		for _, e := range t.Log {
			if _, err := ins.ExecContext(ctx, e.Process, e.Timeperiod, nanos(e.At), string(e.Body)); err != nil {
				return err
			}
			touched[node{e.Process, e.Timeperiod}] = true
		}
		for n := range touched {
			if _, err := trim.ExecContext(ctx, n.process, n.timeperiod, store.MaxNodeLog); err != nil {
				return err
			}
		}
	}
	if t.State != nil {
		if _, err := tx.ExecContext(ctx, `INSERT INTO tree_state (id, body) VALUES (1, ?)
			ON CONFLICT (id) DO UPDATE SET body = excluded.body`, string(t.State)); err != nil {
			return err
		}
	}
	return nil
}

// loadTrees reads the stored state of the timeperiod trees.
func (s *Store) loadTrees(ctx context.Context, t *store.TreeSnapshot) error {
	rows, err := s.w.QueryContext(ctx, `SELECT name, text FROM tree_files ORDER BY name`)
	if err != nil {
		return err
	}
	for rows.Next() {
		var f store.TreeFile
		if err := rows.Scan(&f.Name, &f.Text); err != nil {
			rows.Close()
			return err
		}
		t.Files = append(t.Files, f)
	}
	if err := closeRows(rows); err != nil {
		return err
	}
	if rows, err = s.w.QueryContext(ctx, `SELECT process, timeperiod, state, body FROM tree_nodes`); err != nil {
		return err
	}
	for rows.Next() {
		var n store.NodeRow
		if err := rows.Scan(&n.Process, &n.Timeperiod, &n.State, &n.Body); err != nil {
			rows.Close()
			return err
		}
		t.Nodes = append(t.Nodes, n)
	}
	if err := closeRows(rows); err != nil {
		return err
	}
	if rows, err = s.w.QueryContext(ctx, `SELECT process, timeperiod, at, body FROM tree_log ORDER BY seq`); err != nil {
		return err
	}
	for rows.Next() {
		var (
			e  store.NodeLogRow
			at int64
		)
		if err := rows.Scan(&e.Process, &e.Timeperiod, &at, &e.Body); err != nil {
			rows.Close()
			return err
		}
		e.At = fromNanos(at)
		t.Log = append(t.Log, e)
	}
	if err := closeRows(rows); err != nil {
		return err
	}
	err = s.w.QueryRowContext(ctx, `SELECT body FROM tree_state WHERE id = 1`).Scan(&t.State)
	if err == sql.ErrNoRows {
		return nil
	}
	return err
}

func closeRows(rows *sql.Rows) error {
	err := rows.Err()
	rows.Close()
	return err
}
