package calendar

import (
	"strings"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/job"
)

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t.UTC()
}

// fires returns the fires in [from, to) as RFC 3339 instants.
func fires(t *testing.T, s Schedule, from, to string) []string {
	t.Helper()
	ts, _ := Between(s, utc(from), utc(to), 1000)
	out := make([]string, len(ts))
	for i, x := range ts {
		out[i] = x.Format(time.RFC3339)
	}
	return out
}

func check(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("%s:\n got %v\nwant %v", what, got, want)
	}
}

func clocks(v ...int) []job.Clock {
	out := make([]job.Clock, len(v))
	for i, m := range v {
		out[i] = job.Clock(m)
	}
	return out
}

// Expectations worked out by hand from the zones' published rules.
func TestDSTExamples(t *testing.T) {
	ny := mustLoad(t, "America/New_York")
	// 8 March 2026: 02:00 EST becomes 03:00 EDT. 02:30 does not exist and
	// fires at 03:00 EDT (07:00Z); 03:00 itself collapses into it.
	check(t, "New York spring gap",
		fires(t, NewBatch(0, clocks(2*60+30, 3*60), ny), "2026-03-08T00:00:00Z", "2026-03-09T00:00:00Z"),
		"2026-03-08T07:00:00Z")
	// 1 November 2026: 02:00 EDT becomes 01:00 EST. 01:30 happens twice
	// and fires at its first occurrence only (05:30Z).
	check(t, "New York fall-back batch",
		fires(t, NewBatch(0, clocks(90), ny), "2026-11-01T00:00:00Z", "2026-11-02T00:00:00Z"),
		"2026-11-01T05:30:00Z")
	// A stepping cron follows elapsed time through the repeated hour.
	c, _ := ParseCron("*/30 1 * * *", ny)
	check(t, "New York fall-back */30",
		fires(t, c, "2026-11-01T00:00:00Z", "2026-11-02T00:00:00Z"),
		"2026-11-01T05:00:00Z", "2026-11-01T05:30:00Z", "2026-11-01T06:00:00Z", "2026-11-01T06:30:00Z")
	// A fixed cron does not.
	c, _ = ParseCron("30 1 * * *", ny)
	check(t, "New York fall-back fixed cron",
		fires(t, c, "2026-11-01T00:00:00Z", "2026-11-02T00:00:00Z"), "2026-11-01T05:30:00Z")
	// Every 15 minutes over the gap: 01:45 EST, then 03:00 EDT (02:xx are
	// folded into the first instant after the gap), no slot doubled.
	c, _ = ParseCron("*/15 * * * *", ny)
	check(t, "New York spring */15",
		fires(t, c, "2026-03-08T06:30:00Z", "2026-03-08T07:31:00Z"),
		"2026-03-08T06:30:00Z", "2026-03-08T06:45:00Z", "2026-03-08T07:00:00Z", "2026-03-08T07:15:00Z", "2026-03-08T07:30:00Z")

	// Lord Howe moves by 30 minutes: on 4 October 2026 02:00 (+10:30)
	// becomes 02:30 (+11). 02:15 fires at 02:30 (15:30Z on the 3rd).
	lh := mustLoad(t, "Australia/Lord_Howe")
	check(t, "Lord Howe spring gap",
		fires(t, NewBatch(0, clocks(2*60+15), lh), "2026-10-03T00:00:00Z", "2026-10-04T00:00:00Z"),
		"2026-10-03T15:30:00Z")
	// On 5 April 2026 02:00 (+11) becomes 01:30 (+10:30): 01:45 happens
	// twice; a batch fires once (14:45Z on the 4th), a window twice.
	check(t, "Lord Howe fall-back batch",
		fires(t, NewBatch(0, clocks(105), lh), "2026-04-04T00:00:00Z", "2026-04-05T00:00:00Z"),
		"2026-04-04T14:45:00Z")
	check(t, "Lord Howe fall-back window",
		fires(t, NewWindow(0, job.Window{Start: 90, End: 120}, []int{45}, lh), "2026-04-04T00:00:00Z", "2026-04-05T00:00:00Z"),
		"2026-04-04T14:45:00Z", "2026-04-04T15:15:00Z")

	// Santiago changes at midnight. On 6 September 2026 00:00 (-04)
	// becomes 01:00 (-03): a midnight job runs at 01:00 -03 (04:00Z).
	scl := mustLoad(t, "America/Santiago")
	check(t, "Santiago midnight gap",
		fires(t, NewBatch(0, clocks(0), scl), "2026-09-05T00:00:00Z", "2026-09-07T00:00:00Z"),
		"2026-09-05T04:00:00Z", "2026-09-06T04:00:00Z")
	// On 5 April 2026 00:00 (-03) becomes 23:00 (-04) on the 4th: 23:30 on
	// the 4th happens twice and fires at 02:30Z only.
	check(t, "Santiago midnight overlap",
		fires(t, NewBatch(0, clocks(23*60+30), scl), "2026-04-04T12:00:00Z", "2026-04-05T12:00:00Z"),
		"2026-04-05T02:30:00Z")
	// A day that starts with a gap still belongs to its weekday: the
	// Sunday-only run at 00:00 on Sunday 6 September runs at 01:00.
	check(t, "Santiago run_days over the gap",
		fires(t, NewBatch(job.Days(1<<time.Sunday), clocks(0), scl), "2026-09-01T00:00:00Z", "2026-09-14T00:00:00Z"),
		"2026-09-06T04:00:00Z", "2026-09-13T03:00:00Z")
}

