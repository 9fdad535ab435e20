package cli

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/gnomon-sched/gnomon/api"
	"github.com/gnomon-sched/gnomon/auth"
)

// holidaysICS is a holiday list as a provider publishes one: Christmas
// every year, New Year's Day once.
const holidaysICS = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//holidays//EN\r\n" +
	"BEGIN:VEVENT\r\nUID:xmas\r\nDTSTART;VALUE=DATE:20201225\r\nRRULE:FREQ=YEARLY\r\nSUMMARY:Christmas\r\nEND:VEVENT\r\n" +
	"BEGIN:VEVENT\r\nUID:ny27\r\nDTSTART;VALUE=DATE:20270101\r\nSUMMARY:New Year\r\nEND:VEVENT\r\n" +
	"END:VCALENDAR\r\n"

const calendarDefs = `# Holidays from the provider's file, and the day before Christmas.
insert_calendar: public
description: public holidays
ics_file: holidays.ics
dates: 2026-12-24

insert_calendar: month_end
rule: last business day of the month
holidays: public

insert_task: daily
type: callable
command: echo "$GNOMON_SCHEDULED_TIME"
out_log_file: @DIR@/daily.out
err_log_file: @DIR@/daily.err
start_times: 09:00
exclude_calendar: public

insert_task: close
type: callable
command: echo "$GNOMON_SCHEDULED_TIME"
out_log_file: @DIR@/close.out
err_log_file: @DIR@/close.err
start_times: 18:00
run_calendar: month_end

insert_task: pulse
type: callable
command: true
out_log_file: @DIR@/pulse.out
err_log_file: @DIR@/pulse.err
cron: 0 */6 * * *
exclude_calendar: month_end
`

