package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gnomon-sched/gnomon/auth"
	"github.com/gnomon-sched/gnomon/calendar"
	"github.com/gnomon-sched/gnomon/clock"
	"github.com/gnomon-sched/gnomon/defs"
	"github.com/gnomon-sched/gnomon/engine"
	"github.com/gnomon-sched/gnomon/executor"
	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/periods"
	"github.com/gnomon-sched/gnomon/scheduler"
	"github.com/gnomon-sched/gnomon/store"
)

// Server serves the API of one scheduler.
type Server struct {
	// MaxFutureSkew, when positive, makes POST /events refuse (422) events
	// stamped further than this ahead of the scheduler's clock.
	MaxFutureSkew time.Duration
	// Cluster, when set, is the cluster the server directs.
	Cluster Cluster
	// Metrics, when set, answers GET /metrics (Prometheus); without it,
	// /metrics is 404. MetricsPublic lets it answer without a token; it
	// needs the read permission otherwise.
	Metrics       http.Handler
	MetricsPublic bool
	// Logs are where runs write their logs: a run's answer holds the end
	// of its output (see RunResponse).
	Logs *executor.LogFiles
	// DefaultOwner is the OS user the commands of tasks without an owner
	// run as (gnomon.Config.DefaultOwner), for the check of a token's
	// owners; empty means the user this process runs as.
	DefaultOwner string
	// ObserveFunc, when set, is told of every request answered: the
	// route that took it (its pattern, such as "GET /api/v1/tasks/{name}";
	// a page's own pattern for the web UI), its status and how long it
	// took by the wall clock (metrics.Metrics.Requested).
	ObserveFunc func(route string, status int, took time.Duration)

	sched   Scheduler
	loc     *time.Location
	version string
	log     *slog.Logger
	mux     *http.ServeMux
	access  Access
	ui      UI
}

// Mount serves ui at every path the API does not take (see UI). Call it
// before serving.
func (s *Server) Mount(ui UI) { s.ui = ui }

