// Package web is gnomon's web UI: pages rendered on the server with
// html/template, made live with htmx and a stream of change notices, every
// file embedded in the binary. It reads the scheduler directly and makes
// its changes through the JSON API, so that a click in a browser is
// authorised, journaled and audited as the same request from the command
// line would be. See docs/ui.md.
package web

import (
	"bytes"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/gnomon-sched/gnomon/api"
	"github.com/gnomon-sched/gnomon/auth"
	"github.com/gnomon-sched/gnomon/clock"
	"github.com/gnomon-sched/gnomon/executor"
	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/periods"
	"github.com/gnomon-sched/gnomon/scheduler"
	"github.com/gnomon-sched/gnomon/store"
)

//go:embed templates static
var files embed.FS

// Scheduler is what the UI reads of a scheduler (*scheduler.Scheduler
// serves it): the View and the store without waiting, and the few
// queries only the loop answers, each in one visit.
type Scheduler interface {
	// Now is the scheduler's clock; Simulated reports a simulated one.
	Now() time.Time
	Simulated() bool
	// View is the tasks as of the last commit; Changed says when a commit
	// changed something; Store reads the history.
	View() *scheduler.View
	Changed() (gen uint64, next <-chan struct{})
	Store() store.Store
	// LogSpan is where a run in flight writes in its task's log files.
	LogSpan(run int64) (job.LogSpan, bool)
	// Idle reports whether the loop would answer a query at once.
	Idle() bool
	// Done is closed when the scheduler stops.
	Done() <-chan struct{}
	// Why explains a task; TreeList, TreeGrid the timeperiod forest.
	Why(ctx context.Context, name string, now time.Time) (scheduler.Explanation, bool, error)
	TreeList(ctx context.Context) ([]periods.TreeInfo, error)
	TreeGrid(ctx context.Context, name string, last int) (periods.TreeInfo, [][]periods.Node, bool, error)
}

// Config is what the UI shows and how.
type Config struct {
	Scheduler Scheduler
	// Location is the zone times are shown in: the server's.
	Location *time.Location
	Version  string
	// Sessions are the signed-in browsers.
	Sessions *auth.Sessions
	// Logs are where runs write their logs: the task page shows their end.
	Logs   *executor.LogFiles
	Logger *slog.Logger
	// LiveStreams is the most streams of change notices (/live) one
	// token may hold open at once, over all its sessions; 0 means
	// DefaultLiveStreams. Each holds a connection for minutes.
	LiveStreams int
	// Tokens keeps the API's tokens, which the tokens page lists for
	// admins (nil: no such page), on the tokens' clock (TokenClock, the
	// wall clock when nil), which tells whether one has expired.
	Tokens     auth.Keeper
	TokenClock clock.Clock
	// Cluster is the cluster the server directs, which the cluster page
	// shows (nil: the server is not in one, and has no such page).
	Cluster api.Cluster
}

// DefaultLiveStreams is the most /live streams a token holds by default:
// a browser opens one for each page of the server it shows.
const DefaultLiveStreams = 16

// UI serves the web interface. It is mounted on the API server
// (api.Server.Mount), whose guard authenticates its requests.
type UI struct {
	cfg    Config
	mux    *http.ServeMux
	pages  map[string]*template.Template
	static http.Handler
	// assets maps a static file's name to its URL, which carries a digest
	// of its content so that browsers may keep it for good.
	assets map[string]string
	// overviews and lists share the reads of the overview and of the task
	// list among the requests for them (see shared.go).
	overviews sharedRead[struct{}, overviewData]
	lists     sharedRead[taskFilter, tasksData]
	// streams counts the /live streams each token holds open.
	streams streamCount
	// failures shares the overview's count of the failed runs of the last
	// 24 hours.
	failures sharedRead[struct{}, failureCounts]
	// outcomes shares the overview's chart of the runs' outcomes.
	outcomes sharedRead[struct{}, outcomeData]
	// historyBeat numbers the reads of history from the store that the
	// overview shows (failures and outcomes).
	historyBeat beatSeq
	// hourCounts keeps the counts of the hours the chart totals.
	hourCounts hourCounts
}