// Named calendars through the command line, on the virtual clock: the
// days a calendar holds, runs only on run_calendar days, occurrences on
// exclude_calendar days recorded skipped with the calendar's name and
// marked in the forecast, why, a calendar changed, a restart, and the
// validator's refusals.
func TestCalendarsOnTheVirtualClock(t *testing.T) {
	t.Parallel()
	utc := func(c *ServerConfig) { c.Timezone = "UTC" }
	f := setup(t, utc, simulateFrom("2026-12-20T00:00:00Z"))
	f.file("holidays.ics", holidaysICS)
	def := f.file("cal.def", calendarDefs)
	if out := f.mustRun("gnomon", "def", "-f", def); out != "Successfully processed\n" {
		t.Errorf("def: %q", out)
	}

	show := f.mustRun("gnomon", "calendar", "show", "public", "--from", "2026-12-01", "--to", "2027-01-31")
	for _, want := range []string{"Calendar: public\n", "Description: public holidays\n", "Dates: 14\n", "Used by: daily\n",
		"Holidays of: month_end\n", "Days from 2026-12-01 to 2027-01-31: 3\n2026-12-24 Thu\n2026-12-25 Fri\n2027-01-01 Fri\n"} {
		if !strings.Contains(show, want) {
			t.Errorf("calendar show lacks %q:\n%s", want, show)
		}
	}
	show = f.mustRun("gnomon", "calendar", "show", "month_end", "--from", "2026-12-01", "--to", "2027-02-28")
	if !strings.Contains(show, "Rule: last business day of month\n") || !strings.Contains(show, "2026-12-31 Thu\n2027-01-29 Fri\n2027-02-26 Fri\n") ||
		!strings.Contains(show, "Used by: close, pulse\n") {
		t.Errorf("calendar show month_end:\n%s", show)
	}
	list := f.mustRun("gnomon", "calendar", "list")
	if !strings.Contains(list, "month_end") || !strings.Contains(list, "close, pulse") || !strings.Contains(list, "last business day of month") {
		t.Errorf("calendar list:\n%s", list)
	}

	// The forecast marks the excluded occurrences and has none on days
	// outside a run_calendar.
	fc := f.mustRun("gnomon", "forecast", "-j", "daily", "--from", "2026-12-24T00:00:00Z", "--to", "2026-12-27T00:00:00Z")
	if want := "2026-12-24T09:00:00Z daily (excluded by calendar public: skipped, not run)\n" +
		"2026-12-25T09:00:00Z daily (excluded by calendar public: skipped, not run)\n2026-12-26T09:00:00Z daily\n"; fc != want {
		t.Errorf("forecast:\n%s\nwant\n%s", fc, want)
	}
	if fc := f.mustRun("gnomon", "forecast", "-j", "close", "--from", "2026-12-20T00:00:00Z", "--to", "2027-02-01T00:00:00Z"); fc != "2026-12-31T18:00:00Z close\n2027-01-29T18:00:00Z close\n" {
		t.Errorf("forecast of close:\n%s", fc)
	}

	f.mustRun("gnomon", "clock", "advance", "--to", "2026-12-24T12:00:00Z")
	why := f.mustRun("gnomon", "why", "-j", "daily")
	if !strings.Contains(why, "its next occurrence, at 2026-12-25 09:00:00 UTC, is outside its calendar: 2026-12-25 is a day of calendar public (exclude_calendar); it will be recorded skipped, and the first that runs is at 2026-12-26 09:00:00 UTC") {
		t.Errorf("why daily:\n%s", why)
	}
	why = f.mustRun("gnomon", "why", "-j", "close")
	if !strings.Contains(why, "today (2026-12-24) is not a day of its run_calendar month_end: its time trigger fires on that calendar's days only, next on 2026-12-31") {
		t.Errorf("why close:\n%s", why)
	}

	f.mustRun("gnomon", "clock", "advance", "--to", "2027-01-02T00:00:00Z")
	fires := squeeze(f.mustRun("gnomon", "runs", "-j", "daily", "--fires", "-n", "20"))
	for _, want := range []string{
		"20270101 09:00:00 skipped - 2027-01-01 is a day of calendar public (exclude_calendar)",
		"20261231 09:00:00 ran",
		"20261225 09:00:00 skipped - 2026-12-25 is a day of calendar public (exclude_calendar)",
		"20261224 09:00:00 skipped - 2026-12-24 is a day of calendar public (exclude_calendar)",
		"20261223 09:00:00 ran",
	} {
		if !strings.Contains(fires, want) {
			t.Errorf("fires of daily lack %q:\n%s", want, fires)
		}
	}
	if out, _ := readFile(f.dir, "close.out"); out != "2026-12-31T18:00:00Z\n" {
		t.Errorf("close ran for:\n%s", out)
	}
	// pulse runs every 6 hours but on the month end, 31 December.
	pulse := squeeze(f.mustRun("gnomon", "runs", "-j", "pulse", "--fires", "-n", "12"))
	if !strings.Contains(pulse, "20261231 18:00:00 skipped - 2026-12-31 is a day of calendar month_end (exclude_calendar)") ||
		!strings.Contains(pulse, "20270101 00:00:00 ran") {
		t.Errorf("fires of pulse:\n%s", pulse)
	}
	occ := f.mustRun("gnomon", "why", "-j", "daily", "--at", "2026-12-25 09:00")
	if !strings.Contains(occ, "the occurrence at 2026-12-25 09:00:00 UTC was skipped: 2026-12-25 is a day of calendar public (exclude_calendar)") {
		t.Errorf("why --at:\n%s", occ)
	}
	occ = f.mustRun("gnomon", "why", "-j", "close", "--at", "2026-12-30 18:00")
	if !strings.Contains(occ, "close's time trigger has no occurrence at 2026-12-30 18:00:00 UTC: it is outside its calendar, 2026-12-30 is not a day of its run_calendar month_end") {
		t.Errorf("why --at outside the run_calendar:\n%s", occ)
	}

	// A calendar that changes moves the next occurrence of the tasks
	// that name it: with 29 January a holiday, January ends on the 28th.
	f.mustRun("gnomon", "def", "-f", f.file("upd.def", "update_calendar: public\nics_file: holidays.ics\ndates: 2026-12-24, 2027-01-29\n"))
	if fc := f.mustRun("gnomon", "forecast", "-j", "close", "--to", "2027-02-01T00:00:00Z"); fc != "2027-01-28T18:00:00Z close\n" {
		t.Errorf("forecast of close after the change:\n%s", fc)
	}

	// Refusals name the file, the line and the field, or the tasks.
	_, stderr, code := f.run("gnomon", "def", "-f", f.file("bad.def", "insert_task: ghostly\ntype: callable\ncommand: true\nout_log_file: @DIR@/g.out\nerr_log_file: @DIR@/g.err\nstart_times: 10:00\nrun_calendar: ghost\n"))
	if code != ExitRejected || !strings.Contains(stderr, "bad.def:7: insert_task ghostly: run_calendar: calendar ghost does not exist") {
		t.Errorf("unknown calendar: exit %d\n%s", code, stderr)
	}
	_, stderr, code = f.run("gnomon", "calendar", "delete", "public")
	if code != ExitRejected || !strings.Contains(stderr, "calendar public is named by task(s) daily (run_calendar or exclude_calendar): change them first") {
		t.Errorf("delete of a calendar named: exit %d\n%s", code, stderr)
	}
	_, stderr, code = f.run("gnomon", "def", "-f", f.file("noics.def", "insert_calendar: x\nics_file: missing.ics\n"))
	if code != ExitRejected || !strings.Contains(stderr, "noics.def:2: insert_calendar x: ics_file: missing.ics:") {
		t.Errorf("a missing .ics file: exit %d\n%s", code, stderr)
	}

	// A restart keeps the calendars and the tasks' occurrences.
	f.stop()
	f.start(utc, simulateFrom("2027-01-02T00:00:00Z"))
	if again := f.mustRun("gnomon", "calendar", "list"); again != f.mustRun("gnomon", "calendar", "list") || !strings.Contains(again, "public") {
		t.Errorf("calendars after the restart:\n%s", again)
	}
	if fc := f.mustRun("gnomon", "forecast", "-j", "close", "--to", "2027-02-01T00:00:00Z"); fc != "2027-01-28T18:00:00Z close\n" {
		t.Errorf("forecast of close after the restart:\n%s", fc)
	}
	_, stderr, code = f.run("gnomon", "calendar", "show", "nosuch")
	if code != ExitRejected || !strings.Contains(stderr, "calendar nosuch not found") {
		t.Errorf("show of a missing calendar: exit %d %s", code, stderr)
	}
}

