package web

import (
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/gnomon-sched/gnomon/auth"
	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/scheduler"
	"github.com/gnomon-sched/gnomon/store"
)

// The run history of every task, newest first: a page of historyRows runs
// chosen by filters that combine and live in the URL, paged both ways by
// the run that ends (older) or begins (newer) the page shown, never by an
// offset, so that a page costs the same a year back as today (see
// store.RunPage and its indexes).

// runStatuses are the statuses a run ends in, or runs in.
var runStatuses = []job.Status{job.Running, job.Success, job.Failure, job.Aborted}

// runsFilter is the filter of the runs page, as the URL gives it.
type runsFilter struct {
	Status, Task, Label, Bundle string
	// From and To are days (2006-01-02) in the server's zone, both
	// included.
	From, To string
	// Sort is "start" for the oldest first, "took" for the runs that
	// took longest first (ended runs only); "" is the newest first.
	Sort string
}

// values returns the filter as URL parameters.
func (f runsFilter) values() url.Values {
	return params("status", f.Status, "task", f.Task, "label", f.Label, "bundle", f.Bundle, "from", f.From, "to", f.To, "sort", f.Sort)
}

// runsData is a page of the runs page.
type runsData struct {
	Filter   runsFilter
	Statuses []job.Status
	Runs     []job.Run
	// Logs says which rows link to their log: the viewer may read the
	// logs of their tasks, and the task is a callable one.
	Logs map[int64]bool
	// Tasks is how many tasks the label and bundle filters chose, -1
	// when neither is given.
	Tasks int
	// Newer and Older link to the pages of newer and older runs than
	// this one's, "" at either end; First to the first page in the
	// order shown.
	Newer, Older, First string
	// Oldest says the runs are shown oldest first; Resort links to the
	// other order by start.
	Oldest bool
	Resort string
	// ByTook says the runs are shown the longest first; TookSort links
	// to that order, or back to the newest first from it.
	ByTook   bool
	TookSort string
	// Scope names the scope of the viewer's token, which the runs are
	// limited to; "" for every task.
	Scope string
}

// oldestKey is before every run's place: the first page of the runs
// oldest first reads the runs newer than it.
var oldestKey = store.RunKey{Start: time.Unix(0, math.MinInt64), ID: math.MinInt64}

