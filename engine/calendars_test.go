package engine

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/job"
)

const holidays = "insert_calendar: holidays\ndates: 2026-12-25, 2027-01-01\n\n"

const monthEnd = "insert_calendar: month_end\nrule: last business day of month\nholidays: holidays\n\n"

// fireLog renders the fires of a sim as "date time task fate [reason]".
func fireLog(s *sim) string {
	var b strings.Builder
	for _, f := range s.fires {
		b.WriteString(f.Scheduled.UTC().Format("01-02 15:04") + " " + f.Task + " " + string(f.Fate))
		if f.Fate != job.FateRan {
			b.WriteString(": " + f.Reason)
		}
		b.WriteString("\n")
	}
	return b.String()
}

func TestExcludeCalendarSkips(t *testing.T) {
	t.Parallel()
	s := newSim(t, "2026-12-23T12:00:00Z", holidays+callable("daily", "start_times: 09:00\nexclude_calendar: holidays"))
	s.advance("2026-12-27T00:00:00Z")
	want := "12-24 09:00 daily ran\n" +
		"12-25 09:00 daily skipped: 2026-12-25 is a day of calendar holidays (exclude_calendar)\n" +
		"12-26 09:00 daily ran\n"
	if got := fireLog(s); got != want {
		t.Errorf("fires:\n%s\nwant\n%s", got, want)
	}
	if n := len(s.runs); n != 2 {
		t.Errorf("%d runs, want 2", n)
	}
}

func TestRunCalendarYieldsItsDaysOnly(t *testing.T) {
	t.Parallel()
	s := newSim(t, "2026-11-01T00:00:00Z", holidays+monthEnd+callable("close", "start_times: 18:00\nrun_calendar: month_end"))
	s.advance("2027-02-01T00:00:00Z")
	// 31 December 2026 is a Thursday; 29 January 2027 a Friday. Other
	// days are not occurrences at all: nothing is recorded for them.
	want := "11-30 18:00 close ran\n12-31 18:00 close ran\n01-29 18:00 close ran\n"
	if got := fireLog(s); got != want {
		t.Errorf("fires:\n%s\nwant\n%s", got, want)
	}
}

// A calendar that changes moves the next occurrence of the tasks that name
// it, through the holidays of another calendar too.
func TestCalendarChangeReplans(t *testing.T) {
	t.Parallel()
	s := newSim(t, "2026-12-01T00:00:00Z", holidays+monthEnd+callable("close", "start_times: 18:00\nrun_calendar: month_end")+
		callable("other", "start_times: 07:00"))
	next := func() string {
		_, st, _ := s.e.Task("close")
		return st.NextFire.Time().UTC().Format(time.RFC3339)
	}
	if got := next(); got != "2026-12-31T18:00:00Z" {
		t.Fatalf("next fire %s", got)
	}
	out := s.apply(file{"u.def", "update_calendar: holidays\ndates: 2026-12-31\n"})
	if got := next(); got != "2026-12-30T18:00:00Z" {
		t.Errorf("after 31 December became a holiday, next fire %s", got)
	}
	if !slices.Equal(out.Calendars, []string{"holidays"}) || !slices.Contains(out.Tasks, "close") || slices.Contains(out.Tasks, "other") {
		t.Errorf("output: calendars %v, tasks %v", out.Calendars, out.Tasks)
	}
	if len(out.Defined) != 0 {
		t.Errorf("no definition of a task changed, but %v", out.Defined)
	}
	// Its own rule changes.
	s.apply(file{"u.def", "update_calendar: month_end\nrule: 2nd business day of month\n"})
	if got := next(); got != "2026-12-02T18:00:00Z" {
		t.Errorf("after the rule changed, next fire %s", got)
	}
	// A check changes nothing.
	if _, err := plan(s.e, file{"u.def", "update_calendar: month_end\nrule: daily\n"}); err != nil {
		t.Fatal(err)
	}
	if got := next(); got != "2026-12-02T18:00:00Z" {
		t.Errorf("a check moved the next fire to %s", got)
	}
	// A task moved to another calendar.
	s.apply(file{"u.def", "insert_calendar: tuesdays\nrule: every tuesday\nupdate_task: close\nrun_calendar: tuesdays\n"})
	if got := next(); got != "2026-12-01T18:00:00Z" {
		t.Errorf("on tuesdays, next fire %s", got)
	}
	if users := s.e.CalendarUsers("tuesdays"); !slices.Equal(users, []string{"close"}) || len(s.e.CalendarUsers("month_end")) != 0 {
		t.Errorf("users of tuesdays %v, of month_end %v", users, s.e.CalendarUsers("month_end"))
	}
	// A calendar still named cannot be deleted; once unnamed it can.
	_, err := apply(s.e, file{"d.def", "delete_calendar: tuesdays\n"}, s.now)
	if err == nil || !strings.Contains(err.Error(), "calendar tuesdays is named by task(s) close") {
		t.Errorf("delete of a calendar named: %v", err)
	}
	out = s.apply(file{"d.def", "update_task: close\nrun_calendar:\ndelete_calendar: tuesdays\n"})
	if !slices.Equal(out.DeletedCalendars, []string{"tuesdays"}) {
		t.Errorf("deleted %v", out.DeletedCalendars)
	}
	if _, ok := s.e.Calendar("tuesdays"); ok || s.e.DaySet("tuesdays") != nil {
		t.Error("tuesdays still there")
	}
}

