// Package auth decides who may do what on a gnomon server: the API tokens
// that identify clients, the roles that say what each may do, the scopes
// that narrow a role to some tasks, and the request rate each token may
// use. It holds no storage of its own: the store keeps the tokens, and an
// Authority holds the set a server checks requests against.
package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Token is a stored API token: who it identifies and what it may do. The
// secret itself is never stored, only its SHA-256 hash: a token is 256
// random bits, so a fast hash is enough to make the stored form useless.
type Token struct {
	ID    string // 16 hex digits, part of the token string and shown in lists
	Name  string // the identity: what journal entries and audit records name
	Role  Role
	Scope Scope
	// Owners are the OS users the token may define commands to run as
	// (see Owners); nil means any for a token without a scope, none for
	// one with a scope.
	Owners Owners
	Hash   []byte // SHA-256 of the secret
	// Rate is the most requests a second the token may make: 0 means the
	// server's default, Unlimited no limit.
	Rate      int
	Created   time.Time
	Expires   time.Time // zero: never
	Revoked   time.Time // zero: not revoked
	CreatedBy string    // the identity that created it
}

// Unlimited is the Rate of a token no rate limit applies to.
const Unlimited = -1

// Active reports whether the token is neither revoked nor expired at now.
func (t *Token) Active(now time.Time) bool {
	return t.Revoked.IsZero() && (t.Expires.IsZero() || now.Before(t.Expires))
}

// The token string: a fixed prefix, the token's ID and its secret,
//
//	gnomon_0123456789abcdef_<43 characters of unpadded base64url>
//
// The prefix makes a leaked token easy to find by secret scanners; the ID
// finds the stored token without a search and names it in lists.
const (
	prefix    = "gnomon_"
	idLen     = 16 // hex digits of 8 random bytes
	secretLen = 43 // base64url of 32 random bytes, unpadded
	// TokenLen is the length of every token string.
	TokenLen = len(prefix) + idLen + 1 + secretLen
)

// NewSecret makes a new token: its string, given once to the one who asked
// for it, and the stored token's ID and hash.
func NewSecret() (token, id string, hash []byte) {
	var b [8 + 32]byte
	rand.Read(b[:]) // never fails (crypto/rand)
	id = hex.EncodeToString(b[:8])
	secret := base64.RawURLEncoding.EncodeToString(b[8:])
	return prefix + id + "_" + secret, id, HashSecret(secret)
}

// HashSecret is the stored form of a token's secret.
func HashSecret(secret string) []byte {
	h := sha256.Sum256([]byte(secret))
	return h[:]
}

// ErrMalformed is the error of a token string that is not one.
var ErrMalformed = errors.New("malformed token")

// ParseToken splits a token string into its ID and secret.
func ParseToken(s string) (id, secret string, err error) {
	if len(s) != TokenLen || !strings.HasPrefix(s, prefix) || s[len(prefix)+idLen] != '_' {
		return "", "", ErrMalformed
	}
	id, secret = s[len(prefix):len(prefix)+idLen], s[len(prefix)+idLen+1:]
	if !validID(id) {
		return "", "", ErrMalformed
	}
	for i := 0; i < len(secret); i++ {
		if c := secret[i]; !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return "", "", ErrMalformed
		}
	}
	return id, secret, nil
}

// validID reports whether id is a token ID: 16 lowercase hex digits.
func validID(id string) bool {
	if len(id) != idLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// ParseBearer reads the token of an Authorization header: the scheme
// Bearer (in any case, RFC 7235), one space, and a token string. It
// returns ErrNoCredentials for an empty header.
func ParseBearer(header string) (id, secret string, err error) {
	if header == "" {
		return "", "", ErrNoCredentials
	}
	scheme, cred, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", "", fmt.Errorf("%w: the Authorization header must be \"Bearer TOKEN\"", ErrMalformed)
	}
	return ParseToken(strings.Trim(cred, " \t"))
}

// ErrNoCredentials is the error of a request that names no identity.
var ErrNoCredentials = errors.New("no credentials: send Authorization: Bearer TOKEN")

// Names are 1 to 64 letters, digits, '.', '-', '_' or '@': they appear in
// journal entries, audit lines and certificates' common names.
func CheckName(name string) error {
	if name == "" || len(name) > 64 {
		return fmt.Errorf("name %q: 1 to 64 characters", name)
	}
	for _, c := range name {
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_' || c == '@') {
			return fmt.Errorf("name %q: only letters, digits, '.', '-', '_' and '@'", name)
		}
	}
	return nil
}
