package web

import (
	"bytes"
	"net/http"
	"strconv"

	"github.com/gnomon-sched/gnomon/auth"
	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/store"
)

// logTail is how much of a log the task page shows: its end.
const logTail = 64 << 10

// log answers the end of a task's out or err log as a fragment of the
// task page. Logs may hold what a viewer is not to see: reading them takes
// the read:sensitive permission over the task.
func (u *UI) log(w http.ResponseWriter, r *http.Request) error {
	stream := r.PathValue("stream")
	if stream != "out" && stream != "err" {
		return notFound("no log %q: a task has an out and an err log", stream)
	}
	def, err := u.sensitiveTask(r, r.PathValue("name"))
	if err != nil {
		return err
	}
	path := def.OutLog
	if stream == "err" {
		path = def.ErrLog
	}
	v := logView{Path: path}
	if path == "" {
		v.Problem = "no " + stream + " log file is defined"
	} else if data, more, err := u.cfg.Logs.Tail(path, logTail); err != nil {
		v.Problem = err.Error()
	} else {
		v.Text, v.More = string(data), more
	}
	return u.fragment(w, "log", v)
}

// runLogs answers what one run wrote to its task's out and err logs, as a
// fragment of the task page that replaces its logs: the part of each file
// the run appended (see job.LogSpan), its end when that is long, and
// while the run lasts, what it wrote so far, polled again every two
// seconds. It takes read:sensitive over the task, as the logs do.
func (u *UI) runLogs(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		return notFound("no run %q: a run is named by its number", r.PathValue("id"))
	}
	def, err := u.sensitiveTask(r, name)
	if err != nil {
		return err
	}
	runs, err := u.cfg.Scheduler.Store().Runs(r.Context(), store.RunQuery{Task: name, Before: id + 1, Limit: 1})
	if err != nil {
		return err
	}
	if len(runs) == 0 || runs[0].ID != id {
		return notFound("task %s has no run %d", name, id)
	}
	run := runs[0]
	v := runLogsView{Task: name, Run: id, Running: !run.Done()}
	span := run.Log
	if v.Running {
		if s, ok := u.cfg.Scheduler.LogSpan(id); ok {
			span = &s
		}
	}
	if span != nil {
		v.Node = span.Node
	}
	for _, rs := range u.cfg.Logs.RunOutput(&def, id, span, logTail) {
		v.Streams = append(v.Streams, namedLog{Name: rs.Name, View: logView{Path: rs.Path, Text: rs.Text, More: rs.More, Problem: rs.Problem, Partial: rs.Partial}})
	}
	return u.fragment(w, "runlogs", v)
}

// sensitiveTask returns the definition of a task whose logs the viewer may
// read.
func (u *UI) sensitiveTask(r *http.Request, name string) (job.Task, error) {
	v := u.cfg.Scheduler.View()
	def, _, found := v.Task(name)
	groups := v.Groups(name)
	if !found {
		return job.Task{}, notFound("task %s not found", name)
	}
	if err := auth.FromContext(r.Context()).CanTask(auth.ReadSensitive, name, groups); err != nil {
		return job.Task{}, err
	}
	return def, nil
}

// fragment answers a fragment template, never cached.
func (u *UI) fragment(w http.ResponseWriter, name string, v any) error {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	var buf bytes.Buffer
	if err := u.pages[name].ExecuteTemplate(&buf, name, v); err != nil {
		return err
	}
	_, err := w.Write(shown(buf.Bytes()))
	return err
}

type runLogsView struct {
	Task    string
	Run     int64
	Running bool
	// Node is the cluster's worker that ran the run, empty when this
	// server did or it is not known.
	Node    string
	Streams []namedLog
}

type namedLog struct {
	Name string
	View logView
}

type logView struct {
	Path    string
	Text    string
	More    bool
	Problem string
	// Partial says that where the run's output begins is not known: Text
	// is the end of what precedes its end.
	Partial bool
}
