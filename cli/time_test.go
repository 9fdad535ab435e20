package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/api"
)

const week = `insert_task: batch
type: callable
command: echo "$GNOMON_SCHEDULED_TIME"
out_log_file: @DIR@/batch.out
err_log_file: @DIR@/batch.err
run_days: mo,we
start_times: 06:00,18:30

insert_task: window
type: callable
command: true
out_log_file: @DIR@/window.out
err_log_file: @DIR@/window.err
run_days: tu
run_window: 04:00-05:00
start_mins: 0,30

insert_task: night
type: callable
command: true
out_log_file: @DIR@/night.out
err_log_file: @DIR@/night.err
run_days: fr
run_window: 23:00-01:00
start_mins: 30

insert_task: cold
type: callable
command: true
out_log_file: @DIR@/cold.out
err_log_file: @DIR@/cold.err
start_times: 12:00

insert_task: never
type: callable
command: true
out_log_file: @DIR@/never.out
err_log_file: @DIR@/never.err

insert_task: gated
type: callable
command: true
out_log_file: @DIR@/gated.out
err_log_file: @DIR@/gated.err
cron: 0 */6 * * *
condition: su(never)

insert_task: every4h
type: callable
command: echo "$GNOMON_SCHEDULED_TIME"
out_log_file: @DIR@/every4h.out
err_log_file: @DIR@/every4h.err
cron: 0 */4 * * *
`

// ranAt reports whether a run listing has a successful run that started
// at stamp ("YYYYMMDD HH:MM:SS") and ended within its minute.
func ranAt(runs, stamp string) bool {
	return regexp.MustCompile(regexp.QuoteMeta(stamp) + ` ` + regexp.QuoteMeta(stamp[:15]) + `\d\d success`).MatchString(squeeze(runs))
}

// A simulated week of seed-001 calendars, read back through the command
// line: every occurrence ran once at its instant, frozen and busy ones were
// skipped with a reason, and nothing else ran.
func TestSimulatedWeek(t *testing.T) {
	t.Parallel()
	// Monday 1 June 2026, 00:00 in Paris (the fixture's zone).
	f := setup(t, simulateFrom("2026-06-01 00:00"))
	f.mustRun("schd_def", "-f", f.file("week.def", week))
	f.mustRun("schd_event", "-j", "cold", "-e", "freeze")
	if out := f.mustRun("gnomon", "clock"); out != "2026-06-01 00:00:00 CEST (simulated)\n" {
		t.Errorf("clock: %q", out)
	}
	if out := f.mustRun("gnomon", "clock", "advance", "--to", "2026-06-08 00:00"); out != "2026-06-08 00:00:00 CEST (simulated)\n" {
		t.Errorf("advance: %q", out)
	}

	// Batch: Monday and Wednesday at 06:00 and 18:30, local time.
	out, _ := readFile(f.dir, "batch.out")
	if want := "2026-06-01T04:00:00Z\n2026-06-01T16:30:00Z\n2026-06-03T04:00:00Z\n2026-06-03T16:30:00Z\n"; out != want {
		t.Errorf("batch ran for:\n%s\nwant:\n%s", out, want)
	}
	runs := f.mustRun("schd_runs", "-j", "batch", "-c", "10")
	// A run takes the virtual time its command takes for real, so only
	// its start is exact.
	if n := strings.Count(runs, "success"); n != 4 || !ranAt(runs, "20260603 18:30:00") {
		t.Errorf("schd_runs batch:\n%s", runs)
	}
	// Window on Tuesday, both ends inclusive; overnight window of Friday.
	for task, stamps := range map[string][]string{
		"window": {"20260602 04:00:00", "20260602 04:30:00", "20260602 05:00:00"},
		"night":  {"20260605 23:30:00", "20260606 00:30:00"},
	} {
		runs := f.mustRun("gnomon", "runs", "-j", task, "-n", "10")
		if n := strings.Count(runs, "success"); n != len(stamps) {
			t.Errorf("%s ran %d times:\n%s", task, n, runs)
		}
		for _, s := range stamps {
			if !ranAt(runs, s) {
				t.Errorf("%s did not run at %s:\n%s", task, s, runs)
			}
		}
	}
	// Frozen: seven occurrences skipped, no run.
	fires := squeeze(f.mustRun("gnomon", "runs", "-j", "cold", "--fires", "-n", "50"))
	if n := strings.Count(fires, "skipped - the task is frozen"); n != 7 {
		t.Errorf("cold: %d skipped occurrences:\n%s", n, fires)
	}
	if runs := f.mustRun("schd_runs", "-j", "cold"); !strings.HasSuffix(runs, "\nno runs recorded yet for cold\n") {
		t.Errorf("a frozen task ran:\n%s", runs)
	}
	// Busy: the first occurrence left gated waiting on its condition; the
	// 28 later ones (up to 8 June 00:00 included) found it waiting.
	fires = squeeze(f.mustRun("gnomon", "runs", "-j", "gated", "--fires", "-n", "50"))
	if strings.Count(fires, " ran") != 1 || !strings.Contains(fires, "20260601 00:00:00 ran") || strings.Count(fires, "skipped - the task is waiting (overlap skip)") != 28 {
		t.Errorf("gated fires:\n%s", fires)
	}
	// Every four hours of the week, once each, in order (the engine tests
	// run minute-level schedules for weeks; here every run is a process).
	out, _ = readFile(f.dir, "every4h.out")
	lines := strings.Fields(out)
	if len(lines) != 7*6+1 { // the clock stops at 00:00, which fires too
		t.Fatalf("every4h ran %d times, want %d", len(lines), 7*6+1)
	}
	at := time.Date(2026, 5, 31, 22, 0, 0, 0, time.UTC)
	for i, l := range lines {
		if want := at.Add(time.Duration(i) * 4 * time.Hour).Format(time.RFC3339); l != want {
			t.Fatalf("run %d was for %s, want %s", i, l, want)
		}
	}
	fires = squeeze(f.mustRun("gnomon", "runs", "-j", "every4h", "--fires", "-n", "1"))
	if !strings.Contains(fires, "20260608 00:00:00 ran") {
		t.Errorf("last quarter fire:\n%s", fires)
	}
}