// NewServer returns the API handler. Times in answers are given in loc,
// the server's time zone. Every request but GET /healthz (and GET
// /metrics when MetricsPublic is set) needs an identity access knows, with
// the permission its endpoint needs. The routes below are the permission
// table: each names the permission its requests need and how far a token
// with a scope may go (Rule, Reach); docs/security.md gives the same
// table, and Check applies it before any handler runs.
func NewServer(s Scheduler, loc *time.Location, version string, log *slog.Logger, access Access) *Server {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	srv := &Server{sched: s, loc: loc, version: version, log: log, mux: http.NewServeMux(), access: access}
	srv.handle("GET /healthz", Rule{}, func(w http.ResponseWriter, r *http.Request) error {
		if err := s.Unavailable(); err != nil {
			w.Header().Set("Retry-After", "1")
			return writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "database unavailable", "error": err.Error()})
		}
		return writeJSON(w, http.StatusOK, map[string]string{"status": "ok", "version": srv.version})
	})
	srv.handle("GET /api/v1/whoami", Rule{}, srv.whoami)
	srv.handle("GET /api/v1/tokens", whole(auth.ManageTokens), srv.tokens)
	srv.handle("POST /api/v1/tokens", whole(auth.ManageTokens), srv.createToken)
	srv.handle("POST /api/v1/tokens/{token}/revoke", whole(auth.ManageTokens), srv.revokeToken)
	srv.handle("GET /api/v1/info", need(auth.Read), func(w http.ResponseWriter, r *http.Request) error {
		return writeJSON(w, http.StatusOK, Info{Timezone: loc.String(), Version: version, Runtime: readRuntime()})
	})
	srv.handle("GET /api/v1/cluster", whole(auth.Read), srv.clusterStatus)
	srv.handle("GET /metrics", need(auth.Read), func(w http.ResponseWriter, r *http.Request) error {
		if srv.Metrics == nil {
			return &Error{Status: http.StatusNotFound, Message: "no metrics: the program serving this API registers gnomon's metrics elsewhere"}
		}
		srv.Metrics.ServeHTTP(w, r)
		return nil
	})
	srv.handle("POST /api/v1/cluster/nodes/{node}/drain", whole(auth.ManageCluster), srv.clusterDrain)
	srv.handle("POST /events", over(auth.PostData, DataEvent, ""), srv.events)
	srv.handle("GET /api/v1/events", over(auth.Read, Shown, "configuration"), srv.received)
	srv.handle("POST /api/v1/definitions", over(auth.Define, Defined, ""), srv.define)
	srv.handle("GET /api/v1/definitions", over(auth.Read, Shown, "task"), srv.export)
	srv.handle("GET /api/v1/tasks", over(auth.Read, Filtered, ""), srv.list)
	srv.handle("GET /api/v1/tasks/{name}", over(auth.Read, Shown, "name"), srv.task)
	srv.handle("POST /api/v1/tasks/{name}/events", over(auth.Operate, Acted, "name"), srv.event)
	srv.handle("GET /api/v1/tasks/{name}/status", over(auth.Read, Shown, "name"), srv.status)
	srv.handle("GET /api/v1/tasks/{name}/runs", over(auth.Read, Shown, "name"), srv.runs)
	srv.handle("GET /api/v1/tasks/{name}/runs/{id}", over(auth.Read, Shown, "name"), srv.run)
	// The run names its task only once read: for tokens without a scope.
	srv.handle("GET /api/v1/runs/{id}", whole(auth.Read), srv.runByID)
	srv.handle("GET /api/v1/tasks/{name}/fires", over(auth.Read, Shown, "name"), srv.fires)
	srv.handle("GET /api/v1/tasks/{name}/why", over(auth.Read, Explained, "name"), srv.why)
	srv.handle("POST /api/v1/tasks/{name}/backfill", over(auth.Operate, Acted, "name"), srv.backfill)
	srv.handle("POST /api/v1/tasks/{name}/backfill/cancel", over(auth.Operate, Acted, "name"), srv.cancelBackfill)
	srv.handle("GET /api/v1/tasks/{name}/backfill", over(auth.Read, Shown, "name"), srv.backfillStatus)
	srv.handle("GET /api/v1/forecast", over(auth.Read, Shown, "task"), srv.forecast)
	srv.handle("GET /api/v1/calendars", over(auth.Read, Filtered, ""), srv.calendars)
	srv.handle("GET /api/v1/calendars/{name}", over(auth.Read, Filtered, ""), srv.calendar)
	srv.handle("PUT /api/v1/calendars/{name}", whole(auth.Define), srv.putCalendar)
	srv.handle("DELETE /api/v1/calendars/{name}", whole(auth.Define), srv.deleteCalendar)
	srv.handle("GET /api/v1/alerts", over(auth.Read, Shown, "job"), srv.alerts)
	srv.handle("GET /api/v1/audit", whole(auth.Read), srv.audit)
	srv.handle("GET /api/v1/prune", whole(auth.Read), srv.prune)
	srv.handle("POST /api/v1/prune", whole(auth.Define), srv.prune)
	srv.handle("GET /api/v1/clock", need(auth.Read), srv.clock)
	srv.handle("POST /api/v1/clock", whole(auth.Clock), srv.advance)
	srv.handle("GET /api/v1/trees", whole(auth.Read), srv.trees)
	srv.handle("GET /api/v1/trees/{name}", whole(auth.Read), srv.tree)
	srv.handle("GET /api/v1/nodes", over(auth.Read, Shown, "process"), srv.nodes)
	srv.handle("GET /api/v1/nodes/{process}/{timeperiod}", over(auth.Read, Shown, "process"), srv.node)
	srv.handle("POST /api/v1/nodes/{process}/{timeperiod}/complete", over(auth.Operate, Acted, "process"), srv.complete)
	srv.handle("POST /api/v1/nodes/{process}/{timeperiod}/start", over(auth.Operate, Acted, "process"), srv.start)
	srv.handle("POST /api/v1/nodes/{process}/{timeperiod}/skip", over(auth.Operate, Acted, "process"), srv.skip)
	srv.handle("POST /api/v1/nodes/{process}/{timeperiod}/reprocess", over(auth.Operate, Acted, "process"), srv.reprocess)
	srv.mux.HandleFunc("/", srv.unrouted)
	return srv
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.ObserveFunc == nil {
		s.serve(w, r)
		return
	}
	began := clock.Wall.Now()
	sw := &statusWriter{ResponseWriter: w}
	route := s.serve(sw, r)
	if sw.status == 0 {
		sw.status = http.StatusOK
	}
	s.ObserveFunc(route, sw.status, clock.Wall.Now().Sub(began))
}

