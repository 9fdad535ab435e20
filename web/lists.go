package web

import (
	"slices"
	"strings"
	"time"

	"github.com/gnomon-sched/gnomon/calendar"
	"github.com/gnomon-sched/gnomon/engine"
	"github.com/gnomon-sched/gnomon/job"
)

// The reads of the task list visit every task on the scheduler's loop,
// which waits for them: they keep to a single pass over the definitions,
// look a task's state up only when they need it, and keep the few rows a
// page shows as they go rather than collecting every match and sorting it;
// the overview reads the summary the engine keeps (see BenchmarkPage and
// `gnomon-bench ui`).

// best keeps the n least of the values offered to it, by cmp, in order.
type best[T any] struct {
	n     int
	cmp   func(a, b T) int
	items []T
}

func newBest[T any](n int, cmp func(a, b T) int) *best[T] {
	return &best[T]{n: n, cmp: cmp, items: make([]T, 0, n)}
}

func (b *best[T]) offer(v T) {
	if len(b.items) == b.n && b.cmp(v, b.items[b.n-1]) >= 0 {
		return
	}
	i, _ := slices.BinarySearchFunc(b.items, v, b.cmp)
	if len(b.items) < b.n {
		b.items = append(b.items, v)
	}
	copy(b.items[i+1:], b.items[i:len(b.items)-1])
	b.items[i] = v
}

// readOverview reads what the overview shows (but the alerts, which the
// store keeps), from the summary the engine keeps as tasks change: its
// cost is that of the rows it shows, however many tasks there are.
func (u *UI) readOverview(e *engine.Engine) overviewData {
	sum := e.Summarize(overviewRows, u.cfg.Scheduler.Now().Add(-24*time.Hour))
	d := overviewData{Total: sum.Total()}
	for s, n := range sum.Counts {
		if n > 0 {
			d.Counts = append(d.Counts, statusCount{job.Status(s), n})
		}
	}
	d.Running = u.rows(e, sum.Running)
	for _, f := range sum.Failed {
		_, st, _ := e.Task(f.Task)
		d.Failed = append(d.Failed, failedRow{Name: f.Task, At: f.At, Status: f.Status, Now: st.Status})
	}
	for _, name := range sum.Next {
		_, st, _ := e.Task(name)
		d.Next = append(d.Next, calendar.Planned{At: u.local(st.NextFire.Time()), Task: name, Excluded: calendar.Excluded(e.Schedule(name), st.NextFire.Time())})
	}
	d.Problems = slices.Clone(e.Problems())
	return d
}

func (u *UI) rows(e *engine.Engine, names []string) []taskRow {
	var out []taskRow
	for _, name := range names {
		def, st, _ := e.Task(name)
		out = append(out, u.row(def, st))
	}
	return out
}

// readTasks reads a page of the task list: the tasks that match the
// filter, from after its After, in name order. (The pass is a method of
// its own rather than this closure: the compiler inlines the lookups of
// the tasks' state into it, which halves its time when the list is
// filtered by status.)
func (u *UI) readTasks(f taskFilter, status job.Status) func(*engine.Engine) tasksData {
	return func(e *engine.Engine) tasksData { return u.listTasks(e, f, status) }
}

func (u *UI) listTasks(e *engine.Engine, f taskFilter, status job.Status) tasksData {
	d := tasksData{Filter: f, Types: []job.Type{job.Callable, job.Bundle, job.Configuration}}
	for s := job.Idle; s <= job.Frozen; s++ {
		if s != job.Staged && s != job.Queued {
			d.Statuses = append(d.Statuses, s.String())
		}
	}
	q := strings.ToLower(f.Q)
	page := newBest(tasksPage+1, strings.Compare)
	for name, def := range e.Definitions() {
		if def.Type == job.Group {
			d.Groups = append(d.Groups, name)
			continue
		}
		switch {
		case q != "" && !strings.Contains(strings.ToLower(name), q),
			f.Type != "" && string(def.Type) != f.Type,
			f.Label != "" && def.Extras().Label != f.Label,
			f.Bundle != "" && def.Parent != f.Bundle,
			f.Group != "" && !slices.Contains(e.Groups(name), f.Group):
			continue
		}
		if f.Status != "" {
			if _, st, _ := e.Task(name); st.Status != status {
				continue
			}
		}
		d.Matched++
		if name > f.After {
			page.offer(name)
		}
	}
	slices.Sort(d.Groups)
	for _, name := range page.items {
		def, st, _ := e.Task(name)
		d.Rows = append(d.Rows, u.row(def, st))
	}
	if len(d.Rows) > tasksPage {
		d.Rows = d.Rows[:tasksPage]
		d.Next = d.Rows[tasksPage-1].Name
	}
	return d
}