// The restart examples of seed 004, on the simulated clock, through the
// command line.
func TestSeedRestart(t *testing.T) {
	t.Parallel()
	utc := func(c *ServerConfig) { c.Timezone = "UTC" }
	f := setup(t, utc, simulateFrom("2026-03-03T03:05:00Z"))
	f.mustRun("gnomon", "def", "-f", f.file("a.def", `insert_task: job_a
type: callable
command: echo "$GNOMON_SCHEDULED_TIME"
out_log_file: @DIR@/a.out
err_log_file: @DIR@/a.err
start_date: 2026-03-01 01:00
interval: 1 hour
`))
	// Started 03 Mar 03:05: the next run is 04:00, nothing made up.
	if out := f.mustRun("gnomon", "forecast", "-j", "job_a", "--to", "2026-03-03T06:00:00Z"); out != "2026-03-03T04:00:00Z job_a\n2026-03-03T05:00:00Z job_a\n" {
		t.Errorf("forecast:\n%s", out)
	}
	f.mustRun("gnomon", "clock", "advance", "--to", "2026-03-04T04:05:00Z")
	// Stopped at 04:05 after the 04:00 run, restarted at 07:30.
	f.stop()
	f.start(utc, simulateFrom("2026-03-04T07:30:00Z"))
	f.mustRun("gnomon", "clock", "advance", "--to", "2026-03-04T08:30:00Z")
	fires := squeeze(f.mustRun("gnomon", "runs", "-j", "job_a", "--fires", "-n", "5"))
	want := []string{
		"20260304 08:00:00 ran",
		"20260304 07:00:00 missed - " + missedDown() + " (it was noticed 30m later)",
		"20260304 06:00:00 missed - " + missedDown() + " (it was noticed 1h30m later)",
		"20260304 05:00:00 missed",
		"20260304 04:00:00 ran",
	}
	rows := strings.Split(strings.TrimSpace(fires), "\n")[1:]
	for i, w := range want {
		if i >= len(rows) || !strings.HasPrefix(rows[i], w) {
			t.Errorf("fire %d: want %q in\n%s", i, w, fires)
		}
	}
	out, _ := readFile(f.dir, "a.out")
	if !strings.HasSuffix(out, "2026-03-04T03:00:00Z\n2026-03-04T04:00:00Z\n2026-03-04T08:00:00Z\n") || strings.Count(out, "\n") != 26 {
		t.Errorf("job_a ran for:\n%s", out)
	}

	// Changed offline from 30 minutes to 1 hour: the next fire comes from
	// the definition.
	f.mustRun("gnomon", "def", "-f", f.file("b.def", "insert_task: job_b\ntype: callable\ncommand: true\nout_log_file: @DIR@/b.out\nerr_log_file: @DIR@/b.err\nstart_date: 2026-03-01 02:00\ninterval: 30 minutes\n"))
	f.stop()
	f.start(utc, simulateFrom("2026-03-04T09:45:00Z"), func(c *ServerConfig) {
		c.Definitions = f.file("b2.def", "insert_task: job_b\ntype: callable\ncommand: true\nout_log_file: @DIR@/b.out\nerr_log_file: @DIR@/b.err\nstart_date: 2026-03-01 02:00\ninterval: 1 hour\n")
	})
	if out := f.mustRun("gnomon", "forecast", "-j", "job_b", "--to", "2026-03-04T11:00:00Z"); out != "2026-03-04T10:00:00Z job_b\n" {
		t.Errorf("forecast after the offline change:\n%s", out)
	}
}