// serve answers r and returns the route that took it: the pattern of the
// API's handler or of the UI's page, or "refused" when the request was
// refused before any route took it.
func (s *Server) serve(w http.ResponseWriter, r *http.Request) string {
	r, ok := s.guard(w, r)
	if !ok {
		return "refused"
	}
	s.mux.ServeHTTP(w, r)
	// The muxes set the pattern on the request they were given; the UI
	// is given the API's own.
	if r.Pattern == "" || r.Pattern == "/" {
		return "unrouted"
	}
	return r.Pattern
}

// statusWriter remembers the status of an answer. It flushes (a stream
// of change notices needs it), and Unwrap lets http.ResponseController
// reach the connection's own writer.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(p)
}

// ReadFrom keeps the connection's own (sendfile for a run's log file).
func (w *statusWriter) ReadFrom(r io.Reader) (int64, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return io.Copy(w.ResponseWriter, r)
}

func (w *statusWriter) Flush() { _ = http.NewResponseController(w.ResponseWriter).Flush() }

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// unrouted answers requests no route takes: 405 with Allow when the path
// exists for other methods, 404 otherwise, both as JSON.
func (s *Server) unrouted(w http.ResponseWriter, r *http.Request) {
	if s.forUI(r) {
		s.ui.ServeHTTP(w, r)
		return
	}
	var allow []string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, pattern := s.mux.Handler(probe); pattern != "/" {
			allow = append(allow, m)
		}
	}
	if len(allow) > 0 {
		w.Header().Set("Allow", strings.Join(allow, ", "))
		writeError(w, &Error{Status: http.StatusMethodNotAllowed, Message: fmt.Sprintf("method %s not allowed on %s; allowed: %s", r.Method, r.URL.Path, strings.Join(allow, ", "))})
		return
	}
	writeError(w, &Error{Status: http.StatusNotFound, Message: "no such endpoint: " + r.URL.Path})
}

type handlerFunc func(http.ResponseWriter, *http.Request) error

// handle registers a handler for the identities rule lets through (any
// identity when its permission is empty); the handler's error, if any,
// becomes the answer.
func (s *Server) handle(pattern string, rule Rule, h handlerFunc) {
	s.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		err := func() error {
			if identity(r) != nil && rule.Perm != "" {
				if err := Check(r, rule); err != nil {
					return err
				}
			}
			return h(w, r)
		}()
		if err != nil {
			e := toError(err)
			if e.Status >= 500 {
				s.log.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err)
			}
			writeError(w, e)
		}
	})
}

// Error is an API error with its HTTP status.
type Error struct {
	Status  int
	Message string
	Errors  []string
}

func (e *Error) Error() string { return e.Message }

func badRequest(format string, args ...any) error {
	return &Error{Status: http.StatusBadRequest, Message: fmt.Sprintf(format, args...)}
}

