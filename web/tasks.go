package web

import (
	"cmp"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/gnomon-sched/gnomon/calendar"
	"github.com/gnomon-sched/gnomon/cond"
	"github.com/gnomon-sched/gnomon/defs"
	"github.com/gnomon-sched/gnomon/engine"
	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/store"
)

// taskRow is a task in a list.
type taskRow struct {
	Name     string
	Type     job.Type
	Status   job.Status
	Start    time.Time
	End      time.Time
	NextFire time.Time
	Label    string
	Parent   string
}

func (u *UI) row(def job.Task, st job.State) taskRow {
	return taskRow{Name: def.Name, Type: def.Type, Status: st.Status, Start: u.local(st.Start.Time()), End: u.local(st.End.Time()),
		NextFire: u.local(st.NextFire.Time()), Label: def.Extras().Label, Parent: def.Parent}
}

func (u *UI) local(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return t.In(u.cfg.Location)
}

// overviewData is the front page: the scheduler at a glance.
type overviewData struct {
	Total     int
	Counts    []statusCount
	Running   []taskRow
	Failed    []taskRow
	Next      []calendar.Planned
	Undeliver []job.Alert
	Problems  []string
}

type statusCount struct {
	Status job.Status
	N      int
}

// overviewRows bounds each list of the overview.
const overviewRows = 20

func (u *UI) overview(r *http.Request) (string, any, error) {
	var d overviewData
	now := u.cfg.Scheduler.Now()
	dayAgo := now.Add(-24 * time.Hour)
	counts := map[job.Status]int{}
	err := u.cfg.Scheduler.Read(r.Context(), func(e *engine.Engine) {
		for name := range e.Definitions() {
			def, st, _ := e.Task(name)
			if def.Type == job.Group {
				continue
			}
			d.Total++
			counts[st.Status]++
			switch {
			case st.Status == job.Running:
				d.Running = append(d.Running, u.row(def, st))
			case (st.Status == job.Failure || st.Status == job.Aborted) && !st.End.Time().Before(dayAgo):
				d.Failed = append(d.Failed, u.row(def, st))
			}
			if nf := st.NextFire.Time(); !nf.IsZero() {
				d.Next = append(d.Next, calendar.Planned{At: nf, Task: name})
			}
		}
		d.Problems = e.Problems()
	})
	if err != nil {
		return "", nil, err
	}
	for s, n := range counts {
		d.Counts = append(d.Counts, statusCount{s, n})
	}
	slices.SortFunc(d.Counts, func(a, b statusCount) int { return cmp.Compare(a.Status, b.Status) })
	slices.SortFunc(d.Running, func(a, b taskRow) int { return a.Start.Compare(b.Start) })
	slices.SortFunc(d.Failed, func(a, b taskRow) int { return b.End.Compare(a.End) })
	slices.SortFunc(d.Next, func(a, b calendar.Planned) int {
		return cmp.Or(a.At.Compare(b.At), strings.Compare(a.Task, b.Task))
	})
	d.Running, d.Failed, d.Next = first(d.Running, overviewRows), first(d.Failed, overviewRows), first(d.Next, overviewRows)
	for i := range d.Next {
		d.Next[i].At = u.local(d.Next[i].At)
	}
	alerts, err := u.cfg.Scheduler.Store().Alerts(r.Context(), store.AlertQuery{Limit: 200})
	if err != nil {
		return "", nil, err
	}
	for _, a := range alerts {
		if a.State != job.AlertSent && len(d.Undeliver) < overviewRows {
			a.Created = u.local(a.Created)
			d.Undeliver = append(d.Undeliver, a)
		}
	}
	return "Overview", d, nil
}