func TestForecastOffline(t *testing.T) {
	t.Parallel()
	f := &fixture{t: t, dir: t.TempDir()}
	file := f.file("dst.def", `insert_task: gap
type: callable
command: true
out_log_file: /tmp/o
err_log_file: /tmp/e
start_times: 02:30

insert_task: every_half
type: callable
command: true
out_log_file: /tmp/o
err_log_file: /tmp/e
cron: */30 1 * * *

insert_task: monthly
type: callable
command: true
out_log_file: /tmp/o
err_log_file: /tmp/e
start_date: 2026-01-31 09:00
interval: 1 month
timezone: Europe/Paris
`)
	// New York springs forward on 8 March and falls back on 1 November.
	out, errs, code := f.run("gnomon", "forecast", "-f", file, "--timezone", "America/New_York", "--from", "2026-03-08", "--to", "2026-03-09")
	if code != 0 || out != "2026-03-08T01:00:00-05:00 every_half\n2026-03-08T01:30:00-05:00 every_half\n2026-03-08T03:00:00-04:00 gap\n" {
		t.Errorf("spring: exit %d\n%s%s", code, out, errs)
	}
	// Times are shown in the zone asked for, with their offset: the hour
	// that happens twice shows both offsets.
	out, _, _ = f.run("gnomon", "forecast", "-f", file, "--timezone", "America/New_York", "--from", "2026-11-01", "--to", "2026-11-02", "-j", "every_half")
	if out != "2026-11-01T01:00:00-04:00 every_half\n2026-11-01T01:30:00-04:00 every_half\n2026-11-01T01:00:00-05:00 every_half\n2026-11-01T01:30:00-05:00 every_half\n" {
		t.Errorf("fall:\n%s", out)
	}
	out, _, _ = f.run("gnomon", "forecast", "-f", file, "--timezone", "UTC", "--from", "2026-01-01T00:00:00Z", "--to", "2026-02-01T00:00:00Z", "-j", "monthly")
	if out != "2026-01-31T08:00:00Z monthly\n" {
		t.Errorf("in UTC:\n%s", out)
	}
	// One task with its own zone is shown in it: Paris moves to summer
	// time on 29 March.
	out, _, _ = f.run("gnomon", "forecast", "-f", file, "-j", "monthly", "--from", "2026-01-01T00:00:00Z", "--to", "2026-05-01T00:00:00Z")
	if out != "2026-01-31T09:00:00+01:00 monthly\n2026-02-28T09:00:00+01:00 monthly\n2026-03-31T09:00:00+02:00 monthly\n2026-04-30T09:00:00+02:00 monthly\n" {
		t.Errorf("monthly in its own zone:\n%s", out)
	}
	out, _, _ = f.run("gnomon", "forecast", "-f", file, "-j", "gap", "--timezone", "America/New_York", "--from", "2026-03-08T12:00:00Z", "--to", "2026-03-08T13:00:00Z")
	if out != "no fires planned for gap from 2026-03-08T08:00:00-04:00 to 2026-03-08T09:00:00-04:00\n" {
		t.Errorf("nothing planned:\n%s", out)
	}
	out, _, _ = f.run("gnomon", "forecast", "-f", file, "-j", "monthly", "--from", "2026-01-01T00:00:00Z", "--to", "2026-05-01T00:00:00Z", "--json")
	var resp api.ForecastResponse
	if err := json.Unmarshal([]byte(out), &resp); err != nil || len(resp.Fires) != 4 || resp.Fires[1].At.Format(time.RFC3339) != "2026-02-28T08:00:00Z" {
		t.Errorf("monthly json: %v\n%s", err, out)
	}
	// Bad input names the attribute and the line.
	bad := f.file("bad.def", "insert_task: x\ntype: callable\ncommand: true\nout_log_file: /o\nerr_log_file: /e\ncron: 0 0 * * 9\n")
	_, errs, code = f.run("gnomon", "forecast", "-f", bad)
	if code != 1 || !strings.Contains(errs, `ERROR `+bad+`:6: insert_task x: cron: day-of-week field "9": value 9 out of range 0-7`) {
		t.Errorf("bad cron: exit %d %q", code, errs)
	}
	_, errs, code = f.run("gnomon", "forecast", "-f", file, "--timezone", "Mars/Base")
	if code != 2 || !strings.Contains(errs, `unknown time zone "Mars/Base"`) {
		t.Errorf("bad zone: exit %d %q", code, errs)
	}
}

