package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gnomon-sched/gnomon/auth"
	"github.com/gnomon-sched/gnomon/store"
)

// testTokens checks API tokens.
func testTokens(t *testing.T, open Open) {
	ctx := context.Background()
	t.Run("tokens", func(t *testing.T) {
		t.Parallel()
		s, reopen := open(t)
		if got, err := s.Tokens(ctx); err != nil || len(got) != 0 {
			t.Fatalf("Tokens of an empty store = %v, %v", got, err)
		}
		admin := auth.Token{ID: "00000000000000a1", Name: "admin", Role: auth.Admin, Hash: []byte{1, 2, 3}, Created: t0, CreatedBy: "gnomon"}
		batch := auth.Token{ID: "00000000000000d4", Name: "batch", Role: auth.Admin, Scope: auth.Scope{"batch_*"}, Owners: auth.Owners{"batch_*", "etl:staff"},
			Hash: []byte{6}, Created: t0.Add(3 * time.Second), CreatedBy: "admin"}
		fin := auth.Token{ID: "00000000000000b2", Name: "fin", Role: auth.Operator, Scope: auth.Scope{"finance_*", "group:ops"},
			Hash: []byte{4, 5}, Rate: auth.Unlimited, Created: t0.Add(time.Second), Expires: t0.Add(time.Hour), CreatedBy: "admin"}
		for _, tok := range []auth.Token{admin, fin, batch} {
			if err := s.AddToken(ctx, tok); err != nil {
				t.Fatal(err)
			}
		}
		again := fin
		again.ID = "00000000000000c3"
		if err := s.AddToken(ctx, again); !errors.Is(err, store.ErrConflict) {
			t.Errorf("a second token named fin: %v, want ErrConflict", err)
		}
		if err := s.RevokeToken(ctx, fin.ID, t0.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		if err := s.RevokeToken(ctx, fin.ID, t0.Add(2*time.Minute)); !errors.Is(err, store.ErrNoToken) {
			t.Errorf("revoking twice: %v, want ErrNoToken", err)
		}
		// Once revoked, the name is free again; the revoked token stays.
		if err := s.AddToken(ctx, again); err != nil {
			t.Fatalf("a new token named fin after revoking the old: %v", err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		s = reopen()
		got, err := s.Tokens(ctx)
		if err != nil {
			t.Fatal(err)
		}
		fin.Revoked = t0.Add(time.Minute)
		if diff := cmp.Diff([]auth.Token{admin, fin, again, batch}, got); diff != "" {
			t.Errorf("Tokens after reopen (-want +got):\n%s", diff)
		}
	})
}