// gnomon export writes the calendars before the tasks, and what it writes
// applies to another server as the same definitions.
func TestCalendarsExportRoundTrip(t *testing.T) {
	t.Parallel()
	utc := func(c *ServerConfig) { c.Timezone = "UTC" }
	f := setup(t, utc, simulateFrom("2026-12-20T00:00:00Z"))
	f.file("holidays.ics", holidaysICS)
	f.mustRun("gnomon", "def", "-f", f.file("cal.def", calendarDefs))
	out := f.mustRun("gnomon", "export")
	if !strings.HasPrefix(out, "insert_calendar: month_end\nrule: last business day of month\nholidays: public\n\ninsert_calendar: public\ndescription: public holidays\n"+
		"dates: 2025-12-25\ndates: 2026-12-24, 2026-12-25\ndates: 2027-01-01, 2027-12-25\n") {
		t.Errorf("export:\n%s", out)
	}
	if !strings.Contains(out, "run_calendar: month_end\n") || !strings.Contains(out, "exclude_calendar: public\n") {
		t.Errorf("export lacks the task attributes:\n%s", out)
	}
	// Applied again to the same server, it changes nothing.
	if again := f.mustRun("gnomon", "def", "--apply", "-f", f.file("export.def", out)); !strings.Contains(again, "Successfully processed") || strings.Contains(again, "changed") {
		t.Errorf("export applied again:\n%s", again)
	}
	g := setup(t, utc, simulateFrom("2026-12-20T00:00:00Z"))
	g.mustRun("gnomon", "def", "-f", g.file("export.def", out))
	if got := g.mustRun("gnomon", "export"); got != out {
		t.Errorf("export of the copy differs:\n%s\nfrom\n%s", got, out)
	}
	// One task with the calendars it names, holidays followed; one
	// calendar.
	one := f.mustRun("gnomon", "export", "-j", "close")
	if !strings.HasPrefix(one, "insert_calendar: month_end\n") || !strings.Contains(one, "insert_calendar: public\n") || !strings.Contains(one, "insert_task: close\n") {
		t.Errorf("export -j close:\n%s", one)
	}
	if cal := f.mustRun("gnomon", "export", "--calendar", "month_end"); cal != "insert_calendar: month_end\nrule: last business day of month\nholidays: public\n" {
		t.Errorf("export --calendar:\n%s", cal)
	}
	// --sync with a file of calendars owns them: those it does not
	// define are deleted, when nothing names them.
	f.mustRun("gnomon", "def", "-f", f.file("spare.def", "insert_calendar: spare\nrule: weekends\n"))
	kept := f.mustRun("gnomon", "export", "--calendar", "month_end") + "\n" + f.mustRun("gnomon", "export", "--calendar", "public")
	sync := f.mustRun("gnomon", "def", "--sync", "-c", "-f", f.file("cals.def", kept))
	if !strings.Contains(sync, "spare") || !strings.Contains(sync, "Successfully validated") {
		t.Errorf("sync -c:\n%s", sync)
	}
	f.mustRun("gnomon", "def", "--sync", "-f", f.file("cals.def", kept))
	if list := f.mustRun("gnomon", "calendar", "list"); strings.Contains(list, "spare") {
		t.Errorf("spare kept by the sync:\n%s", list)
	}
	_, stderr, code := f.run("gnomon", "def", "--sync", "-f", f.file("only.def", "insert_calendar: spare\nrule: weekdays\n"))
	if code != ExitRejected || !strings.Contains(stderr, "delete_calendar public: calendar public is named by task(s) daily (run_calendar or exclude_calendar): change them first (the sync deletes public: ") {
		t.Errorf("sync deleting calendars still named: exit %d\n%s", code, stderr)
	}
}

