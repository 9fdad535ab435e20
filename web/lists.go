package web

import (
	"slices"
	"strings"

	"github.com/gnomon-sched/gnomon/auth"
	"github.com/gnomon-sched/gnomon/calendar"
	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/scheduler"
)

// The reads of the overview and the task list read a View of the
// scheduler, never its loop: the overview the summary published with it,
// the task list one pass over the tasks in name order that keeps the rows
// a page shows as it goes (see BenchmarkPage and `gnomon-bench ui`).

// readOverview reads what the overview shows (but the alerts, which the
// store keeps), from the summary the scheduler publishes with each View:
// its cost is that of the rows it shows, however many tasks there are.
func (u *UI) readOverview(v *scheduler.View) overviewData {
	sum := v.Summary()
	d := overviewData{Total: sum.Total(), RunningTotal: sum.Counts[job.Running]}
	for s, n := range sum.Counts {
		if n > 0 {
			d.Counts = append(d.Counts, statusCount{job.Status(s), n})
		}
	}
	d.Running = u.rows(v, sum.Running[:min(overviewRows, len(sum.Running))])
	for _, f := range sum.Failed[:min(overviewRows, len(sum.Failed))] {
		_, st, _ := v.Task(f.Task)
		d.Failed = append(d.Failed, failedRow{Name: f.Task, At: f.At, Status: f.Status, Now: st.Status})
	}
	for _, name := range sum.Next[:min(overviewRows, len(sum.Next))] {
		_, st, _ := v.Task(name)
		d.Next = append(d.Next, calendar.Planned{At: u.local(st.NextFire.Time()), Task: name, Excluded: calendar.Excluded(v.Schedule(name), st.NextFire.Time())})
	}
	d.Problems = slices.Clone(v.Problems())
	return d
}

func (u *UI) rows(v *scheduler.View, names []string) []taskRow {
	var out []taskRow
	for _, name := range names {
		def, st, _ := v.Task(name)
		out = append(out, u.row(def, st))
	}
	return out
}

// listTasks makes one pass over the tasks, in name order: it counts the
// matches and keeps the first page of them after f.After, of the tasks
// the scope covers (every task for none).
func (u *UI) listTasks(v *scheduler.View, f taskFilter, status job.Status, scope auth.Scope) tasksData {
	d := tasksData{Filter: f, Types: []job.Type{job.Callable, job.Bundle, job.Configuration}, Scope: scopeLine(scope)}
	for s := job.Idle; s <= job.Frozen; s++ {
		if s != job.Staged && s != job.Queued {
			d.Statuses = append(d.Statuses, s.String())
		}
	}
	q := strings.ToLower(f.Q)
	v.Ascend("", func(it *scheduler.TaskItem) bool {
		def, name := it.Def, it.Def.Name
		if def.Type == job.Group {
			if len(scope) == 0 || scope.Covers(name, it.Groups) || slices.Contains(scope, "group:"+name) {
				d.Groups = append(d.Groups, name)
			}
			return true
		}
		switch {
		case len(scope) > 0 && !scope.Covers(name, it.Groups):
			return true
		case q != "" && !strings.Contains(strings.ToLower(name), q),
			f.Type != "" && string(def.Type) != f.Type,
			f.Label != "" && def.Extras().Label != f.Label,
			f.Bundle != "" && def.Parent != f.Bundle,
			f.Group != "" && !slices.Contains(it.Groups, f.Group),
			f.Status != "" && it.State.Status != status:
			return true
		}
		d.Matched++
		if name > f.After && len(d.Rows) <= tasksPage {
			row := u.row(*def, it.State)
			row.Bulk = bulkOf(def, &it.State)
			d.Rows = append(d.Rows, row)
		}
		return true
	})
	if len(d.Rows) > tasksPage {
		d.Rows = d.Rows[:tasksPage]
		d.Next = d.Rows[tasksPage-1].Name
	}
	return d
}