// toError maps error kinds to HTTP statuses, in one place.
func toError(err error) *Error {
	var (
		ae    *Error
		errs  defs.Errors
		probs periods.Problems
		mbe   *http.MaxBytesError
		den   *auth.Denied
	)
	switch {
	case errors.As(err, &ae):
		return ae
	case errors.As(err, &den):
		return &Error{Status: http.StatusForbidden, Message: den.Error()}
	case errors.Is(err, auth.ErrInvalid):
		return &Error{Status: http.StatusBadRequest, Message: err.Error()}
	case errors.Is(err, auth.ErrUnknown), errors.Is(err, store.ErrNoToken):
		return &Error{Status: http.StatusNotFound, Message: err.Error()}
	case errors.Is(err, store.ErrConflict):
		return &Error{Status: http.StatusConflict, Message: err.Error()}
	case errors.As(err, &probs):
		lines := make([]string, len(probs))
		for i, p := range probs {
			lines[i] = p.String()
		}
		return &Error{Status: http.StatusBadRequest, Message: "tree file rejected", Errors: lines}
	case errors.As(err, &errs):
		lines := make([]string, len(errs))
		for i, e := range errs {
			lines[i] = e.Error()
		}
		return &Error{Status: http.StatusUnprocessableEntity, Message: "definitions rejected", Errors: lines}
	case errors.As(err, &mbe):
		return &Error{Status: http.StatusRequestEntityTooLarge, Message: fmt.Sprintf("request body larger than %d bytes", mbe.Limit)}
	case errors.Is(err, engine.ErrNotFound):
		return &Error{Status: http.StatusNotFound, Message: strings.TrimPrefix(err.Error(), "not found: ")}
	case errors.Is(err, engine.ErrRefused):
		return &Error{Status: http.StatusConflict, Message: strings.TrimPrefix(err.Error(), "refused: ")}
	case errors.Is(err, periods.ErrNotFound):
		return &Error{Status: http.StatusNotFound, Message: err.Error()}
	case errors.Is(err, periods.ErrInvalid):
		return &Error{Status: http.StatusBadRequest, Message: strings.TrimSuffix(err.Error(), ": "+periods.ErrInvalid.Error())}
	case errors.Is(err, periods.ErrRefused):
		return &Error{Status: http.StatusConflict, Message: strings.TrimSuffix(err.Error(), ": "+periods.ErrRefused.Error())}
	case errors.Is(err, scheduler.ErrNotSimulated), errors.Is(err, scheduler.ErrNoPruner):
		return &Error{Status: http.StatusConflict, Message: err.Error()}
	case errors.Is(err, scheduler.ErrStopped), errors.Is(err, store.ErrUnavailable):
		return &Error{Status: http.StatusServiceUnavailable, Message: err.Error()}
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return &Error{Status: http.StatusServiceUnavailable, Message: err.Error()}
	}
	return &Error{Status: http.StatusInternalServerError, Message: "internal error: " + err.Error()}
}

func writeError(w http.ResponseWriter, e *Error) {
	writeJSON(w, e.Status, ErrorResponse{Error: e.Message, Errors: e.Errors})
}

func writeJSON(w http.ResponseWriter, status int, v any) error {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	return json.NewEncoder(w).Encode(v)
}

// maxBody bounds request bodies: a definition file and its JSON escaping.
const maxBody = 2*defs.MaxFileSize + 4096

// decode reads exactly one JSON object into v, refusing unknown fields
// and a body that is not UTF-8.
func decode(w http.ResponseWriter, r *http.Request, v any) error {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		return &Error{Status: http.StatusUnsupportedMediaType, Message: "Content-Type must be application/json"}
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		return err
	}
	// encoding/json reads bytes that are not UTF-8 inside a string as
	// U+FFFD without a word: a definition, a name or a resource would then
	// be stored as something else than was sent, and no validator would
	// see it. Such a body is refused instead.
	if !utf8.Valid(body) {
		return badRequest("request body is not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		switch {
		case errors.Is(err, io.EOF):
			return badRequest("empty request body")
		case errors.Is(err, io.ErrUnexpectedEOF):
			return badRequest("truncated JSON body")
		case errors.As(err, &te):
			return badRequest("field %q: expected %s, got JSON %s", te.Field, te.Type, te.Value)
		}
		return badRequest("invalid JSON body: %v", err)
	}
	if dec.More() {
		return badRequest("invalid JSON body: data after the JSON value")
	}
	return nil
}