func TestSeedWindows(t *testing.T) {
	// spec/tasks.md §2.8: 04:00-08:00 with 15,30,45 → 04:15 … 07:45 (12).
	w := NewWindow(0, job.Window{Start: 4 * 60, End: 8 * 60}, []int{15, 30, 45}, time.UTC)
	got := fires(t, w, "2026-06-01T00:00:00Z", "2026-06-02T00:00:00Z")
	if len(got) != 12 || got[0] != "2026-06-01T04:15:00Z" || got[11] != "2026-06-01T07:45:00Z" {
		t.Errorf("04:00-08:00: %v", got)
	}
	check(t, "00:10-02:50 + 20,40",
		fires(t, NewWindow(0, job.Window{Start: 10, End: 170}, []int{20, 40}, time.UTC), "2026-06-01T00:00:00Z", "2026-06-02T00:00:00Z"),
		"2026-06-01T00:20:00Z", "2026-06-01T00:40:00Z", "2026-06-01T01:20:00Z", "2026-06-01T01:40:00Z", "2026-06-01T02:20:00Z", "2026-06-01T02:40:00Z")
	// run_days fr, 23:00-01:00, minute 30 → Friday 23:30 and Saturday
	// 00:30 only. 5 June 2026 is a Friday.
	check(t, "overnight window",
		fires(t, NewWindow(job.Days(1<<time.Friday), job.Window{Start: 23 * 60, End: 60}, []int{30}, time.UTC), "2026-06-01T00:00:00Z", "2026-06-08T00:00:00Z"),
		"2026-06-05T23:30:00Z", "2026-06-06T00:30:00Z")
	// Both ends are inclusive.
	check(t, "inclusive ends",
		fires(t, NewWindow(0, job.Window{Start: 10*60 + 5, End: 10*60 + 35}, []int{5, 35}, time.UTC), "2026-06-01T00:00:00Z", "2026-06-02T00:00:00Z"),
		"2026-06-01T10:05:00Z", "2026-06-01T10:35:00Z")
}

