package calendar

import (
	"strings"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/job"
)

func date(t testing.TB, s string) Date {
	t.Helper()
	d, err := ParseDate(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// days lists the dates a calendar holds in [from, to] as text.
func days(t testing.TB, s *DaySet, from, to string) string {
	t.Helper()
	ds, _ := s.Between(date(t, from), date(t, to), 0)
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.String()
	}
	return strings.Join(out, " ")
}

func compile(t testing.TB, c *job.Calendar, others ...*DaySet) *DaySet {
	t.Helper()
	s, err := Compile(c, func(name string) *DaySet {
		for _, o := range others {
			if o.Name() == name {
				return o
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestParseRuleCanonical(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want string }{
		{"daily", "daily"},
		{"every day", "daily"},
		{"Weekdays", "weekdays"},
		{"every weekday", "weekdays"},
		{"weekends", "weekends"},
		{"every weekend day", "weekends"},
		{"business days", "business days"},
		{"every business day", "business days"},
		{"every monday", "every monday"},
		{"every Thu, mon", "every monday,thursday"},
		{"mondays, fridays", "every monday,friday"},
		{"every sat,su", "weekends"},
		{"every mo,tu,we,th,fr", "weekdays"},
		{"last business day of the month", "last business day of month"},
		{"last business day", "last business day of month"},
		{"first day of month", "1st day of month"},
		{"last day of the month", "last day of month"},
		{"every 2nd Tuesday", "2nd tuesday of month"},
		{"second tuesday of month", "2nd tuesday of month"},
		{"the 3rd business day of the quarter", "3rd business day of quarter"},
		{"2nd last business day of month", "2nd last business day of month"},
		{"second last friday", "2nd last friday of month"},
		{"first weekday of month", "1st weekday of month"},
		{"first workday of year", "1st business day of year"},
		{"15th day of January, July", "15th day of january,july"},
		{"last day of feb", "last day of february"},
		{"366th day of year", "366th day of year"},
		{"5th friday", "5th friday of month"},
		{"53rd monday of year", "53rd monday of year"},
		{"11th day", "11th day of month"},
		{"22nd day", "22nd day of month"},
	} {
		r, err := ParseRule(c.in)
		if err != nil {
			t.Errorf("ParseRule(%q): %v", c.in, err)
			continue
		}
		if got := r.String(); got != c.want {
			t.Errorf("ParseRule(%q) = %q, want %q", c.in, got, c.want)
		}
		back, err := ParseRule(r.String())
		if err != nil || back != r {
			t.Errorf("ParseRule(%q) does not read back: %v", r.String(), err)
		}
	}
}

func TestParseRuleErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want string }{
		{"", "empty"},
		{"every", "nothing after every"},
		{"sometimes", `"sometimes" is not a rule`},
		{"6th tuesday of month", "there is no 6th tuesday in a month (at most 5)"},
		{"32nd day of month", "there is no 32nd day in a month (at most 31)"},
		{"367th day of year", "at most 366"},
		{"2th day", `"2th day" is not a rule`},
		{"01st day", `is not a rule`},
		{"1st fortnight", `"fortnight" should be day, business day, weekday or a day of the week`},
		{"1st day of week", `"week" is not a period`},
		{"1st day of", `unexpected "of"`},
		{"1st day in month", `unexpected "in month"`},
		{"every monday, monday", "Monday given twice"},
		{"1st day of jan, jan", "January given twice"},
		{"every monday please", `unexpected "please"`},
		{"last", "should be followed by day"},
		{"daily every", "is not a rule"},
		{"every daily", "is not a rule"},
	} {
		_, err := ParseRule(c.in)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseRule(%q) = %v, want an error with %q", c.in, err, c.want)
		}
	}
}

func TestRules(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		rule, from, to, want string
	}{
		{"last business day of month", "2026-01-01", "2026-06-30",
			"2026-01-30 2026-02-27 2026-03-31 2026-04-30 2026-05-29 2026-06-30"},
		{"first business day of month", "2026-01-01", "2026-03-31", "2026-01-01 2026-02-02 2026-03-02"},
		{"first day of month", "2026-01-15", "2026-04-01", "2026-02-01 2026-03-01 2026-04-01"},
		{"last day of month", "2028-01-01", "2028-03-31", "2028-01-31 2028-02-29 2028-03-31"},
		{"every 2nd tuesday", "2026-01-01", "2026-04-30", "2026-01-13 2026-02-10 2026-03-10 2026-04-14"},
		{"last friday of month", "2026-01-01", "2026-03-31", "2026-01-30 2026-02-27 2026-03-27"},
		{"5th friday of month", "2026-01-01", "2026-06-30", "2026-01-30 2026-05-29"},
		{"2nd last business day of month", "2026-05-01", "2026-05-31", "2026-05-28"},
		{"3rd business day of quarter", "2026-01-01", "2026-12-31", "2026-01-05 2026-04-03 2026-07-03 2026-10-05"},
		{"last business day of quarter", "2026-01-01", "2026-12-31", "2026-03-31 2026-06-30 2026-09-30 2026-12-31"},
		{"1st day of year", "2026-01-01", "2028-12-31", "2026-01-01 2027-01-01 2028-01-01"},
		{"last day of february", "2027-01-01", "2029-12-31", "2027-02-28 2028-02-29 2029-02-28"},
		{"29th day of february", "2025-01-01", "2033-12-31", "2028-02-29 2032-02-29"},
		{"31st day of month", "2026-01-01", "2026-05-31", "2026-01-31 2026-03-31 2026-05-31"},
		{"weekends", "2026-03-01", "2026-03-08", "2026-03-01 2026-03-07 2026-03-08"},
		{"weekdays", "2026-03-06", "2026-03-10", "2026-03-06 2026-03-09 2026-03-10"},
		{"every wednesday", "2026-03-01", "2026-03-31", "2026-03-04 2026-03-11 2026-03-18 2026-03-25"},
		{"1st weekday of month", "2026-02-01", "2026-03-31", "2026-02-02 2026-03-02"},
		{"last weekday of month", "2026-05-01", "2026-05-31", "2026-05-29"},
		{"business days", "2026-03-06", "2026-03-10", "2026-03-06 2026-03-09 2026-03-10"},
	} {
		s := compile(t, &job.Calendar{Name: "c", Rules: []string{c.rule}})
		if got := days(t, s, c.from, c.to); got != c.want {
			t.Errorf("%s from %s to %s:\n got %s\nwant %s", c.rule, c.from, c.to, got, c.want)
		}
	}
}

// Business days are the calendar's workdays without its holidays, its own
// dates and those of the calendars it names.
func TestBusinessDays(t *testing.T) {
	t.Parallel()
	public := compile(t, &job.Calendar{Name: "public", Dates: []string{"2026-12-25", "2027-01-01"}})
	// 31 December 2026 is a Thursday; with 1 January off, the first
	// business day of 2027 is Monday 4 January.
	monthEnd := compile(t, &job.Calendar{Name: "month_end", Rules: []string{"last business day of month", "first business day of month"},
		Holidays: []string{"public", "2026-12-31"}}, public)
	check(t, "month ends around new year", strings.Fields(days(t, monthEnd, "2026-12-01", "2027-01-31")),
		"2026-12-01", "2026-12-30", "2027-01-04", "2027-01-29")
	if monthEnd.Business(date(t, "2026-12-25")) || !monthEnd.Business(date(t, "2026-12-24")) {
		t.Error("25 December should be a holiday, 24 December a business day")
	}
	// A week of Sunday to Thursday.
	gulf := compile(t, &job.Calendar{Name: "gulf", Rules: []string{"last business day of month"}, Workdays: "su,mo,tu,we,th"})
	check(t, "Sunday to Thursday", strings.Fields(days(t, gulf, "2026-01-01", "2026-02-28")), "2026-01-29", "2026-02-26")
	// Holidays that take every weekday: the rule yields nothing, and Next
	// gives up past its horizon.
	all := compile(t, &job.Calendar{Name: "all", Rules: []string{"daily"}})
	none := compile(t, &job.Calendar{Name: "none", Rules: []string{"business days"}, Holidays: []string{"all"}}, all)
	if d, ok := none.Next(date(t, "2026-01-01")); ok {
		t.Errorf("a calendar of business days without any yields %s", d)
	}
}

func TestDatesAndNext(t *testing.T) {
	t.Parallel()
	s := compile(t, &job.Calendar{Name: "c", Dates: []string{"2027-01-01", "2026-12-25", "2026-12-25"}, Rules: []string{"2nd tuesday"}})
	check(t, "dates and rule", strings.Fields(days(t, s, "2026-12-01", "2027-01-31")), "2026-12-08", "2026-12-25", "2027-01-01", "2027-01-12")
	if last, ok := s.Last(); !ok || last.String() != "2027-01-01" {
		t.Errorf("Last = %s, %v", last, ok)
	}
	only := compile(t, &job.Calendar{Name: "only", Dates: []string{"2026-12-25"}})
	if d, ok := only.Next(date(t, "2026-12-26")); ok {
		t.Errorf("Next after the last date = %s", d)
	}
	if ds, more := s.Between(date(t, "2026-01-01"), date(t, "2026-12-31"), 3); len(ds) != 3 || !more {
		t.Errorf("Between with a limit = %v, %v", ds, more)
	}
}

func TestCompileErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		cal  job.Calendar
		want string
	}{
		{job.Calendar{Name: "c", Dates: []string{"2026-02-30"}}, `calendar c: dates: "2026-02-30" is not a date`},
		{job.Calendar{Name: "c", Dates: []string{"1899-12-31"}}, "out of range"},
		{job.Calendar{Name: "c", Rules: []string{"often"}}, `calendar c: rule "often"`},
		{job.Calendar{Name: "c", Holidays: []string{"ghost"}}, "calendar c: holidays: calendar ghost is not defined"},
		{job.Calendar{Name: "c", Holidays: []string{"2026-13-01"}}, "holidays:"},
		{job.Calendar{Name: "c", Workdays: "mo,xx"}, "workdays:"},
		{job.Calendar{Name: "c", Workdays: ","}, "workdays:"},
	} {
		_, err := Compile(&c.cal, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Compile(%+v) = %v, want %q", c.cal, err, c.want)
		}
	}
}

