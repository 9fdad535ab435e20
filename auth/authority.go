package auth

import (
	"context"
	"crypto/subtle"
	"crypto/x509"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gnomon-sched/gnomon/clock"
)

// Identity is who made a request: the token's name, role and scope.
type Identity struct {
	Name    string
	TokenID string
	Role    Role
	Scope   Scope
	Owners  Owners // the owners it may define commands for (see MayRunAs)
	rate    int
}

// Denied is the error of a request its identity may not make.
type Denied struct {
	Identity   *Identity
	Permission Permission
	Task       string // the task outside the identity's scope, if that is why; "*" when every task is concerned
	// Via is what the request named, when Task is outside the scope only
	// because an action on Via, or a read of it, reaches Task (a bundle's
	// member, a task whose condition names it, a dependent tree).
	Via string
	// Owner is the OS user a command would run as that the identity may
	// not define commands for, if that is why (see MayRunAs).
	Owner string
}

func (d *Denied) Error() string {
	if d.Owner != "" {
		owners := "none: a token with a scope defines commands only for the owners it is given (gnomon token create --owners)"
		if d.Identity.Owners != nil {
			owners = fmt.Sprintf("%v", []string(d.Identity.Owners))
		}
		what := "commands run as " + d.Owner
		if d.Task != "" {
			what = "task " + d.Task + ", whose command runs as " + d.Owner
		}
		return fmt.Sprintf("permission %s on %s required: %s's owners are %s", d.Permission, what, d.Identity.Name, owners)
	}
	if d.Task == "*" {
		return fmt.Sprintf("permission %s over every task required: %s's scope is %v", d.Permission, d.Identity.Name, []string(d.Identity.Scope))
	}
	if d.Via != "" {
		return fmt.Sprintf("permission %s on task %s, which %s reaches, required: %s's scope is %v", d.Permission, d.Task, d.Via, d.Identity.Name, []string(d.Identity.Scope))
	}
	if d.Task != "" {
		return fmt.Sprintf("permission %s on task %s required: %s's scope is %v", d.Permission, d.Task, d.Identity.Name, []string(d.Identity.Scope))
	}
	return fmt.Sprintf("permission %s required: %s is a %s", d.Permission, d.Identity.Name, d.Identity.Role)
}

// Can returns a *Denied unless the identity's role grants p.
func (id *Identity) Can(p Permission) error {
	if !id.Role.Has(p) {
		return &Denied{Identity: id, Permission: p}
	}
	return nil
}

// CanTask returns a *Denied unless the identity may use p on a task of
// that name in those groups.
func (id *Identity) CanTask(p Permission, task string, groups []string) error {
	if err := id.Can(p); err != nil {
		return err
	}
	if p.Scoped() && !id.Scope.Covers(task, groups) {
		return &Denied{Identity: id, Permission: p, Task: task}
	}
	return nil
}

// Unauthenticated is the error of a request without a valid identity;
// Reason says why, for the answer's error field.
type Unauthenticated struct{ Reason string }

func (u *Unauthenticated) Error() string { return u.Reason }

// Authority checks requests against a set of tokens. The set is loaded
// from the store and replaced whole by Load; tokens created or revoked by
// this server take effect at once through Add and Revoke.
type Authority struct {
	// DefaultRate is the requests a second of tokens without a rate of
	// their own; 0 is no limit.
	DefaultRate int
	clock       clock.Clock

	// failures slows down the sources of failed authentication.
	failures *Failures

	mu      sync.RWMutex
	loaded  bool // Load was called
	byID    map[string]*Token
	buckets map[string]*bucket
}

// NewAuthority returns an Authority with no tokens. c is the clock that
// expiry and rates are read on: clock.Wall on a server, since credentials
// live in real time even where the scheduling clock is simulated.
func NewAuthority(c clock.Clock, defaultRate int) *Authority {
	return &Authority{DefaultRate: defaultRate, clock: c, failures: NewFailures(c), byID: map[string]*Token{}, buckets: map[string]*bucket{}}
}

// Failures returns the record of failed authentication by source, which
// every check of credentials against a shares (the API's, sign-in's).
func (a *Authority) Failures() *Failures { return a.failures }

// Now reads the Authority's clock.
func (a *Authority) Now() time.Time { return a.clock.Now() }

// Load replaces the set of tokens.
func (a *Authority) Load(tokens []Token) {
	byID := make(map[string]*Token, len(tokens))
	for i := range tokens {
		byID[tokens[i].ID] = &tokens[i]
	}
	a.mu.Lock()
	a.byID, a.loaded = byID, true
	a.mu.Unlock()
}

// Add adds or replaces one token.
func (a *Authority) Add(t Token) {
	a.mu.Lock()
	a.byID[t.ID] = &t
	a.mu.Unlock()
}

// Authenticate finds the identity of an Authorization header.
func (a *Authority) Authenticate(header string) (*Identity, error) {
	id, secret, err := ParseBearer(header)
	if err != nil {
		return nil, &Unauthenticated{Reason: err.Error()}
	}
	return a.check(id, HashSecret(secret))
}

// CertificateURIPrefix begins the URI a client certificate names its
// token by: urn:gnomon:token:ID, a subject alternative name.
const CertificateURIPrefix = "urn:gnomon:token:"