// TestForecastZones checks the zone a server's forecast is shown in: the
// one asked for, else the task's own for one task, else the server's; and
// that local times are read in the zone asked for.
func TestForecastZones(t *testing.T) {
	t.Parallel()
	f := setup(t, simulateFrom("2026-03-01T00:00:00Z")) // the server's zone is Europe/Paris
	f.mustRun("schd_def", "-f", f.file("zones.def", `insert_task: ny
type: callable
command: true
out_log_file: @DIR@/ny.out
err_log_file: @DIR@/ny.err
start_times: 01:30,02:30
timezone: America/New_York

insert_task: paris
type: callable
command: true
out_log_file: @DIR@/p.out
err_log_file: @DIR@/p.err
start_times: 02:30
`))
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"one task in its zone, spring forward", []string{"-j", "ny", "--from", "2026-03-08T00:00:00Z", "--to", "2026-03-09T00:00:00Z"},
			"2026-03-08T01:30:00-05:00 ny\n2026-03-08T03:00:00-04:00 ny\n"},
		{"one task in its zone, fall back", []string{"-j", "ny", "--from", "2026-11-01T00:00:00Z", "--to", "2026-11-02T00:00:00Z"},
			"2026-11-01T01:30:00-04:00 ny\n2026-11-01T02:30:00-05:00 ny\n"},
		{"one task without a zone in the server's", []string{"-j", "paris", "--from", "2026-03-29T00:00:00Z", "--to", "2026-03-31T00:00:00Z"},
			"2026-03-29T03:00:00+02:00 paris\n2026-03-30T02:30:00+02:00 paris\n"},
		{"all tasks in the server's zone", []string{"--from", "2026-03-08T00:00:00Z", "--to", "2026-03-09T00:00:00Z"},
			"2026-03-08T02:30:00+01:00 paris\n2026-03-08T07:30:00+01:00 ny\n2026-03-08T08:00:00+01:00 ny\n"},
		{"the zone asked for, local times read in it", []string{"--timezone", "America/New_York", "--from", "2026-03-08 00:00", "--to", "2026-03-09 00:00"},
			"2026-03-08T01:30:00-05:00 ny\n2026-03-08T03:00:00-04:00 ny\n2026-03-08T21:30:00-04:00 paris\n"},
		{"the zone asked for over the task's", []string{"-j", "ny", "--timezone", "Asia/Kolkata", "--from", "2026-03-08T00:00:00Z", "--to", "2026-03-08T07:00:00Z"},
			"2026-03-08T12:00:00+05:30 ny\n"},
		{"nothing planned", []string{"-j", "ny", "--from", "2026-03-08T12:00:00Z", "--to", "2026-03-08T13:00:00Z"},
			"no fires planned for ny from 2026-03-08T08:00:00-04:00 to 2026-03-08T09:00:00-04:00\n"},
	}
	for _, tt := range tests {
		if out := f.mustRun(append([]string{"gnomon", "forecast"}, tt.args...)...); out != tt.want {
			t.Errorf("%s: got\n%swant\n%s", tt.name, out, tt.want)
		}
	}
	if _, errs, code := f.run("gnomon", "forecast", "--timezone", "Mars/Base"); code != 2 || !strings.Contains(errs, `unknown time zone "Mars/Base"`) {
		t.Errorf("bad zone: exit %d %q", code, errs)
	}
	if _, errs, code := f.run("gnomon", "forecast", "--timezone", "UTC", "--from", "tomorrow"); code != 2 || !strings.Contains(errs, "--from: ") {
		t.Errorf("bad --from: exit %d %q", code, errs)
	}
}

func TestClockRefusedOnRealTime(t *testing.T) {
	t.Parallel()
	f := setup(t)
	_, errs, code := f.run("gnomon", "clock", "advance", "--to", "2030-01-01T00:00:00Z")
	if code != 1 || !strings.Contains(errs, "only be moved on a server started with --simulate-from") {
		t.Errorf("exit %d %q", code, errs)
	}
	g := setup(t, simulateFrom("2026-06-01T00:00:00Z"))
	_, errs, code = g.run("gnomon", "clock", "advance", "--to", "2026-05-01T00:00:00Z")
	if code != 2 || !strings.Contains(errs, "the clock cannot go back") {
		t.Errorf("backwards: exit %d %q", code, errs)
	}
	if _, err := g.client.Advance(context.Background(), "soon"); err == nil || !strings.Contains(err.Error(), `to: "soon" is not an instant`) {
		t.Errorf("bad instant: %v", err)
	}
}

