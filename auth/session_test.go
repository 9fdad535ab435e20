package auth

import (
	"strings"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/clock"
)

func TestSessions(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	a := NewAuthority(clock.Func(func() time.Time { return now }), 0)
	a.Load(nil)
	tok, tid, hash := NewSecret()
	a.Add(Token{ID: tid, Name: "alice", Role: Operator, Hash: hash})
	s := NewSessions(a, time.Hour, 0)

	if _, _, _, err := s.Open("gnomon_nonsense"); err == nil {
		t.Fatal("a malformed token opened a session")
	}
	if _, _, _, err := s.Open(tok[:len(tok)-4] + "AAAA"); err == nil || !strings.Contains(err.Error(), "unknown") {
		t.Fatalf("a forged token: %v", err)
	}
	key, csrf, id, err := s.Open(tok)
	if err != nil || id.Name != "alice" || key == "" || csrf == "" || key == csrf {
		t.Fatalf("Open = %q, %q, %+v, %v", key, csrf, id, err)
	}
	got, gotCSRF, err := s.Identity(key)
	if err != nil || got.Name != "alice" || gotCSRF != csrf {
		t.Fatalf("Identity = %+v, %q, %v", got, gotCSRF, err)
	}
	if _, _, err := s.Identity(csrf); err == nil {
		t.Error("the CSRF token works as a session key")
	}

	// Used within the idle time, a session lives on; unused, it ends.
	now = now.Add(59 * time.Minute)
	if _, _, err := s.Identity(key); err != nil {
		t.Fatalf("after 59 minutes of use: %v", err)
	}
	now = now.Add(time.Hour)
	if _, _, err := s.Identity(key); err == nil || !strings.Contains(err.Error(), "sign in again") {
		t.Fatalf("after an idle hour: %v", err)
	}

	// Revoking the token ends its sessions at once.
	key, _, _, _ = s.Open(tok)
	a.Add(Token{ID: tid, Name: "alice", Role: Operator, Hash: hash, Revoked: now})
	if _, _, err := s.Identity(key); err == nil || !strings.Contains(err.Error(), "revoked") {
		t.Fatalf("after revocation: %v", err)
	}

	// Close signs out.
	a.Add(Token{ID: tid, Name: "alice", Role: Operator, Hash: hash})
	key, _, _, _ = s.Open(tok)
	s.Close(key)
	if _, _, err := s.Identity(key); err == nil {
		t.Fatal("a closed session still works")
	}
}

// A session used without pause still ends at its lifetime: a cookie kept
// busy (stolen, say) does not stand for its token for good.
func TestSessionLifetime(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	a := NewAuthority(clock.Func(func() time.Time { return now }), 0)
	a.Load(nil)
	tok, tid, hash := NewSecret()
	a.Add(Token{ID: tid, Name: "alice", Role: Viewer, Hash: hash})
	s := NewSessions(a, time.Hour, 0)
	key, _, _, err := s.Open(tok)
	if err != nil {
		t.Fatal(err)
	}
	const lifetime = 24 * time.Hour // DefaultSessionLifetime
	opened := now
	for now.Sub(opened) < lifetime {
		if _, _, err := s.Identity(key); err != nil {
			t.Fatalf("a session used every 30 minutes, %s after it was opened: %v", now.Sub(opened), err)
		}
		now = now.Add(30 * time.Minute)
	}
	if _, _, err := s.Identity(key); err == nil {
		t.Fatalf("a session used every 30 minutes still works %s after it was opened", now.Sub(opened))
	}
	// Signing in again opens a new one.
	if key, _, _, err = s.Open(tok); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Identity(key); err != nil {
		t.Fatalf("a new session: %v", err)
	}
}

// Signing in again and again with one token pushes out only that token's
// own sessions, never another's: a viewer cannot sign every browser out.
func TestSessionsOfOneToken(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	a := NewAuthority(clock.Func(func() time.Time { return now }), 0)
	a.Load(nil)
	mallory, mid, mhash := NewSecret()
	a.Add(Token{ID: mid, Name: "mallory", Role: Viewer, Hash: mhash})
	alice, aid, ahash := NewSecret()
	a.Add(Token{ID: aid, Name: "alice", Role: Admin, Hash: ahash})
	s := NewSessions(a, time.Hour, 0)
	key, _, _, err := s.Open(alice)
	if err != nil {
		t.Fatal(err)
	}
	for range maxSessions + 10 {
		now = now.Add(time.Millisecond)
		if _, _, _, err := s.Open(mallory); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := s.Identity(key); err != nil {
		t.Errorf("alice's session after %d sign-ins of mallory: %v", maxSessions+10, err)
	}
	if n := s.Len(); n > maxTokenSessions+1 {
		t.Errorf("%d sessions kept, want mallory's %d and alice's", n, maxTokenSessions)
	}
}

func TestSessionsLimit(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	a := NewAuthority(clock.Func(func() time.Time { return now }), 0)
	a.Load(nil)
	tok, tid, hash := NewSecret()
	a.Add(Token{ID: tid, Name: "alice", Role: Viewer, Hash: hash})
	s := NewSessions(a, time.Hour, 0)
	s.limit = 3
	var keys []string
	for range 4 {
		now = now.Add(time.Second)
		k, _, _, err := s.Open(tok)
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	if s.Len() != 3 {
		t.Fatalf("%d sessions kept, want the limit 3", s.Len())
	}
	if _, _, err := s.Identity(keys[0]); err == nil {
		t.Error("the least recently used session was kept over the limit")
	}
	for _, k := range keys[1:] {
		if _, _, err := s.Identity(k); err != nil {
			t.Errorf("a recent session was dropped: %v", err)
		}
	}
}
