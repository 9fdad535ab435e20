package api

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gnomon-sched/gnomon/calendar"
	"github.com/gnomon-sched/gnomon/engine"
	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/periods"
)

// BackfillRequest asks for the past occurrences of a task in [From, To],
// both included, to run; or, for a timeperiod process, for the periods of
// its level in that range to be reprocessed.
type BackfillRequest struct {
	// From and To are RFC 3339 instants, or local dates and times in the
	// server's zone (2026-03-08 02:30, 2026-03-08 for its midnight); for
	// a process, timeperiod keys (YYYYMMDDHH, UTC) too.
	From string `json:"from"`
	To   string `json:"to"`
	// MaxParallel is the most backfill runs of the task at once (default
	// 1). It does not apply to a process, whose periods run in order.
	MaxParallel int `json:"max_parallel,omitempty"`
	// DryRun says what the backfill would do, and changes nothing.
	DryRun bool `json:"dry_run,omitempty"`
	// Params are parameter values for every run of the backfill, as a
	// start's (see EventRequest.Params). Not for a process.
	Params map[string]string `json:"params,omitempty"`
}

// BackfillResponse says what a backfill did (or, for a dry run, would do)
// with each occurrence of its range, or what a cancel did.
type BackfillResponse struct {
	Task string `json:"task"`
	// Process is set when Task names a timeperiod process.
	Process bool      `json:"process,omitempty"`
	From    time.Time `json:"from,omitzero"`
	To      time.Time `json:"to,omitzero"`
	DryRun  bool      `json:"dry_run,omitempty"`
	// Until is the end, excluded, of what a task's backfill could run:
	// later occurrences are the regular schedule's.
	Until time.Time `json:"until,omitzero"`
	// Occurrences are those of the range, in order (for a task).
	Occurrences []BackfillOccurrence `json:"occurrences,omitempty"`
	// Periods are the periods of the range that have a node (for a
	// process), and Changed the state changes of the reprocess cascade.
	Periods []periods.BackfillPeriod `json:"periods,omitempty"`
	Changed []NodeChange             `json:"changed,omitempty"`
	// Message sums it up.
	Message string `json:"message"`
}

// BackfillStatus is what remains of a task's backfills.
type BackfillStatus struct {
	Task        string `json:"task"`
	MaxParallel int    `json:"max_parallel,omitempty"`
	// Waiting are the occurrences not started yet, in order.
	Waiting []job.BackfillItem `json:"waiting"`
	// Running are the backfill runs in flight.
	Running []job.Run `json:"running"`
}

// backfill runs a task's past occurrences, or reprocesses a process's
// periods, over a range.
func (s *Server) backfill(w http.ResponseWriter, r *http.Request) error {
	var req BackfillRequest
	if err := decode(w, r, &req); err != nil {
		return err
	}
	name := r.PathValue("name")
	if req.From == "" || req.To == "" {
		return badRequest("give from and to: the range to backfill, both included")
	}
	if req.MaxParallel < 0 {
		return badRequest("max_parallel must be at least 1, got %d", req.MaxParallel)
	}
	process, err := s.isProcess(r, name)
	if err != nil {
		return err
	}
	if process {
		if len(req.Params) > 0 {
			return badRequest("params: %s is a timeperiod process, which takes no parameters", name)
		}
		return s.backfillProcess(w, r, name, req)
	}
	from, err := calendar.ParseInstant(req.From, s.loc)
	if err != nil {
		return badRequest("from: %v", err)
	}
	to, err := calendar.ParseInstant(req.To, s.loc)
	if err != nil {
		return badRequest("to: %v", err)
	}
	if to.Before(from) {
		return badRequest("to: %s is before from %s", to.Format(time.RFC3339), from.Format(time.RFC3339))
	}
	ev := engine.Backfill{Task: name, From: from, To: to, MaxParallel: req.MaxParallel, By: caller(r), Params: Params(req.Params)}
	res, err := s.sched.Backfill(r.Context(), ev, req.DryRun)
	if err != nil {
		return err
	}
	resp := s.backfillResponse(res)
	resp.From, resp.To, resp.DryRun = s.local(from), s.local(to), req.DryRun
	resp.Message = backfillMessage(res, req.DryRun)
	return writeJSON(w, http.StatusOK, resp)
}

// isProcess reports whether name is a timeperiod process rather than a
// task (names are unique among both).
func (s *Server) isProcess(r *http.Request, name string) (bool, error) {
	_, _, task := s.sched.View().Task(name)
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
	return process, nil
}

func (s *Server) backfillResponse(res *engine.BackfillResult) BackfillResponse {
	resp := BackfillResponse{Task: res.Task, Until: s.local(res.Until), Occurrences: make([]BackfillOccurrence, len(res.Occurrences))}
	for i, o := range res.Occurrences {
		resp.Occurrences[i] = BackfillOccurrence{Scheduled: s.local(o.Scheduled), Action: string(o.Action), Fate: o.Fate, Reason: o.Reason, RunID: o.RunID}
	}
	return resp
}