func interval(t *testing.T, start, end, every string) Schedule {
	t.Helper()
	s, err := IntervalOf(start, end, every, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func next(t *testing.T, s Schedule, after string) string {
	t.Helper()
	n, ok := s.Next(utc(after))
	if !ok {
		return "never"
	}
	return n.Format(time.RFC3339)
}

// The examples of seed 004 (MISSION.md §3): the next fire comes from the
// definition, never from the run log, and missed fires are not made up.
func TestSeedIntervals(t *testing.T) {
	hourly := interval(t, "2026-03-01 01:00", "", "1 hour")
	check(t, "started 03 Mar 03:05", []string{next(t, hourly, "2026-03-03T03:05:00Z")}, "2026-03-03T04:00:00Z")
	check(t, "restarted 04 Mar 07:30", []string{next(t, hourly, "2026-03-04T07:30:00Z")}, "2026-03-04T08:00:00Z")
	changed := interval(t, "2026-03-01 02:00", "", "1 hour") // was every 30 minutes
	check(t, "changed offline, restarted 03:45", []string{next(t, changed, "2026-03-03T03:45:00Z")}, "2026-03-03T04:00:00Z")
	bounded := interval(t, "2026-03-01 03:15", "2026-03-01 07:30", "1 hour")
	check(t, "03:15 to 07:30 hourly", fires(t, bounded, "2026-02-28T00:00:00Z", "2026-03-05T00:00:00Z"),
		"2026-03-01T03:15:00Z", "2026-03-01T04:15:00Z", "2026-03-01T05:15:00Z", "2026-03-01T06:15:00Z", "2026-03-01T07:15:00Z")
	// The end is inclusive.
	check(t, "end inclusive", fires(t, interval(t, "2026-03-01 00:00", "2026-03-01 02:00", "1 hour"), "2026-03-01T00:00:00Z", "2026-03-02T00:00:00Z"),
		"2026-03-01T00:00:00Z", "2026-03-01T01:00:00Z", "2026-03-01T02:00:00Z")
	// A start date alone runs once.
	once := interval(t, "2026-03-01 12:00", "", "")
	check(t, "once", fires(t, once, "2026-01-01T00:00:00Z", "2027-01-01T00:00:00Z"), "2026-03-01T12:00:00Z")
	check(t, "once, after", []string{next(t, once, "2026-03-01T12:00:00Z")}, "never")
}

func TestIntervalCalendarUnits(t *testing.T) {
	monthly := interval(t, "2026-01-31 09:00", "", "1 month")
	check(t, "31 Jan + k months", fires(t, monthly, "2026-01-01T00:00:00Z", "2026-06-01T00:00:00Z"),
		"2026-01-31T09:00:00Z", "2026-02-28T09:00:00Z", "2026-03-31T09:00:00Z", "2026-04-30T09:00:00Z", "2026-05-31T09:00:00Z")
	leap := interval(t, "2024-02-29", "", "1 year")
	check(t, "29 Feb yearly", fires(t, leap, "2024-01-01T00:00:00Z", "2029-01-01T00:00:00Z"),
		"2024-02-29T00:00:00Z", "2025-02-28T00:00:00Z", "2026-02-28T00:00:00Z", "2027-02-28T00:00:00Z", "2028-02-29T00:00:00Z")
	check(t, "every 2 weeks", fires(t, interval(t, "2026-03-02 08:00", "", "2 weeks"), "2026-03-10T00:00:00Z", "2026-04-01T00:00:00Z"),
		"2026-03-16T08:00:00Z", "2026-03-30T08:00:00Z")
	check(t, "far from the start", []string{next(t, interval(t, "1990-01-31 00:00", "", "1 month"), "2026-02-15T00:00:00Z")}, "2026-02-28T00:00:00Z")

	// Days keep the wall-clock time across DST; hours count elapsed time.
	ny := mustLoad(t, "America/New_York")
	daily, _ := IntervalOf("2026-03-07 09:00", "", "1 day", ny)
	check(t, "daily over spring DST", fires(t, daily, "2026-03-07T00:00:00Z", "2026-03-09T20:00:00Z"),
		"2026-03-07T14:00:00Z", "2026-03-08T13:00:00Z", "2026-03-09T13:00:00Z")
	sixHours, _ := IntervalOf("2026-03-07 22:00", "", "6 hours", ny)
	check(t, "6 hours over spring DST", fires(t, sixHours, "2026-03-08T00:00:00Z", "2026-03-08T16:00:00Z"),
		"2026-03-08T03:00:00Z", "2026-03-08T09:00:00Z", "2026-03-08T15:00:00Z")
	// A daily start in the gap fires at the end of the gap on that day.
	gap, _ := IntervalOf("2026-03-07 02:30", "", "1 day", ny)
	check(t, "daily 02:30 over the gap", fires(t, gap, "2026-03-07T00:00:00Z", "2026-03-09T12:00:00Z"),
		"2026-03-07T07:30:00Z", "2026-03-08T07:00:00Z", "2026-03-09T06:30:00Z")
}

func TestCron(t *testing.T) {
	cases := []struct {
		expr, after string
		want        []string
	}{
		{"0 9 * * mon-fri", "2026-06-05T10:00:00Z", []string{"2026-06-08T09:00:00Z", "2026-06-09T09:00:00Z"}},
		{"0 0 1,15 * *", "2026-06-02T00:00:00Z", []string{"2026-06-15T00:00:00Z", "2026-07-01T00:00:00Z"}},
		// Vixie: both day fields restricted → either matches. 13 June
		// 2026 is a Saturday; Fridays are the 5th, 12th, 19th.
		{"0 0 13 * 5", "2026-06-04T00:00:00Z", []string{"2026-06-05T00:00:00Z", "2026-06-12T00:00:00Z", "2026-06-13T00:00:00Z"}},
		// A '*'-led day-of-week leaves the day of month alone in charge.
		{"0 0 13 * */1", "2026-06-04T00:00:00Z", []string{"2026-06-13T00:00:00Z", "2026-07-13T00:00:00Z"}},
		{"30 4 * jan,JUL SUN", "2026-06-01T00:00:00Z", []string{"2026-07-05T04:30:00Z", "2026-07-12T04:30:00Z"}},
		{"0 0 * * 7", "2026-06-01T00:00:00Z", []string{"2026-06-07T00:00:00Z"}},
		{"@hourly", "2026-06-01T10:59:59Z", []string{"2026-06-01T11:00:00Z", "2026-06-01T12:00:00Z"}},
		{"@monthly", "2026-06-01T00:00:00Z", []string{"2026-07-01T00:00:00Z"}},
		{"@yearly", "2026-06-01T00:00:00Z", []string{"2027-01-01T00:00:00Z"}},
		{"@weekly", "2026-06-01T00:00:00Z", []string{"2026-06-07T00:00:00Z"}},
		{"0 0 29 2 *", "2026-03-01T00:00:00Z", []string{"2028-02-29T00:00:00Z", "2032-02-29T00:00:00Z"}},
		{"*/20 * * * * *", "2026-06-01T00:00:05Z", []string{"2026-06-01T00:00:20Z", "2026-06-01T00:00:40Z", "2026-06-01T00:01:00Z"}},
		{"5/20 0 * * *", "2026-06-01T00:00:00Z", []string{"2026-06-01T00:05:00Z", "2026-06-01T00:25:00Z", "2026-06-01T00:45:00Z", "2026-06-02T00:05:00Z"}},
		// Steps in day of week range over 0-6: Sunday once, not as 7 too.
		{"0 0 * * Mon/2", "2026-05-31T12:00:00Z", []string{"2026-06-01T00:00:00Z", "2026-06-03T00:00:00Z", "2026-06-05T00:00:00Z", "2026-06-08T00:00:00Z"}},
		{"0 0 * * 0/3", "2026-05-30T12:00:00Z", []string{"2026-05-31T00:00:00Z", "2026-06-03T00:00:00Z", "2026-06-06T00:00:00Z", "2026-06-07T00:00:00Z"}},
		{"0 0 * * 1-7/2", "2026-05-30T12:00:00Z", []string{"2026-05-31T00:00:00Z", "2026-06-01T00:00:00Z", "2026-06-03T00:00:00Z", "2026-06-05T00:00:00Z", "2026-06-07T00:00:00Z"}},
	}
	for _, c := range cases {
		s, err := ParseCron(c.expr, time.UTC)
		if c.want == nil {
			if err == nil {
				t.Errorf("%q: accepted a backwards range", c.expr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", c.expr, err)
			continue
		}
		var got []string
		at := utc(c.after)
		for range c.want {
			n, ok := s.Next(at)
			if !ok {
				break
			}
			got = append(got, n.Format(time.RFC3339))
			at = n
		}
		check(t, c.expr, got, c.want...)
	}
}

func TestCronErrors(t *testing.T) {
	cases := map[string]string{
		"":                  "has 0 fields",
		"* * * *":           "has 4 fields",
		"60 * * * *":        "minute field \"60\": value 60 out of range 0-59",
		"* 24 * * *":        "hour field \"24\": value 24 out of range 0-23",
		"* * 0 * *":         "day-of-month field \"0\": value 0 out of range 1-31",
		"* * * 13 *":        "month field \"13\"",
		"* * * * 8":         "day-of-week field \"8\"",
		"*/0 * * * *":       "step \"0\" should be a positive number",
		"* * * foo *":       "\"foo\" is not a number or a name",
		"1,,2 * * * *":      "empty item",
		"0 0 30 2 *":        "never fires",
		"0 0 31 4,6,9,11 *": "never fires",
		"@reboot":           "unknown shortcut",
		"-1 * * * *":        "not a number",
	}
	for expr, want := range cases {
		_, err := ParseCron(expr, time.UTC)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want it to contain %q", expr, err, want)
		}
	}
	// 30 February with a restricted day of week is fine: Vixie ORs them.
	if _, err := ParseCron("0 0 30 2 mon", time.UTC); err != nil {
		t.Errorf("30 2 mon: %v", err)
	}
}

func TestIntervalErrors(t *testing.T) {
	cases := []struct{ start, end, every, want string }{
		{"2026-03-01 04:00", "2026-03-01 03:00", "1 hour", "end_date: 2026-03-01 03:00 is before start_date 2026-03-01 04:00"},
		{"2026-03-01 04:00", "", "0 hours", "should be a positive number"},
		{"2026-03-01 04:00", "", "-5 minutes", "should be a positive number"},
		{"2026-03-01 04:00", "", "3 fortnights", "unknown unit \"fortnights\""},
		{"2026-03-01 04:00", "", "hourly", "should be a number and a unit"},
		{"2026-02-30 04:00", "", "1 day", "start_date: \"2026-02-30 04:00\" is not a date"},
		{"2026-03-01 25:00", "", "1 day", "start_date"},
		{"yesterday", "", "1 day", "start_date"},
	}
	for _, c := range cases {
		_, err := IntervalOf(c.start, c.end, c.every, time.UTC)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want %q", c, err, c.want)
		}
	}
	if e, err := ParseEvery("2 Weeks"); err != nil || e.String() != "2 weeks" {
		t.Errorf("2 Weeks: %v %v", e, err)
	}
}

func FuzzParseCron(f *testing.F) {
	for _, s := range []string{"*/15 * * * *", "0 9 * * mon-fri", "5/20 0 1,15 jan-jun *", "@daily", "*/10 * * * * *", "0 0 29 2 *",
		"0 0 L * ?", "0 0 L-3,15W * *", "0 0 LW * *", "0 0 ? * 5L", "0 0 ? * fri#3,mon#1", "0 0 0 ? * 5#3 2027-2030", "0 0 0 1 1 ? */4",
		"@every 90m", "0 0 * * fri-mon", "0 22-2/2 * * *", "0 0 1 nov-feb *", "0 9 * * mon 30", "*/61 * * * *",
		"0 0 L-3W * *", "0 0 L-1W,L-1 * ?", "0 0 29-L * *", "35 * 1-L/8 * *", "0 0 * * friday", "0 0 1 january *", "@always",
		"@everysecond", "@30minutes", "30 15 4 11 * 2024"} {
		f.Add(s)
	}
	at := utc("2026-11-01T05:00:00Z")
	ny, _ := time.LoadLocation("America/New_York")
	f.Fuzz(func(t *testing.T, expr string) {
		c, err := ParseCron(expr, ny)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "cron: ") {
				t.Fatalf("error without the attribute name: %v", err)
			}
			return
		}
		// An accepted expression has a next fire (within the horizon),
		// after the instant asked.
		n, ok := c.Next(at)
		if !ok && c.years != nil {
			return // its year field ends before
		}
		if !ok {
			t.Fatalf("%q accepted but never fires", expr)
		}
		if !n.After(at) {
			t.Fatalf("%q: Next(%s) = %s", expr, at, n)
		}
	})
}