// An occurrence on an excluded day while the scheduler was down is
// recorded skipped for the calendar, not missed.
func TestExcludedWhileDown(t *testing.T) {
	t.Parallel()
	h := setup(t, 10, holidays+callable("daily", "start_times: 09:00\nexclude_calendar: holidays"))
	h.now = time.Date(2026, 12, 24, 12, 0, 0, 0, time.UTC)
	h.apply(Tick{})
	h.now = time.Date(2026, 12, 26, 12, 0, 0, 0, time.UTC)
	out := h.apply(Tick{})
	var got []string
	for _, f := range out.Fires {
		got = append(got, f.Scheduled.Format("01-02")+" "+string(f.Fate))
	}
	if strings.Join(got, ", ") != "12-25 skipped, 12-26 missed" {
		t.Errorf("fires after the stop: %v", got)
	}
}

func TestCalendarRestore(t *testing.T) {
	t.Parallel()
	s := newSim(t, "2026-12-01T00:00:00Z", holidays+monthEnd+callable("close", "start_times: 18:00\nrun_calendar: month_end\nexclude_calendar: holidays"))
	var recs []job.Record
	for _, n := range s.e.Names() {
		def, st, _ := s.e.Task(n)
		recs = append(recs, job.Record{Def: &def, State: st})
	}
	var cals []job.Calendar
	for _, n := range s.e.CalendarNames() {
		c, _ := s.e.Calendar(n)
		cals = append(cals, *c)
	}
	slices.Reverse(cals) // the order of a store is no order
	e := New(Config{})
	e.RestoreCalendars(cals)
	if err := restore(e, recs, nil, 0, nil); err != nil {
		t.Fatal(err)
	}
	if p := e.Problems(); len(p) != 0 {
		t.Fatalf("problems: %v", p)
	}
	_, st, _ := e.Task("close")
	if got := st.NextFire.Time().UTC().Format(time.RFC3339); got != "2026-12-31T18:00:00Z" {
		t.Errorf("restored next fire %s", got)
	}
	if !slices.Equal(e.CalendarUsers("holidays"), []string{"close"}) {
		t.Errorf("users %v", e.CalendarUsers("holidays"))
	}
	// A stored task whose calendar is gone is reported and not armed.
	e = New(Config{})
	if err := restore(e, recs, nil, 0, nil); err != nil {
		t.Fatal(err)
	}
	if p := e.Problems(); len(p) != 1 || !strings.Contains(p[0], "run_calendar: calendar month_end is not defined") {
		t.Errorf("problems: %v", p)
	}
}