// Offline, a definition file's calendars apply to its forecast and show
// their days, with the .ics files beside it.
func TestCalendarsOffline(t *testing.T) {
	t.Parallel()
	f := &fixture{t: t, dir: t.TempDir()}
	f.file("holidays.ics", holidaysICS)
	def := f.file("cal.def", calendarDefs)
	fc := f.mustRun("gnomon", "forecast", "-f", def, "-j", "daily", "--timezone", "UTC", "--from", "2026-12-24 00:00", "--to", "2026-12-27 00:00")
	if want := "2026-12-24T09:00:00Z daily (excluded by calendar public: skipped, not run)\n" +
		"2026-12-25T09:00:00Z daily (excluded by calendar public: skipped, not run)\n2026-12-26T09:00:00Z daily\n"; fc != want {
		t.Errorf("offline forecast:\n%s\nwant\n%s", fc, want)
	}
	show := f.mustRun("gnomon", "calendar", "show", "month_end", "-f", def, "--from", "2026-12-01", "--to", "2027-01-31")
	if !strings.Contains(show, "2026-12-31 Thu\n2027-01-29 Fri\n") || !strings.Contains(show, "Used by: close, pulse\n") {
		t.Errorf("offline show:\n%s", show)
	}
}

// The JSON form of a calendar: PUT defines or replaces one, errors name
// the JSON field, and permissions are those of definitions.
func TestCalendarAPI(t *testing.T) {
	t.Parallel()
	f := setup(t, func(c *ServerConfig) { c.Timezone = "UTC" }, simulateFrom("2026-12-20T00:00:00Z"))
	ctx := context.Background()
	v, err := f.client.PutCalendar(ctx, "quarter_end", api.CalendarRequest{Rules: []string{"last business day of quarter"}, ICS: holidaysICS})
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Rules) != 1 || len(v.Dates) != 13 || v.UsedBy == nil {
		t.Errorf("defined %+v", v)
	}
	got, err := f.client.Calendar(ctx, "quarter_end", "2026-12-01", "2027-07-31")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got.Days, " ") != "2026-12-25 2026-12-31 2027-01-01 2027-03-31 2027-06-30" {
		t.Errorf("days %v", got.Days)
	}
	// PUT replaces: without dates, the dates are gone.
	if v, err = f.client.PutCalendar(ctx, "quarter_end", api.CalendarRequest{Rules: []string{"last day of quarter"}, Holidays: []string{"2027-03-31"}}); err != nil || len(v.Dates) != 0 {
		t.Errorf("replaced: %+v %v", v, err)
	}
	var ae *api.Error
	_, err = f.client.PutCalendar(ctx, "bad", api.CalendarRequest{Dates: []string{"2026-01-01", "2026-02-30"}})
	if !errors.As(err, &ae) || ae.Status != http.StatusBadRequest || !strings.Contains(ae.Message, `dates[1]: "2026-02-30" is not a date`) {
		t.Errorf("a bad date: %v", err)
	}
	_, err = f.client.PutCalendar(ctx, "bad", api.CalendarRequest{Holidays: []string{"ghost"}})
	if !errors.As(err, &ae) || ae.Status != http.StatusUnprocessableEntity || len(ae.Errors) != 1 || ae.Errors[0] != "holidays: calendar ghost does not exist" {
		t.Errorf("an unknown holiday calendar: %#v", err)
	}
	_, err = f.client.PutCalendar(ctx, "bad", api.CalendarRequest{ICS: "not ics"})
	if !errors.As(err, &ae) || ae.Status != http.StatusBadRequest || !strings.HasPrefix(ae.Message, "ics: not an iCalendar file") {
		t.Errorf("bad ics: %v", err)
	}
	if _, err = f.client.Calendar(ctx, "nosuch", "", ""); !errors.As(err, &ae) || ae.Status != http.StatusNotFound {
		t.Errorf("missing calendar: %v", err)
	}
	// A viewer reads calendars but does not define them.
	viewer := &api.Client{Base: f.client.Base, Token: loadToken(t, f.client, auth.Viewer)}
	if _, err := viewer.Calendars(ctx); err != nil {
		t.Errorf("viewer list: %v", err)
	}
	if _, err := viewer.PutCalendar(ctx, "x", api.CalendarRequest{Rules: []string{"daily"}}); !errors.As(err, &ae) || ae.Status != http.StatusForbidden {
		t.Errorf("viewer put: %v", err)
	}
	if err := viewer.DeleteCalendar(ctx, "quarter_end"); !errors.As(err, &ae) || ae.Status != http.StatusForbidden {
		t.Errorf("viewer delete: %v", err)
	}
	if err := f.client.DeleteCalendar(ctx, "quarter_end"); err != nil {
		t.Errorf("delete: %v", err)
	}
	if resp, err := f.client.Calendars(ctx); err != nil || len(resp.Calendars) != 0 {
		t.Errorf("after the delete: %+v %v", resp, err)
	}
}