func FuzzParseInterval(f *testing.F) {
	f.Add("2026-03-01 01:00", "2026-03-02 00:00", "1 hour")
	f.Add("2026-01-31", "", "1 month")
	f.Add("2024-02-29T00:00:30", "", "3 years")
	at := utc("2026-06-01T00:00:00Z")
	f.Fuzz(func(t *testing.T, start, end, every string) {
		s, err := IntervalOf(start, end, every, time.UTC)
		if err != nil {
			return
		}
		n, ok := s.Next(at)
		if ok && !n.After(at) {
			t.Fatalf("Next(%s) = %s", at, n)
		}
		// The start round-trips through its canonical form.
		d, _ := ParseDateTime(start)
		if d2, err := ParseDateTime(d.String()); err != nil || d2 != d {
			t.Fatalf("%q → %q → %v %v", start, d, d2, err)
		}
	})
}

func TestForecastMerges(t *testing.T) {
	a, _ := ParseCron("0 * * * *", time.UTC)
	b, _ := ParseCron("*/30 * * * *", time.UTC)
	got, more := Forecast(map[string]Schedule{"b": b, "a": a, "none": nil}, utc("2026-06-01T00:00:00Z"), utc("2026-06-01T01:01:00Z"), 0)
	var s []string
	for _, p := range got {
		s = append(s, p.At.Format("15:04")+" "+p.Task)
	}
	check(t, "merged", s, "00:00 a", "00:00 b", "00:30 b", "01:00 a", "01:00 b")
	if more {
		t.Error("more reported without a limit")
	}
	if got, more := Forecast(map[string]Schedule{"b": b}, utc("2026-06-01T00:00:00Z"), utc("2026-06-02T00:00:00Z"), 3); len(got) != 3 || !more {
		t.Errorf("limit: %d, %v", len(got), more)
	}
}

