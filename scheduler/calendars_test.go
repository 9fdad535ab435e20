package scheduler

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/engine"
	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/store"
)

// Named calendars are stored with the tasks that name them: a restart
// arms the tasks as before, and a calendar changed after the restart
// moves them.
func TestCalendarsSurviveRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	from := time.Date(2026, 12, 23, 12, 0, 0, 0, time.UTC)
	m := openSim(t, dir, from, nil)
	task := func(name, extra string) string {
		return "insert_task: " + name + "\ntype: callable\ncommand: true\nout_log_file: " + filepath.Join(dir, name+".out") +
			"\nerr_log_file: " + filepath.Join(dir, name+".err") + "\nstart_times: 09:00\n" + extra + "\n"
	}
	m.define(DefineFile{File: "c.def", Text: "insert_calendar: holidays\ndates: 2026-12-25\n\n" +
		"insert_calendar: month_end\nrule: last business day of month\nholidays: holidays\n\n" +
		task("daily", "exclude_calendar: holidays") + task("close", "run_calendar: month_end")})
	m.advance(time.Date(2026, 12, 26, 0, 0, 0, 0, time.UTC))
	m.stop()

	m = openSim(t, dir, from, nil)
	next := func(name string) time.Time {
		t.Helper()
		var st job.State
		if err := m.s.Read(context.Background(), func(e *engine.Engine) { _, st, _ = e.Task(name) }); err != nil {
			t.Fatal(err)
		}
		return st.NextFire.Time().UTC()
	}
	if got := next("close"); !got.Equal(time.Date(2026, 12, 31, 9, 0, 0, 0, time.UTC)) {
		t.Errorf("close next fires at %s after the restart", got)
	}
	fires, err := m.s.Store().Fires(context.Background(), store.FireQuery{Task: "daily"})
	if err != nil {
		t.Fatal(err)
	}
	var log []string
	for _, f := range fires {
		log = append(log, f.Scheduled.Format("01-02")+" "+string(f.Fate)+" "+f.Reason)
	}
	if got := strings.Join(log, "; "); got != "12-25 skipped 2026-12-25 is a day of calendar holidays (exclude_calendar); 12-24 ran " {
		t.Errorf("fires of daily: %s", got)
	}
	m.define(DefineFile{File: "u.def", Text: "update_calendar: holidays\ndates: 2026-12-25, 2026-12-31\n"})
	if got := next("close"); !got.Equal(time.Date(2026, 12, 30, 9, 0, 0, 0, time.UTC)) {
		t.Errorf("close next fires at %s once 31 December is a holiday", got)
	}
	m.stop()
	m = openSim(t, dir, from, nil)
	var cal *job.Calendar
	if err := m.s.Read(context.Background(), func(e *engine.Engine) { cal, _ = e.Calendar("holidays") }); err != nil {
		t.Fatal(err)
	}
	if cal == nil || strings.Join(cal.Dates, ",") != "2026-12-25,2026-12-31" {
		t.Errorf("holidays after the second restart: %+v", cal)
	}
	m.stop()
}
