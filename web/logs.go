package web

import (
	"bytes"
	"cmp"
	"net/http"
	"slices"
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
	v := logView{Path: path, Tail: kib(logTail)}
	if path == "" {
		v.Problem = "no " + stream + " log file is defined"
		return u.fragment(w, "log", v)
	}
	size, err := u.cfg.Logs.Size(path)
	if err != nil {
		v.Problem = err.Error()
		return u.fragment(w, "log", v)
	}
	data, more, err := u.cfg.Logs.Part(path, 0, size, logTail)
	if err != nil {
		v.Problem = err.Error()
		return u.fragment(w, "log", v)
	}
	v.Text, v.More = string(data), more
	runs, err := u.cfg.Scheduler.Store().Runs(r.Context(), store.RunQuery{Task: def.Name, Limit: separatedRuns})
	if err != nil {
		return err
	}
	v.Parts = u.runParts(v.Text, size-int64(len(data)), stream, runs)
	return u.fragment(w, "log", v)
}

// separatedRuns is how many of a task's last runs its log marks the
// beginnings of.
const separatedRuns = 50

// logPart is a piece of a log file's end: the output that follows the
// beginning of a run, or precedes the first one shown.
type logPart struct {
	// Run is the run whose output begins here, nil for the text before
	// the first run shown.
	Run  *job.Run
	Text string
}

// runParts cuts the end of a log file, text, which begins at offset base
// of the file, where each of the runs began writing to it (job.LogSpan),
// when that is inside it: the log shows a separator naming each run. Runs
// of a cluster's worker wrote to the worker's file, not this one, and are
// left out.
func (u *UI) runParts(text string, base int64, stream string, runs []job.Run) []logPart {
	type cut struct {
		at  int64
		run job.Run
	}
	var cuts []cut
	for _, run := range runs {
		if run.Log == nil || run.Log.Node != "" {
			continue
		}
		from, to := run.Log.OutFrom, run.Log.OutTo
		if stream == "err" {
			from, to = run.Log.ErrFrom, run.Log.ErrTo
		}
		if from < base || from >= base+int64(len(text)) || to <= from {
			continue
		}
		cuts = append(cuts, cut{from - base, u.localRun(run)})
	}
	if len(cuts) == 0 {
		return []logPart{{Text: text}}
	}
	slices.SortFunc(cuts, func(a, b cut) int { return cmp.Compare(a.at, b.at) })
	parts := []logPart{{Text: text[:cuts[0].at]}}
	for i, c := range cuts {
		end := int64(len(text))
		if i+1 < len(cuts) {
			end = cuts[i+1].at
		}
		parts = append(parts, logPart{Run: &c.run, Text: text[c.at:end]})
	}
	return parts
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
	run, err := u.run(r, id)
	if err != nil || run.Task != name {
		return notFound("task %s has no run %d", name, id)
	}
	if r.Header.Get("HX-Request") == "" {
		// Opened on its own: the run's page shows it.
		http.Redirect(w, r, "/runs/"+strconv.FormatInt(id, 10)+"#log", http.StatusSeeOther)
		return nil
	}
	// The run's page asks for more of the end than the task's.
	limit, onPage := int64(logTail), r.URL.Query().Get("on") == "page"
	if onPage {
		limit = runLogTail
	}
	v := u.readRunLogs(&def, run, limit)
	v.OnPage = onPage
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
	// OnPage says the log is shown on the run's page, not the task's.
	OnPage bool
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
	// Tail is how much of the end of a long log is shown.
	Tail string
	// Parts, when set, is Text cut where runs began writing.
	Parts []logPart
}