func TestParseInstant(t *testing.T) {
	ny := mustLoad(t, "America/New_York")
	for in, want := range map[string]string{
		"2026-03-08T07:00:00Z":      "2026-03-08T07:00:00Z",
		"2026-03-08T03:00:00+01:00": "2026-03-08T02:00:00Z",
		"2026-03-08 02:30":          "2026-03-08T07:00:00Z", // in the gap: its end
		"2026-11-01 01:30":          "2026-11-01T05:30:00Z", // twice: the first
		"2026-06-01":                "2026-06-01T04:00:00Z",
	} {
		got, err := ParseInstant(in, ny)
		if err != nil || got.Format(time.RFC3339) != want {
			t.Errorf("%s: %s %v, want %s", in, got.Format(time.RFC3339), err, want)
		}
	}
	if _, err := ParseInstant("tomorrow", ny); err == nil {
		t.Error("tomorrow accepted")
	}
}

// A cron whose days come round rarely keeps firing: the search for the
// next day runs until the Gregorian calendar repeats (400 years).
func TestCronFarApart(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		expr, zone, after string
		want              []string
	}{
		{"0 0 31 12 */7", "UTC", "2026-01-01T00:00:00Z", []string{
			"2028-12-31T00:00:00Z", "2034-12-31T00:00:00Z", "2045-12-31T00:00:00Z", "2051-12-31T00:00:00Z", "2056-12-31T00:00:00Z"}},
		{"0 0 29 2 */7", "UTC", "2026-01-01T00:00:00Z", []string{
			"2032-02-29T00:00:00Z", "2060-02-29T00:00:00Z", "2088-02-29T00:00:00Z", "2128-02-29T00:00:00Z", "2156-02-29T00:00:00Z"}},
		// 2100 is not a leap year: 2096 to 2108 is twelve years.
		{"30 1 29 2 *", "Europe/Paris", "2095-01-01T00:00:00Z", []string{"2096-02-29T00:30:00Z", "2104-02-29T00:30:00Z"}},
	} {
		loc, err := time.LoadLocation(c.zone)
		if err != nil {
			t.Fatal(err)
		}
		s, err := ParseCron(c.expr, loc)
		if err != nil {
			t.Errorf("%q: %v", c.expr, err)
			continue
		}
		got, _ := Between(s, utc(c.after), utc("2300-01-01T00:00:00Z"), len(c.want))
		var texts []string
		for _, g := range got {
			texts = append(texts, g.Format(time.RFC3339))
		}
		check(t, c.expr, texts, c.want...)
	}
}

