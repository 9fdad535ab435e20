package auth

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/gnomon-sched/gnomon/internal/secret"
)

// Keeper is where tokens are kept: a store (store.Tokens).
type Keeper interface {
	Tokens(ctx context.Context) ([]Token, error)
	AddToken(ctx context.Context, t Token) error
	RevokeToken(ctx context.Context, id string, at time.Time) error
}

// ErrInvalid is the error of a token request that cannot be granted as
// asked.
var ErrInvalid = errors.New("invalid token request")

// ErrUnknown is the error of a reference to no token.
var ErrUnknown = errors.New("no such token")

// Request asks for a new token.
type Request struct {
	Name   string
	Role   Role
	Scope  Scope
	Owners []string // as Token.Owners
	// TTL, when positive, makes the token expire that long after now.
	TTL  time.Duration
	Rate int // as Token.Rate
}

// Create makes a token as req asks, keeps it, and returns its string,
// which exists nowhere else: the caller gives it once to whoever asked.
func Create(ctx context.Context, k Keeper, req Request, by string, now time.Time) (string, Token, error) {
	if err := CheckName(req.Name); err != nil {
		return "", Token{}, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if _, err := ParseRole(string(req.Role)); err != nil {
		return "", Token{}, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	scope, err := ParseScope(req.Scope)
	if err != nil {
		return "", Token{}, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	owners, err := ParseOwners(req.Owners)
	if err != nil {
		return "", Token{}, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if owners != nil && req.Role != Admin {
		return "", Token{}, fmt.Errorf("%w: owners: only an admin defines commands, so only an admin token takes --owners", ErrInvalid)
	}
	if len(scope) > 0 && req.Role == Ingest {
		return "", Token{}, fmt.Errorf("%w: an ingest token posts data events, which no scope narrows", ErrInvalid)
	}
	if req.TTL < 0 {
		return "", Token{}, fmt.Errorf("%w: expiry %s is not positive", ErrInvalid, req.TTL)
	}
	if req.Rate < Unlimited {
		return "", Token{}, fmt.Errorf("%w: rate %d: want requests a second, 0 for the server's default, or -1 for none", ErrInvalid, req.Rate)
	}
	s, id, hash := NewSecret()
	t := Token{ID: id, Name: req.Name, Role: req.Role, Scope: scope, Owners: owners, Hash: hash, Rate: req.Rate, Created: now.UTC(), CreatedBy: by}
	if req.TTL > 0 {
		t.Expires = now.Add(req.TTL).UTC()
	}
	if err := k.AddToken(ctx, t); err != nil {
		return "", Token{}, err
	}
	return s, t, nil
}

// Revoke revokes the token ref names: its ID, or the name of the token
// that is not revoked.
func Revoke(ctx context.Context, k Keeper, ref string, now time.Time) (Token, error) {
	all, err := k.Tokens(ctx)
	if err != nil {
		return Token{}, err
	}
	for _, t := range all {
		if t.Revoked.IsZero() && (t.ID == ref || t.Name == ref) {
			if err := k.RevokeToken(ctx, t.ID, now); err != nil {
				return Token{}, err
			}
			t.Revoked = now.UTC()
			return t, nil
		}
	}
	return Token{}, fmt.Errorf("%w: no token that is not revoked has the ID or name %q", ErrUnknown, ref)
}

// AdminTokenFile is the file, in a server's data directory, that holds the
// admin token the server made at its first start.
const AdminTokenFile = "admin.token"

// Bootstrap makes the first admin token of a store that holds none, and
// writes it to path with permissions 0600. It reports whether it did: a
// store with tokens is left as it is, so deleting the file after handing
// the token over is safe. A file at path is never overwritten: it holds
// the token of another store (a server on another database with the same
// data directory), whose owner it would lock out, so Bootstrap refuses
// (ErrTokenFileExists) and makes no token.
func Bootstrap(ctx context.Context, k Keeper, path string, now time.Time) (bool, error) {
	all, err := k.Tokens(ctx)
	if err != nil || len(all) > 0 {
		return false, err
	}
	if _, err := os.Lstat(path); err == nil {
		return false, fmt.Errorf("%w: %s exists, and the store holds no token: it is another store's admin token (another database on the same data directory?); move it away to have a new one made, or make a token on this store with gnomon token create --direct", ErrTokenFileExists, path)
	}
	s, _, err := Create(ctx, k, Request{Name: "admin", Role: Admin}, "gnomon", now)
	if err != nil {
		return false, fmt.Errorf("admin token: %w", err)
	}
	return true, WriteTokenFile(path, s)
}

// ErrTokenFileExists is the error of a token file that would overwrite
// another.
var ErrTokenFileExists = errors.New("token file exists")

// WriteTokenFile writes a token to a new file only its owner may read,
// whole or not at all; a file already at path is left as it is
// (ErrTokenFileExists).
func WriteTokenFile(path, token string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.WriteString(token + "\n"); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	// A link, unlike a rename, never replaces what is at path.
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%w: %s", ErrTokenFileExists, path)
		}
		return err
	}
	return nil
}

// ReadTokenFile reads a token file, which others than its owner must not
// be able to read.
func ReadTokenFile(path string) (string, error) {
	tok, err := secret.Read(path)
	if err != nil {
		return "", fmt.Errorf("token file %w", err)
	}
	if _, _, err := ParseToken(tok); err != nil {
		return "", fmt.Errorf("token file %s: %w", path, err)
	}
	return tok, nil
}

// Watch loads the tokens into a again every period until ctx is done (the
// caller loads them first), so that tokens created or revoked by another
// process (gnomon token --direct, another director) take effect. A failed
// load keeps the set loaded before; report, if not nil, is told of it.
func (a *Authority) Watch(ctx context.Context, k Keeper, period time.Duration, report func(error)) {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := a.Reload(ctx, k); err != nil && report != nil && ctx.Err() == nil {
			report(err)
		}
	}
}

// Reload loads the tokens of k into a.
func (a *Authority) Reload(ctx context.Context, k Keeper) error {
	all, err := k.Tokens(ctx)
	if err != nil {
		return err
	}
	a.Load(all)
	return nil
}
