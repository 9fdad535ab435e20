package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/gnomon-sched/gnomon/store"
)

var _ store.Pruner = (*Store)(nil)

// vacuumPages is the most free pages one pass gives back to the file
// system (incremental_vacuum), 16 MiB: a pass that freed more gives back
// the rest in the next ones, so that the writer is never held long.
const vacuumPages = 4096

// Prune removes what p names (store.Pruner): the rows are chosen on a
// reader, which holds up no commit, and deleted on the writer in one short
// transaction of at most p.Limit rows per kind. A database created with
// incremental auto-vacuum then gives back up to vacuumPages free pages;
// one created before keeps its free pages and reuses them.
func (s *Store) Prune(ctx context.Context, p store.Prune) (store.Pruned, error) {
	out, err := store.PruneWith(ctx, pruneDB{s}, p)
	if err != nil || p.DryRun || out.Total() == 0 {
		return out, unavailable(err)
	}
	if _, err := s.w.ExecContext(ctx, fmt.Sprintf(`PRAGMA incremental_vacuum(%d)`, vacuumPages)); err != nil {
		return out, fmt.Errorf("prune: vacuum: %w", unavailable(err))
	}
	return out, nil
}

// pruneDB is a store.PruneDB on the store's two pools.
type pruneDB struct{ s *Store }

func (d pruneDB) Int(ctx context.Context, query string, args ...any) (int64, bool, error) {
	var v int64
	err := d.s.r.QueryRowContext(ctx, query, args...).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, nil
	}
	return v, err == nil, err
}

func (d pruneDB) Keys(ctx context.Context, query string, args ...any) ([][]any, error) {
	rows, err := d.s.r.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var out [][]any
	for rows.Next() {
		key := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range key {
			ptrs[i] = &key[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		out = append(out, key)
	}
	return out, rows.Err()
}

func (d pruneDB) Exec(ctx context.Context, stmts []store.Stmt) error {
	tx, err := d.s.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	for _, st := range stmts {
		if _, err := tx.ExecContext(ctx, st.SQL, st.Args...); err != nil {
			tx.Rollback()
			return err
		}
	}
	return tx.Commit()
}

// In reads the JSON array with json_each, which SQLite evaluates once into
// a temporary index.
func (pruneDB) In(col string) string { return "(" + col + " IN (SELECT value FROM json_each(?)))" }

// RunsByStart is runs_start's order: its columns, then the rowid.
func (pruneDB) RunsByStart() string { return "start_at, task, id" }
