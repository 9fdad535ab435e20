package auth

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/clock"
)

func TestTokenRoundTrip(t *testing.T) {
	tok, id, hash := NewSecret()
	if len(tok) != TokenLen || !strings.HasPrefix(tok, "gnomon_") {
		t.Fatalf("token %q", tok)
	}
	gid, secret, err := ParseToken(tok)
	if err != nil || gid != id || string(HashSecret(secret)) != string(hash) {
		t.Fatalf("ParseToken(%q) = %q, %q, %v", tok, gid, secret, err)
	}
	other, _, _ := NewSecret()
	if other == tok {
		t.Fatal("two tokens alike")
	}
}

func TestParseBearer(t *testing.T) {
	tok, id, _ := NewSecret()
	for _, h := range []string{"Bearer " + tok, "bearer " + tok, "BEARER " + tok + " "} {
		if got, _, err := ParseBearer(h); err != nil || got != id {
			t.Errorf("ParseBearer(%q) = %q, %v", h, got, err)
		}
	}
	for _, h := range []string{"Basic " + tok, "Bearer", "Bearer " + tok[:len(tok)-1], "Bearer " + tok + "x", tok,
		"Bearer " + strings.Replace(tok, "gnomon_", "gnomon-", 1), "Bearer " + strings.ToUpper(tok)} {
		if _, _, err := ParseBearer(h); !errors.Is(err, ErrMalformed) {
			t.Errorf("ParseBearer(%q): %v, want malformed", h, err)
		}
	}
	if _, _, err := ParseBearer(""); !errors.Is(err, ErrNoCredentials) {
		t.Errorf("empty header: %v", err)
	}
}

func FuzzParseBearer(f *testing.F) {
	tok, _, _ := NewSecret()
	for _, s := range []string{"Bearer " + tok, "bearer  " + tok, "Basic x", "", "Bearer gnomon_0123456789abcdef_" + strings.Repeat("A", 43)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		id, secret, err := ParseBearer(h)
		if err != nil {
			return
		}
		// What parses is a well-formed token, and formats back to itself.
		again, s2, err := ParseToken(prefix + id + "_" + secret)
		if err != nil || again != id || s2 != secret || len(id) != idLen || len(secret) != secretLen {
			t.Fatalf("ParseBearer(%q) = %q, %q; not a token", h, id, secret)
		}
	})
}

func TestRoles(t *testing.T) {
	for _, c := range []struct {
		role Role
		p    Permission
		want bool
	}{
		{Viewer, Read, true}, {Viewer, ReadSensitive, false}, {Viewer, Operate, false}, {Viewer, PostData, false},
		{Operator, Operate, true}, {Operator, PostData, true}, {Operator, Define, false}, {Operator, ManageTokens, false},
		{Admin, Define, true}, {Admin, ManageTokens, true}, {Admin, ManageCluster, true},
		{Ingest, PostData, true}, {Ingest, Read, false}, {Ingest, Operate, false},
	} {
		if got := c.role.Has(c.p); got != c.want {
			t.Errorf("%s has %s = %v", c.role, c.p, got)
		}
	}
	if _, err := ParseRole("root"); err == nil {
		t.Error("role root accepted")
	}
}