// backfillMessage sums up what a backfill did.
func backfillMessage(res *engine.BackfillResult, dry bool) string {
	n := len(res.Occurrences)
	if n == 0 {
		return fmt.Sprintf("%s has no occurrence in the range", res.Task)
	}
	queued := "queued"
	if dry {
		queued = "would run"
	}
	var parts []string
	for _, c := range []struct {
		a    engine.BackfillAction
		what string
	}{
		{engine.BackfillQueued, queued},
		{engine.BackfillDone, "already ran or backfilled"},
		{engine.BackfillPending, "already waiting in an earlier backfill"},
		{engine.BackfillScheduled, "left to the regular schedule"},
	} {
		if k := res.Count(c.a); k > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", k, c.what))
		}
	}
	msg := fmt.Sprintf("backfill of %s: %d occurrence(s): %s", res.Task, n, strings.Join(parts, ", "))
	if res.Count(engine.BackfillScheduled) > 0 {
		msg += fmt.Sprintf(" (a backfill runs occurrences before %s only)", res.Until.UTC().Format(time.RFC3339))
	}
	if dry {
		msg = "dry run: " + msg + "; nothing was changed"
	}
	return msg
}

// backfillProcess reprocesses the periods of a process's level in a
// range.
func (s *Server) backfillProcess(w http.ResponseWriter, r *http.Request, name string, req BackfillRequest) error {
	if req.MaxParallel > 1 {
		return badRequest("max_parallel: the rules of the timeperiod trees run the periods of process %s; a backfill sets no parallelism", name)
	}
	from, err := s.periodBound(req.From, "from")
	if err != nil {
		return err
	}
	to, err := s.periodBound(req.To, "to")
	if err != nil {
		return err
	}
	out, err := s.sched.Trees(r.Context(), periods.Backfill{Process: name, From: from, To: to, By: caller(r), DryRun: req.DryRun})
	if err != nil {
		return err
	}
	resp := BackfillResponse{Task: name, Process: true, DryRun: req.DryRun, Periods: out.Backfill, Changed: []NodeChange{}}
	if resp.Periods == nil {
		resp.Periods = []periods.BackfillPeriod{}
	}
	for _, c := range out.Changes {
		if c.From != c.To {
			resp.Changed = append(resp.Changed, NodeChange{Process: c.Process, Timeperiod: c.Timeperiod, From: c.From, To: c.To})
		}
	}
	re, left := 0, 0
	for _, p := range out.Backfill {
		if p.Reprocessed {
			re++
		} else {
			left++
		}
	}
	verb := "reprocessed"
	if req.DryRun {
		verb = "would be reprocessed"
	}
	resp.Message = fmt.Sprintf("backfill of %s: %d period(s) %s, %d queued or running already (left as they are)", name, re, verb, left)
	if req.DryRun {
		resp.Message = "dry run: " + resp.Message + "; nothing was changed"
	}
	return writeJSON(w, http.StatusOK, resp)
}

// periodBound reads a bound of a process's range: a timeperiod key, or an
// instant (a local time in the server's zone), as the key of the hour
// holding it.
func (s *Server) periodBound(v, field string) (string, error) {
	if _, err := periods.ParseKey(v); err == nil {
		return v, nil
	}
	at, err := calendar.ParseInstant(v, s.loc)
	if err != nil {
		return "", badRequest("%s: %q is neither a timeperiod key (YYYYMMDDHH) nor an instant", field, v)
	}
	return periods.Hourly.KeyAt(at).String(), nil
}

// cancelBackfill stops a task's backfills.
func (s *Server) cancelBackfill(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	res, err := s.sched.CancelBackfill(r.Context(), name, caller(r))
	if err != nil {
		return err
	}
	resp := s.backfillResponse(res)
	resp.Message = fmt.Sprintf("backfill of %s canceled: %d occurrence(s) dropped, %d backfill run(s) killed", name,
		res.Count(engine.BackfillCanceled), res.Count(engine.BackfillKilled))
	return writeJSON(w, http.StatusOK, resp)
}

// backfillStatus says what remains of a task's backfills.
func (s *Server) backfillStatus(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	st, found, err := s.sched.Backfills(r.Context(), name)
	if err != nil {
		return err
	}
	if !found {
		return notFound(name)
	}
	runs := st.Runs
	resp := BackfillStatus{Task: name, Waiting: []job.BackfillItem{}, Running: []job.Run{}}
	if bf := st.Backfill; bf != nil {
		resp.MaxParallel = bf.MaxParallel
		for _, it := range bf.Queue {
			it.Scheduled = s.local(it.Scheduled)
			resp.Waiting = append(resp.Waiting, it)
		}
	}
	for _, run := range runs {
		resp.Running = append(resp.Running, s.localRun(run))
	}
	return writeJSON(w, http.StatusOK, resp)
}

// Backfill asks for a backfill of a task (its past occurrences in [from,
// to] run) or of a timeperiod process (its periods in the range are
// reprocessed).
func (c *Client) Backfill(ctx context.Context, name string, req BackfillRequest) (*BackfillResponse, error) {
	var v BackfillResponse
	return &v, c.do(ctx, http.MethodPost, "/api/v1/tasks/"+url.PathEscape(name)+"/backfill", req, &v)
}

// CancelBackfill stops a task's backfills: the occurrences not started
// are dropped, the backfill runs in flight killed.
func (c *Client) CancelBackfill(ctx context.Context, name string) (*BackfillResponse, error) {
	var v BackfillResponse
	return &v, c.do(ctx, http.MethodPost, "/api/v1/tasks/"+url.PathEscape(name)+"/backfill/cancel", nil, &v)
}

// BackfillStatus says what remains of a task's backfills.
func (c *Client) BackfillStatus(ctx context.Context, name string) (*BackfillStatus, error) {
	var v BackfillStatus
	return &v, c.do(ctx, http.MethodGet, "/api/v1/tasks/"+url.PathEscape(name)+"/backfill", nil, &v)
}
