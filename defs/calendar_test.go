package defs

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/gnomon-sched/gnomon/job"
)

// applyText applies a text to current definitions and calendars.
func applyText(cur map[string]*job.Task, cals map[string]*job.Calendar, text string) (*Result, error) {
	acts, err := Parse("f.def", text)
	if err != nil {
		return nil, err
	}
	return Apply("f.def", cur, acts, &Env{Calendars: cals})
}

const calendars = `
insert_calendar: public
description: public holidays
dates: 2026-12-25, 2027-01-01
dates: 2026-05-01
dates: 2026-12-25

insert_calendar: month_end
rule: last business day of the month
rule: Every 2nd Tuesday
holidays: public, 2026-12-31, 2026-12-24
workdays: mo,tu,we,th,fr,sa

insert_task: close
type: callable
command: close-books
out_log_file: o
err_log_file: e
start_times: 18:00
run_calendar: month_end
exclude_calendar: public
`

func TestCalendarDefinitions(t *testing.T) {
	t.Parallel()
	res, err := applyText(nil, nil, calendars)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]*job.Calendar{
		"public": {Name: "public", Description: "public holidays", Dates: []string{"2026-05-01", "2026-12-25", "2027-01-01"}},
		"month_end": {Name: "month_end", Rules: []string{"last business day of month", "2nd tuesday of month"},
			Holidays: []string{"public", "2026-12-24", "2026-12-31"}, Workdays: "mo,tu,we,th,fr,sa"},
	}
	if diff := cmp.Diff(want, res.Calendars); diff != "" {
		t.Errorf("calendars (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"month_end", "public"}, res.ChangedCalendars); diff != "" {
		t.Error(diff)
	}
	if x := res.Tasks["close"].Extras(); x.RunCalendar != "month_end" || x.ExcludeCalendar != "public" {
		t.Errorf("task calendars %q %q", x.RunCalendar, x.ExcludeCalendar)
	}

	// An update replaces the attributes it gives.
	res2, err := applyText(res.Tasks, res.Calendars, "update_calendar: public\ndates: 2028-01-01\n\nupdate_calendar: month_end\nholidays:\nrule: first day of month\n")
	if err != nil {
		t.Fatal(err)
	}
	if got := res2.Calendars["public"]; !cmp.Equal(got.Dates, []string{"2028-01-01"}) || got.Description != "public holidays" {
		t.Errorf("updated public = %+v", got)
	}
	if got := res2.Calendars["month_end"]; got.Holidays != nil || !cmp.Equal(got.Rules, []string{"1st day of month"}) || got.Workdays == "" {
		t.Errorf("updated month_end = %+v", got)
	}
	// A calendar and a task may share a name.
	if _, err := applyText(res.Tasks, res.Calendars, "insert_calendar: close\nrule: daily\n"); err != nil {
		t.Errorf("a calendar named as a task: %v", err)
	}
	// Deleting a task and the calendar it names in one file is fine.
	res3, err := applyText(res.Tasks, res.Calendars, "delete_task: close\ndelete_calendar: month_end\n")
	if err != nil {
		t.Fatal(err)
	}
	if !cmp.Equal(res3.DeletedCalendars, []string{"month_end"}) || !cmp.Equal(res3.Deleted, []string{"close"}) {
		t.Errorf("deleted %v %v", res3.DeletedCalendars, res3.Deleted)
	}
}