func TestDateOf(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ zone, at, want string }{
		// Apia skipped 30 December 2011: 29 December 23:59:59 (-10) was
		// followed by 31 December 00:00 (+14).
		{"Pacific/Apia", "2011-12-30T09:59:59Z", "2011-12-29"},
		{"Pacific/Apia", "2011-12-30T10:00:00Z", "2011-12-31"},
		{"Australia/Lord_Howe", "2026-10-03T13:29:59Z", "2026-10-03"},
		{"Australia/Lord_Howe", "2026-10-03T13:30:00Z", "2026-10-04"},
		{"America/Santiago", "2026-09-06T04:00:00Z", "2026-09-06"},
		{"UTC", "2026-12-25T23:59:59Z", "2026-12-25"},
	} {
		if got := DateOf(utc(c.at), mustLoad(t, c.zone)).String(); got != c.want {
			t.Errorf("DateOf(%s in %s) = %s, want %s", c.at, c.zone, got, c.want)
		}
	}
	// Midnight does not exist on 6 September 2026 in Santiago (00:00 -04
	// becomes 01:00 -03): the day starts at 01:00.
	if got := date(t, "2026-09-06").Start(mustLoad(t, "America/Santiago")); got != utc("2026-09-06T04:00:00Z") {
		t.Errorf("start of 2026-09-06 in Santiago = %s", got)
	}
	// The day Apia skipped starts where the next one does.
	if got := date(t, "2011-12-30").Start(mustLoad(t, "Pacific/Apia")); got != utc("2011-12-30T10:00:00Z") {
		t.Errorf("start of 2011-12-30 in Apia = %s", got)
	}
	if d := MakeDate(2026, time.February, 29); d.String() != "2026-03-01" {
		t.Errorf("MakeDate does not normalize: %s", d)
	}
}

func FuzzParseRule(f *testing.F) {
	for _, s := range []string{"daily", "every 2nd tuesday", "last business day of month", "15th day of january,july",
		"every mon,thu", "2nd last weekday of quarter", "366th day of year", "first workday"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRule(s)
		if err != nil {
			return
		}
		back, err := ParseRule(r.String())
		if err != nil || back != r {
			t.Fatalf("%q reads as %q, which reads back as %v (%v)", s, r.String(), back, err)
		}
		d := MakeDate(2026, time.January, 1)
		if n, ok := r.next(d, d+800, func(Date) bool { return true }); ok && (n < d || n > d+800) {
			t.Fatalf("%q: next(%s) = %s, outside the range", s, d, n)
		}
	})
}

func FuzzParseDate(f *testing.F) {
	for _, s := range []string{"2026-12-25", "1900-01-01", "9999-12-31", "2026-02-29", " 2026-01-01 ", "2026-1-1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDate(s)
		if err != nil {
			return
		}
		if back, err := ParseDate(d.String()); err != nil || back != d {
			t.Fatalf("%q reads as %s, which reads back as %v (%v)", s, d, back, err)
		}
	})
}