// Certificate finds the identity of a client certificate the server
// verified: the active token whose ID it names, as a URI SAN
// urn:gnomon:token:ID or as its subject's common name. A token's name is
// no identity: it is reused once the token holding it is revoked, and a
// certificate made for the old token must not stand for the new one.
func (a *Authority) Certificate(cert *x509.Certificate) (*Identity, error) {
	id, err := CertificateTokenID(cert)
	if err != nil {
		return nil, &Unauthenticated{Reason: err.Error()}
	}
	a.mu.RLock()
	t, loaded := a.byID[id], a.loaded
	a.mu.RUnlock()
	switch {
	case !loaded:
		return nil, ErrNotLoaded
	case t == nil:
		return nil, &Unauthenticated{Reason: fmt.Sprintf("the client certificate names token %s, which does not exist", id)}
	case !t.Revoked.IsZero():
		return nil, &Unauthenticated{Reason: fmt.Sprintf("the client certificate's token %s (%s) was revoked", t.ID, t.Name)}
	case !t.Active(a.clock.Now()):
		return nil, &Unauthenticated{Reason: fmt.Sprintf("the client certificate's token %s (%s) expired", t.ID, t.Name)}
	}
	return identity(t), nil
}

// CertificateTokenID returns the token ID a client certificate names: its
// URI SAN urn:gnomon:token:ID, else its common name when that is a token
// ID. A certificate naming two IDs, or none, names no token.
func CertificateTokenID(cert *x509.Certificate) (string, error) {
	var ids []string
	for _, u := range cert.URIs {
		if s := u.String(); strings.HasPrefix(s, CertificateURIPrefix) {
			ids = append(ids, strings.TrimPrefix(s, CertificateURIPrefix))
		}
	}
	if cn := cert.Subject.CommonName; validID(cn) && !slices.Contains(ids, cn) {
		ids = append(ids, cn)
	}
	switch {
	case len(ids) == 0:
		return "", fmt.Errorf("the client certificate names no token ID (its common name is %q): it must name the ID of its token (gnomon token list) as its common name or as the URI %sID", cert.Subject.CommonName, CertificateURIPrefix)
	case len(ids) > 1:
		return "", fmt.Errorf("the client certificate names more than one token ID (%s)", strings.Join(ids, ", "))
	case !validID(ids[0]):
		return "", fmt.Errorf("the client certificate names %q, which is no token ID (16 hex digits)", ids[0])
	}
	return ids[0], nil
}

// ErrNotLoaded is the error of a request that came before the tokens
// could be read.
var ErrNotLoaded = errors.New("the tokens could not be read yet (database unavailable)")

func (a *Authority) check(id string, hash []byte) (*Identity, error) {
	a.mu.RLock()
	t, loaded := a.byID[id], a.loaded
	a.mu.RUnlock()
	if !loaded {
		return nil, ErrNotLoaded
	}
	if t == nil || subtle.ConstantTimeCompare(t.Hash, hash) != 1 {
		return nil, &Unauthenticated{Reason: "unknown token"}
	}
	if !t.Revoked.IsZero() {
		return nil, &Unauthenticated{Reason: fmt.Sprintf("token %s (%s) was revoked", t.ID, t.Name)}
	}
	if now := a.clock.Now(); !t.Expires.IsZero() && !now.Before(t.Expires) {
		return nil, &Unauthenticated{Reason: fmt.Sprintf("token %s (%s) expired at %s", t.ID, t.Name, t.Expires.UTC().Format(time.RFC3339))}
	}
	return identity(t), nil
}

func identity(t *Token) *Identity {
	return &Identity{Name: t.Name, TokenID: t.ID, Role: t.Role, Scope: t.Scope, Owners: t.Owners, rate: t.Rate}
}

// Allow takes one request from the identity's budget. Over it, it returns
// how long until the next request would be allowed.
func (a *Authority) Allow(id *Identity) (retry time.Duration, ok bool) {
	rate := id.rate
	if rate == 0 {
		rate = a.DefaultRate
	}
	if rate <= 0 {
		return 0, true
	}
	now := a.clock.Now()
	a.mu.Lock()
	defer a.mu.Unlock()
	b := a.buckets[id.TokenID]
	if b == nil {
		b = &bucket{tokens: float64(2 * rate), at: now}
		a.buckets[id.TokenID] = b
	}
	return b.take(float64(rate), now)
}

// bucket is a token bucket: rate tokens a second, up to two seconds' worth.
type bucket struct {
	tokens float64
	at     time.Time
}

func (b *bucket) take(rate float64, now time.Time) (time.Duration, bool) {
	if d := now.Sub(b.at); d > 0 {
		b.tokens = math.Min(2*rate, b.tokens+d.Seconds()*rate)
		b.at = now
	}
	if b.tokens >= 1 {
		b.tokens--
		return 0, true
	}
	return time.Duration((1 - b.tokens) / rate * float64(time.Second)), false
}

type ctxKey struct{}

// NewContext returns a context that carries the identity of a request.
func NewContext(ctx context.Context, id *Identity) context.Context {
	return context.WithValue(ctx, ctxKey{}, id)
}

// FromContext returns the identity a context carries, or nil.
func FromContext(ctx context.Context) *Identity {
	id, _ := ctx.Value(ctxKey{}).(*Identity)
	return id
}

// NameOf returns the name of the identity a context carries, or "".
func NameOf(ctx context.Context) string {
	if id := FromContext(ctx); id != nil {
		return id.Name
	}
	return ""
}