func TestCalendarErrors(t *testing.T) {
	t.Parallel()
	cur, err := applyText(nil, nil, calendars)
	if err != nil {
		t.Fatal(err)
	}
	const trig = "type: callable\ncommand: x\nout_log_file: o\nerr_log_file: e\nstart_times: 10:00\n"
	for _, c := range []struct {
		name, text, want string
	}{
		{"unknown run_calendar", "insert_task: t\n" + trig + "run_calendar: ghost\n",
			"f.def:7: insert_task t: run_calendar: calendar ghost does not exist"},
		{"unknown exclude_calendar", "insert_task: t\n" + trig + "exclude_calendar: ghost\n",
			"f.def:7: insert_task t: exclude_calendar: calendar ghost does not exist"},
		{"deleted in the file", "delete_calendar: public\ninsert_task: t\n" + trig + "exclude_calendar: public\n",
			"f.def:1: delete_calendar public: calendar public is named by task(s) close, t (run_calendar or exclude_calendar): change them first"},
		{"delete while named", "delete_calendar: month_end\n",
			"f.def:1: delete_calendar month_end: calendar month_end is named by task(s) close (run_calendar or exclude_calendar): change them first"},
		{"delete while in holidays", "update_task: close\nexclude_calendar:\ndelete_calendar: public\n",
			"f.def:3: delete_calendar public: calendar public is named in the holidays of calendar(s) month_end: change them first"},
		{"both the same", "insert_task: t\n" + trig + "run_calendar: public\nexclude_calendar: public\n",
			"f.def:8: insert_task t: run_calendar and exclude_calendar both name calendar public: the task would never run"},
		{"no time trigger", "insert_task: t\ntype: callable\ncommand: x\nout_log_file: o\nerr_log_file: e\nrun_calendar: public\n",
			"f.def:6: insert_task t: run_calendar needs a time trigger (start_times, run_window, cron or start_date)"},
		{"in a bundle", "insert_task: b\ntype: bundle\ninsert_task: k\nparent: b\ntype: callable\ncommand: x\nout_log_file: o\nerr_log_file: e\nexclude_calendar: public\n",
			"scheduling attributes are not allowed on a task inside a bundle"},
		{"configuration", "insert_task: c\ntype: configuration\n" + deps + "run_calendar: public\n",
			"f.def:4: insert_task c: run_calendar: field is not allowed for configuration"},
		{"group", "insert_group: g\njobs: close\nrun_calendar: public\n", "run_calendar: field is not allowed for a group"},
		{"calendar attribute on a task", "insert_task: t\n" + trig + "dates: 2026-01-01\n",
			"f.def:7: insert_task t: dates: field is only allowed for a calendar (insert_calendar)"},
		{"task attribute on a calendar", "insert_calendar: c\ncommand: x\n",
			"f.def:2: insert_calendar c: command: field is not allowed for a calendar"},
		{"exists", "insert_calendar: public\n", "f.def:1: insert_calendar public: calendar already exist"},
		{"not exist", "update_calendar: ghost\ndates: 2026-01-01\n", "f.def:1: update_calendar ghost: calendar not exist"},
		{"delete not exist", "delete_calendar: ghost\n", "f.def:1: delete_calendar ghost: calendar not exist"},
		{"delete with attributes", "delete_calendar: public\ndates: 2026-01-01\n", "f.def:2: delete_calendar public: delete calendar should not have other attributes"},
		{"bad name", "insert_calendar: a-b\n", "f.def:1: insert_calendar a-b: calendar name can only contain"},
		{"bad date", "insert_calendar: c\ndates: 2026-01-01, 2026-02-30\n", `f.def:2: insert_calendar c: dates: "2026-02-30" is not a date`},
		{"bad rule", "insert_calendar: c\nrule: daily\nrule: 6th friday\n", `f.def:3: insert_calendar c: rule "6th friday": there is no 6th friday in a month`},
		{"bad workdays", "insert_calendar: c\nworkdays: mo,xx\n", "f.def:2: insert_calendar c: workdays:"},
		{"bad holidays", "insert_calendar: c\nholidays: a b\n", `f.def:2: insert_calendar c: holidays: "a b" is neither a date`},
		{"unknown holidays", "insert_calendar: c\nholidays: ghost\n", "f.def:2: insert_calendar c: holidays: calendar ghost does not exist"},
		{"holidays itself", "insert_calendar: c\nholidays: c\n", "f.def:2: insert_calendar c: holidays: a calendar cannot name itself"},
		{"holidays go round", "insert_calendar: x\nholidays: y\ninsert_calendar: y\nholidays: z\ninsert_calendar: z\nholidays: x\n",
			"holidays go round: x -> y -> z -> x"},
		{"ics not read", "insert_calendar: c\nics_file: holidays.ics\n", "f.def:2: insert_calendar c: ics_file: holidays.ics was not read"},
		{"duplicate key", "insert_calendar: c\nworkdays: mo\nworkdays: tu\n", "f.def:3: insert_calendar c: attribute workdays given more than once"},
		{"bad calendar name in task", "insert_task: t\n" + trig + "run_calendar: a b\n", `run_calendar: "a b" is not a calendar name`},
	} {
		_, err := applyText(cur.Tasks, cur.Calendars, c.text)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v\nwant %q", c.name, err, c.want)
		}
	}
}

