package api

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gnomon-sched/gnomon/auth"
)

// Access is who may call the API: the tokens an Authority holds, and the
// names the server answers to.
type Access struct {
	Authority *auth.Authority
	// Keeper keeps the tokens the API creates and revokes.
	Keeper auth.Keeper
	// Hosts are the host names requests may name besides localhost, the
	// loopback addresses and the address a request arrived at: the names
	// clients reach the server by (its certificate's names, a balancer's).
	// A request naming another host is refused, so that a page whose name
	// resolves to this server (DNS rebinding) cannot use it.
	Hosts []string
	// Sessions are the browsers signed in to the web UI, if it is served.
	Sessions *auth.Sessions
}

// Names of the web UI's session cookie and of the header that carries a
// session's CSRF token.
const (
	SessionCookie = "gnomon_session"
	CSRFHeader    = "X-CSRF-Token"
)

// UI is a web interface served beside the API: every path the API does not
// take is its. Public says which of its requests need no identity (its
// sign-in page, its static files); the others come with the identity in
// their context (see auth.FromContext, and CSRF for the session's token).
type UI interface {
	http.Handler
	Public(r *http.Request) bool
	// SignIn answers a request for a page that came without an identity.
	SignIn(w http.ResponseWriter, r *http.Request, reason string)
}

// guard answers the requests that may not reach a handler: a host that is
// not one of the server's names, a cross-origin request, no or a bad
// token, a token over its rate. /healthz answers everyone, and so does
// /metrics when it is public.
func (s *Server) guard(w http.ResponseWriter, r *http.Request) (*http.Request, bool) {
	if r.URL.Path == "/healthz" || (s.MetricsPublic && r.URL.Path == "/metrics") {
		return r, true
	}
	ui := s.forUI(r)
	if !s.access.hostAllowed(r.Host, r) {
		hangUp(w)
		writeError(w, &Error{Status: http.StatusMisdirectedRequest, Message: fmt.Sprintf(
			"host %q is not a name of this server; a server reached by another name lists it with --public-name", r.Host)})
		return nil, false
	}
	if o := r.Header.Get("Origin"); o != "" && !s.access.sameOrigin(o, r) {
		hangUp(w)
		writeError(w, &Error{Status: http.StatusForbidden, Message: fmt.Sprintf("cross-origin request from %q refused", o)})
		return nil, false
	}
	if ui && s.ui.Public(r) {
		return r, true
	}
	// A source that failed to authenticate too often waits, refused
	// before its credentials are even read. A session cookie is not
	// counted: a stale one (the server restarted) is no guess, and
	// sign-in counts its own failures.
	source, credentials := Source(r), r.Header.Get("Authorization") != "" || r.TLS != nil && len(r.TLS.VerifiedChains) > 0
	if wait := s.access.Authority.Failures().Wait(source); credentials && wait > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(wait.Seconds()))))
		hangUp(w)
		writeError(w, &Error{Status: http.StatusTooManyRequests, Message: fmt.Sprintf("too many failed authentications from %s: retry in %s", source, wait.Round(time.Millisecond))})
		return nil, false
	}
	id, csrf, err := s.authenticate(r)
	if err != nil {
		if errors.Is(err, auth.ErrNotLoaded) {
			w.Header().Set("Retry-After", "1")
			writeError(w, &Error{Status: http.StatusServiceUnavailable, Message: err.Error()})
			return nil, false
		}
		if credentials {
			if n, report := s.access.Authority.Failures().Fail(source); report {
				s.log.Warn("authentication failed (logged once a minute for each source)", "source", source, "failures", n, "method", r.Method, "path", r.URL.Path, "err", err)
			}
		}
		if ui && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
			hangUp(w)
			s.ui.SignIn(w, r, err.Error())
			return nil, false
		}
		w.Header().Set("WWW-Authenticate", `Bearer realm="gnomon"`)
		hangUp(w)
		writeError(w, &Error{Status: http.StatusUnauthorized, Message: err.Error()})
		return nil, false
	}
	// A browser sends its session cookie with every request to the server,
	// whatever page made it: a change must also carry the session's CSRF
	// token, which only the server's own pages know.
	if csrf != "" && !safeMethod(r.Method) && subtle.ConstantTimeCompare([]byte(r.Header.Get(CSRFHeader)), []byte(csrf)) != 1 {
		writeError(w, &Error{Status: http.StatusForbidden, Message: "missing or wrong CSRF token (" + CSRFHeader + " header): reload the page"})
		return nil, false
	}
	if retry, ok := s.access.Authority.Allow(id); !ok {
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(retry.Seconds()))))
		writeError(w, &Error{Status: http.StatusTooManyRequests, Message: fmt.Sprintf("token %s is over its rate: retry in %s", id.Name, retry.Round(1e6))})
		return nil, false
	}
	ctx := s.withChecker(auth.NewContext(r.Context(), id))
	if csrf != "" {
		ctx = context.WithValue(ctx, csrfKey{}, csrf)
	}
	return r.WithContext(ctx), true
}