func TestWhyCalendar(t *testing.T) {
	t.Parallel()
	s := newSim(t, "2026-12-24T12:00:00Z", holidays+monthEnd+callable("daily", "start_times: 09:00\nexclude_calendar: holidays")+
		callable("close", "start_times: 18:00\nrun_calendar: month_end"))
	why := func(name string) string {
		rs, _ := s.e.Why(name, s.now)
		var b strings.Builder
		for _, r := range rs {
			b.WriteString(string(r.Kind) + ": " + r.Text + "\n")
		}
		return b.String()
	}
	got := why("daily")
	if want := "calendar: its next occurrence, at 2026-12-25T09:00:00Z, is outside its calendar: 2026-12-25 is a day of calendar holidays (exclude_calendar); it will be recorded skipped, and the first that runs is at 2026-12-26T09:00:00Z"; !strings.Contains(got, want) {
		t.Errorf("why daily:\n%s\nwant %s", got, want)
	}
	got = why("close")
	if want := "calendar: today (2026-12-24) is not a day of its run_calendar month_end: its time trigger fires on that calendar's days only, next on 2026-12-31"; !strings.Contains(got, want) {
		t.Errorf("why close:\n%s\nwant %s", got, want)
	}
	s.advance("2026-12-31T12:00:00Z")
	if got := why("close"); strings.Contains(got, "calendar:") {
		t.Errorf("on a day of its calendar:\n%s", got)
	}
}

// A cluster's clock node hands an occurrence on an excluded day: it is
// skipped for the calendar as the engine's own would be.
func TestExcludedHandedByClockNode(t *testing.T) {
	t.Parallel()
	s := externalSim(t, "2026-12-24T12:00:00Z", holidays+callable("daily", "start_times: 09:00\nexclude_calendar: holidays"))
	s.apply(Fired{Fires: []ClockFire{{Task: "daily", Scheduled: s.at("2026-12-25T09:00:00Z"), At: s.at("2026-12-25T09:00:01Z")}}})
	if got := fireLog(s); got != "12-25 09:00 daily skipped: 2026-12-25 is a day of calendar holidays (exclude_calendar)\n" {
		t.Errorf("fires:\n%s", got)
	}
	if len(s.started) != 0 {
		t.Errorf("runs started: %v", s.started)
	}
}

// A retry belongs to its occurrence: the failed run of 24 December at
// 23:50 is retried on the 25th, a day the task's exclude calendar skips,
// and the occurrence of the 25th is still skipped.
func TestRetryOnAnExcludedDay(t *testing.T) {
	t.Parallel()
	s := newSim(t, "2026-12-24T12:00:00Z", holidays+callable("late", "start_times: 23:50\nexclude_calendar: holidays\nn_retrys: 1\nretry_delay: 30m"))
	s.codes["late"] = []int{1}
	s.advance("2026-12-26T00:00:00Z")
	want := "12-24 23:50 late ran\n" +
		"12-25 23:50 late skipped: 2026-12-25 is a day of calendar holidays (exclude_calendar)\n"
	if got := fireLog(s); got != want {
		t.Errorf("fires:\n%s\nwant\n%s", got, want)
	}
	runs := s.runsOf("late")
	if len(runs) != 2 || runs[1].Trigger != "retry" || !runs[1].Scheduled.Equal(runs[0].Scheduled) ||
		runs[1].Start.Format("01-02 15:04") != "12-25 00:20" || runs[1].Status != job.Success {
		t.Errorf("runs %+v, want the retry at 00:20 on the 25th for the occurrence of the 24th", runs)
	}
	s.want("late", "success")
}

// A backfill does not run an occurrence on a day of the task's exclude
// calendar: the clock skipped it, and the backfill says why.
func TestBackfillLeavesExcludedDays(t *testing.T) {
	t.Parallel()
	s := newSim(t, "2026-12-23T12:00:00Z", holidays+callable("daily", "start_times: 09:00\nexclude_calendar: holidays"))
	s.advance("2026-12-28T00:00:00Z")
	out := s.apply(Backfill{Task: "daily", From: mustTime(t, "2026-12-24T00:00:00Z"), To: mustTime(t, "2026-12-26T23:00:00Z"), MaxParallel: 1,
		Ledger: s.fires})
	var got []string
	for _, o := range out.Backfill.Occurrences {
		got = append(got, o.Scheduled.Format("01-02")+" "+string(o.Action))
	}
	if want := []string{"12-24 done", "12-25 excluded", "12-26 done"}; !slices.Equal(got, want) {
		t.Errorf("backfill %q, want %q", got, want)
	}
	if r := out.Backfill.Occurrences[1].Reason; !strings.Contains(r, "calendar holidays") {
		t.Errorf("reason %q", r)
	}
}