// Cron dialects: Quartz's ?, L, W and #, a year field, @every, wrapping
// ranges, each read as docs/definitions.md ("Cron expressions") says; the
// next fires from an instant, in a zone.
func TestCronDialects(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		expr, zone, after string
		want              []string
	}{
		{"0 0 L * ?", "UTC", "2026-01-15T00:00:00Z", []string{"2026-01-31T00:00:00Z", "2026-02-28T00:00:00Z", "2026-03-31T00:00:00Z"}},
		{"0 0 L-3 * *", "UTC", "2026-01-01T00:00:00Z", []string{"2026-01-28T00:00:00Z", "2026-02-25T00:00:00Z", "2026-03-28T00:00:00Z"}},
		{"0 0 LW * *", "UTC", "2026-04-01T00:00:00Z", []string{"2026-04-30T00:00:00Z", "2026-05-29T00:00:00Z", "2026-06-30T00:00:00Z"}},
		{"0 0 15W * *", "UTC", "2026-02-01T00:00:00Z", []string{"2026-02-16T00:00:00Z", "2026-03-16T00:00:00Z", "2026-04-15T00:00:00Z"}},
		{"0 0 1W * *", "UTC", "2026-07-15T00:00:00Z", []string{"2026-08-03T00:00:00Z", "2026-09-01T00:00:00Z"}},
		{"0 0 ? * 5L", "UTC", "2026-01-01T00:00:00Z", []string{"2026-01-30T00:00:00Z", "2026-02-27T00:00:00Z", "2026-03-27T00:00:00Z"}},
		{"0 0 ? * fri#3", "UTC", "2026-01-01T00:00:00Z", []string{"2026-01-16T00:00:00Z", "2026-02-20T00:00:00Z", "2026-03-20T00:00:00Z"}},
		{"0 0 0 ? * 5#3 2027", "UTC", "2026-01-01T00:00:00Z", []string{"2027-01-15T00:00:00Z", "2027-02-19T00:00:00Z", "2027-03-19T00:00:00Z"}},
		{"0 30 9 1 1 ? 2026-2027", "UTC", "2025-06-01T00:00:00Z", []string{"2026-01-01T09:30:00Z", "2027-01-01T09:30:00Z"}},
		{"@every 90m", "Europe/Paris", "2026-03-08T06:00:00Z", []string{"2026-03-08T07:30:00Z", "2026-03-08T09:00:00Z"}},
		{"@every 1h30m", "UTC", "2026-03-08T06:10:00Z", []string{"2026-03-08T07:30:00Z"}},
		// @every counts elapsed time: the night Paris moves its clocks on,
		// every hour still comes.
		{"@every 1h", "Europe/Paris", "2026-03-29T00:30:00Z", []string{"2026-03-29T01:00:00Z", "2026-03-29T02:00:00Z", "2026-03-29T03:00:00Z"}},
		{"@every 1h", "Europe/Paris", "2026-10-25T00:30:00Z", []string{"2026-10-25T01:00:00Z", "2026-10-25T02:00:00Z"}},
		{"0 0 * * fri-mon", "UTC", "2026-06-03T00:00:00Z", []string{"2026-06-05T00:00:00Z", "2026-06-06T00:00:00Z", "2026-06-07T00:00:00Z", "2026-06-08T00:00:00Z", "2026-06-12T00:00:00Z"}},
		{"0 22-2 * * *", "UTC", "2026-06-01T12:00:00Z", []string{"2026-06-01T22:00:00Z", "2026-06-01T23:00:00Z", "2026-06-02T00:00:00Z", "2026-06-02T01:00:00Z", "2026-06-02T02:00:00Z", "2026-06-02T22:00:00Z"}},
		{"0 22-2/2 * * *", "UTC", "2026-06-01T12:00:00Z", []string{"2026-06-01T22:00:00Z", "2026-06-02T00:00:00Z", "2026-06-02T02:00:00Z", "2026-06-02T22:00:00Z"}},
		{"0 0 1 nov-feb *", "UTC", "2026-06-01T00:00:00Z", []string{"2026-11-01T00:00:00Z", "2026-12-01T00:00:00Z", "2027-01-01T00:00:00Z", "2027-02-01T00:00:00Z", "2027-11-01T00:00:00Z"}},
		{"0 0 28-2 2 *", "UTC", "2026-01-01T00:00:00Z", []string{"2026-02-01T00:00:00Z", "2026-02-02T00:00:00Z", "2026-02-28T00:00:00Z", "2027-02-01T00:00:00Z"}},
		// 2:30 on the second Sunday of March is in New York's gap: the end
		// of the gap; on the last Sunday of October in Berlin it comes
		// twice: the first.
		{"0 30 2 ? 3 sun#2", "America/New_York", "2026-01-01T00:00:00Z", []string{"2026-03-08T07:00:00Z", "2027-03-14T07:00:00Z"}},
		{"0 30 2 ? 10 0L", "Europe/Berlin", "2026-01-01T00:00:00Z", []string{"2026-10-25T00:30:00Z", "2027-10-31T00:30:00Z"}},
		{"0 0 L * *", "Asia/Tokyo", "2026-02-01T00:00:00Z", []string{"2026-02-27T15:00:00Z", "2026-03-30T15:00:00Z"}},
		// L-nW: the weekday nearest n days before the last. 2026: January
		// 28th is a Wednesday; 28 March a Saturday, so Friday the 27th;
		// 26 April (L-4 of 30) a Sunday, so Monday the 27th.
		{"0 0 L-3W * *", "UTC", "2026-01-01T00:00:00Z", []string{"2026-01-28T00:00:00Z", "2026-02-25T00:00:00Z", "2026-03-27T00:00:00Z"}},
		{"0 0 L-4W 4 ?", "UTC", "2026-01-01T00:00:00Z", []string{"2026-04-27T00:00:00Z", "2027-04-26T00:00:00Z"}},
		// With the last day itself: the 29th of a 31-day month is L-2.
		{"0 0 L-2W,L * *", "UTC", "2026-05-01T00:00:00Z", []string{"2026-05-29T00:00:00Z", "2026-05-31T00:00:00Z", "2026-06-29T00:00:00Z", "2026-06-30T00:00:00Z"}},
		// a-L: the ath to the last day of the month; 2028 is a leap year.
		{"0 0 29-L * *", "UTC", "2027-12-31T12:00:00Z", []string{"2028-01-29T00:00:00Z", "2028-01-30T00:00:00Z", "2028-01-31T00:00:00Z", "2028-02-29T00:00:00Z", "2028-03-29T00:00:00Z"}},
		{"0 0 30-l * *", "UTC", "2027-01-31T12:00:00Z", []string{"2027-03-30T00:00:00Z", "2027-03-31T00:00:00Z", "2027-04-30T00:00:00Z"}},
		{"35 * 1-L/8 * *", "UTC", "2026-01-25T01:00:00Z", []string{"2026-01-25T01:35:00Z", "2026-01-25T02:35:00Z"}},
		{"0 12 1-L/8,L * *", "Europe/Paris", "2026-02-01T12:00:00Z", []string{"2026-02-09T11:00:00Z", "2026-02-17T11:00:00Z", "2026-02-25T11:00:00Z", "2026-02-28T11:00:00Z", "2026-03-01T11:00:00Z"}},
		// Names in full, as cronexpr takes them.
		{"0 0 * * friday", "UTC", "2026-01-01T00:00:00Z", []string{"2026-01-02T00:00:00Z", "2026-01-09T00:00:00Z"}},
		{"0 0 1 january,JULY *", "UTC", "2026-01-01T00:00:00Z", []string{"2026-07-01T00:00:00Z", "2027-01-01T00:00:00Z"}},
		{"0 0 * * monday-wednesday", "UTC", "2026-01-01T00:00:00Z", []string{"2026-01-05T00:00:00Z", "2026-01-06T00:00:00Z", "2026-01-07T00:00:00Z", "2026-01-12T00:00:00Z"}},
		{"0 0 ? * friday#3", "UTC", "2026-01-01T00:00:00Z", []string{"2026-01-16T00:00:00Z", "2026-02-20T00:00:00Z"}},
		// gronx's shortcuts.
		{"@always", "UTC", "2026-01-01T00:00:30Z", []string{"2026-01-01T00:01:00Z", "2026-01-01T00:02:00Z"}},
		{"@everysecond", "UTC", "2026-01-01T00:00:30Z", []string{"2026-01-01T00:00:31Z", "2026-01-01T00:00:32Z"}},
		{"@5minutes", "UTC", "2026-01-01T00:03:00Z", []string{"2026-01-01T00:05:00Z", "2026-01-01T00:10:00Z"}},
		{"@10minutes", "UTC", "2026-01-01T00:03:00Z", []string{"2026-01-01T00:10:00Z", "2026-01-01T00:20:00Z"}},
		{"@15minutes", "UTC", "2026-01-01T00:03:00Z", []string{"2026-01-01T00:15:00Z", "2026-01-01T00:30:00Z"}},
		{"@30minutes", "UTC", "2026-01-01T00:03:00Z", []string{"2026-01-01T00:30:00Z", "2026-01-01T01:00:00Z"}},
	} {
		loc, err := time.LoadLocation(c.zone)
		if err != nil {
			t.Fatal(err)
		}
		s, err := ParseCron(c.expr, loc)
		if err != nil {
			t.Errorf("%q: %v", c.expr, err)
			continue
		}
		got, _ := Between(s, utc(c.after).Add(time.Nanosecond), utc("2300-01-01T00:00:00Z"), len(c.want)+1)
		var texts []string
		for _, g := range got {
			texts = append(texts, g.Format(time.RFC3339))
		}
		if c.expr == "0 30 9 1 1 ? 2026-2027" {
			check(t, c.expr, texts, c.want...) // none after its last year
			continue
		}
		check(t, c.expr, texts[:min(len(texts), len(c.want))], c.want...)
	}
}