func first[T any](s []T, n int) []T {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// tasksData is a page of the task list and the filter that chose it.
type tasksData struct {
	Filter  taskFilter
	Rows    []taskRow
	Matched int
	// Next is the name the next page starts after, "" on the last page.
	Next     string
	Groups   []string
	Statuses []string
	Types    []job.Type
}

type taskFilter struct {
	Q, Status, Type, Group, Label, Bundle, After string
}

// tasksPage is the length of a page of the task list.
const tasksPage = 100

func (u *UI) tasks(r *http.Request) (string, any, error) {
	q := r.URL.Query()
	f := taskFilter{Q: q.Get("q"), Status: q.Get("status"), Type: q.Get("type"), Group: q.Get("group"), Label: q.Get("label"), Bundle: q.Get("bundle"), After: q.Get("after")}
	d := tasksData{Filter: f, Types: []job.Type{job.Callable, job.Bundle, job.Configuration}}
	for s := job.Idle; s <= job.Frozen; s++ {
		if s != job.Staged && s != job.Queued {
			d.Statuses = append(d.Statuses, s.String())
		}
	}
	var status job.Status
	if f.Status != "" {
		var err error
		if status, err = job.ParseStatus(f.Status); err != nil {
			return "", nil, badRequest("status: %v", err)
		}
	}
	q2 := strings.ToLower(f.Q)
	err := u.cfg.Scheduler.Read(r.Context(), func(e *engine.Engine) {
		for _, name := range e.Names() {
			def, st, _ := e.Task(name)
			if def.Type == job.Group {
				d.Groups = append(d.Groups, name)
				continue
			}
			switch {
			case q2 != "" && !strings.Contains(strings.ToLower(name), q2),
				f.Status != "" && st.Status != status,
				f.Type != "" && string(def.Type) != f.Type,
				f.Label != "" && def.Extras().Label != f.Label,
				f.Bundle != "" && def.Parent != f.Bundle,
				f.Group != "" && !slices.Contains(e.Groups(name), f.Group):
				continue
			}
			d.Matched++
			if name <= f.After || len(d.Rows) > tasksPage {
				continue
			}
			d.Rows = append(d.Rows, u.row(def, st))
		}
	})
	if err != nil {
		return "", nil, err
	}
	if len(d.Rows) > tasksPage {
		d.Rows = d.Rows[:tasksPage]
		d.Next = d.Rows[tasksPage-1].Name
	}
	return "Tasks", d, nil
}

// taskData is everything the task page shows.
type taskData struct {
	Row        taskRow
	Def        job.Task
	State      job.State
	Definition string
	Children   []taskRow
	Groups     []string
	// Waiting lists, for a task whose condition holds it, each task the
	// condition names and its status.
	Condition []condTerm
	Pending   []job.Pending
	Stored    []engine.Stored
	Runs      []job.Run
	Fires     []job.Fire
	Forecast  []calendar.Planned
	// Why is the engine's chain of reasons the task is not running.
	Why []engine.Reason
}

type condTerm struct {
	Task   string
	Status job.Status
	Known  bool
}

func (u *UI) task(r *http.Request) (string, any, error) {
	name := r.PathValue("name")
	var (
		d     taskData
		found bool
		sched calendar.Schedule
		text  strings.Builder
	)
	err := u.cfg.Scheduler.Read(r.Context(), func(e *engine.Engine) {
		var st job.State
		d.Def, st, found = e.Task(name)
		if !found {
			return
		}
		d.State, d.Row = st, u.row(d.Def, st)
		list := []*job.Task{d.Def.Clone()}
		for _, c := range e.Children(name) {
			cd, cs, _ := e.Task(c)
			d.Children = append(d.Children, u.row(cd, cs))
			list = append(list, cd.Clone())
		}
		defs.Format(&text, list)
		d.Groups = e.Groups(name)
		d.Stored = e.StoredEvents(name)
		d.Pending = st.Pending
		if x, err := cond.Parse(d.Def.Condition); err == nil && d.Def.Condition != "" {
			for _, n := range x.Names() {
				_, cs, ok := e.Task(n)
				d.Condition = append(d.Condition, condTerm{Task: n, Status: cs.Status, Known: ok})
			}
		}
		sched = e.Schedule(name)
		d.Why, _ = e.Why(name, u.cfg.Scheduler.Now())
	})
	if err != nil {
		return "", nil, err
	}
	if !found {
		return "", nil, notFound("task %s not found", name)
	}
	d.Definition = text.String()
	now := u.cfg.Scheduler.Now()
	if sched != nil {
		d.Forecast, _ = calendar.Forecast(map[string]calendar.Schedule{name: sched}, now, now.AddDate(0, 0, 31), 10)
		for i := range d.Forecast {
			d.Forecast[i].At = u.local(d.Forecast[i].At)
		}
	}
	st := u.cfg.Scheduler.Store()
	if d.Runs, err = st.Runs(r.Context(), store.RunQuery{Task: name, Limit: 20}); err != nil {
		return "", nil, err
	}
	for i := range d.Runs {
		d.Runs[i].Start, d.Runs[i].End, d.Runs[i].Scheduled = u.local(d.Runs[i].Start), u.local(d.Runs[i].End), u.local(d.Runs[i].Scheduled)
	}
	if d.Fires, err = st.Fires(r.Context(), store.FireQuery{Task: name, Limit: 20}); err != nil {
		return "", nil, err
	}
	for i := range d.Fires {
		d.Fires[i].Scheduled, d.Fires[i].At = u.local(d.Fires[i].Scheduled), u.local(d.Fires[i].At)
	}
	return name, d, nil
}
