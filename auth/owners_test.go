package auth

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestOwnersCover(t *testing.T) {
	t.Parallel()
	o, err := ParseOwners([]string{"batch_*", "etl:staff", "rep?rt:*"})
	if err != nil {
		t.Fatal(err)
	}
	for owner, want := range map[string]bool{
		"batch_1":       true,  // a pattern without a group: any group
		"batch_1:wheel": true,  //
		"etl":           false, // the primary group is not staff for sure
		"etl:staff":     true,
		"etl:wheel":     false,
		"report":        true, // "rep?rt:*": any group, the primary one too
		"report:x":      true,
		"root":          false,
		"batch":         false,
	} {
		if got := o.Cover(owner); got != want {
			t.Errorf("Cover(%q) = %v, want %v", owner, got, want)
		}
	}
	for _, bad := range []string{"", "a[", "a b", "a/b", "a,b"} {
		if _, err := ParseOwners([]string{bad}); err == nil {
			t.Errorf("ParseOwners(%q) accepted", bad)
		}
	}
}

func TestMayRunAs(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		id    Identity
		owner string
		want  string // "" allowed, else in the refusal
	}{
		{Identity{Name: "root-admin", Role: Admin}, "root", ""},
		{Identity{Name: "scoped", Role: Admin, Scope: Scope{"demo_*"}}, "root", "scoped's owners are none: a token with a scope defines commands only for the owners it is given"},
		{Identity{Name: "scoped", Role: Admin, Scope: Scope{"demo_*"}, Owners: Owners{"batch"}}, "batch", ""},
		{Identity{Name: "scoped", Role: Admin, Scope: Scope{"demo_*"}, Owners: Owners{"batch"}}, "root", "permission definitions:write on commands run as root required: scoped's owners are [batch]"},
		{Identity{Name: "narrow", Role: Admin, Owners: Owners{"batch"}}, "root", "narrow's owners are [batch]"},
		{Identity{Name: "any", Role: Admin, Owners: Owners{"*"}}, "root", ""},
	} {
		err := tt.id.MayRunAs(tt.owner)
		var den *Denied
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s as %s: %v", tt.id.Name, tt.owner, err)
		case tt.want != "" && (!errors.As(err, &den) || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s as %s: %v, want a *Denied holding %q", tt.id.Name, tt.owner, err, tt.want)
		}
	}
}

// keeper is a Keeper in memory.
type keeper struct{ tokens []Token }

func (k *keeper) Tokens(context.Context) ([]Token, error) { return k.tokens, nil }
func (k *keeper) AddToken(_ context.Context, t Token) error {
	k.tokens = append(k.tokens, t)
	return nil
}
func (k *keeper) RevokeToken(context.Context, string, time.Time) error { return nil }

func TestCreateWithOwners(t *testing.T) {
	t.Parallel()
	ctx, k, now := context.Background(), &keeper{}, time.Now()
	_, tok, err := Create(ctx, k, Request{Name: "a", Role: Admin, Scope: Scope{"demo_*"}, Owners: []string{"batch_*"}}, "admin", now)
	if err != nil || len(tok.Owners) != 1 || tok.Owners[0] != "batch_*" {
		t.Fatalf("Create = %+v, %v", tok, err)
	}
	if id := identity(&tok); id.MayRunAs("batch_1") != nil || id.MayRunAs("root") == nil {
		t.Errorf("the identity of %+v does not carry its owners", tok)
	}
	if _, _, err := Create(ctx, k, Request{Name: "b", Role: Operator, Owners: []string{"batch"}}, "admin", now); !errors.Is(err, ErrInvalid) ||
		!strings.Contains(err.Error(), "only an admin token takes --owners") {
		t.Errorf("an operator with owners: %v", err)
	}
	if _, _, err := Create(ctx, k, Request{Name: "c", Role: Admin, Owners: []string{"a b"}}, "admin", now); !errors.Is(err, ErrInvalid) {
		t.Errorf("a malformed owner: %v", err)
	}
}
