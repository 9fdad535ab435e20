package web

import (
	"net/http"
	"slices"

	"github.com/gnomon-sched/gnomon/api"
	"github.com/gnomon-sched/gnomon/auth"
	"github.com/gnomon-sched/gnomon/clock"
)

// tokensData is the tokens page: every token as the API shows it, and
// the roles a new one may take.
type tokensData struct {
	Tokens []api.TokenView
	Roles  []auth.Role
}

// tokens lists the API's tokens, newest first, for an admin, who may
// create and revoke them here (through the API).
func (u *UI) tokens(r *http.Request) (string, any, error) {
	all, err := u.cfg.Tokens.Tokens(r.Context())
	if err != nil {
		return "", nil, err
	}
	c := u.cfg.TokenClock
	if c == nil {
		c = clock.Wall
	}
	now := c.Now()
	d := tokensData{Roles: auth.Roles}
	for _, t := range all {
		v := api.ViewToken(t, now)
		v.Created, v.Expires, v.Revoked = u.local(v.Created), u.local(v.Expires), u.local(v.Revoked)
		d.Tokens = append(d.Tokens, v)
	}
	slices.SortStableFunc(d.Tokens, func(a, b api.TokenView) int { return b.Created.Compare(a.Created) })
	return "Tokens", d, nil
}