func TestScope(t *testing.T) {
	s, err := ParseScope([]string{"finance_*", "payroll", "group:ops"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		task   string
		groups []string
		want   bool
	}{
		{"finance_eod", nil, true}, {"finance_", nil, true}, {"payroll", nil, true}, {"payroll2", nil, false},
		{"hr_x", []string{"ops"}, true}, {"hr_x", []string{"opsx"}, false}, {"fin", nil, false},
	} {
		if got := s.Covers(c.task, c.groups); got != c.want {
			t.Errorf("Covers(%q, %v) = %v", c.task, c.groups, got)
		}
	}
	if !Scope(nil).Covers("x", nil) {
		t.Error("empty scope covers nothing")
	}
	for _, bad := range []string{"", "group:", "group:a*", "a*b*", "a b", "*x"} {
		if _, err := ParseScope([]string{bad}); err == nil {
			t.Errorf("scope %q accepted", bad)
		}
	}
}

func TestAuthority(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	a := NewAuthority(clock.Func(func() time.Time { return now }), 0)
	tok, _, _ := NewSecret()
	if _, err := a.Authenticate("Bearer " + tok); !errors.Is(err, ErrNotLoaded) {
		t.Errorf("before the tokens were loaded: %v", err)
	}
	a.Load(nil)
	mk := func(name string, role Role, expires, revoked time.Time) string {
		tok, id, hash := NewSecret()
		a.Add(Token{ID: id, Name: name, Role: role, Hash: hash, Expires: expires, Revoked: revoked})
		return tok
	}
	ok := mk("alice", Operator, now.Add(time.Hour), time.Time{})
	expired := mk("bob", Admin, now, time.Time{})
	revoked := mk("carol", Admin, time.Time{}, now.Add(-time.Minute))
	id, err := a.Authenticate("Bearer " + ok)
	if err != nil || id.Name != "alice" || id.Role != Operator {
		t.Fatalf("alice: %+v, %v", id, err)
	}
	for tok, want := range map[string]string{expired: "expired", revoked: "revoked"} {
		if _, err := a.Authenticate("Bearer " + tok); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s token: %v", want, err)
		}
	}
	// The right ID with another secret is unknown.
	forged := ok[:len(ok)-4] + "AAAA"
	if _, err := a.Authenticate("Bearer " + forged); err == nil || !strings.Contains(err.Error(), "unknown") {
		t.Errorf("forged token: %v", err)
	}
	var d *Denied
	if err := id.Can(Define); !errors.As(err, &d) || d.Permission != Define || !strings.Contains(err.Error(), "definitions:write") {
		t.Errorf("operator defines: %v", err)
	}
	id.Scope = Scope{"finance_*"}
	if err := id.CanTask(Operate, "hr_pay", nil); !errors.As(err, &d) || d.Task != "hr_pay" {
		t.Errorf("out of scope: %v", err)
	}
	if err := id.CanTask(Operate, "finance_eod", nil); err != nil {
		t.Errorf("in scope: %v", err)
	}
	aliceID, bobID := ok[len("gnomon_"):len("gnomon_")+16], expired[len("gnomon_"):len("gnomon_")+16]
	cert := func(cn string, uris ...string) *x509.Certificate {
		c := &x509.Certificate{Subject: pkix.Name{CommonName: cn}}
		for _, u := range uris {
			pu, err := url.Parse(u)
			if err != nil {
				t.Fatal(err)
			}
			c.URIs = append(c.URIs, pu)
		}
		return c
	}
	for _, c := range []struct {
		what string
		cert *x509.Certificate
		want string // the identity's name, or what the refusal says
	}{
		{"the ID as common name", cert(aliceID), "alice"},
		{"the ID as URI", cert("alice", CertificateURIPrefix+aliceID), "alice"},
		{"both, the same", cert(aliceID, CertificateURIPrefix+aliceID), "alice"},
		{"a name only", cert("alice"), "names no token ID"},
		{"two IDs", cert(bobID, CertificateURIPrefix+aliceID), "more than one"},
		{"an expired token", cert(bobID), "expired"},
		{"no such token", cert("0123456789abcdef"), "does not exist"},
		{"a bad ID", cert("x", CertificateURIPrefix+"ALICE"), "no token ID"},
	} {
		id, err := a.Certificate(c.cert)
		switch {
		case err == nil && id.Name != c.want:
			t.Errorf("%s: identifies %s, want %s", c.what, id.Name, c.want)
		case err != nil && !strings.Contains(err.Error(), c.want):
			t.Errorf("%s: %v, want %s", c.what, err, c.want)
		}
	}
}

func TestRate(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	a := NewAuthority(clock.Func(func() time.Time { return now }), 10)
	id := &Identity{TokenID: "t"}
	for i := range 20 { // a burst of two seconds' worth
		if _, ok := a.Allow(id); !ok {
			t.Fatalf("request %d refused", i)
		}
	}
	retry, ok := a.Allow(id)
	if ok || retry != 100*time.Millisecond {
		t.Fatalf("21st request: %v, %v", retry, ok)
	}
	now = now.Add(100 * time.Millisecond)
	if _, ok := a.Allow(id); !ok {
		t.Fatal("refused after the wait it was given")
	}
	unlimited := &Identity{TokenID: "u", rate: Unlimited}
	for range 1000 {
		if _, ok := a.Allow(unlimited); !ok {
			t.Fatal("unlimited token limited")
		}
	}
}
