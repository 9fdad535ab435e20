package api

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/gnomon-sched/gnomon/auth"
	"github.com/gnomon-sched/gnomon/executor"
	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/store"
)

// RunResponse is one run, with the end of what it wrote to its task's log
// files.
type RunResponse struct {
	Run job.Run `json:"run"`
	// Logs are the run's out and err output, their last ?tail= lines
	// (default 40; 0 leaves them out). Reading them takes read:sensitive
	// over the task: without it, each stream says so in its problem.
	Logs []executor.RunStream `json:"logs,omitempty"`
}

// DefaultTail is how many lines of each log a run's answer holds when
// ?tail= does not say.
const DefaultTail = 40

// logBytes bounds what is read of each log for its last lines.
const logBytes = 64 << 10

// run answers one run of a task: GET /api/v1/tasks/{name}/runs/{id}.
func (s *Server) run(w http.ResponseWriter, r *http.Request) error {
	id, tail, err := runParams(r)
	if err != nil {
		return err
	}
	resp, err := s.runOf(r, r.PathValue("name"), id, tail)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, resp)
}

// runByID answers a run by its number alone, as run does:
// GET /api/v1/runs/{id}.
func (s *Server) runByID(w http.ResponseWriter, r *http.Request) error {
	id, tail, err := runParams(r)
	if err != nil {
		return err
	}
	runs, err := s.sched.Store().Runs(r.Context(), store.RunQuery{Before: id + 1, Limit: 1})
	if err != nil {
		return err
	}
	if len(runs) == 0 || runs[0].ID != id {
		return &Error{Status: http.StatusNotFound, Message: fmt.Sprintf("no run %d (gnomon runs NAME lists the runs of a task)", id)}
	}
	resp, err := s.runOf(r, runs[0].Task, id, tail)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, resp)
}

// runParams reads the run number of a run's path and its ?tail=.
func runParams(r *http.Request) (id int64, tail int, err error) {
	id, err = strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		return 0, 0, badRequest("run: want a run number (gnomon runs lists them), got %q", r.PathValue("id"))
	}
	tail = DefaultTail
	if v := r.URL.Query().Get("tail"); v != "" {
		if tail, err = strconv.Atoi(v); err != nil || tail < 0 {
			return 0, 0, badRequest("tail: want a number of lines, 0 or more, got %q", v)
		}
	}
	return id, tail, nil
}

// runOf reads run id of task name and, with tail > 0, the last tail
// lines of its output.
func (s *Server) runOf(r *http.Request, name string, id int64, tail int) (*RunResponse, error) {
	if _, err := s.historyOwner(r, name); err != nil {
		return nil, err
	}
	runs, err := s.sched.Store().Runs(r.Context(), store.RunQuery{Task: name, Before: id + 1, Limit: 1})
	if err != nil {
		return nil, err
	}
	if len(runs) == 0 || runs[0].ID != id {
		return nil, &Error{Status: http.StatusNotFound, Message: fmt.Sprintf("task %s has no run %d (gnomon runs -j %s lists its runs)", name, id, name)}
	}
	run := runs[0]
	resp := &RunResponse{Run: s.localRun(run)}
	def, _, isTask := s.sched.View().Task(name)
	if tail == 0 || !isTask || def.Type == job.Bundle {
		return resp, nil
	}
	if err := s.mayTask(r, auth.ReadSensitive, name); err != nil {
		for _, stream := range []string{"out", "err"} {
			resp.Logs = append(resp.Logs, executor.RunStream{Name: stream, Problem: "reading a task's logs takes the read:sensitive permission over it"})
		}
		return resp, nil
	}
	span := run.Log
	if !run.Done() {
		if sp, ok := s.sched.LogSpan(id); ok {
			span = &sp
		}
	}
	for _, rs := range s.Logs.RunOutput(&def, id, span, logBytes) {
		var cut bool
		rs.Text, cut = lastLines(rs.Text, tail)
		rs.More = rs.More || cut
		resp.Logs = append(resp.Logs, rs)
	}
	return resp, nil
}

// lastLines returns the last n lines of text, and whether it left some
// out.
func lastLines(text string, n int) (string, bool) {
	end := strings.TrimSuffix(text, "\n")
	i := len(end)
	for range n {
		j := strings.LastIndexByte(end[:i], '\n')
		if j < 0 {
			return text, false
		}
		i = j
	}
	return text[i+1:], true
}

// Run returns one run of a task with the last tail lines of its output
// (negative: DefaultTail; 0: none).
func (c *Client) Run(ctx context.Context, name string, id int64, tail int) (*RunResponse, error) {
	path := fmt.Sprintf("/api/v1/tasks/%s/runs/%d", url.PathEscape(name), id)
	if tail >= 0 {
		path += "?tail=" + strconv.Itoa(tail)
	}
	var v RunResponse
	return &v, c.do(ctx, http.MethodGet, path, nil, &v)
}

// RunByID returns a run by its number alone, with the last tail lines of
// its output (negative: DefaultTail; 0: none).
func (c *Client) RunByID(ctx context.Context, id int64, tail int) (*RunResponse, error) {
	path := fmt.Sprintf("/api/v1/runs/%d", id)
	if tail >= 0 {
		path += "?tail=" + strconv.Itoa(tail)
	}
	var v RunResponse
	return &v, c.do(ctx, http.MethodGet, path, nil, &v)
}