// export writes definitions in the definition language: all (the named
// calendars first), or one task and its children with the calendars they
// name (?task=), or one calendar (?calendar=); or one tree file as JSON
// (?tree_file=).
func (s *Server) export(w http.ResponseWriter, r *http.Request) error {
	name := r.URL.Query().Get("task")
	calName := r.URL.Query().Get("calendar")
	if file := r.URL.Query().Get("tree_file"); file != "" {
		if name != "" {
			return badRequest("give task or tree_file, not both")
		}
		if calName != "" {
			return badRequest("give calendar or tree_file, not both")
		}
		return s.exportTreeFile(w, r, file)
	}
	if name != "" && calName != "" {
		return badRequest("give task or calendar, not both")
	}
	var (
		list    []*job.Task
		cals    []*job.Calendar
		missing error
	)
	d := s.sched.View().Definitions()
	all := d.Tasks
	switch {
	case calName != "":
		c, ok := d.Calendars[calName]
		if !ok {
			missing = calendarNotFound(calName)
			break
		}
		cals = append(cals, c.Clone())
	case name == "":
		for _, t := range all {
			list = append(list, t.Clone())
		}
		for _, n := range d.CalendarNames() {
			cals = append(cals, d.Calendars[n].Clone())
		}
	default:
		t, ok := all[name]
		if !ok {
			missing = &Error{Status: http.StatusNotFound, Message: fmt.Sprintf("task %s not found", name)}
			break
		}
		list = append(list, t.Clone())
		for _, c := range d.Children(name) {
			list = append(list, all[c].Clone())
		}
		cals = namedCalendars(d.Calendars, list)
	}
	if missing != nil {
		return missing
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if len(cals) > 0 {
		if err := defs.FormatCalendars(w, cals); err != nil {
			return err
		}
		if len(list) > 0 {
			if _, err := io.WriteString(w, "\n"); err != nil {
				return err
			}
		}
	}
	return defs.Format(w, list)
}

// namedCalendars returns the calendars tasks name, and those their
// holidays name, so that they apply with the tasks.
func namedCalendars(all map[string]*job.Calendar, tasks []*job.Task) []*job.Calendar {
	seen := map[string]bool{}
	var out []*job.Calendar
	var add func(name string)
	add = func(name string) {
		c, ok := all[name]
		if seen[name] || !ok {
			return
		}
		seen[name] = true
		out = append(out, c.Clone())
		for _, h := range c.HolidayCalendars() {
			add(h)
		}
	}
	for _, t := range tasks {
		for _, c := range t.Calendars() {
			add(c)
		}
	}
	return out
}

// list lists task names, sorted: all of them, or with ?count= a page.
func (s *Server) list(w http.ResponseWriter, r *http.Request) error {
	v := s.sched.View()
	names := v.Names()
	if id := identity(r); len(id.Scope) > 0 {
		names = slices.DeleteFunc(names, func(n string) bool { return !id.Scope.Covers(n, v.Groups(n)) })
	}
	c, hasCursor, err := readCursor(r, "tasks")
	if err != nil {
		return err
	}
	resp := TasksResponse{Tasks: []string{}}
	if hasCursor {
		i, found := slices.BinarySearch(names, c.Name)
		if found {
			i++
		}
		names = names[i:]
	}
	if r.URL.Query().Get("count") != "" || hasCursor {
		limit, err := pageCount(r, MaxPage)
		if err != nil {
			return err
		}
		if len(names) > limit {
			names = names[:limit]
			resp.Next = cursor{List: "tasks", Query: queryDigest(r), Name: names[limit-1]}.encode()
		}
	}
	resp.Tasks = append(resp.Tasks, names...)
	return writeJSON(w, http.StatusOK, resp)
}

func notFound(name string) error {
	return &Error{Status: http.StatusNotFound, Message: fmt.Sprintf("task %s not found", name)}
}

func (s *Server) view(e *scheduler.View, name string) (TaskView, bool) {
	def, st, ok := e.Task(name)
	if !ok {
		return TaskView{}, false
	}
	v := TaskView{Task: def, State: s.localState(st), Stored: storedOf(e.StoredEvents(name))}
	for _, c := range e.Children(name) {
		cv, _ := s.view(e, c)
		v.Children = append(v.Children, cv)
	}
	return v, true
}

func (s *Server) localState(st job.State) StateView {
	var setBy *SetByView
	if e := st.SetBy; e != nil {
		setBy = &SetByView{Action: e.Action, By: e.By, At: s.local(e.At.Time())}
	}
	return StateView{SetBy: setBy,
		Status: st.Status, Start: s.local(st.Start.Time()), End: s.local(st.End.Time()), ReadySeq: st.ReadySeq, RunID: st.RunID,
		BundleRun: st.BundleRun, BundleOutcome: st.BundleOutcome, Trigger: st.Trigger, By: st.By, DueAt: s.local(st.DueAt.Time()),
		Scheduled: s.local(st.Scheduled.Time()), NextFire: s.local(st.NextFire.Time()), LastExec: st.LastExec.Time(), Pending: st.Pending,
		Attempt: st.Attempt, RetryOf: st.RetryOf, Alarms: s.localAlarms(st.Alarms), Params: st.Params, WaitsFor: st.WaitsFor,
	}
}

// localAlarms returns alarms with their instants in the server's zone.
func (s *Server) localAlarms(alarms []job.Alarm) []job.Alarm {
	out := slices.Clone(alarms)
	for i := range out {
		out[i].At, out[i].Scheduled = s.local(out[i].At), s.local(out[i].Scheduled)
	}
	return out
}

func (s *Server) local(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return t.In(s.loc)
}

// readView reads the view of the task named in the path.
func (s *Server) readView(r *http.Request) (TaskView, error) {
	name := r.PathValue("name")
	v, ok := s.view(s.sched.View(), name)
	if !ok {
		return v, notFound(name)
	}
	return v, nil
}

func (s *Server) task(w http.ResponseWriter, r *http.Request) error {
	v, err := s.readView(r)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, v)
}

