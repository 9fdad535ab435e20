package api

import (
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/gnomon-sched/gnomon/auth"
	"github.com/gnomon-sched/gnomon/engine"
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
}

// guard answers the requests that may not reach a handler: a host that is
// not one of the server's names, a cross-origin request, no or a bad
// token, a token over its rate. /healthz answers everyone, and so does
// /metrics when it is public.
func (s *Server) guard(w http.ResponseWriter, r *http.Request) (*http.Request, bool) {
	if r.URL.Path == "/healthz" || (s.MetricsPublic && r.URL.Path == "/metrics") {
		return r, true
	}
	if !s.access.hostAllowed(r.Host, r) {
		writeError(w, &Error{Status: http.StatusMisdirectedRequest, Message: fmt.Sprintf(
			"host %q is not a name of this server; a server reached by another name lists it with --public-name", r.Host)})
		return nil, false
	}
	if o := r.Header.Get("Origin"); o != "" && !s.access.sameOrigin(o, r) {
		writeError(w, &Error{Status: http.StatusForbidden, Message: fmt.Sprintf("cross-origin request from %q refused", o)})
		return nil, false
	}
	id, err := s.authenticate(r)
	if err != nil {
		if errors.Is(err, auth.ErrNotLoaded) {
			w.Header().Set("Retry-After", "1")
			writeError(w, &Error{Status: http.StatusServiceUnavailable, Message: err.Error()})
			return nil, false
		}
		w.Header().Set("WWW-Authenticate", `Bearer realm="gnomon"`)
		writeError(w, &Error{Status: http.StatusUnauthorized, Message: err.Error()})
		return nil, false
	}
	if retry, ok := s.access.Authority.Allow(id); !ok {
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(retry.Seconds()))))
		writeError(w, &Error{Status: http.StatusTooManyRequests, Message: fmt.Sprintf("token %s is over its rate: retry in %s", id.Name, retry.Round(1e6))})
		return nil, false
	}
	return r.WithContext(auth.NewContext(r.Context(), id)), true
}

// authenticate finds the identity of a request: its bearer token, else the
// client certificate the TLS handshake verified, named by its common name.
func (s *Server) authenticate(r *http.Request) (*auth.Identity, error) {
	h := r.Header.Get("Authorization")
	if h == "" && r.TLS != nil && len(r.TLS.VerifiedChains) > 0 {
		return s.access.Authority.Named(r.TLS.VerifiedChains[0][0].Subject.CommonName)
	}
	return s.access.Authority.Authenticate(h)
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
		if err := s.sched.Read(r.Context(), func(e *engine.Engine) { groups = e.Groups(name) }); err != nil {
			return err
		}
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