func TestCalendarFormatRoundTrip(t *testing.T) {
	t.Parallel()
	res, err := applyText(nil, nil, calendars)
	if err != nil {
		t.Fatal(err)
	}
	var cals []*job.Calendar
	for _, c := range res.Calendars {
		cals = append(cals, c)
	}
	var b strings.Builder
	if err := FormatCalendars(&b, cals); err != nil {
		t.Fatal(err)
	}
	if err := Format(&b, []*job.Task{res.Tasks["close"]}); err != nil {
		t.Fatal(err)
	}
	want := `insert_calendar: month_end
rule: last business day of month
rule: 2nd tuesday of month
holidays: public, 2026-12-24, 2026-12-31
workdays: mo,tu,we,th,fr,sa

insert_calendar: public
description: public holidays
dates: 2026-05-01, 2026-12-25
dates: 2027-01-01
insert_task: close
type: callable
command: close-books
out_log_file: o
err_log_file: e
start_times: 18:00
run_calendar: month_end
exclude_calendar: public
priority: 0
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("format (-want +got):\n%s", diff)
	}
	again, err := applyText(nil, nil, b.String())
	if err != nil {
		t.Fatalf("formatted output does not apply: %v", err)
	}
	if diff := cmp.Diff(res.Calendars, again.Calendars); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(res.Tasks, again.Tasks); diff != "" {
		t.Errorf("round trip of the task (-want +got):\n%s", diff)
	}
}

func TestDeclarativeCalendars(t *testing.T) {
	t.Parallel()
	cur, err := applyText(nil, nil, calendars)
	if err != nil {
		t.Fatal(err)
	}
	text := "insert_calendar: public\ndates: 2030-01-01\n\ninsert_calendar: month_end\nrule: last business day of month\nrule: 2nd tuesday\nholidays: public,2026-12-24,2026-12-31\nworkdays: mo,tu,we,th,fr,sa\n\ninsert_calendar: fresh\nrule: weekends\n"
	acts, err := Parse("f.def", text)
	if err != nil {
		t.Fatal(err)
	}
	decl := DeclarativeCalendars("f.def", cur.Calendars, acts)
	if len(decl) != 2 || decl[0].Kind != UpdateCalendar || decl[1].Kind != InsertCalendar {
		t.Fatalf("declarative actions: %+v", decl)
	}
	res, err := Apply("f.def", cur.Tasks, decl, &Env{Calendars: cur.Calendars})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Calendars["public"]; got.Description != "" || !cmp.Equal(got.Dates, []string{"2030-01-01"}) {
		t.Errorf("public replaced as %+v", got)
	}
	if !cmp.Equal(res.ChangedCalendars, []string{"fresh", "public"}) {
		t.Errorf("changed %v", res.ChangedCalendars)
	}
}

func TestResolveICS(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("../calendar/ics/testdata/holidays.ics")
	if err != nil {
		t.Fatal(err)
	}
	text := "# holidays\r\ninsert_calendar: hol\r\nics_file: holidays.ics\r\ndates: 2026-01-02\r\n\r\ninsert_task: t\r\n" +
		"type: callable\r\ncommand: x\r\nout_log_file: o\r\nerr_log_file: e\r\nstart_times: 09:00\r\nexclude_calendar: hol\r\n"
	if got := ICSFiles("f.def", text); !cmp.Equal(got, []string{"holidays.ics"}) {
		t.Errorf("ICSFiles = %v", got)
	}
	read := func(p string) ([]byte, error) {
		if p == "holidays.ics" {
			return src, nil
		}
		return nil, errors.New("no such file")
	}
	out, err := ResolveICS("f.def", text, read, time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(out, "\n") != strings.Count(text, "\n") || !strings.Contains(out, "\r\ndates: 2025-12-25, 2026-01-05, ") {
		t.Errorf("resolved text:\n%s", out)
	}
	res, err := applyText(nil, nil, out)
	if err != nil {
		t.Fatal(err)
	}
	if d := res.Calendars["hol"].Dates; len(d) != 22 || d[0] != "2025-12-25" || !strings.Contains(strings.Join(d, " "), "2026-01-02") {
		t.Errorf("dates %v", d)
	}
	// Errors name the definition file, the line and the calendar.
	_, err = ResolveICS("f.def", "insert_calendar: a\nics_file: missing.ics\ninsert_calendar: b\nics_file: holidays.ics\nics_file:\n",
		func(p string) ([]byte, error) {
			if p == "holidays.ics" {
				return []byte("garbage"), nil
			}
			return nil, errors.New("no such file")
		}, time.Now())
	want := "f.def:2: insert_calendar a: ics_file: missing.ics: no such file\n" +
		"f.def:4: insert_calendar b: ics_file: holidays.ics: not an iCalendar file: malformed content line: missing colon\n" +
		"f.def:5: insert_calendar b: ics_file: the path of an iCalendar (.ics) file is required"
	if err == nil || err.Error() != want {
		t.Errorf("errors:\n%v\nwant\n%s", err, want)
	}
	// What a file is read as other than it writes it is a warning.
	_, warnings, err := ResolveICSWarnings("f.def", "insert_calendar: a\nics_file: a.ics\n", func(string) ([]byte, error) {
		return []byte("BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nDTSTART;VALUE=DATE:20270101\r\nRRULE:\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"), nil
	}, time.Now())
	if w := []string{"f.def:2: insert_calendar a: ics_file: a.ics: VEVENT 1: RRULE is empty: read as no recurrence"}; err != nil || !cmp.Equal(warnings, w) {
		t.Errorf("warnings %q, %v; want %q", warnings, err, w)
	}
	// A text without ics_file is returned as it is.
	if out, err := ResolveICS("f.def", calendars, read, time.Now()); err != nil || out != calendars {
		t.Errorf("text changed: %v", err)
	}
}

// FuzzCalendarValues checks that the lists of a calendar's attributes
// read back as what they read as.
func FuzzCalendarValues(f *testing.F) {
	for _, s := range []string{"2026-12-25, 2027-01-01", "public, 2026-12-24, hol_2", "mo,tu,we,th,fr", "sunday, Mon", "", ",", "2026-02-30"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		if ds, err := ParseDates("dates", v); err == nil {
			again, err := ParseDates("dates", strings.Join(ds, ", "))
			if err != nil || !cmp.Equal(ds, again, cmpopts.EquateEmpty()) {
				t.Fatalf("dates %q read as %v, which reads back as %v (%v)", v, ds, again, err)
			}
		}
		if hs, err := ParseHolidays(v); err == nil {
			again, err := ParseHolidays(strings.Join(hs, ", "))
			if err != nil || !cmp.Equal(hs, again) {
				t.Fatalf("holidays %q read as %v, which reads back as %v (%v)", v, hs, again, err)
			}
		}
		var c job.Calendar
		if err := setCalendar(&c, "workdays", v, true); err == nil && c.Workdays != "" {
			var d job.Calendar
			if err := setCalendar(&d, "workdays", c.Workdays, true); err != nil || d.Workdays != c.Workdays {
				t.Fatalf("workdays %q read as %q, which reads back as %q (%v)", v, c.Workdays, d.Workdays, err)
			}
		}
	})
}
