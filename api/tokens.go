package api

import (
	"context"
	"net/http"
	"net/url"
	"time"

	"github.com/gnomon-sched/gnomon/auth"
)

// TokenView is a token as the API shows it: never its secret or hash.
type TokenView struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	Role      auth.Role `json:"role"`
	Scope     []string  `json:"scope,omitempty"`
	Owners    []string  `json:"owners,omitempty"`
	Rate      int       `json:"rate,omitempty"`
	State     string    `json:"state"` // active, expired or revoked
	Created   time.Time `json:"created"`
	Expires   time.Time `json:"expires,omitzero"`
	Revoked   time.Time `json:"revoked,omitzero"`
	CreatedBy string    `json:"created_by,omitempty"`
}

// ViewToken is how the API shows a token at now.
func ViewToken(t auth.Token, now time.Time) TokenView {
	v := TokenView{ID: t.ID, Name: t.Name, Role: t.Role, Scope: t.Scope, Owners: t.Owners, Rate: t.Rate, Created: t.Created, Expires: t.Expires,
		Revoked: t.Revoked, CreatedBy: t.CreatedBy, State: "active"}
	switch {
	case !t.Revoked.IsZero():
		v.State = "revoked"
	case !t.Active(now):
		v.State = "expired"
	}
	return v
}

// TokensResponse lists tokens, oldest first.
type TokensResponse struct {
	Tokens []TokenView `json:"tokens"`
}

// TokenRequest asks for a new token.
type TokenRequest struct {
	Name  string    `json:"name"`
	Role  auth.Role `json:"role"`
	Scope []string  `json:"scope,omitempty"`
	// Owners are the OS users an admin token may define commands to run
	// as (auth.Owners): user names, USER:GROUP, or globs of them.
	Owners []string `json:"owners,omitempty"`
	// Expires is a duration (Go syntax, such as 720h); empty: never.
	Expires string `json:"expires,omitempty"`
	// Rate is the requests a second the token may make: 0 the server's
	// default, -1 no limit.
	Rate int `json:"rate,omitempty"`
}

// TokenResponse answers a new token: the token itself, shown this once.
type TokenResponse struct {
	Token string `json:"token"`
	TokenView
}

// WhoamiResponse says who a request's token is.
type WhoamiResponse struct {
	Name    string    `json:"name"`
	Role    auth.Role `json:"role"`
	Scope   []string  `json:"scope,omitempty"`
	TokenID string    `json:"token_id"`
}

func (s *Server) whoami(w http.ResponseWriter, r *http.Request) error {
	id := identity(r)
	return writeJSON(w, http.StatusOK, WhoamiResponse{Name: id.Name, Role: id.Role, Scope: id.Scope, TokenID: id.TokenID})
}

func (s *Server) tokens(w http.ResponseWriter, r *http.Request) error {
	all, err := s.access.Keeper.Tokens(r.Context())
	if err != nil {
		return err
	}
	now := s.access.Authority.Now()
	resp := TokensResponse{Tokens: []TokenView{}}
	for _, t := range all {
		resp.Tokens = append(resp.Tokens, ViewToken(t, now))
	}
	return writeJSON(w, http.StatusOK, resp)
}

func (s *Server) createToken(w http.ResponseWriter, r *http.Request) error {
	var req TokenRequest
	if err := decode(w, r, &req); err != nil {
		return err
	}
	ar := auth.Request{Name: req.Name, Role: req.Role, Scope: req.Scope, Owners: req.Owners, Rate: req.Rate}
	if req.Expires != "" {
		d, err := time.ParseDuration(req.Expires)
		if err != nil || d <= 0 {
			return badRequest("expires: %q is not a positive duration such as 720h", req.Expires)
		}
		ar.TTL = d
	}
	now := s.access.Authority.Now()
	tok, t, err := auth.Create(r.Context(), s.access.Keeper, ar, identity(r).Name, now)
	if err != nil {
		return err
	}
	s.access.Authority.Add(t)
	s.log.Info("token created", "token", t.ID, "name", t.Name, "role", t.Role, "by", identity(r).Name)
	return writeJSON(w, http.StatusCreated, TokenResponse{Token: tok, TokenView: ViewToken(t, now)})
}

func (s *Server) revokeToken(w http.ResponseWriter, r *http.Request) error {
	now := s.access.Authority.Now()
	t, err := auth.Revoke(r.Context(), s.access.Keeper, r.PathValue("token"), now)
	if err != nil {
		return err
	}
	s.access.Authority.Add(t)
	s.log.Info("token revoked", "token", t.ID, "name", t.Name, "by", identity(r).Name)
	return writeJSON(w, http.StatusOK, ViewToken(t, now))
}

// Whoami says who the client's token is.
func (c *Client) Whoami(ctx context.Context) (*WhoamiResponse, error) {
	var v WhoamiResponse
	return &v, c.do(ctx, http.MethodGet, "/api/v1/whoami", nil, &v)
}

// Tokens lists every token.
func (c *Client) Tokens(ctx context.Context) (*TokensResponse, error) {
	var v TokensResponse
	return &v, c.do(ctx, http.MethodGet, "/api/v1/tokens", nil, &v)
}

// CreateToken makes a token.
func (c *Client) CreateToken(ctx context.Context, req TokenRequest) (*TokenResponse, error) {
	var v TokenResponse
	return &v, c.do(ctx, http.MethodPost, "/api/v1/tokens", req, &v)
}

// RevokeToken revokes a token by ID or name.
func (c *Client) RevokeToken(ctx context.Context, ref string) (*TokenView, error) {
	var v TokenView
	return &v, c.do(ctx, http.MethodPost, "/api/v1/tokens/"+url.PathEscape(ref)+"/revoke", nil, &v)
}
