package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/gnomon-sched/gnomon/job"
)

// Definitions returns every task, for a cluster's clock nodes, which keep
// the time triggers of theirs.
func (s *Store) Definitions(ctx context.Context) ([]job.Record, error) {
	var recs []job.Record
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		var err error
		recs, err = loadTasks(ctx, tx)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: definitions: %w", err)
	}
	return recs, nil
}

// DefinitionsVersion returns the sequence number of the newest
// definition entry in the journal: it changes whenever a definition does.
func (s *Store) DefinitionsVersion(ctx context.Context) (int64, error) {
	var v int64
	if err := s.pool.QueryRow(ctx, `SELECT coalesce(max(seq), 0) FROM journal WHERE kind = 'define'`).Scan(&v); err != nil {
		return 0, fmt.Errorf("postgres: definitions version: %w", err)
	}
	return v, nil
}
