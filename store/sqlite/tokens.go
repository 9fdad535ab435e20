package sqlite

import (
	"context"
	"errors"
	"fmt"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/gnomon-sched/gnomon/auth"
	"github.com/gnomon-sched/gnomon/store"
)

// Tokens returns every token, oldest first.
func (s *Store) Tokens(ctx context.Context) ([]auth.Token, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT id, name, role, scope, owners, hash, rate, created, expires, revoked, created_by
		FROM tokens ORDER BY created, id`)
	if err != nil {
		return nil, fmt.Errorf("tokens: %w", err)
	}
	defer rows.Close()
	var out []auth.Token
	for rows.Next() {
		var (
			t                         auth.Token
			role, scope, owners       string
			created, expires, revoked int64
		)
		if err := rows.Scan(&t.ID, &t.Name, &role, &scope, &owners, &t.Hash, &t.Rate, &created, &expires, &revoked, &t.CreatedBy); err != nil {
			return nil, fmt.Errorf("tokens: %w", err)
		}
		t.Role, t.Scope, t.Owners = auth.Role(role), store.DecodeScope(scope), store.DecodeOwners(owners)
		t.Created, t.Expires, t.Revoked = fromNanos(created), fromNanos(expires), fromNanos(revoked)
		out = append(out, t)
	}
	return out, rows.Err()
}

// AddToken stores a new token.
func (s *Store) AddToken(ctx context.Context, t auth.Token) error {
	_, err := s.w.ExecContext(ctx, `INSERT INTO tokens (id, name, role, scope, owners, hash, rate, created, expires, revoked, created_by)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		t.ID, t.Name, string(t.Role), store.EncodeScope(t.Scope), store.EncodeOwners(t.Owners), t.Hash, t.Rate, nanos(t.Created), nanos(t.Expires), nanos(t.Revoked), t.CreatedBy)
	var se *sqlite.Error
	if errors.As(err, &se) && se.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE {
		return fmt.Errorf("%w: a token named %s exists; revoke it first", store.ErrConflict, t.Name)
	}
	if err != nil {
		return fmt.Errorf("token %s: %w", t.Name, unavailable(err))
	}
	return nil
}

// RevokeToken marks a token revoked.
func (s *Store) RevokeToken(ctx context.Context, id string, at time.Time) error {
	res, err := s.w.ExecContext(ctx, `UPDATE tokens SET revoked = ? WHERE id = ? AND revoked = 0`, nanos(at), id)
	if err != nil {
		return fmt.Errorf("token %s: %w", id, unavailable(err))
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("%w: %s", store.ErrNoToken, id)
	}
	return nil
}