func (s *Server) event(w http.ResponseWriter, r *http.Request) error {
	var req EventRequest
	if err := decode(w, r, &req); err != nil {
		return err
	}
	a, ok := job.ParseAction(req.Event)
	if !ok {
		return badRequest("invalid send event %q (want start, abort, freeze, reset, green or red)", req.Event)
	}
	if err := s.sched.Submit(r.Context(), engine.Act{Task: r.PathValue("name"), Action: a, By: auth.NameOf(r.Context()), Params: Params(req.Params)}); err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, map[string]string{"message": "event " + req.Event + " sent to " + r.PathValue("name")})
}

func (s *Server) status(w http.ResponseWriter, r *http.Request) error {
	v, err := s.readView(r)
	if err != nil {
		return err
	}
	row := func(v TaskView, level int) StatusRow {
		sr := StatusRow{Name: v.Task.Name, Level: level, Start: v.State.Start, End: v.State.End, Status: v.State.Status}
		if v.State.RunID != 0 {
			sr.RunningStatus, sr.Data, _ = s.sched.Progress(v.State.RunID)
		}
		if sr.Attempt = v.State.Attempt; sr.Attempt > 0 {
			sr.Retries = v.Task.Extras().RunPolicy().Retries
			if v.State.Retrying() {
				sr.RetryAt = v.State.DueAt
			}
		}
		sr.Alarms = v.State.Alarms
		if v.State.Status == job.Ready {
			sr.WaitsFor = v.State.WaitsFor
		}
		return sr
	}
	resp := StatusResponse{Rows: []StatusRow{row(v, 0)}}
	for _, c := range v.Children {
		resp.Rows = append(resp.Rows, row(c, 1))
	}
	return writeJSON(w, http.StatusOK, resp)
}

// countAndDay reads the count and date query parameters of history
// requests: at most count rows (default def), of one day in the server's
// zone (zero times when not given).
func (s *Server) countAndDay(r *http.Request, def int) (limit int, from, to time.Time, err error) {
	limit = def
	if c := r.URL.Query().Get("count"); c != "" {
		n, err := strconv.Atoi(c)
		if err != nil || n < 1 {
			return 0, from, to, badRequest("count must be a whole number of at least 1, got %q", c)
		}
		limit = n
	}
	if d := r.URL.Query().Get("date"); d != "" {
		day, err := time.ParseInLocation(time.DateOnly, d, s.loc)
		if err != nil {
			return 0, from, to, badRequest("date must be YYYY-MM-DD, got %q", d)
		}
		from, to = day, day.AddDate(0, 0, 1)
	}
	return limit, from, to, nil
}

// taskDef reads a task's definition, or answers 404.
func (s *Server) taskDef(r *http.Request, name string) (job.Task, error) {
	def, _, exists := s.sched.View().Task(name)
	if !exists {
		return def, notFound(name)
	}
	return def, nil
}

// historyOwner checks that name has a history of runs, fires and alerts:
// a task, or a timeperiod process (whose runs are those of its nodes). It
// reports whether it is a bundle, and answers 404 for another name.
func (s *Server) historyOwner(r *http.Request, name string) (bundle bool, err error) {
	def, _, task := s.sched.View().Task(name)
	process := false
	if !task {
		var err error
		if process, err = s.sched.IsProcess(r.Context(), name); err != nil {
			return false, err
		}
	}
	if !task && !process {
		return false, notFound(name)
	}
	return def.Type == job.Bundle, nil
}