// New returns the UI.
func New(cfg Config) (*UI, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Location == nil {
		cfg.Location = time.Local
	}
	if cfg.LiveStreams <= 0 {
		cfg.LiveStreams = DefaultLiveStreams
	}
	u := &UI{cfg: cfg, mux: http.NewServeMux(), pages: map[string]*template.Template{}, assets: map[string]string{}}
	if err := u.digestAssets(); err != nil {
		return nil, err
	}
	if err := u.parse(); err != nil {
		return nil, err
	}
	static, _ := fs.Sub(files, "static")
	u.static = http.StripPrefix("/static/", http.FileServerFS(static))
	u.routes()
	return u, nil
}

// routes registers every page with the rule it needs, checked as the
// API checks its own routes (api.Check, one table of roles and scopes):
// the sign-in page and the static files need none (they are Public),
// signing out needs an identity, every other page, fragment and stream
// needs read, and the logs read:sensitive over their task (checked by
// sensitiveTask, which knows the task). A token that may not read, such as
// an ingest token, gets 403 everywhere, as it does from the API. A token
// with a scope reads the pages of the tasks in it, whole: a task's page
// shows its bundle's members and the tasks its condition names, which
// must be in the scope too. The lists of tasks, runs and the audit, and the
// timeline, show such a token the tasks its scope covers (see scope.go);
// the other pages that show every task (the overview, the graph, data
// events, trees, alerts) are for tokens without a scope, and left out of
// its navigation; its home is the task list.
func (u *UI) routes() {
	u.mux.HandleFunc("GET /static/", u.serveStatic)
	u.mux.HandleFunc("GET /favicon.ico", u.favicon)
	u.mux.HandleFunc("GET /login", u.loginPage)
	u.mux.HandleFunc("POST /login", u.login)
	u.mux.HandleFunc("POST /logout", u.logout)
	var (
		read     = api.Rule{Perm: auth.Read}
		every    = api.Rule{Perm: auth.Read, Reach: api.Unscoped}
		task     = api.Rule{Perm: auth.Read, Reach: api.Shown, Param: "name"}
		filtered = api.Rule{Perm: auth.Read, Reach: api.Filtered}
		taskPage = api.Rule{Perm: auth.Read, Reach: api.Explained, Param: "name"}
	)
	u.route("GET /live", read, u.live)
	// A token with a scope starts from the tasks it may see.
	overview := u.pageHandler("overview", u.overview)
	u.route("GET /{$}", read, func(w http.ResponseWriter, r *http.Request) {
		if len(scopeOf(r)) > 0 {
			http.Redirect(w, r, "/tasks", http.StatusSeeOther)
			return
		}
		overview(w, r)
	})
	u.page("GET /tasks", "tasks", filtered, u.tasks)
	u.page("GET /tasks/{name}", "task", taskPage, u.task)
	u.route("GET /tasks/{name}/log/{stream}", task, u.handle(u.log))
	u.route("GET /tasks/{name}/why", taskPage, u.handle(u.whyFragment))
	u.route("GET /tasks/{name}/runs/{id}/logs", task, u.handle(u.runLogs))
	// A run names its task only once read: its page checks the scope
	// itself.
	u.page("GET /runs", "runs", filtered, u.runs)
	u.page("GET /runs/{id}", "run", filtered, u.runPage)
	u.route("GET /runs/{id}/log/{stream}", every, u.handle(u.runLogDownload))
	u.page("GET /timeline", "timeline", filtered, u.timeline)
	u.page("GET /graph", "graph", every, u.graph)
	u.route("GET /graph.json", every, u.handle(u.graphJSON))
	u.page("GET /data", "data", every, u.data)
	u.page("GET /trees", "trees", every, u.trees)
	u.page("GET /trees/{name}", "tree", every, u.tree)
	u.page("GET /alerts", "alerts", every, u.alerts)
	u.page("GET /calendars", "calendars", every, u.calendars)
	u.page("GET /calendars/{name}", "calendar", every, u.calendarPage)
	u.page("GET /audit", "audit", filtered, u.audit)
	if u.cfg.Cluster != nil {
		u.page("GET /cluster", "cluster", every, u.clusterPage)
	}
	if u.cfg.Tokens != nil {
		u.page("GET /tokens", "tokens", api.Rule{Perm: auth.ManageTokens, Reach: api.Unscoped}, u.tokens)
	}
	u.route("/", read, func(w http.ResponseWriter, r *http.Request) {
		u.fail(w, r, &httpError{status: http.StatusNotFound, msg: "no page at " + r.URL.Path})
	})
}