// squeeze collapses runs of blanks in each line, for tables, and writes
// the times the tables print (2026-03-04 08:00:00 CET) as the seed's
// (20260304 08:00:00), for tests of what happened when.
func squeeze(s string) string {
	s = gnomonTimeRE.ReplaceAllString(s, "$1$2$3 $4")
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.Join(strings.Fields(l), " ")
	}
	return strings.Join(lines, "\n")
}

// gnomonTimeRE matches a time as the command line prints it.
var gnomonTimeRE = regexp.MustCompile(`(\d{4})-(\d\d)-(\d\d) (\d\d:\d\d:\d\d) (?:[A-Z]{3,5}|[+-]\d\d(?:\d\d)?)\b`)

// On the real clock a task starts at its due instant: the timer is armed
// for the earliest occurrence. The test asks only that each run start
// before the next occurrence of its every-second task is due, a bound
// loose enough for loaded test machines; BENCHMARKS.md has the measured
// lateness, in milliseconds. The command's own clock reading confirms
// that it never runs before its instant; how long after it the process
// starts is the machine's process start-up, which a loaded machine
// stretches beyond any bound, so it is logged, not bounded.
func TestRealTimeFiring(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.mustRun("gnomon", "def", "-f", f.file("tick.def", `insert_task: tick
type: callable
command: echo "$GNOMON_SCHEDULED_TIME $(date +%s.%N)"
out_log_file: @DIR@/tick.out
err_log_file: @DIR@/tick.err
cron: * * * * * *
`))
	f.waitFor("three runs", func() bool {
		rs, err := f.client.Runs(context.Background(), "tick", 3, "")
		return err == nil && len(rs.Runs) == 3
	})
	// A freeze is refused while a run is active; the task is idle most
	// of each second.
	f.waitFor("the freeze to take", func() bool {
		_, _, code := f.run("schd_event", "-j", "tick", "-e", "freeze")
		return code == 0
	})
	rs, _ := f.client.Runs(context.Background(), "tick", 3, "")
	for _, r := range rs.Runs {
		late := r.Start.Sub(r.Scheduled)
		t.Logf("run %d scheduled %s started %v late", r.ID, r.Scheduled.Format(time.RFC3339), late)
		if r.Scheduled.IsZero() || r.Scheduled.Nanosecond() != 0 || late < 0 || late >= time.Second {
			t.Errorf("run %d: scheduled %s, started %v after it", r.ID, r.Scheduled, late)
		}
	}
	out, _ := readFile(f.dir, "tick.out")
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var due string
		var sec, nsec int64
		if _, err := fmt.Sscanf(strings.Replace(l, ".", " ", 1), "%s %d %d", &due, &sec, &nsec); err != nil {
			t.Fatalf("tick.out: %q", l)
		}
		at, err := time.Parse(time.RFC3339, due)
		if err != nil {
			t.Fatalf("tick.out: %q: %v", l, err)
		}
		late := time.Unix(sec, nsec).Sub(at)
		t.Logf("command due at %s started %v after it", due, late)
		if late < 0 {
			t.Errorf("a command due at %s ran %v before it", due, -late)
		}
	}
}

// A server started again with --simulate-from on a data directory whose
// virtual clock went further resumes that clock, and says so, naming
// both instants and how to start from the earlier one.
func TestSimulateFromOnARecordedClock(t *testing.T) {
	singleServer(t, "it reads the server's log")
	t.Parallel()
	var log lockedBuffer
	logTo := func(c *ServerConfig) { c.Logger = slog.New(slog.NewTextHandler(&log, nil)) }
	f := setup(t, simulateFrom("2026-06-01 00:00"), logTo)
	f.mustRun("gnomon", "clock", "advance", "--to", "2026-06-02 00:00")
	if strings.Contains(log.String(), "simulate-from is before") {
		t.Fatalf("a new simulation warned:\n%s", log.String())
	}
	f.stop()
	f.start(simulateFrom("2026-06-01 00:00"), logTo)
	if out := f.mustRun("gnomon", "clock"); out != "2026-06-02 00:00:00 CEST (simulated)\n" {
		t.Errorf("clock after the restart: %q, want where it stopped", out)
	}
	for _, want := range []string{"--simulate-from is before the virtual clock", "simulate_from=2026-05-31T22:00:00Z", "clock=2026-06-01T22:00:00Z", "new data directory"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("the log does not say %q:\n%s", want, log.String())
		}
	}
}