// gnomon server --definitions reads the .ics files beside its files at
// every start.
func TestCalendarDefinitionsAtStart(t *testing.T) {
	t.Parallel()
	f := &fixture{t: t, dir: t.TempDir()}
	f.file("holidays.ics", holidaysICS)
	def := f.file("cal.def", calendarDefs)
	f.start(func(c *ServerConfig) { c.Timezone = "UTC"; c.Definitions = def }, simulateFrom("2026-12-20T00:00:00Z"))
	t.Cleanup(f.stop)
	show := f.mustRun("gnomon", "calendar", "show", "public", "--from", "2026-12-24", "--to", "2026-12-25")
	if !strings.Contains(show, "2026-12-24 Thu\n2026-12-25 Fri\n") {
		t.Errorf("show:\n%s", show)
	}
}

// A holiday file whose event has an empty RRULE line is read, the event
// taken as happening once, and the command says so on stderr.
func TestCalendarEmptyRRuleWarns(t *testing.T) {
	t.Parallel()
	f := &fixture{t: t, dir: t.TempDir()}
	f.file("h.ics", "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//t//t//EN\r\nBEGIN:VEVENT\r\nUID:x@t\r\nDTSTART;VALUE=DATE:20261225\r\nSUMMARY:Christmas\r\nRRULE:\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n")
	def := f.file("cal.def", "insert_calendar: h\nics_file: h.ics\n")
	out, stderr, code := f.run("gnomon", "calendar", "show", "h", "-f", def, "--from", "2026-12-01", "--to", "2027-12-31")
	if code != 0 || !strings.Contains(out, "2026-12-25") || strings.Contains(out, "2027-12-25") {
		t.Fatalf("exit %d, stdout:\n%s\nstderr:\n%s", code, out, stderr)
	}
	if !strings.Contains(stderr, "WARNING") || !strings.Contains(stderr, "RRULE") {
		t.Errorf("stderr %q, want a warning naming the empty RRULE", stderr)
	}
}