func (u *UI) runs(r *http.Request) (string, any, error) {
	q := r.URL.Query()
	f := runsFilter{Status: q.Get("status"), Task: q.Get("task"), Label: q.Get("label"), Bundle: q.Get("bundle"), From: q.Get("from"), To: q.Get("to"), Sort: q.Get("sort")}
	if f.Sort != "" && f.Sort != "start" && f.Sort != "took" {
		return "", nil, badRequest("sort: %q is not an order of the runs: give start for the oldest first, took for the longest first, or leave it out for the newest first", f.Sort)
	}
	other, took := f, f
	other.Sort = map[string]string{"": "start", "start": "", "took": ""}[f.Sort]
	took.Sort = map[string]string{"": "took", "start": "took", "took": ""}[f.Sort]
	d := runsData{Filter: f, Statuses: runStatuses, Tasks: -1, First: "/runs?" + f.values().Encode(), Oldest: f.Sort == "start", Resort: "/runs?" + other.values().Encode(),
		ByTook: f.Sort == "took", TookSort: "/runs?" + took.values().Encode()}
	rq := store.RunPageQuery{Limit: historyRows + 1, ByTook: f.Sort == "took"}
	if f.Status != "" {
		s, err := job.ParseStatus(f.Status)
		if err != nil || !slices.Contains(runStatuses, s) {
			return "", nil, badRequest("status: %q is not a status of a run: give running, success, failure or aborted", f.Status)
		}
		rq.Statuses = []job.Status{s}
	}
	var err error
	if rq.From, err = u.day("from", f.From, 0); err != nil {
		return "", nil, err
	}
	if rq.To, err = u.day("to", f.To, 1); err != nil {
		return "", nil, err
	}
	if !rq.From.IsZero() && !rq.To.IsZero() && !rq.From.Before(rq.To) {
		return "", nil, badRequest("from %s is after to %s: give the first day, then the last", f.From, f.To)
	}
	v := u.cfg.Scheduler.View()
	// A token with a scope sees the runs of the tasks it covers, of
	// those the other filters choose.
	scope := scopeOf(r)
	d.Scope = scopeLine(scope)
	inScope := func(list []string) []string {
		if len(scope) == 0 {
			return list
		}
		return slices.DeleteFunc(list, func(n string) bool { return !covers(v, scope, n) })
	}
	switch {
	case f.Label != "" || f.Bundle != "":
		rq.Tasks = inScope(chosenTasks(v, f))
		d.Tasks = len(rq.Tasks)
		if f.Task != "" {
			if slices.Contains(rq.Tasks, f.Task) {
				rq.Tasks = []string{f.Task}
			} else {
				rq.Tasks = nil
			}
		}
	case f.Task != "":
		rq.Tasks = inScope([]string{f.Task})
	case len(scope) > 0:
		rq.Tasks = scopedTasks(v, scope)
	}
	if len(rq.Tasks) == 0 && (f.Label != "" || f.Bundle != "" || f.Task != "" || len(scope) > 0) {
		return "Runs", d, nil
	}
	if q.Get("older") != "" && q.Get("newer") != "" {
		return "", nil, badRequest("give older or newer, not both")
	}
	if rq.Older, err = u.runKey(r, "older"); err != nil {
		return "", nil, err
	}
	if rq.Newer, err = u.runKey(r, "newer"); err != nil {
		return "", nil, err
	}
	// Oldest first, the first page is the one newer than every run.
	first := d.Oldest && rq.Older == nil && rq.Newer == nil
	if first {
		rq.Newer = &oldestKey
	}
	st := u.cfg.Scheduler.Store()
	runs, err := st.RunPage(r.Context(), rq)
	if err != nil {
		return "", nil, err
	}
	runs, d.Older, d.Newer = historyPage(runs, rq.Newer != nil, rq.Older != nil, "/runs", f.values(), func(r job.Run) int64 { return r.ID })
	if first {
		d.Older = ""
	}
	if d.Oldest {
		// The page is read newest first, in the order of the keys that
		// page it both ways, and shown the other way up.
		runs = slices.Clone(runs)
		slices.Reverse(runs)
	}
	d.Logs = map[int64]bool{}
	id := auth.FromContext(r.Context())
	for _, run := range runs {
		if def, _, ok := v.Task(run.Task); ok && def.Type == job.Callable && id.CanTask(auth.ReadSensitive, run.Task, v.Groups(run.Task)) == nil {
			d.Logs[run.ID] = true
		}
		d.Runs = append(d.Runs, u.localRun(run))
	}
	return "Runs", d, nil
}

// chosenTasks returns the tasks the label and bundle filters choose: those
// with the label, and those of the bundle (the bundle and its children),
// both when both are given.
func chosenTasks(v *scheduler.View, f runsFilter) []string {
	var out []string
	v.Ascend("", func(it *scheduler.TaskItem) bool {
		def := it.Def
		if def.Type == job.Group ||
			f.Label != "" && def.Extras().Label != f.Label ||
			f.Bundle != "" && def.Parent != f.Bundle && def.Name != f.Bundle {
			return true
		}
		out = append(out, def.Name)
		return true
	})
	return out
}

// day reads a day of a filter (2006-01-02) as its start in the server's
// zone, or that of the day after with next 1: the zero time when empty.
func (u *UI) day(param, v string, next int) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	t, err := time.ParseInLocation(time.DateOnly, v, u.cfg.Location)
	if err != nil {
		return time.Time{}, badRequest("%s: %q is not a day: give it as 2006-01-02", param, v)
	}
	return t.AddDate(0, 0, next), nil
}

// runKey returns the place of the run a page parameter numbers (nil
// without it).
func (u *UI) runKey(r *http.Request, param string) (*store.RunKey, error) {
	v := r.URL.Query().Get(param)
	if v == "" {
		return nil, nil
	}
	id, err := strconv.ParseInt(v, 10, 64)
	if err != nil || id <= 0 {
		return nil, badRequest("%s: %q is not a run number", param, v)
	}
	run, err := u.run(r, id)
	if err != nil {
		return nil, err
	}
	k := store.Key(run)
	return &k, nil
}

// run returns the run numbered id.
func (u *UI) run(r *http.Request, id int64) (job.Run, error) {
	runs, err := u.cfg.Scheduler.Store().Runs(r.Context(), store.RunQuery{Before: id + 1, Limit: 1})
	if err != nil {
		return job.Run{}, err
	}
	if len(runs) == 0 || runs[0].ID != id {
		return job.Run{}, notFound("no run %d", id)
	}
	return runs[0], nil
}

func (u *UI) localRun(run job.Run) job.Run {
	run.Start, run.End, run.Scheduled = u.local(run.Start), u.local(run.End), u.local(run.Scheduled)
	return run
}
