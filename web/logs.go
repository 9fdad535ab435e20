package web

import (
	"net/http"

	"github.com/gnomon-sched/gnomon/auth"
	"github.com/gnomon-sched/gnomon/engine"
	"github.com/gnomon-sched/gnomon/job"
)

// logTail is how much of a log the task page shows: its end.
const logTail = 64 << 10

// log answers the end of a task's out or err log as a fragment of the
// task page. Logs may hold what a viewer is not to see: reading them takes
// the read:sensitive permission over the task.
func (u *UI) log(w http.ResponseWriter, r *http.Request) error {
	name, stream := r.PathValue("name"), r.PathValue("stream")
	if stream != "out" && stream != "err" {
		return notFound("no log %q: a task has an out and an err log", stream)
	}
	var (
		def    job.Task
		groups []string
		found  bool
	)
	if err := u.cfg.Scheduler.Read(r.Context(), func(e *engine.Engine) {
		if def, _, found = e.Task(name); found {
			groups = e.Groups(name)
		}
	}); err != nil {
		return err
	}
	if !found {
		return notFound("task %s not found", name)
	}
	if err := auth.FromContext(r.Context()).CanTask(auth.ReadSensitive, name, groups); err != nil {
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
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	return u.pages["log"].ExecuteTemplate(w, "log", v)
}

type logView struct {
	Path    string
	Text    string
	More    bool
	Problem string
}