// Refused forms name the field and say how to write what was meant.
func TestCronDialectErrors(t *testing.T) {
	t.Parallel()
	for expr, want := range map[string]string{
		"*/61 * * * *":          `minute field "*/61": step 61 is larger than the field, which has 60 values (0-59)`,
		"0 */25 * * *":          `hour field "*/25": step 25 is larger than the field`,
		"0 0 * * */8":           `day-of-week field "*/8": step 8 is larger than the field, which has 7 values (0-6)`,
		"0 0 * * L":             "L alone is ambiguous in the day of week",
		"0 0 L-31 * *":          "L-n and L-nW want n from 1 to 30",
		"0 0 L-31W * *":         "L-n and L-nW want n from 1 to 30",
		"0 0 32W * *":           "nW wants a day from 1 to 31",
		"0 0 L/2 * *":           "the day of month takes L, L-n, LW, L-nW and nW (15W), and L as the end of a range",
		"0 0 L-5 * *,":          "empty item",
		"0 0 1-L/40 * *":        `day-of-month field "1-L/40": step 40 is larger than the field`,
		"@fortnightly":          "unknown shortcut",
		"0 0 ? * fri#6":         "n#k wants k from 1 to 5",
		"? 0 * * *":             "? stands for * in a day field",
		"0 0 0 1 1 ? 2100":      `year field "2100": value 2100 out of range 1970-2099`,
		"0 0 0 1 1 ? 2030-2029": "range 2030-2029 goes backwards",
		"@every":                "@every takes one duration",
		"@every 500ms":          "want a duration of whole seconds",
		"@every soon":           "want a duration of whole seconds",
		"* * * * * * * *":       "has 8 fields",
		"0 0 0 30 2 ? 2027":     "never fires",
		"0 0 0 29 2 ? 2027":     "never fires",
		// Seconds last (croniter): the refusal says how to write it.
		"0 9 * * mon 30": `move the last field to the front: "30 0 9 * * mon"`,
		// A year last after five fields (gronx, cronexpr): the refusal
		// says how to write it.
		"30 15 4 11 * 2027": `with a year last, as gronx and cronexpr write them, add a second in front: "0 30 15 4 11 * 2027"`,
	} {
		_, err := ParseCron(expr, time.UTC)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want it to contain %q", expr, err, want)
		}
	}
}
