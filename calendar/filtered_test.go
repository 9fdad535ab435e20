package calendar

import (
	"strings"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/job"
)

// lookupOf finds calendars among sets.
func lookupOf(sets ...*DaySet) Lookup {
	return func(name string) *DaySet {
		for _, s := range sets {
			if s.Name() == name {
				return s
			}
		}
		return nil
	}
}

func filtered(t *testing.T, task *job.Task, sets ...*DaySet) Schedule {
	t.Helper()
	s, err := ForTaskWith(task, time.UTC, lookupOf(sets...))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func withCalendars(t *job.Task, run, exclude string) *job.Task {
	t.Edit().RunCalendar, t.Edit().ExcludeCalendar = run, exclude
	return t
}

func TestRunCalendar(t *testing.T) {
	t.Parallel()
	monthEnd := compile(t, &job.Calendar{Name: "month_end", Rules: []string{"last business day of month"}})
	// Every day at 18:00 in New York, on the last business day only: 30
	// January is a Friday, 27 February a Friday, 31 March a Tuesday.
	s := filtered(t, withCalendars(&job.Task{StartTimes: clocks(18 * 60), Timezone: "America/New_York"}, "month_end", ""), monthEnd)
	check(t, "month end", fires(t, s, "2026-01-01T00:00:00Z", "2026-04-01T00:00:00Z"),
		"2026-01-30T23:00:00Z", "2026-02-27T23:00:00Z", "2026-03-31T22:00:00Z")

	// With run_days too, both must hold: Tuesdays that are month ends.
	s = filtered(t, withCalendars(&job.Task{RunDays: 1 << time.Tuesday, StartTimes: clocks(18 * 60)}, "month_end", ""), monthEnd)
	check(t, "month end on a tuesday", fires(t, s, "2026-01-01T00:00:00Z", "2027-01-01T00:00:00Z"),
		"2026-03-31T18:00:00Z", "2026-06-30T18:00:00Z")

	// A cron stepping every 15 minutes fires on the calendar's days only.
	one := compile(t, &job.Calendar{Name: "one", Dates: []string{"2026-05-05"}})
	s = filtered(t, withCalendars(&job.Task{Cron: "*/15 * * * *"}, "one", ""), one)
	got := fires(t, s, "2026-05-01T00:00:00Z", "2026-06-01T00:00:00Z")
	if len(got) != 96 || got[0] != "2026-05-05T00:00:00Z" || got[95] != "2026-05-05T23:45:00Z" {
		t.Errorf("*/15 on one day: %d fires, %v ... ", len(got), got[:min(3, len(got))])
	}
	if _, ok := s.Next(utc("2026-05-06T00:00:00Z")); ok {
		t.Error("fires after the calendar's last date")
	}

	// An interval keeps its own steps: every 10 days from 1 March, on
	// weekdays only.
	wd := compile(t, &job.Calendar{Name: "wd", Rules: []string{"weekdays"}})
	s = filtered(t, withCalendars(&job.Task{StartDate: "2026-03-01 09:00", Interval: "10 days"}, "wd", ""), wd)
	check(t, "interval on weekdays", fires(t, s, "2026-03-01T00:00:00Z", "2026-04-15T00:00:00Z"),
		"2026-03-11T09:00:00Z", "2026-03-31T09:00:00Z", "2026-04-10T09:00:00Z")

	// A trigger and a calendar that never meet never fire.
	tue := compile(t, &job.Calendar{Name: "tue", Rules: []string{"every tuesday"}})
	s = filtered(t, withCalendars(&job.Task{RunDays: 1 << time.Monday, StartTimes: clocks(60)}, "tue", ""), tue)
	if n, ok := s.Next(utc("2026-01-01T00:00:00Z")); ok {
		t.Errorf("Monday runs on a calendar of Tuesdays fire at %s", n)
	}

	// An overnight window belongs to the day it opens for run_days, but
	// each slot's day is its own date: the slots after midnight are on
	// the next day.
	s = filtered(t, withCalendars(&job.Task{Window: &job.Window{Start: 23 * 60, End: 60}, StartMins: []int{0, 30}}, "one", ""), one)
	check(t, "overnight window", fires(t, s, "2026-05-04T00:00:00Z", "2026-05-07T00:00:00Z"),
		"2026-05-05T00:00:00Z", "2026-05-05T00:30:00Z", "2026-05-05T01:00:00Z", "2026-05-05T23:00:00Z", "2026-05-05T23:30:00Z")
}

func TestExcludeCalendar(t *testing.T) {
	t.Parallel()
	hol := compile(t, &job.Calendar{Name: "holidays", Dates: []string{"2026-12-25"}})
	s := filtered(t, withCalendars(&job.Task{StartTimes: clocks(9 * 60), Timezone: "Europe/Paris"}, "", "holidays"), hol)
	// An excluded occurrence is still an occurrence: it is yielded and
	// marked.
	check(t, "around christmas", fires(t, s, "2026-12-24T00:00:00Z", "2026-12-27T00:00:00Z"),
		"2026-12-24T08:00:00Z", "2026-12-25T08:00:00Z", "2026-12-26T08:00:00Z")
	if got := Excluded(s, utc("2026-12-25T08:00:00Z")); got != "holidays" {
		t.Errorf("Excluded on 25 December = %q", got)
	}
	if got := Excluded(s, utc("2026-12-24T08:00:00Z")); got != "" {
		t.Errorf("Excluded on 24 December = %q", got)
	}
	// The day is the date in the task's zone: 23:30 UTC on the 24th is
	// 00:30 on the 25th in Paris.
	s = filtered(t, withCalendars(&job.Task{Cron: "30 0 * * *", Timezone: "Europe/Paris"}, "", "holidays"), hol)
	if got := Excluded(s, utc("2026-12-24T23:30:00Z")); got != "holidays" {
		t.Errorf("00:30 in Paris on the 25th not excluded: %q", got)
	}
	if n, ok := NextRun(s, utc("2026-12-24T12:00:00Z")); !ok || n != utc("2026-12-25T23:30:00Z") {
		t.Errorf("NextRun skips the excluded occurrence: got %s", n)
	}
	p, _ := Forecast(map[string]Schedule{"t": s}, utc("2026-12-24T12:00:00Z"), utc("2026-12-26T12:00:00Z"), 0)
	if len(p) != 2 || p[0].Excluded != "holidays" || p[1].Excluded != "" {
		t.Errorf("forecast marks = %+v", p)
	}
	if _, err := ForTaskWith(withCalendars(&job.Task{Cron: "* * * * *"}, "ghost", ""), time.UTC, nil); err == nil ||
		!strings.Contains(err.Error(), "run_calendar: calendar ghost is not defined") {
		t.Errorf("a missing calendar: %v", err)
	}
}

// Calendar days in zones whose days are odd: a day that does not exist,
// days whose midnight does not exist, a 30-minute shift.
func TestCalendarZoneEdges(t *testing.T) {
	t.Parallel()
	// Pacific/Apia skipped 30 December 2011. A daily 10:00 in a calendar
	// holding only that day never fires: its slot falls in the gap and
	// fires at the first instant after it, midnight on the 31st, which is
	// the 31st's.
	skipped := compile(t, &job.Calendar{Name: "skipped", Dates: []string{"2011-12-30"}})
	daily10 := &job.Task{StartTimes: clocks(10 * 60), Timezone: "Pacific/Apia"}
	s := filtered(t, withCalendars(daily10.Clone(), "skipped", ""), skipped)
	check(t, "Apia, the day skipped", fires(t, s, "2011-12-28T00:00:00Z", "2012-01-05T00:00:00Z"))
	around := compile(t, &job.Calendar{Name: "around", Dates: []string{"2011-12-29", "2011-12-31"}})
	s = filtered(t, withCalendars(daily10.Clone(), "around", ""), around)
	check(t, "Apia, the days around", fires(t, s, "2011-12-28T00:00:00Z", "2012-01-05T00:00:00Z"),
		"2011-12-29T20:00:00Z", "2011-12-30T10:00:00Z", "2011-12-30T20:00:00Z")

	// America/Santiago, 6 September 2026: 00:00 (-04) becomes 01:00
	// (-03). A midnight start on that day runs at 01:00, still on the 6th.
	sep6 := compile(t, &job.Calendar{Name: "sep6", Dates: []string{"2026-09-06"}})
	midnight := &job.Task{StartTimes: clocks(0), Timezone: "America/Santiago"}
	s = filtered(t, withCalendars(midnight.Clone(), "sep6", ""), sep6)
	check(t, "Santiago run", fires(t, s, "2026-09-01T00:00:00Z", "2026-09-10T00:00:00Z"), "2026-09-06T04:00:00Z")
	s = filtered(t, withCalendars(midnight.Clone(), "", "sep6"), sep6)
	if got := Excluded(s, utc("2026-09-06T04:00:00Z")); got != "sep6" {
		t.Errorf("Santiago: the 01:00 run of the 6th is not excluded: %q", got)
	}
	if got := Excluded(s, utc("2026-09-07T03:00:00Z")); got != "" {
		t.Errorf("Santiago: the 7th is excluded: %q", got)
	}

	// Asia/Beirut, 29 March 2026: 00:00 (+02) becomes 01:00 (+03).
	mar29 := compile(t, &job.Calendar{Name: "mar29", Dates: []string{"2026-03-29"}})
	s = filtered(t, withCalendars(&job.Task{Cron: "0 0 * * *", Timezone: "Asia/Beirut"}, "mar29", ""), mar29)
	check(t, "Beirut run", fires(t, s, "2026-03-25T00:00:00Z", "2026-04-02T00:00:00Z"), "2026-03-28T22:00:00Z")

	// Australia/Lord_Howe, 4 October 2026 (a Sunday): 02:00 (+10:30)
	// becomes 02:30 (+11). A weekend calendar with a start at 02:15 runs
	// at 02:30 on the 4th, and on Saturday the 3rd at 02:15.
	we := compile(t, &job.Calendar{Name: "we", Rules: []string{"weekends"}})
	s = filtered(t, withCalendars(&job.Task{StartTimes: clocks(2*60 + 15), Timezone: "Australia/Lord_Howe"}, "we", ""), we)
	check(t, "Lord Howe weekend", fires(t, s, "2026-09-30T00:00:00Z", "2026-10-07T00:00:00Z"),
		"2026-10-02T15:45:00Z", "2026-10-03T15:30:00Z")
}
