package web

import (
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strconv"

	"github.com/gnomon-sched/gnomon/auth"
	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/store"
)

// runLogTail is how much of each of a run's logs its page shows: the end;
// the whole is a download.
const runLogTail = 256 << 10

// attemptScan bounds the runs of a task read, after a first run, to find
// its retries.
const attemptScan = 200

// runData is the page of one run.
type runData struct {
	Run *job.Run
	// Defined says whether the task is still defined, Type its type.
	Defined bool
	Type    job.Type
	// Attempts are the first run of its trigger and the retries of it,
	// oldest first, when there was a retry.
	Attempts []job.Run
	// Bundle is the bundle run the run took part in.
	Bundle *job.Run
	// Children are the runs of a bundle run, oldest first, and Gantt
	// draws them.
	Children []job.Run
	Gantt    *ganttData
	// Logs is what the run wrote, when the viewer may read it; NoLogs
	// says why there is none.
	Logs   *runLogsView
	NoLogs string
}

func (u *UI) runPage(r *http.Request) (string, any, error) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		return "", nil, notFound("no run %q: a run is named by its number", r.PathValue("id"))
	}
	run, err := u.run(r, id)
	if err != nil {
		return "", nil, err
	}
	st := u.cfg.Scheduler.Store()
	local := u.localRun(run)
	d := runData{Run: &local}
	v := u.cfg.Scheduler.View()
	scope := scopeOf(r)
	if !covers(v, scope, run.Task) {
		return "", nil, &auth.Denied{Identity: auth.FromContext(r.Context()), Permission: auth.Read, Task: run.Task}
	}
	def, _, ok := v.Task(run.Task)
	d.Defined, d.Type = ok, def.Type
	if d.Attempts, err = u.attempts(r, run); err != nil {
		return "", nil, err
	}
	if run.BundleRun != 0 && run.BundleRun != run.ID {
		if b, err := u.run(r, run.BundleRun); err == nil && covers(v, scope, b.Task) {
			b = u.localRun(b)
			d.Bundle = &b
		}
	}
	if def.Type == job.Bundle {
		kids, err := st.Runs(r.Context(), store.RunQuery{BundleRun: run.ID})
		if err != nil {
			return "", nil, err
		}
		for i := len(kids) - 1; i >= 0; i-- {
			if !covers(v, scope, kids[i].Task) {
				// A bundle's page shows its members: all in the scope.
				return "", nil, &auth.Denied{Identity: auth.FromContext(r.Context()), Permission: auth.Read, Task: kids[i].Task, Via: run.Task}
			}
			d.Children = append(d.Children, u.localRun(kids[i]))
		}
		to := local.End
		if !run.Done() {
			to = u.local(u.cfg.Scheduler.Now())
		}
		d.Gantt = gantt(local, d.Children, to, func(task string) string {
			def, _, _ := v.Task(task)
			return def.Condition
		})
	}
	switch {
	case !ok:
		d.NoLogs = "the task " + run.Task + " is no longer defined: where its logs were is not known"
	case def.Type != job.Callable:
		d.NoLogs = "a " + string(def.Type) + " writes no log: its runs are those of its tasks"
	default:
		def, err := u.sensitiveTask(r, run.Task)
		if err != nil {
			d.NoLogs = "reading the logs of " + run.Task + " takes the read:sensitive permission over it, which your role (" + string(auth.FromContext(r.Context()).Role) + ") does not grant"
			break
		}
		v := u.readRunLogs(&def, run, runLogTail)
		v.OnPage = true
		d.Logs = &v
	}
	return fmt.Sprintf("Run %d of %s", run.ID, run.Task), d, nil
}

// attempts returns the first run of a run's trigger and its retries,
// oldest first, or none when there was no retry: the retries are among the
// attemptScan runs of the task after the first.
func (u *UI) attempts(r *http.Request, run job.Run) ([]job.Run, error) {
	first := run
	if run.RetryOf != 0 {
		f, err := u.run(r, run.RetryOf)
		if err != nil {
			return nil, err
		}
		first = f
	}
	after := store.Key(first)
	later, err := u.cfg.Scheduler.Store().RunPage(r.Context(), store.RunPageQuery{Tasks: []string{run.Task}, Newer: &after, Limit: attemptScan})
	if err != nil {
		return nil, err
	}
	out := []job.Run{u.localRun(first)}
	for i := len(later) - 1; i >= 0; i-- {
		if later[i].RetryOf == first.ID {
			out = append(out, u.localRun(later[i]))
		}
	}
	if len(out) < 2 {
		return nil, nil
	}
	return out, nil
}

// runLogDownload answers the whole of what a run wrote to one of its
// task's logs, as a file to save.
func (u *UI) runLogDownload(w http.ResponseWriter, r *http.Request) error {
	stream := r.PathValue("stream")
	if stream != "out" && stream != "err" {
		return notFound("no log %q: a run has an out and an err log", stream)
	}
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		return notFound("no run %q: a run is named by its number", r.PathValue("id"))
	}
	run, err := u.run(r, id)
	if err != nil {
		return err
	}
	def, err := u.sensitiveTask(r, run.Task)
	if err != nil {
		return err
	}
	path, span := def.OutLog, u.span(run)
	if stream == "err" {
		path = def.ErrLog
	}
	if path == "" {
		return notFound("task %s defines no %s log", run.Task, stream)
	}
	from, to := int64(0), int64(-1)
	if span != nil {
		from, to = span.OutFrom, span.OutTo
		if stream == "err" {
			from, to = span.ErrFrom, span.ErrTo
		}
	}
	part, closer, err := u.cfg.Logs.OpenPart(path, max(from, 0), to)
	if err != nil {
		return err
	}
	defer closer.Close()
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", fmt.Sprintf("%s-run%d-%s.log", filepath.Base(run.Task), run.ID, stream)))
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Length", strconv.FormatInt(part.Size(), 10))
	_, err = io.Copy(w, part)
	return err
}

// span returns where a run's output is in its task's logs: for a run
// that has not ended, as far as it has written.
func (u *UI) span(run job.Run) *job.LogSpan {
	if !run.Done() {
		if s, ok := u.cfg.Scheduler.LogSpan(run.ID); ok {
			return &s
		}
	}
	return run.Log
}

// readRunLogs reads what a run wrote to its task's logs, the last limit bytes
// of each.
func (u *UI) readRunLogs(def *job.Task, run job.Run, limit int64) runLogsView {
	v := runLogsView{Task: run.Task, Run: run.ID, Running: !run.Done()}
	span := u.span(run)
	if span != nil {
		v.Node = span.Node
	}
	for _, rs := range u.cfg.Logs.RunOutput(def, run.ID, span, limit) {
		v.Streams = append(v.Streams, namedLog{Name: rs.Name, View: logView{Path: rs.Path, Text: rs.Text, More: rs.More, Problem: rs.Problem, Partial: rs.Partial, Tail: kib(limit)}})
	}
	return v
}

// kib writes a size in KiB.
func kib(n int64) string { return strconv.FormatInt(n>>10, 10) + " KiB" }
