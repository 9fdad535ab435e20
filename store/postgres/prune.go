package postgres

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/gnomon-sched/gnomon/store"
)

var _ store.Pruner = (*Store)(nil)

// Prune removes what p names (store.Pruner), in transactions of at most
// p.Limit rows per kind: short deletes by primary key that autovacuum
// reclaims behind, and that hold no lock a commit waits for (a commit
// locks last_commit and the rows it writes; pruned rows are never
// written again). A fenced store's deletes are fenced as its commits.
func (s *Store) Prune(ctx context.Context, p store.Prune) (store.Pruned, error) {
	out, err := store.PruneWith(ctx, pruneDB{s}, p)
	if err != nil {
		return out, s.failed("prune", fenced(err))
	}
	return out, nil
}

// pruneDB is a store.PruneDB on the store's pool.
type pruneDB struct{ s *Store }

func (d pruneDB) Int(ctx context.Context, query string, args ...any) (int64, bool, error) {
	var v int64
	err := d.s.pool.QueryRow(ctx, rebind(query), args...).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, false, nil
	}
	return v, err == nil, err
}

func (d pruneDB) Keys(ctx context.Context, query string, args ...any) ([][]any, error) {
	rows, err := d.s.pool.Query(ctx, rebind(query), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out [][]any
	for rows.Next() {
		key, err := rows.Values()
		if err != nil {
			return nil, err
		}
		out = append(out, key)
	}
	return out, rows.Err()
}

func (d pruneDB) Exec(ctx context.Context, stmts []store.Stmt) error {
	tx, err := d.s.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	if f := d.s.fence.Load(); f != nil {
		if _, err := tx.Exec(ctx, FenceStatement, f.node, f.epoch); err != nil {
			return err
		}
	}
	for _, st := range stmts {
		if _, err := tx.Exec(ctx, rebind(st.SQL), st.Args...); err != nil {
			return err
		}
	}
	return tx.Commit(ctx)
}

// In reads the JSON array with json_array_elements_text: PostgreSQL plans
// IN as a hashed semi-join, NOT IN as a hashed subplan.
func (pruneDB) In(col string) string {
	return "(" + col + " IN (SELECT json_array_elements_text(?::json)))"
}

// RunsByStart is runs_start's order (start_at, id; the task is included).
func (pruneDB) RunsByStart() string { return "start_at, id" }

// rebind numbers the ? placeholders of a query ($1, $2, ...). The
// queries of store.PruneWith have no ? in a literal.
func rebind(q string) string {
	var b strings.Builder
	n := 0
	for _, c := range q {
		if c != '?' {
			b.WriteRune(c)
			continue
		}
		n++
		b.WriteString("$" + strconv.Itoa(n))
	}
	return b.String()
}