// runs lists a task's runs, newest first, runs in progress included:
// ?count= (default 1), ?date=, ?done=true for the ended runs only, and
// ?cursor= for the next page.
func (s *Server) runs(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	// A run is history from the moment it starts: runs in progress are
	// listed, with their status running and no end.
	q := store.RunQuery{Task: name}
	var err error
	if _, q.From, q.To, err = s.countAndDay(r, 1); err != nil {
		return err
	}
	switch d := r.URL.Query().Get("done"); d {
	case "", "false":
	case "true":
		q.Done = true
	default:
		return badRequest("done must be true or false, got %q", d)
	}
	limit, err := pageCount(r, 1)
	if err != nil {
		return err
	}
	list := "runs/" + name
	c, hasCursor, err := readCursor(r, list, "date", "done")
	if err != nil {
		return err
	}
	bundle, err := s.historyOwner(r, name)
	if err != nil {
		return err
	}
	st := s.sched.Store()
	runs, more, err := byID(c, hasCursor, limit, func(limit int, before int64) ([]job.Run, error) {
		q.Limit, q.Before = limit, before
		return st.Runs(r.Context(), q)
	})
	if err != nil {
		return err
	}
	resp := RunsResponse{Runs: []RunView{}}
	for _, run := range runs {
		v := RunView{Run: s.localRun(run)}
		if bundle {
			kids, err := st.Runs(r.Context(), store.RunQuery{BundleRun: run.ID})
			if err != nil {
				return err
			}
			for i := len(kids) - 1; i >= 0; i-- { // oldest first under the bundle row
				v.Children = append(v.Children, s.localRun(kids[i]))
			}
		}
		resp.Runs = append(resp.Runs, v)
	}
	if more {
		resp.Next = cursor{List: list, Query: queryDigest(r, "date", "done"), ID: runs[len(runs)-1].ID}.encode()
	}
	return writeJSON(w, http.StatusOK, resp)
}

func (s *Server) localRun(r job.Run) job.Run {
	r.Start, r.End, r.Scheduled = s.local(r.Start), s.local(r.End), s.local(r.Scheduled)
	return r
}

// fires lists what became of a task's planned occurrences, newest first:
// ?count= (default 20), ?date=, ?cursor= for the next page.
func (s *Server) fires(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	q := store.FireQuery{Task: name}
	var err error
	if _, q.From, q.To, err = s.countAndDay(r, 20); err != nil {
		return err
	}
	limit, err := pageCount(r, 20)
	if err != nil {
		return err
	}
	list := "fires/" + name
	c, hasCursor, err := readCursor(r, list, "date")
	if err != nil {
		return err
	}
	if hasCursor {
		// A task's occurrences are told apart by their instant: the next
		// page is what is scheduled before the last one given.
		if at := time.Unix(0, c.At); q.To.IsZero() || at.Before(q.To) {
			q.To = at
		}
	}
	if _, err := s.historyOwner(r, name); err != nil {
		return err
	}
	q.Limit = limit + 1
	fires, err := s.sched.Store().Fires(r.Context(), q)
	if err != nil {
		return err
	}
	resp := FiresResponse{Fires: []job.Fire{}}
	if len(fires) > limit {
		fires = fires[:limit]
		resp.Next = cursor{List: list, Query: queryDigest(r, "date"), At: fires[limit-1].Scheduled.UnixNano()}.encode()
	}
	for _, f := range fires {
		f.Scheduled, f.At = s.local(f.Scheduled), s.local(f.At)
		resp.Fires = append(resp.Fires, f)
	}
	return writeJSON(w, http.StatusOK, resp)
}

// maxForecast bounds one forecast answer.
const maxForecast = 100_000

