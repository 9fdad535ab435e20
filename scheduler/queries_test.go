package scheduler

import (
	"context"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/gnomon-sched/gnomon/engine"
	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/periods"
)

// TestQueriesAnswerAsTheEngine defines calendars, tasks and a tree file,
// then checks that each query answers what the engine and the forest
// say, and that after each commit it sees that commit: a calendar
// changed, a task deleted.
func TestQueriesAnswerAsTheEngine(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx := context.Background()
	m := openSim(t, dir, t0, nil)
	defer m.stop()
	task := func(name, extra string) string {
		return "insert_task: " + name + "\ntype: callable\ncommand: true\nout_log_file: " + filepath.Join(dir, name+".out") +
			"\nerr_log_file: " + filepath.Join(dir, name+".err") + "\n" + extra + "\n"
	}
	m.define(DefineFile{File: "c.def", Text: "insert_calendar: holidays\ndates: 2026-12-25\n\n" +
		"insert_calendar: month_end\nrule: last business day of month\nholidays: holidays\n\n" +
		task("daily", "start_times: 09:00\nexclude_calendar: holidays") + task("close", "start_times: 09:00\nrun_calendar: month_end") +
		"insert_task: box\ntype: bundle\n\n" + task("c1", "parent: box") + task("after", "condition: su(c1)")})
	m.define(DefineFile{File: "site.json", Text: siteTrees(dir)})
	m.define(DefineFile{File: "g.def", Text: "insert_group: g\njobs: c1, site_hourly\n"})

	// engine reads what the queries should answer, on the loop.
	engine_ := func(fn func(*engine.Engine, *periods.Forest)) {
		t.Helper()
		if err := m.s.Read(ctx, func(e *engine.Engine) { fn(e, m.s.trees.f) }); err != nil {
			t.Fatal(err)
		}
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}

	t.Run("calendars", func(t *testing.T) {
		cals := m.s.View().Calendars()
		var names []string
		for _, c := range cals {
			names = append(names, c.Calendar.Name)
		}
		if !slices.Equal(names, []string{"holidays", "month_end"}) {
			t.Fatalf("calendars: %v", names)
		}
		h := cals[0]
		if !slices.Equal(h.UsedBy, []string{"daily"}) || !slices.Equal(h.HolidaysOf, []string{"month_end"}) || h.Days == nil {
			t.Errorf("holidays: used by %v, holidays of %v, days %v", h.UsedBy, h.HolidaysOf, h.Days)
		}
		one, ok := m.s.View().Calendar("month_end")
		if !ok || !reflect.DeepEqual(one, cals[1]) {
			t.Errorf("month_end alone: %+v, %v; in the list: %+v", one, ok, cals[1])
		}
		if _, ok := m.s.View().Calendar("nope"); ok {
			t.Errorf("a calendar never defined is in the View")
		}
		engine_(func(e *engine.Engine, _ *periods.Forest) {
			for _, ci := range cals {
				c, _ := e.Calendar(ci.Calendar.Name)
				if !c.Equal(ci.Calendar) || ci.Days != e.DaySet(c.Name) || !slices.Equal(ci.UsedBy, e.CalendarUsers(c.Name)) {
					t.Errorf("calendar %s: the View holds %+v", c.Name, ci)
				}
			}
		})
	})

	t.Run("definitions", func(t *testing.T) {
		d := m.s.View().Definitions()
		engine_(func(e *engine.Engine, _ *periods.Forest) {
			if !reflect.DeepEqual(d.Tasks, e.Definitions()) || !reflect.DeepEqual(d.Calendars, e.Calendars()) {
				t.Errorf("definitions differ from the engine's")
			}
			if got, want := d.Children("box"), e.Children("box"); !slices.Equal(got, want) {
				t.Errorf("children of box: %v, the engine says %v", got, want)
			}
			if !slices.Equal(d.CalendarNames(), e.CalendarNames()) {
				t.Errorf("calendar names: %v", d.CalendarNames())
			}
		})
		if d.Active("daily") || d.Children("") != nil {
			t.Errorf("daily active %v; children of no bundle %v", d.Active("daily"), d.Children(""))
		}
	})

	t.Run("reach", func(t *testing.T) {
		var got [][]string
		must(m.s.Read(ctx, func(e *engine.Engine) { got = engineFacts{e}.Reached(true, "box", "c1", "nope") }))
		engine_(func(e *engine.Engine, _ *periods.Forest) {
			for i, root := range []string{"box", "c1", "nope"} {
				if want := e.Reached([]string{root}, true); !slices.Equal(got[i], want) {
					t.Errorf("reached from %s: %v, the engine says %v", root, got[i], want)
				}
			}
		})
		r, err := m.s.Reach(ctx, "after", Reach{Upstream: true})
		must(err)
		up := r.Names
		r, err = m.s.Reach(ctx, "site_hourly", Reach{})
		must(err)
		shown := r.Names
		r, err = m.s.Reach(ctx, "site_hourly", Reach{Acted: true, Groups: true})
		must(err)
		acted := r.Names
		// A group may name a process, which the View does not hold.
		if g := r.Groups["site_hourly"]; !slices.Equal(g, []string{"g"}) || r.Groups == nil {
			t.Errorf("groups of site_hourly: %v", r.Groups)
		}
		var groups map[string][]string
		must(m.s.Read(ctx, func(e *engine.Engine) { groups = engineFacts{e}.Groups([]string{"c1", "site_hourly", "box"}) }))
		if !reflect.DeepEqual(groups, map[string][]string{"c1": {"g"}, "site_hourly": {"g"}, "box": nil}) {
			t.Errorf("groups: %v", groups)
		}
		data, err := m.s.DataReached(ctx, job.Table, "t", false)
		must(err)
		if len(data.Names) != 0 || data.Groups != nil {
			t.Errorf("a data event no configuration takes reaches %+v", data)
		}
		engine_(func(e *engine.Engine, f *periods.Forest) {
			if want := append(e.Reached([]string{"after"}, false), e.Upstream("after")...); !slices.Equal(up, want) || !slices.Contains(up, "c1") {
				t.Errorf("after with upstream: %v, the engine says %v", up, want)
			}
			if want := f.Shown("site_hourly"); !slices.Equal(shown, want) {
				t.Errorf("site_hourly shown: %v, the forest says %v", shown, want)
			}
			if want := f.Reached("site_hourly"); !slices.Equal(acted, want) {
				t.Errorf("site_hourly acted: %v, the forest says %v", acted, want)
			}
		})
	})

	t.Run("why and backfills", func(t *testing.T) {
		x, ok, err := m.s.Why(ctx, "daily", t0)
		must(err)
		if !ok || len(x.Reasons) == 0 || x.Schedule == nil {
			t.Errorf("why daily: %+v, %v", x, ok)
		}
		if _, ok, err := m.s.Why(ctx, "nope", t0); err != nil || ok {
			t.Errorf("why of no task: %v, %v", ok, err)
		}
		b, ok, err := m.s.Backfills(ctx, "daily")
		must(err)
		if !ok || b.Backfill != nil || len(b.Runs) != 0 {
			t.Errorf("backfills of daily: %+v, %v", b, ok)
		}
		if _, ok, err := m.s.Backfills(ctx, "nope"); err != nil || ok {
			t.Errorf("backfills of no task: %v, %v", ok, err)
		}
	})

	t.Run("trees", func(t *testing.T) {
		for name, want := range map[string]bool{"site_daily": true, "site_hourly": true, "daily": false} {
			if got, err := m.s.IsProcess(ctx, name); err != nil || got != want {
				t.Errorf("IsProcess(%s) = %v, %v", name, got, err)
			}
		}
		list, err := m.s.TreeList(ctx)
		must(err)
		one, ok, err := m.s.Tree(ctx, "site")
		must(err)
		if len(list) != 1 || !ok || !reflect.DeepEqual(list[0], one) {
			t.Errorf("trees %+v; site %+v, %v", list, one, ok)
		}
		text, _, err := m.s.TreeFile(ctx, "site.json")
		must(err)
		_, files, err := m.s.TreeFile(ctx, "other.json")
		must(err)
		if text == nil || !slices.Equal(files, []string{"site.json"}) {
			t.Errorf("tree file site.json %q; files when none matches %v", text, files)
		}
		nodes, err := m.s.Nodes(ctx, "site_daily", 0, 0)
		must(err)
		out, err := m.s.Outstanding(ctx)
		must(err)
		engine_(func(_ *engine.Engine, f *periods.Forest) {
			want, _ := f.Nodes("site_daily", 0, 0)
			if !reflect.DeepEqual(nodes, want) || !reflect.DeepEqual(out, f.Outstanding()) {
				t.Errorf("nodes %v, outstanding %v", nodes, out)
			}
		})
		if _, err := m.s.Nodes(ctx, "nope", 0, 0); err == nil {
			t.Errorf("nodes of no process: no error")
		}
		if len(nodes) > 0 {
			d, err := m.s.Node(ctx, "site_daily", nodes[0].Timeperiod.String())
			if err != nil || d.Process != "site_daily" {
				t.Errorf("node %s: %+v, %v", nodes[0].Timeperiod, d, err)
			}
		}
		facts, err := m.s.CheckTrees(ctx, periods.Define{File: "site.json", Text: siteTrees(dir)})
		must(err)
		if facts.File == nil || facts.Processes["site_hourly"] != "site" || facts.Trees["site"].File != "site.json" {
			t.Errorf("tree facts: %+v", facts)
		}
		if _, err := m.s.CheckTrees(ctx, periods.Define{File: "bad.json", Text: `{"trees": [{"name": "x"}]}`}); err == nil {
			t.Errorf("a tree without levels passed the check")
		}
	})

	// Each commit is seen by the next query and the View published with
	// it: a calendar changed (and the days of the calendar whose
	// holidays it is compiled again), a calendar no task names, a task
	// deleted.
	before, _ := m.s.View().Calendar("month_end")
	m.define(DefineFile{File: "u.def", Text: "update_calendar: holidays\ndates: 2026-12-25, 2026-12-31\n"})
	h, _ := m.s.View().Calendar("holidays")
	if got := strings.Join(h.Calendar.Dates, ","); got != "2026-12-25,2026-12-31" {
		t.Errorf("holidays after the update: %s", got)
	}
	if after, _ := m.s.View().Calendar("month_end"); after.Days == before.Days {
		t.Errorf("the View holds month_end's days as compiled before its holidays changed")
	}
	m.define(DefineFile{File: "n.def", Text: "insert_calendar: alone\ndates: 2027-01-04\n"})
	if c, ok := m.s.View().Calendar("alone"); !ok || len(c.UsedBy) != 0 || c.Days == nil {
		t.Errorf("a calendar no task names, after its commit: %+v, %v", c, ok)
	}
	m.define(DefineFile{File: "d.def", Text: "delete_task: daily\n"})
	d := m.s.View().Definitions()
	h, _ = m.s.View().Calendar("holidays")
	if _, ok := d.Tasks["daily"]; ok || len(h.UsedBy) != 0 {
		t.Errorf("after daily's deletion: defined %v, holidays used by %v", ok, h.UsedBy)
	}
	if _, ok, _ := m.s.Why(ctx, "daily", t0); ok {
		t.Errorf("why answers for a deleted task")
	}
	if _, _, ok := m.s.View().Task("daily"); ok {
		t.Errorf("the View still holds a deleted task")
	}
}

// TestCalendarsAndDefinitionsDoNotWaitForTheLoop holds the loop in a read
// and reads the calendars and the definitions meanwhile: the View answers
// them, so the reads end while the loop is still held.
func TestCalendarsAndDefinitionsDoNotWaitForTheLoop(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	m := openSim(t, dir, t0, nil)
	defer m.stop()
	m.define(DefineFile{File: "c.def", Text: "insert_calendar: holidays\ndates: 2026-12-25\n\n" +
		"insert_task: daily\ntype: callable\ncommand: true\nout_log_file: /dev/null\nerr_log_file: /dev/null\nstart_times: 09:00\nexclude_calendar: holidays\n"})
	held, release := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- m.s.Read(context.Background(), func(*engine.Engine) {
			close(held)
			<-release
		})
	}()
	<-held
	c, ok := m.s.View().Calendar("holidays")
	d := m.s.View().Definitions()
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !ok || !slices.Equal(c.UsedBy, []string{"daily"}) || d.Tasks["daily"] == nil || d.Calendars["holidays"] == nil {
		t.Errorf("read while the loop is held: %+v, %v; definitions %v", c, ok, d)
	}
}
