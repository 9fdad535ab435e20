package web

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gnomon-sched/gnomon/api"
	"github.com/gnomon-sched/gnomon/auth"
	"github.com/gnomon-sched/gnomon/clock"
)

type loginView struct {
	Next   string
	Reason string
}

func (u *UI) loginPage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	u.render(w, r, http.StatusOK, "login", &view{Title: "Sign in", Data: loginView{Next: safeNext(q.Get("next")), Reason: q.Get("reason")}})
}

// login signs a browser in with a token: the token is checked, and the
// browser gets a session cookie it cannot read from scripts and will not
// send with a request another site makes.
func (u *UI) login(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 4096)
	if err := r.ParseForm(); err != nil {
		u.render(w, r, http.StatusBadRequest, "login", &view{Title: "Sign in", Data: loginView{Reason: "the form could not be read: " + err.Error()}})
		return
	}
	next := safeNext(r.PostForm.Get("next"))
	source, failures := api.Source(r), u.cfg.Sessions.Failures()
	if wait := failures.Wait(source); wait > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(wait.Seconds()))))
		u.render(w, r, http.StatusTooManyRequests, "login", &view{Title: "Sign in", Data: loginView{Next: next,
			Reason: fmt.Sprintf("too many failed sign-ins from %s: retry in %s", source, wait.Round(time.Second))}})
		return
	}
	// Only a token that may read gets a session: the pages need read,
	// which an ingest token has not.
	key, _, id, err := u.cfg.Sessions.Open(strings.TrimSpace(r.PostForm.Get("token")), auth.Read)
	if err != nil {
		status := http.StatusUnauthorized
		if errors.As(err, new(*auth.Denied)) {
			status = http.StatusForbidden
		} else if n, report := failures.Fail(source); report {
			u.cfg.Logger.Warn("web sign-in failed (logged once a minute for each source)", "source", source, "failures", n, "err", err)
		}
		u.render(w, r, status, "login", &view{Title: "Sign in", Data: loginView{Next: next, Reason: err.Error()}})
		return
	}
	u.cfg.Logger.Info("web sign-in", "identity", id.Name, "role", id.Role, "remote", r.RemoteAddr)
	http.SetCookie(w, &http.Cookie{Name: api.SessionCookie, Value: key, Path: "/", HttpOnly: true, Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// logout ends the session. Like every change through a session, it must
// carry the session's CSRF token (the API's guard checks it).
func (u *UI) logout(w http.ResponseWriter, r *http.Request) {
	if c, err := r.Cookie(api.SessionCookie); err == nil {
		u.cfg.Sessions.Close(c.Value)
	}
	http.SetCookie(w, &http.Cookie{Name: api.SessionCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode})
	if r.Header.Get("HX-Request") != "" {
		w.Header().Set("HX-Redirect", "/login")
		return
	}
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}

// safeNext keeps a page to return to after signing in only when it is a
// path of this server: never another site. Browsers drop tabs and line
// breaks from a URL and read a backslash as a slash, so /<TAB>/evil.example
// and /\evil.example are //evil.example to them: a control character, a
// space or a backslash anywhere refuses it, as do a second leading slash
// and anything a URL parser reads a scheme or host in.
func safeNext(next string) string {
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") {
		return "/"
	}
	for i := 0; i < len(next); i++ {
		if c := next[i]; c <= ' ' || c == 0x7f || c == '\\' {
			return "/"
		}
	}
	if u, err := url.Parse(next); err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || !strings.HasPrefix(u.Path, "/") || strings.HasPrefix(u.Path, "//") {
		return "/"
	}
	return next
}

// liveEvery is the beat of change notices: a page is told of changes at
// most once each liveEvery, on a beat all pages share (see untilTick). A
// busy scheduler changes thousands of times a second, a page needs to
// know once.
const liveEvery = 500 * time.Millisecond

// live streams change notices (server-sent events) while the page is
// open: the page reloads its live region at each.
func (u *UI) live(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming not supported", http.StatusInternalServerError)
		return
	}
	// Each stream holds a connection for minutes: a token holds at most
	// LiveStreams of them, so that no client can take the server's
	// connections by opening streams.
	id := auth.FromContext(r.Context())
	if !u.streams.take(id.TokenID, u.cfg.LiveStreams) {
		w.Header().Set("Retry-After", "30")
		http.Error(w, fmt.Sprintf("token %s holds %d streams of change notices already, the most a token may: close a page of this server, or retry in 30 s",
			id.Name, u.cfg.LiveStreams), http.StatusTooManyRequests)
		return
	}
	defer u.streams.give(id.TokenID)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, "retry: 2000\n\n")
	fl.Flush()
	// The server's write timeout (5 minutes) ends a long answer: the
	// stream ends before it, and the browser opens another.
	stop := time.NewTimer(4 * time.Minute)
	defer stop.Stop()
	keepalive := time.NewTicker(25 * time.Second)
	defer keepalive.Stop()
	gen, next := u.cfg.Scheduler.Changed()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-u.cfg.Scheduler.Done():
			return
		case <-stop.C:
			return
		case <-keepalive.C:
			fmt.Fprint(w, ": keepalive\n\n")
			fl.Flush()
		case <-next:
			var g uint64
			g, next = u.cfg.Scheduler.Changed()
			if g == gen {
				continue
			}
			gen = g
			fmt.Fprintf(w, "event: change\ndata: %d\n\n", gen)
			fl.Flush()
			select {
			case <-time.After(untilTick(clock.Wall.Now())): // a beat in real time
			case <-r.Context().Done():
				return
			}
		}
	}
}

// streamCount counts the long-lived streams each token holds.
type streamCount struct {
	mu sync.Mutex
	n  map[string]int
}

// take counts a new stream of token, unless it holds max already.
func (c *streamCount) take(token string, max int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n[token] >= max {
		return false
	}
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[token]++
	return true
}

// give uncounts a stream of token that ended.
func (c *streamCount) give(token string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n[token]--; c.n[token] <= 0 {
		delete(c.n, token)
	}
}