// forecast lists planned fires of one task (task=NAME) or all, in
// [from, to): from defaults to now, to to a day after from.
func (s *Server) forecast(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	from, to := s.sched.Now(), time.Time{}
	var err error
	if v := q.Get("from"); v != "" {
		if from, err = calendar.ParseInstant(v, s.loc); err != nil {
			return badRequest("from: %v", err)
		}
	}
	to = from.Add(24 * time.Hour)
	if v := q.Get("to"); v != "" {
		if to, err = calendar.ParseInstant(v, s.loc); err != nil {
			return badRequest("to: %v", err)
		}
	}
	if to.Before(from) {
		return badRequest("to: %s is before from %s", to.Format(time.RFC3339), from.Format(time.RFC3339))
	}
	limit := maxForecast
	if v := q.Get("limit"); v != "" {
		if limit, err = strconv.Atoi(v); err != nil || limit < 1 || limit > maxForecast {
			return badRequest("limit must be a whole number from 1 to %d, got %q", maxForecast, v)
		}
	}
	params := []string{"task", "from", "to", "limit"}
	c, hasCursor, err := readCursor(r, "forecast", params...)
	if err != nil {
		return err
	}
	start := from
	if hasCursor {
		// The pages of a forecast keep the range of the first.
		from, to, start = time.Unix(0, c.From), time.Unix(0, c.To), time.Unix(0, c.At)
	}
	name := q.Get("task")
	scheds := map[string]calendar.Schedule{}
	found := true
	if v := s.sched.View(); name != "" {
		_, _, found = v.Task(name)
		scheds[name] = v.Schedule(name)
	} else {
		v.Ascend("", func(it *scheduler.TaskItem) bool {
			if it.Schedule != nil {
				scheds[it.Def.Name] = it.Schedule
			}
			return true
		})
	}
	if !found {
		return notFound(name)
	}
	// After a cursor, the fires at its instant up to its task were given:
	// at most one per schedule.
	skip := 0
	if hasCursor {
		skip = len(scheds)
	}
	fires, more := calendar.Forecast(scheds, start, to, limit+skip)
	if hasCursor {
		i := 0
		for i < len(fires) && fires[i].At.Equal(start) && fires[i].Task <= c.Name {
			i++
		}
		fires = fires[i:]
	}
	if len(fires) > limit {
		fires, more = fires[:limit], true
	}
	if fires == nil {
		fires = []calendar.Planned{}
	}
	resp := ForecastResponse{From: from.UTC(), To: to.UTC(), Fires: fires, Truncated: more}
	if more {
		last := fires[len(fires)-1]
		resp.Next = cursor{List: "forecast", Query: queryDigest(r, params...), From: from.UnixNano(), To: to.UnixNano(), At: last.At.UnixNano(), Name: last.Task}.encode()
	}
	return writeJSON(w, http.StatusOK, resp)
}

func (s *Server) clock(w http.ResponseWriter, r *http.Request) error {
	return writeJSON(w, http.StatusOK, ClockResponse{Now: s.local(s.sched.Now()), Simulated: s.sched.Simulated()})
}

// advance moves a simulating server's clock and answers once the engine
// has settled at the new time; with tick, it then runs a tick of every
// continuous timeperiod level (without moving the clock when to is not
// given).
func (s *Server) advance(w http.ResponseWriter, r *http.Request) error {
	var req ClockRequest
	if err := decode(w, r, &req); err != nil {
		return err
	}
	if req.To == "" && !req.Tick {
		return badRequest("give to (the instant to move the clock to), tick: true (a tick of the continuous timeperiod levels), or both")
	}
	if !s.sched.Simulated() {
		return scheduler.ErrNotSimulated
	}
	if req.To != "" {
		to, err := calendar.ParseInstant(req.To, s.loc)
		if err != nil {
			return badRequest("to: %v", err)
		}
		if now := s.sched.Now(); to.Before(now) {
			return badRequest("to: %s is before the clock's time %s; the clock cannot go back", to.Format(time.RFC3339), now.UTC().Format(time.RFC3339))
		}
		if err := s.sched.Advance(r.Context(), to); err != nil {
			return err
		}
	}
	if req.Tick {
		if _, err := s.sched.Trees(r.Context(), periods.ContinuousTick{By: auth.NameOf(r.Context())}); err != nil {
			return err
		}
		// Where it stands: the runs the tick started end before the answer.
		if err := s.sched.Advance(r.Context(), s.sched.Now()); err != nil {
			return err
		}
	}
	return s.clock(w, r)
}

// runtimeSamples are the runtime metrics RuntimeInfo reports, in its order.
var runtimeSamples = []string{"/sched/goroutines:goroutines", "/memory/classes/heap/objects:bytes", "/gc/cycles/total:gc-cycles"}

// readRuntime reads the runtime's metrics; it does not stop the world.
func readRuntime() RuntimeInfo {
	samples := make([]metrics.Sample, len(runtimeSamples))
	for i, name := range runtimeSamples {
		samples[i].Name = name
	}
	metrics.Read(samples)
	v := func(i int) uint64 {
		if samples[i].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return samples[i].Value.Uint64()
	}
	return RuntimeInfo{Goroutines: v(0), HeapBytes: v(1), GCCycles: v(2)}
}