// route registers a handler for the identities rule lets through; the
// others get 403 naming what they lack.
func (u *UI) route(pattern string, rule api.Rule, h http.HandlerFunc) {
	u.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		if err := api.Check(r, rule); err != nil {
			u.fail(w, r, err)
			return
		}
		h(w, r)
	})
}

// ServeHTTP implements http.Handler.
func (u *UI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	// The pages load only their own files, and no other site may frame
	// them (clickjacking).
	h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	u.mux.ServeHTTP(w, r)
}

// Public reports whether a request needs no identity: the sign-in page,
// the static files and the icon.
func (u *UI) Public(r *http.Request) bool {
	return r.URL.Path == "/login" || r.URL.Path == "/favicon.ico" || strings.HasPrefix(r.URL.Path, "/static/")
}

// favicon answers the icon browsers ask for at /favicon.ico (pages name
// it in their head too): the SVG of the static files.
func (u *UI) favicon(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "public, max-age=86400")
	r2 := r.Clone(r.Context())
	r2.URL.Path = "/static/favicon.svg"
	u.static.ServeHTTP(w, r2)
}

// SignIn sends a browser without a session to the sign-in page, which
// brings it back where it was going.
func (u *UI) SignIn(w http.ResponseWriter, r *http.Request, reason string) {
	if r.Header.Get("HX-Request") != "" {
		// A fragment asked for by a page whose session ended: the whole
		// page goes to sign in.
		w.Header().Set("HX-Redirect", "/login")
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	q := url.Values{"next": {r.URL.RequestURI()}}
	if _, err := r.Cookie(api.SessionCookie); err == nil {
		q.Set("reason", reason)
	}
	http.Redirect(w, r, "/login?"+q.Encode(), http.StatusSeeOther)
}

func (u *UI) serveStatic(w http.ResponseWriter, r *http.Request) {
	if r.URL.Query().Get("v") != "" {
		w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	}
	u.static.ServeHTTP(w, r)
}

// digestAssets gives each static file a URL that changes with its content.
func (u *UI) digestAssets() error {
	return fs.WalkDir(files, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := files.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		name := strings.TrimPrefix(p, "static/")
		u.assets[name] = "/static/" + name + "?v=" + hex.EncodeToString(sum[:6])
		return nil
	})
}

// parse reads the templates: each page is the layout with its content
// and the fragments, which it may use; a fragment (a file named
// NAME.frag.html) stands alone, with the other fragments.
func (u *UI) parse() error {
	funcs := u.funcs()
	pages, err := fs.Glob(files, "templates/*.html")
	if err != nil {
		return err
	}
	frags, err := fs.Glob(files, "templates/*.frag.html")
	if err != nil {
		return err
	}
	for _, p := range pages {
		name := strings.TrimSuffix(path.Base(p), ".html")
		if name == "layout" {
			continue
		}
		with := append([]string{"templates/layout.html", p}, frags...)
		if frag, ok := strings.CutSuffix(name, ".frag"); ok {
			name, with = frag, frags
		}
		t, err := template.New(name).Funcs(funcs).ParseFS(files, with...)
		if err != nil {
			return err
		}
		u.pages[name] = t
	}
	return nil
}

// view is what every page template is given.
type view struct {
	Title    string
	Section  string // the navigation entry of the page
	Identity *auth.Identity
	CSRF     string
	Now      time.Time
	Sim      bool
	Version  string
	// Self is the page's URL: the live region reloads from it.
	Self string
	Data any
	// tokens and cluster say the server has a tokens page and a
	// cluster page.
	tokens, cluster bool
}

