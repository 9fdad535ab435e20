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
	// Idle is how long a session lasts without a request.
	idle time.Duration
	// limit bounds the sessions kept; the least recently used goes first.
	limit int

	mu    sync.Mutex
	byKey map[[sha256.Size]byte]*session
}

type session struct {
	tokenID   string
	tokenHash []byte
	csrf      string
	last      time.Time
}

// Session defaults.
const (
	DefaultSessionIdle = 12 * time.Hour
	maxSessions        = 10_000
)

// NewSessions returns the sessions of the tokens a knows; a session ends
// after idle without a request (DefaultSessionIdle when not positive).
func NewSessions(a *Authority, idle time.Duration) *Sessions {
	if idle <= 0 {
		idle = DefaultSessionIdle
	}
	return &Sessions{a: a, idle: idle, limit: maxSessions, byKey: map[[sha256.Size]byte]*session{}}
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
	now := s.a.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.evict(now)
	s.byKey[sha256.Sum256([]byte(key))] = &session{tokenID: tid, tokenHash: hash, csrf: csrf, last: now}
	return key, csrf, id, nil
}

// Identity returns the identity of a session's key and the session's CSRF
// token, and counts the request as the session's use.
func (s *Sessions) Identity(key string) (id *Identity, csrf string, err error) {
	now := s.a.now()
	k := sha256.Sum256([]byte(key))
	s.mu.Lock()
	ss := s.byKey[k]
	if ss != nil && now.Sub(ss.last) >= s.idle {
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

// Len returns how many sessions are open.
func (s *Sessions) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.byKey)
}

// evict makes room for one more session: the idle ones go, then, at the
// limit, the least recently used.
func (s *Sessions) evict(now time.Time) {
	if len(s.byKey) < s.limit {
		return
	}
	var oldest [sha256.Size]byte
	var at time.Time
	for k, ss := range s.byKey {
		if now.Sub(ss.last) >= s.idle {
			delete(s.byKey, k)
			continue
		}
		if at.IsZero() || ss.last.Before(at) {
			oldest, at = k, ss.last
		}
	}
	if len(s.byKey) >= s.limit {
		delete(s.byKey, oldest)
	}
}

// randomString returns 256 random bits, base64url-encoded.
func randomString() string {
	var b [32]byte
	rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}