// hangUp closes the connection after a refusal of a client without a valid
// identity: it is not kept alive for more requests, so that idle
// connections of clients that could not authenticate do not pile up.
func hangUp(w http.ResponseWriter) { w.Header().Set("Connection", "close") }

// Source is the address a request came from, whose failed
// authentications are counted together: its client's IP address (behind
// a proxy, the proxy's).
func Source(r *http.Request) string {
	if h, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return h
	}
	return r.RemoteAddr
}

type csrfKey struct{}

// CSRF returns the CSRF token of the session a request came through, ""
// for a request that came with a token or certificate.
func CSRF(r *http.Request) string {
	v, _ := r.Context().Value(csrfKey{}).(string)
	return v
}

func safeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

// forUI reports whether a request is the web UI's: a path the API does not
// own, from a client that sends no token (a browser). A client of the API
// that asks for another path is answered by the API, in JSON.
func (s *Server) forUI(r *http.Request) bool {
	p := r.URL.Path
	api := p == "/events" || p == "/healthz" || p == "/metrics" || strings.HasPrefix(p, "/api/")
	return s.ui != nil && !api && r.Header.Get("Authorization") == ""
}

// authenticate finds the identity of a request: its bearer token, else the
// client certificate the TLS handshake verified, which names its token's
// ID (see auth.Authority.Certificate),
// else its web UI session (whose CSRF token it returns too).
func (s *Server) authenticate(r *http.Request) (id *auth.Identity, csrf string, err error) {
	h := r.Header.Get("Authorization")
	if h != "" {
		id, err = s.access.Authority.Authenticate(h)
		return id, "", err
	}
	if r.TLS != nil && len(r.TLS.VerifiedChains) > 0 {
		id, err = s.access.Authority.Certificate(r.TLS.VerifiedChains[0][0])
		return id, "", err
	}
	if c, err := r.Cookie(SessionCookie); err == nil && s.access.Sessions != nil {
		return s.access.Sessions.Identity(c.Value)
	}
	id, err = s.access.Authority.Authenticate(h)
	return id, "", err
}

// hostAllowed reports whether host (a Host header, or an origin's host)
// names this server.
func (a *Access) hostAllowed(host string, r *http.Request) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	if host == "localhost" || slices.Contains(a.Hosts, host) {
		return true
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return false
	}
	if ip.IsLoopback() {
		return true
	}
	// An address is no name a page can rebind: the one the request came
	// to is the server's.
	la, ok := r.Context().Value(http.LocalAddrContextKey).(*net.TCPAddr)
	return ok && la.IP.Equal(ip)
}

// sameOrigin reports whether a request's Origin is the server itself, as
// the request reached it: same scheme, host and port.
func (a *Access) sameOrigin(origin string, r *http.Request) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return u.Scheme == scheme && strings.EqualFold(u.Host, r.Host) && a.hostAllowed(u.Host, r)
}

// identity returns the identity of a request that passed guard.
func identity(r *http.Request) *auth.Identity { return auth.FromContext(r.Context()) }

// mayTask returns a *auth.Denied unless the request's identity may use p
// on the named task (or timeperiod process).
func (s *Server) mayTask(r *http.Request, p auth.Permission, name string) error {
	id := identity(r)
	var groups []string
	if id.Scope.NeedsGroups() {
		groups = s.sched.View().Groups(name)
	}
	return id.CanTask(p, name, groups)
}

// unscoped returns a *auth.Denied when the request's identity has a scope:
// what concerns the whole server (tokens, the cluster, sync) is for
// identities whose role covers every task.
func unscoped(r *http.Request, p auth.Permission) error {
	id := identity(r)
	if len(id.Scope) > 0 {
		return &auth.Denied{Identity: id, Permission: p, Task: "*"}
	}
	return nil
}