// Sections are the navigation entries of the pages the viewer may read:
// a token with a scope reads the lists narrowed to it, not the pages
// that show every task.
func (v *view) Sections() []string {
	if v.Identity != nil && len(v.Identity.Scope) > 0 {
		return []string{"tasks", "runs", "timeline", "audit"}
	}
	list := []string{"overview", "tasks", "runs", "timeline", "graph", "data", "trees", "calendars", "alerts", "audit"}
	if v.cluster {
		list = append(list, "cluster")
	}
	if v.tokens && v.Can(string(auth.ManageTokens)) {
		list = append(list, "tokens")
	}
	return list
}

// Can reports whether the viewer's role grants a permission (to show the
// actions it may take; the API decides).
func (v *view) Can(p string) bool {
	return v.Identity != nil && v.Identity.Can(auth.Permission(p)) == nil
}

// httpError is a page's error with its status.
type httpError struct {
	status int
	msg    string
}

func (e *httpError) Error() string { return e.msg }

func notFound(format string, args ...any) error {
	return &httpError{status: http.StatusNotFound, msg: fmt.Sprintf(format, args...)}
}

func badRequest(format string, args ...any) error {
	return &httpError{status: http.StatusBadRequest, msg: fmt.Sprintf(format, args...)}
}

// page registers a page: fn reads what it shows, the template named tmpl
// shows it.
func (u *UI) page(pattern, tmpl string, rule api.Rule, fn func(r *http.Request) (title string, data any, err error)) {
	u.route(pattern, rule, u.pageHandler(tmpl, fn))
}

// pageHandler serves a page: fn reads what it shows, the template named
// tmpl shows it.
func (u *UI) pageHandler(tmpl string, fn func(r *http.Request) (title string, data any, err error)) http.HandlerFunc {
	section := tmpl
	switch tmpl {
	case "task":
		section = "tasks"
	case "tree":
		section = "trees"
	case "run":
		section = "runs"
	case "calendar":
		section = "calendars"
	}
	return func(w http.ResponseWriter, r *http.Request) {
		title, data, err := fn(r)
		if err != nil {
			u.fail(w, r, err)
			return
		}
		u.render(w, r, http.StatusOK, tmpl, &view{Title: title, Section: section, Data: data})
	}
}

// handle adapts a handler that may fail.
func (u *UI) handle(fn func(w http.ResponseWriter, r *http.Request) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := fn(w, r); err != nil {
			u.fail(w, r, err)
		}
	}
}

func (u *UI) render(w http.ResponseWriter, r *http.Request, status int, tmpl string, v *view) {
	v.Identity, v.CSRF = auth.FromContext(r.Context()), api.CSRF(r)
	v.Now, v.Sim, v.Version = u.cfg.Scheduler.Now().In(u.cfg.Location), u.cfg.Scheduler.Simulated(), u.cfg.Version
	v.Self = r.URL.RequestURI()
	v.tokens, v.cluster = u.cfg.Tokens != nil, u.cfg.Cluster != nil
	var buf bytes.Buffer
	if err := u.pages[tmpl].ExecuteTemplate(&buf, "layout", v); err != nil {
		u.cfg.Logger.Error("page not rendered", "page", tmpl, "err", err)
		http.Error(w, "page not rendered: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(shown(buf.Bytes()))
}

// fail shows an error page: the error's own status, 503 while the
// database is unavailable, 500 for the unexpected.
func (u *UI) fail(w http.ResponseWriter, r *http.Request, err error) {
	status := http.StatusInternalServerError
	var (
		he *httpError
		ae *api.Error
	)
	switch {
	case errors.As(err, &he):
		status = he.status
	case errors.As(err, new(*auth.Denied)):
		status = http.StatusForbidden
	case errors.As(err, &ae):
		status = ae.Status
	case errors.Is(err, scheduler.ErrStopped):
		status = http.StatusServiceUnavailable
	default:
		u.cfg.Logger.Error("page failed", "path", r.URL.Path, "err", err)
	}
	u.render(w, r, status, "error", &view{Title: http.StatusText(status), Data: err.Error()})
}
