package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/gnomon-sched/gnomon/auth"
	"github.com/gnomon-sched/gnomon/store"
)

// Tokens returns every token, oldest first.
func (s *Store) Tokens(ctx context.Context) ([]auth.Token, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, name, role, scope, owners, hash, rate, created, expires, revoked, created_by
		FROM tokens ORDER BY created, id`)
	if err != nil {
		return nil, s.failed("tokens", err)
	}
	var (
		out                       []auth.Token
		t                         auth.Token
		role, scope, owners       string
		created, expires, revoked int64
	)
	_, err = pgx.ForEachRow(rows, []any{&t.ID, &t.Name, &role, &scope, &owners, &t.Hash, &t.Rate, &created, &expires, &revoked, &t.CreatedBy}, func() error {
		t.Role, t.Scope, t.Owners = auth.Role(role), store.DecodeScope(scope), store.DecodeOwners(owners)
		t.Created, t.Expires, t.Revoked = fromNanos(created), fromNanos(expires), fromNanos(revoked)
		out = append(out, t)
		t.Hash = nil // scanned into a new slice for the next row
		return nil
	})
	if err != nil {
		return nil, s.failed("tokens", err)
	}
	return out, nil
}

// AddToken stores a new token.
func (s *Store) AddToken(ctx context.Context, t auth.Token) error {
	_, err := s.exec(ctx, `INSERT INTO tokens (id, name, role, scope, owners, hash, rate, created, expires, revoked, created_by)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
		t.ID, t.Name, string(t.Role), store.EncodeScope(t.Scope), store.EncodeOwners(t.Owners), t.Hash, t.Rate, nanos(t.Created), nanos(t.Expires), nanos(t.Revoked), t.CreatedBy)
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "23505" { // unique_violation
		return fmt.Errorf("%w: a token named %s exists; revoke it first", store.ErrConflict, t.Name)
	}
	if err != nil {
		return s.failed("token "+t.Name, err)
	}
	return nil
}

// RevokeToken marks a token revoked.
func (s *Store) RevokeToken(ctx context.Context, id string, at time.Time) error {
	tag, err := s.exec(ctx, `UPDATE tokens SET revoked = $1 WHERE id = $2 AND revoked = 0`, nanos(at), id)
	if err != nil {
		return s.failed("token "+id, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("%w: %s", store.ErrNoToken, id)
	}
	return nil
}
