package web

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/calendar"
	"github.com/gnomon-sched/gnomon/engine"
	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/scheduler"
)

// startScheduler returns a started scheduler on a fresh SQLite store with
// the definitions applied, and its UI.
func startScheduler(t *testing.T, text string) (*scheduler.Scheduler, *UI) {
	t.Helper()
	return withHistory(t, text, nil)
}

// TestLists checks the overview and the pages of the task list against
// what they showed when they were read by sorting every task, for tasks
// of every kind and status.
func TestLists(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var def strings.Builder
	const n = 250
	for k := range n {
		name := fmt.Sprintf("t%03d", k)
		switch {
		case k%10 == 0:
			fmt.Fprintf(&def, "insert_task: %s\ntype: bundle\n\n", name)
		case k%10 < 3:
			fmt.Fprintf(&def, "insert_task: %s\ntype: callable\nfunction: log\nparent: t%03d\n\n", name, k-k%10)
		default:
			fmt.Fprintf(&def, "insert_task: %s\ntype: callable\nfunction: log\ncron: %d %d * * *\n", name, k%60, k%24)
			if k%7 == 0 {
				fmt.Fprintf(&def, "label: seven\n")
			}
			def.WriteByte('\n')
		}
	}
	def.WriteString("insert_group: g_some\njobs: t003, t013, t113\n\n")
	s, u := startScheduler(t, def.String())
	for k := range n {
		name := fmt.Sprintf("t%03d", k)
		var a job.Action
		switch k % 5 {
		case 1:
			a = job.ActRed
		case 2:
			a = job.ActGreen
		case 3:
			a = job.ActFreeze
		default:
			continue
		}
		if err := s.Submit(ctx, engine.Act{Task: name, Action: a}); err != nil {
			t.Fatalf("%s %s: %v", a, name, err)
		}
	}

	t.Run("overview", func(t *testing.T) {
		t.Parallel()
		var got, want overviewData
		err := s.Read(ctx, func(e *engine.Engine) {
			got = u.readOverview(s.View())
			want = overviewBySorting(u, e)
		})
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("overview\n got %+v\nwant %+v", got, want)
		}
		if len(got.Failed) == 0 || len(got.Next) != overviewRows || len(got.Counts) < 4 {
			t.Errorf("the overview shows too little to check: %+v", got)
		}
	})
	for _, f := range []taskFilter{
		{},
		{Status: "failure"},
		{Status: "frozen", Type: "callable"},
		{Q: "T1"},
		{Label: "seven"},
		{Bundle: "t020"},
		{Group: "g_some"},
		{Type: "bundle", After: "t100"},
		{Q: "nothing"},
	} {
		t.Run(fmt.Sprintf("%+v", f), func(t *testing.T) {
			t.Parallel()
			var status job.Status
			if f.Status != "" {
				status, _ = job.ParseStatus(f.Status)
			}
			for pages := 0; ; pages++ {
				var got, want tasksData
				err := s.Read(ctx, func(e *engine.Engine) {
					got = u.listTasks(s.View(), f, status, nil)
					want = tasksBySorting(u, e, f, status)
				})
				if err != nil {
					t.Fatal(err)
				}
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("page after %q\n got %+v\nwant %+v", f.After, got, want)
				}
				if got.Next == "" {
					if f == (taskFilter{}) && pages != 2 {
						t.Errorf("%d pages of every task, want 3", pages+1)
					}
					return
				}
				f.After = got.Next
			}
		})
	}
}

// overviewBySorting is the overview read by collecting every task and
// sorting them.
func overviewBySorting(u *UI, e *engine.Engine) overviewData {
	var d overviewData
	dayAgo := u.cfg.Scheduler.Now().Add(-24 * time.Hour)
	counts := map[job.Status]int{}
	for _, name := range e.Names() {
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
			d.Failed = append(d.Failed, failedRow{Name: name, At: st.End.Time(), Status: st.Status, Now: st.Status})
		}
		if nf := st.NextFire.Time(); !nf.IsZero() {
			d.Next = append(d.Next, calendar.Planned{At: u.local(nf), Task: name})
		}
	}
	for s, n := range counts {
		d.Counts = append(d.Counts, statusCount{s, n})
	}
	slices.SortFunc(d.Counts, func(a, b statusCount) int { return cmp.Compare(a.Status, b.Status) })
	slices.SortStableFunc(d.Running, func(a, b taskRow) int { return a.Start.Compare(b.Start) })
	slices.SortStableFunc(d.Failed, func(a, b failedRow) int { return b.At.Compare(a.At) })
	slices.SortStableFunc(d.Next, func(a, b calendar.Planned) int { return a.At.Compare(b.At) })
	d.RunningTotal = counts[job.Running]
	cut := func(n int) int { return min(n, overviewRows) }
	d.Running, d.Failed, d.Next = d.Running[:cut(len(d.Running))], d.Failed[:cut(len(d.Failed))], d.Next[:cut(len(d.Next))]
	d.Problems = e.Problems()
	return d
}

// tasksBySorting is a page of the task list read in name order.
func tasksBySorting(u *UI, e *engine.Engine, f taskFilter, status job.Status) tasksData {
	d := tasksData{Filter: f, Types: []job.Type{job.Callable, job.Bundle, job.Configuration}}
	for s := job.Idle; s <= job.Frozen; s++ {
		if s != job.Staged && s != job.Queued {
			d.Statuses = append(d.Statuses, s.String())
		}
	}
	q := strings.ToLower(f.Q)
	for _, name := range e.Names() {
		def, st, _ := e.Task(name)
		if def.Type == job.Group {
			d.Groups = append(d.Groups, name)
			continue
		}
		switch {
		case q != "" && !strings.Contains(strings.ToLower(name), q),
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
		row := u.row(def, st)
		row.Bulk = bulkOf(&def, &st)
		d.Rows = append(d.Rows, row)
	}
	if len(d.Rows) > tasksPage {
		d.Rows = d.Rows[:tasksPage]
		d.Next = d.Rows[tasksPage-1].Name
	}
	return d
}
