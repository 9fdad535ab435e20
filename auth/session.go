package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"sync"
	"time"
)

// Sessions are the browsers signed in to the web UI. A browser signs in
// with a token once and then holds a session cookie: a random key whose
// session remembers the token it stands for and a CSRF token. Every
// request through a session checks that token again, so revoking or
// expiring it ends its sessions at once.
//
// Sessions live in the server's memory: a restart signs every browser
// out, and a browser signed in to one director is unknown to another.
type Sessions struct {
	a *Authority
	// Idle is how long a session lasts without a request, lifetime how
	// long it lasts at most, however used.
	idle, lifetime time.Duration
	// limit bounds the sessions kept; the least recently used goes first.
	// perToken bounds those of one token, whose least recently used goes
	// first, so that signing in again and again with one token cannot push
	// the sessions of others out.
	limit, perToken int

	mu    sync.Mutex
	byKey map[[sha256.Size]byte]*session
}

type session struct {
	tokenID   string
	tokenHash []byte
	csrf      string
	opened    time.Time
	last      time.Time
}

// Session defaults.
const (
	DefaultSessionIdle = 12 * time.Hour
	// DefaultSessionLifetime bounds a session however busy: a stolen
	// cookie kept in use does not work for good.
	DefaultSessionLifetime = 24 * time.Hour
	maxSessions            = 10_000
	maxTokenSessions       = 32
)

// NewSessions returns the sessions of the tokens a knows; a session ends
// after idle without a request (DefaultSessionIdle when not positive), and
// lifetime after it was opened (DefaultSessionLifetime when not positive),
// whichever comes first.
func NewSessions(a *Authority, idle, lifetime time.Duration) *Sessions {
	if idle <= 0 {
		idle = DefaultSessionIdle
	}
	if lifetime <= 0 {
		lifetime = DefaultSessionLifetime
	}
	return &Sessions{a: a, idle: idle, lifetime: lifetime, limit: maxSessions, perToken: maxTokenSessions, byKey: map[[sha256.Size]byte]*session{}}
}

// Open signs in with a token as a client would send it (the whole
// gnomon_... string): it returns the session's key (the cookie's value),
// its CSRF token and the token's identity. A token whose role lacks one of
// the permissions needs gets no session (a *Denied).
func (s *Sessions) Open(token string, needs ...Permission) (key, csrf string, id *Identity, err error) {
	tid, secret, err := ParseToken(token)
	if err != nil {
		return "", "", nil, &Unauthenticated{Reason: err.Error()}
	}
	hash := HashSecret(secret)
	if id, err = s.a.check(tid, hash); err != nil {
		return "", "", nil, err
	}
	for _, p := range needs {
		if err := id.Can(p); err != nil {
			return "", "", nil, err
		}
	}
	key, csrf = randomString(), randomString()
	now := s.a.clock.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.evict(now, tid)
	s.byKey[sha256.Sum256([]byte(key))] = &session{tokenID: tid, tokenHash: hash, csrf: csrf, opened: now, last: now}
	return key, csrf, id, nil
}

// Identity returns the identity of a session's key and the session's CSRF
// token, and counts the request as the session's use.
func (s *Sessions) Identity(key string) (id *Identity, csrf string, err error) {
	now := s.a.clock.Now()
	k := sha256.Sum256([]byte(key))
	s.mu.Lock()
	ss := s.byKey[k]
	if ss != nil && s.over(ss, now) {
		delete(s.byKey, k)
		ss = nil
	}
	if ss == nil {
		s.mu.Unlock()
		return nil, "", &Unauthenticated{Reason: "no such session (signed out, expired or the server restarted): sign in again"}
	}
	ss.last = now
	tid, hash, csrf := ss.tokenID, ss.tokenHash, ss.csrf
	s.mu.Unlock()
	if id, err = s.a.check(tid, hash); err != nil {
		return nil, "", err
	}
	return id, csrf, nil
}

// Close ends a session.
func (s *Sessions) Close(key string) {
	s.mu.Lock()
	delete(s.byKey, sha256.Sum256([]byte(key)))
	s.mu.Unlock()
}

// Failures returns the record of failed authentication of the sessions'
// Authority.
func (s *Sessions) Failures() *Failures { return s.a.failures }

// Len returns how many sessions are open.
func (s *Sessions) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.byKey)
}

// evict makes room for one more session of token tid: the ended ones go;
// then, when the token has its most, its least recently used; else, at the
// limit, the least recently used of all.
func (s *Sessions) evict(now time.Time, tid string) {
	var oldest, oldestOwn [sha256.Size]byte
	var at, atOwn time.Time
	own := 0
	for k, ss := range s.byKey {
		if s.over(ss, now) {
			delete(s.byKey, k)
			continue
		}
		if at.IsZero() || ss.last.Before(at) {
			oldest, at = k, ss.last
		}
		if ss.tokenID == tid {
			own++
			if atOwn.IsZero() || ss.last.Before(atOwn) {
				oldestOwn, atOwn = k, ss.last
			}
		}
	}
	switch {
	case own >= s.perToken:
		delete(s.byKey, oldestOwn)
	case len(s.byKey) >= s.limit:
		delete(s.byKey, oldest)
	}
}

// over reports whether a session ended: idle too long, or open too long.
func (s *Sessions) over(ss *session, now time.Time) bool {
	return now.Sub(ss.last) >= s.idle || now.Sub(ss.opened) >= s.lifetime
}

// randomString returns 256 random bits, base64url-encoded.
func randomString() string {
	var b [32]byte
	rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}
