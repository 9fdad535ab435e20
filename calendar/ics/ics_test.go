package ics

import (
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/calendar"
)

func texts(ds []calendar.Date) string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.String()
	}
	return strings.Join(out, " ")
}

var now2026 = time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)

func TestHolidaysFile(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("testdata/holidays.ics")
	if err != nil {
		t.Fatal(err)
	}
	from, to := Horizon(now2026)
	if from.String() != "2025-01-01" || to.String() != "2036-12-31" {
		t.Fatalf("horizon %s to %s", from, to)
	}
	ds, err := Dates(src, from, to)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"2025-12-25",
		"2026-01-05", "2026-01-06", // inventory night, 22:00 to 02:00
		"2026-03-02", "2026-03-03", // its third occurrence; February's is an EXDATE
		"2026-03-11",                             // 23:00 UTC on the 10th is past midnight in Paris
		"2026-08-10", "2026-08-11", "2026-08-12", // three days, DTEND excluded
		"2026-12-25", "2027-01-01",
		"2027-12-25", "2028-12-25", "2029-12-25", "2030-12-25", "2031-12-25", "2032-12-25", "2033-12-25", "2034-12-25",
		"2035-12-25", "2036-12-25",
	}
	if got := texts(ds); got != strings.Join(want, " ") {
		t.Errorf("dates:\n got %s\nwant %s", got, strings.Join(want, " "))
	}
}

func ics(events ...string) []byte {
	return []byte("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:test\r\n" + strings.Join(events, "") + "END:VCALENDAR\r\n")
}

func vevent(lines ...string) string {
	return "BEGIN:VEVENT\r\n" + strings.Join(lines, "\r\n") + "\r\nEND:VEVENT\r\n"
}

func TestEvents(t *testing.T) {
	t.Parallel()
	from, to := Horizon(now2026)
	for _, c := range []struct {
		name string
		src  []byte
		want string
	}{
		{"all day without end", ics(vevent("DTSTART;VALUE=DATE:20261224")), "2026-12-24"},
		{"a date without VALUE", ics(vevent("DTSTART:20261224")), "2026-12-24"},
		{"timed, ending at midnight", ics(vevent("DTSTART:20261224T180000", "DTEND:20261225T000000")), "2026-12-24"},
		{"timed, over midnight", ics(vevent("DTSTART:20261224T180000", "DTEND:20261225T000100")), "2026-12-24 2026-12-25"},
		{"duration of days", ics(vevent("DTSTART;VALUE=DATE:20261224", "DURATION:P2D")), "2026-12-24 2026-12-25"},
		{"a TZID is its own date", ics(vevent("DTSTART;TZID=America/New_York:20261224T230000")), "2026-12-24"},
		{"an unknown TZID is its own date too", ics(vevent("DTSTART;TZID=W. Europe Standard Time:20261224T230000")), "2026-12-24"},
		{"UTC without a calendar zone", ics(vevent("DTSTART:20261224T230000Z")), "2026-12-24"},
		{"weekly, with UNTIL", ics(vevent("DTSTART;VALUE=DATE:20260105", "RRULE:FREQ=WEEKLY;UNTIL=20260126")),
			"2026-01-05 2026-01-12 2026-01-19 2026-01-26"},
		{"an RDATE", ics(vevent("DTSTART;VALUE=DATE:20260105", "RDATE;VALUE=DATE:20260301,20260302")), "2026-01-05 2026-03-01 2026-03-02"},
		{"an occurrence moved", ics(
			vevent("UID:u1", "DTSTART;VALUE=DATE:20260105", "RRULE:FREQ=MONTHLY;COUNT=3"),
			vevent("UID:u1", "RECURRENCE-ID;VALUE=DATE:20260205", "DTSTART;VALUE=DATE:20260206")),
			"2026-01-05 2026-02-06 2026-03-05"},
		{"an occurrence cancelled", ics(
			vevent("UID:u1", "DTSTART;VALUE=DATE:20260105", "RRULE:FREQ=MONTHLY;COUNT=3"),
			vevent("UID:u1", "RECURRENCE-ID;VALUE=DATE:20260205", "DTSTART;VALUE=DATE:20260205", "STATUS:CANCELLED")),
			"2026-01-05 2026-03-05"},
		{"recurrences before the horizon are left out", ics(vevent("DTSTART;VALUE=DATE:19000101", "RRULE:FREQ=YEARLY;BYMONTH=1;BYMONTHDAY=1;UNTIL=20260101")),
			"2025-01-01 2026-01-01"},
		{"one-off events are kept wherever they are", ics(vevent("DTSTART;VALUE=DATE:19500101")), "1950-01-01"},
		{"two calendars in one file", append(ics(vevent("DTSTART;VALUE=DATE:20260101")), ics(vevent("DTSTART;VALUE=DATE:20260102"))...),
			"2026-01-01 2026-01-02"},
		{"a recurrence that never happens", ics(vevent("DTSTART;VALUE=DATE:20260101", "RRULE:FREQ=DAILY;BYMONTH=2;BYMONTHDAY=30")), ""},
	} {
		ds, err := Dates(c.src, from, to)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got := texts(ds); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
	// The zone of the calendar dates UTC times.
	ds, err := Dates([]byte("BEGIN:VCALENDAR\r\nX-WR-TIMEZONE:Asia/Tokyo\r\n"+vevent("DTSTART:20261224T230000Z")+"END:VCALENDAR\r\n"), from, to)
	if err != nil || texts(ds) != "2026-12-25" {
		t.Errorf("UTC in Tokyo: %v %v", texts(ds), err)
	}
}

func TestErrors(t *testing.T) {
	t.Parallel()
	from, to := Horizon(now2026)
	many := make([]string, MaxRecurring+1)
	for i := range many {
		many[i] = vevent("DTSTART;VALUE=DATE:20260101", "RRULE:FREQ=YEARLY;COUNT=1")
	}
	for _, c := range []struct {
		name string
		src  []byte
		want string
	}{
		{"not ics", []byte("hello"), "not an iCalendar file"},
		{"empty", nil, "no BEGIN:VCALENDAR"},
		{"no events", ics(), "holds no VEVENT"},
		{"unterminated", []byte("BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\n"), "not an iCalendar file"},
		{"no start", ics(vevent("SUMMARY:Nothing")), `VEVENT 1 ("Nothing"): no DTSTART`},
		{"bad start", ics(vevent("UID:x1", "DTSTART:2026-12-25")), `VEVENT 1 (UID "x1"): DTSTART: "2026-12-25" is not a date`},
		{"year out of range", ics(vevent("DTSTART;VALUE=DATE:18991231")), "out of range"},
		{"too long", ics(vevent("DTSTART;VALUE=DATE:20260101", "DURATION:P400D")), "more than 366 days"},
		{"hourly", ics(vevent("DTSTART:20260101T000000", "RRULE:FREQ=HOURLY")), "FREQ=HOURLY is more frequent than daily"},
		{"bad rrule", ics(vevent("DTSTART:20260101T000000", "RRULE:FREQ=SOMETIMES")), "RRULE:"},
		{"bad exdate", ics(vevent("DTSTART;VALUE=DATE:20260101", "RRULE:FREQ=DAILY", "EXDATE:soon")), "EXDATE:"},
		{"too many recurring", ics(many...), "more than 200 recurring events"},
		{"nested deep", []byte(strings.Repeat("BEGIN:X\r\n", 20)), "nested more than 8 deep"},
	} {
		_, err := Dates(c.src, from, to)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", c.name, err, c.want)
		}
	}
}

func FuzzDates(f *testing.F) {
	if src, err := os.ReadFile("testdata/holidays.ics"); err == nil {
		f.Add(src)
	}
	f.Add(ics(vevent("DTSTART;VALUE=DATE:20261224", "RRULE:FREQ=WEEKLY;COUNT=5", "EXDATE;VALUE=DATE:20261231")))
	f.Add(ics(vevent("DTSTART:20261224T230000Z", "DURATION:P1DT2H")))
	f.Add([]byte("BEGIN:VCALENDAR\r\nEND:VCALENDAR\r\n"))
	f.Add(ics(vevent("UID:b1", "DTSTART;TZID=Europe/Berlin:20190309T003000", "RRULE:FREQ=DAILY;COUNT=4", "EXDATE:20190310T233000Z"),
		vevent("UID:b1", "RECURRENCE-ID:20190310T233000Z", "DTSTART;TZID=Europe/Berlin:20190315T003000")))
	f.Add(ics(vevent("UID:f1", "DTSTART;VALUE=DATE:20260105", "RRULE:FREQ=WEEKLY;COUNT=5"),
		vevent("UID:f1", "RECURRENCE-ID;RANGE=THISANDFUTURE;VALUE=DATE:20260119", "DTSTART;VALUE=DATE:20260121")))
	f.Add(ics(vevent("DTSTART;VALUE=DATE:20260101", "RRULE:FREQ=MONTHLY;BYDAY=3MO,-1FR,WE;COUNT=6")))
	f.Add(ics(vevent("DTSTART;VALUE=DATE:20270101", "RRULE:"), vevent("DTSTART;VALUE=DATE:20260131", "RRULE:FREQ=YEARLY;BYMONTHDAY=-1")))
	f.Add(ics(vevent("UID:s1", "SEQUENCE:2", "DTSTART;VALUE=DATE:20260105"), vevent("UID:s1", "SEQUENCE:1", "DTSTART;VALUE=DATE:20260104")))
	f.Add(ics(vevent("UID:u1", "DTSTART;TZID=Europe/Berlin:20260318T040000", "RRULE:FREQ=DAILY;UNTIL=20260320T030000Z")))
	f.Add(ics(vevent("UID:m1", "SEQUENCE:2", "DTSTART;VALUE=DATE:20260105", "RRULE:FREQ=WEEKLY;UNTIL=20260120"),
		vevent("UID:m1", "SEQUENCE:1", "RECURRENCE-ID;VALUE=DATE:20260202", "DTSTART;VALUE=DATE:20260203", "RRULE:FREQ=WEEKLY")))
	f.Add(ics(vevent("DTSTART;VALUE=DATE:20260101", "RRULE:FREQ=WEEKLY;BYDAY=TH;COUNT=3", "RRULE:FREQ=MONTHLY;BYDAY=2MO;COUNT=2")))
	f.Add(ics(vevent("DTSTART:20261218T234500", "DTEND:20261218T233000"), vevent("DTSTART:20260608", "RRULE:FREQ=YEARLY;BYWEEKNO=23,-1")))
	from, to := Horizon(now2026)
	f.Fuzz(func(t *testing.T, src []byte) {
		ds, err := Dates(src, from, to)
		if err != nil {
			return
		}
		for i, d := range ds {
			if i > 0 && d <= ds[i-1] {
				t.Fatalf("dates not sorted or repeated: %s after %s", d, ds[i-1])
			}
			if y, _, _ := d.YMD(); y < 1900 || y > 9999 {
				t.Fatalf("date %s out of range", d)
			}
		}
	})
}

// An EXDATE or RECURRENCE-ID written in UTC names an occurrence of an
// event with a TZID: it is dated in the event's zone, not the file's.
func TestUTCExceptionsOfZonedEvent(t *testing.T) {
	t.Parallel()
	_, to := Horizon(now2026)
	for _, c := range []struct {
		name string
		src  []byte
		want string
	}{
		{"EXDATE in UTC", ics(vevent("UID:b1", "DTSTART;TZID=Europe/Berlin:20190309T003000", "RRULE:FREQ=DAILY;COUNT=4",
			"EXDATE:20190310T233000Z")),
			"2019-03-09 2019-03-10 2019-03-12"},
		{"EXDATE in UTC, in a file with another zone", []byte("BEGIN:VCALENDAR\r\nX-WR-TIMEZONE:America/New_York\r\n" +
			vevent("UID:b1", "DTSTART;TZID=Europe/Berlin:20190309T003000", "RRULE:FREQ=DAILY;COUNT=4", "EXDATE:20190310T233000Z") +
			"END:VCALENDAR\r\n"),
			"2019-03-09 2019-03-10 2019-03-12"},
		{"RECURRENCE-ID in UTC", ics(
			vevent("UID:b2", "DTSTART;TZID=Europe/Berlin:20190309T003000", "RRULE:FREQ=DAILY;COUNT=4"),
			vevent("UID:b2", "RECURRENCE-ID:20190310T233000Z", "DTSTART;TZID=Europe/Berlin:20190315T003000")),
			"2019-03-09 2019-03-10 2019-03-12 2019-03-15"},
	} {
		ds, err := Dates(c.src, calendar.MakeDate(2019, 1, 1), to)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got := texts(ds); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
}

// RECURRENCE-ID;RANGE=THISANDFUTURE moves the occurrence it names and
// every later one by the same shift.
func TestThisAndFuture(t *testing.T) {
	t.Parallel()
	_, to := Horizon(now2026)
	for _, c := range []struct {
		name string
		src  []byte
		want string
	}{
		{"Mondays moved to Wednesdays from the third on", ics(
			vevent("UID:f1", "DTSTART;VALUE=DATE:20260105", "RRULE:FREQ=WEEKLY;COUNT=5"),
			vevent("UID:f1", "RECURRENCE-ID;RANGE=THISANDFUTURE;VALUE=DATE:20260119", "DTSTART;VALUE=DATE:20260121")),
			"2026-01-05 2026-01-12 2026-01-21 2026-01-28 2026-02-04"},
		{"a later range takes over", ics(
			vevent("UID:f2", "DTSTART;VALUE=DATE:20260105", "RRULE:FREQ=WEEKLY;COUNT=5"),
			vevent("UID:f2", "RECURRENCE-ID;RANGE=THISANDFUTURE;VALUE=DATE:20260112", "DTSTART;VALUE=DATE:20260113"),
			vevent("UID:f2", "RECURRENCE-ID;RANGE=THISANDFUTURE;VALUE=DATE:20260126", "DTSTART;VALUE=DATE:20260130")),
			"2026-01-05 2026-01-13 2026-01-20 2026-01-30 2026-02-06"},
		{"timed, in a zone, with its own length", ics(
			vevent("UID:f3", "DTSTART;TZID=Europe/Paris:20260105T220000", "DURATION:PT1H", "RRULE:FREQ=WEEKLY;COUNT=3"),
			vevent("UID:f3", "RECURRENCE-ID;RANGE=THISANDFUTURE:20260112T210000Z", "DTSTART;TZID=Europe/Paris:20260112T230000", "DURATION:PT2H")),
			"2026-01-05 2026-01-12 2026-01-13 2026-01-19 2026-01-20"},
		{"cancelled this and future", ics(
			vevent("UID:f4", "DTSTART;VALUE=DATE:20260105", "RRULE:FREQ=WEEKLY;COUNT=5"),
			vevent("UID:f4", "RECURRENCE-ID;RANGE=THISANDFUTURE;VALUE=DATE:20260119", "DTSTART;VALUE=DATE:20260119", "STATUS:CANCELLED")),
			"2026-01-05 2026-01-12"},
	} {
		ds, err := Dates(c.src, calendar.MakeDate(2019, 1, 1), to)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got := texts(ds); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
}

// A BYDAY that mixes an ordinal day with plain days gives both.
func TestByDayMixed(t *testing.T) {
	t.Parallel()
	_, to := Horizon(now2026)
	for _, c := range []struct {
		name string
		src  []byte
		want string
	}{
		{"third Monday, Wednesdays and Fridays", ics(vevent("DTSTART;VALUE=DATE:20260101", "RRULE:FREQ=MONTHLY;BYDAY=3MO,WE,FR;UNTIL=20260131")),
			"2026-01-02 2026-01-07 2026-01-09 2026-01-14 2026-01-16 2026-01-19 2026-01-21 2026-01-23 2026-01-28 2026-01-30"},
		{"with COUNT, counted over both", ics(vevent("DTSTART;VALUE=DATE:20260101", "RRULE:FREQ=MONTHLY;BYDAY=3MO,-1FR,WE;COUNT=6")),
			"2026-01-07 2026-01-14 2026-01-19 2026-01-21 2026-01-28 2026-01-30"},
		{"yearly", ics(vevent("DTSTART;VALUE=DATE:20260101", "RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=1MO,SU;COUNT=5")),
			"2026-03-01 2026-03-02 2026-03-08 2026-03-15 2026-03-22"},
		{"BYSETPOS picks among both kinds, per month", ics(vevent("DTSTART;VALUE=DATE:20260101", "RRULE:FREQ=MONTHLY;BYDAY=1MO,FR;BYSETPOS=1,2;COUNT=6")),
			"2026-01-02 2026-01-05 2026-02-02 2026-02-06 2026-03-02 2026-03-06"},
		{"BYSETPOS from the end, UNTIL within a month", ics(vevent("DTSTART;VALUE=DATE:20260101", "RRULE:FREQ=MONTHLY;BYDAY=-1MO,WE;BYSETPOS=-1;UNTIL=20260329")),
			"2026-01-28 2026-02-25"},
		{"BYSETPOS from the end", ics(vevent("DTSTART;VALUE=DATE:20260101", "RRULE:FREQ=MONTHLY;BYDAY=-1MO,WE;BYSETPOS=-1;UNTIL=20260331")),
			"2026-01-28 2026-02-25 2026-03-30"},
	} {
		ds, err := Dates(c.src, calendar.MakeDate(2019, 1, 1), to)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got := texts(ds); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
}

// An empty RRULE is no recurrence, with a warning.
func TestEmptyRRule(t *testing.T) {
	t.Parallel()
	from, to := Horizon(now2026)
	res, err := Read(ics(
		vevent("UID:h1", "SUMMARY:New Year", "DTSTART;VALUE=DATE:20270101", "RRULE:"),
		vevent("UID:h2", "DTSTART;VALUE=DATE:20271225", "RRULE: "),
	), from, to)
	if err != nil {
		t.Fatal(err)
	}
	if got := texts(res.Dates); got != "2027-01-01 2027-12-25" {
		t.Errorf("dates %s", got)
	}
	want := []string{
		`VEVENT 1 ("New Year"): RRULE is empty: read as no recurrence`,
		`VEVENT 2 (UID "h2"): RRULE is empty: read as no recurrence`,
	}
	if !slices.Equal(res.Warnings, want) {
		t.Errorf("warnings:\n got %q\nwant %q", res.Warnings, want)
	}
	if ds, err := Dates(ics(vevent("DTSTART;VALUE=DATE:20270101", "RRULE:")), from, to); err != nil || texts(ds) != "2027-01-01" {
		t.Errorf("Dates: %s %v", texts(ds), err)
	}
}

// FREQ=YEARLY with BYMONTHDAY and no BYMONTH takes DTSTART's month, as
// calendars that export it mean: once a year, not every month.
func TestYearlyByMonthDay(t *testing.T) {
	t.Parallel()
	_, to := Horizon(now2026)
	for _, c := range []struct {
		name string
		src  []byte
		want string
	}{
		{"last day of January", ics(vevent("DTSTART;VALUE=DATE:20260131", "RRULE:FREQ=YEARLY;BYMONTHDAY=-1;COUNT=3")),
			"2026-01-31 2027-01-31 2028-01-31"},
		{"last day of February", ics(vevent("DTSTART;VALUE=DATE:20270228", "RRULE:FREQ=YEARLY;BYMONTHDAY=-1;COUNT=3")),
			"2027-02-28 2028-02-29 2029-02-28"},
		{"with BYMONTH, as written", ics(vevent("DTSTART;VALUE=DATE:20260131", "RRULE:FREQ=YEARLY;BYMONTH=1,6;BYMONTHDAY=-1;COUNT=3")),
			"2026-01-31 2026-06-30 2027-01-31"},
	} {
		ds, err := Dates(c.src, calendar.MakeDate(2019, 1, 1), to)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got := texts(ds); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
}

// Two VEVENTs with one UID (and RECURRENCE-ID) are versions of one event:
// the higher SEQUENCE wins.
func TestSequence(t *testing.T) {
	t.Parallel()
	_, to := Horizon(now2026)
	for _, c := range []struct {
		name string
		src  []byte
		want string
	}{
		{"the newer moves the event", ics(
			vevent("UID:s1", "SEQUENCE:2", "DTSTART;VALUE=DATE:20260105"),
			vevent("UID:s1", "SEQUENCE:1", "DTSTART;VALUE=DATE:20260104")),
			"2026-01-05"},
		{"the newer, later in the file", ics(
			vevent("UID:s1", "DTSTART;VALUE=DATE:20260104"),
			vevent("UID:s1", "SEQUENCE:1", "DTSTART;VALUE=DATE:20260105", "RRULE:FREQ=DAILY;COUNT=2")),
			"2026-01-05 2026-01-06"},
		{"the newer cancels it", ics(
			vevent("UID:s1", "SEQUENCE:0", "DTSTART;VALUE=DATE:20260104"),
			vevent("UID:s1", "SEQUENCE:3", "DTSTART;VALUE=DATE:20260104", "STATUS:CANCELLED"),
			vevent("UID:s2", "DTSTART;VALUE=DATE:20260107")),
			"2026-01-07"},
		{"an override is versioned apart from its event", ics(
			vevent("UID:s1", "SEQUENCE:1", "DTSTART;VALUE=DATE:20260105", "RRULE:FREQ=MONTHLY;COUNT=3"),
			vevent("UID:s1", "SEQUENCE:0", "RECURRENCE-ID;VALUE=DATE:20260205", "DTSTART;VALUE=DATE:20260206"),
			vevent("UID:s1", "SEQUENCE:2", "RECURRENCE-ID;VALUE=DATE:20260205", "DTSTART;VALUE=DATE:20260209")),
			"2026-01-05 2026-02-09 2026-03-05"},
		{"the same SEQUENCE keeps both", ics(
			vevent("UID:s1", "DTSTART;VALUE=DATE:20260104"),
			vevent("UID:s1", "DTSTART;VALUE=DATE:20260105")),
			"2026-01-04 2026-01-05"},
	} {
		ds, err := Dates(c.src, calendar.MakeDate(2019, 1, 1), to)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got := texts(ds); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
}

// iCalendar as other readers take it: each case names the file's events
// and the days they cover, over a horizon from 2019.
func TestReadAsOthersDo(t *testing.T) {
	t.Parallel()
	_, to := Horizon(now2026)
	for _, c := range []struct {
		name string
		src  []byte
		want string
	}{
		// An UNTIL in UTC is an instant: 03:00 UTC is 04:00 in Berlin on
		// 20 March, the third occurrence.
		{"UNTIL in UTC of a zoned event", ics(vevent("UID:u1", "DTSTART;TZID=Europe/Berlin:20260318T040000",
			"DTEND;TZID=Europe/Berlin:20260318T050000", "RRULE:FREQ=DAILY;UNTIL=20260320T030000Z")),
			"2026-03-18 2026-03-19 2026-03-20"},
		{"UNTIL in UTC, a second before", ics(vevent("UID:u2", "DTSTART;TZID=Europe/London:20260423T090000",
			"RRULE:FREQ=DAILY;UNTIL=20260426T075959Z")),
			"2026-04-23 2026-04-24 2026-04-25"},
		{"UNTIL in UTC, west of Greenwich", ics(vevent("UID:u3", "DTSTART;TZID=America/Los_Angeles:20260105T180000",
			"RRULE:FREQ=WEEKLY;UNTIL=20260120T020000Z")),
			"2026-01-05 2026-01-12 2026-01-19"},
		// A VEVENT that replaces an occurrence is that occurrence, even
		// when it repeats its event's RRULE.
		{"an override carrying the RRULE", ics(
			vevent("UID:o1", "SEQUENCE:1", "DTSTART;VALUE=DATE:20260105", "DTEND;VALUE=DATE:20260106", "RRULE:FREQ=WEEKLY;INTERVAL=3;COUNT=3"),
			vevent("UID:o1", "SEQUENCE:1", "RECURRENCE-ID;VALUE=DATE:20260126", "DTSTART;VALUE=DATE:20260126", "DTEND;VALUE=DATE:20260128",
				"RRULE:FREQ=WEEKLY;INTERVAL=3;COUNT=3")),
			"2026-01-05 2026-01-26 2026-01-27 2026-02-16"},
		{"an override moved, carrying the RRULE", ics(
			vevent("UID:o2", "DTSTART;VALUE=DATE:20260105", "RRULE:FREQ=WEEKLY;UNTIL=20260120"),
			vevent("UID:o2", "RECURRENCE-ID;VALUE=DATE:20260112", "DTSTART;VALUE=DATE:20260114", "RRULE:FREQ=WEEKLY;UNTIL=20260120")),
			"2026-01-05 2026-01-14 2026-01-19"},
		// An override older than its event, of an occurrence the event no
		// longer has, is left out; one of an occurrence it still has, or
		// one as new as its event, stays.
		{"an override of an occurrence past the new UNTIL", ics(
			vevent("UID:o3", "SEQUENCE:1", "RECURRENCE-ID;VALUE=DATE:20260202", "DTSTART;VALUE=DATE:20260203"),
			vevent("UID:o3", "SEQUENCE:2", "DTSTART;VALUE=DATE:20260105", "RRULE:FREQ=WEEKLY;INTERVAL=2;UNTIL=20260125")),
			"2026-01-05 2026-01-19"},
		{"an override of an occurrence the new version excludes", ics(
			vevent("UID:o4", "SEQUENCE:1", "DTSTART;VALUE=DATE:20260105", "RRULE:FREQ=WEEKLY;COUNT=3"),
			vevent("UID:o4", "SEQUENCE:1", "RECURRENCE-ID;VALUE=DATE:20260112", "DTSTART;VALUE=DATE:20260113"),
			vevent("UID:o4", "SEQUENCE:2", "DTSTART;VALUE=DATE:20260105", "RRULE:FREQ=WEEKLY;COUNT=3", "EXDATE;VALUE=DATE:20260112")),
			"2026-01-05 2026-01-19"},
		{"an older override of an occurrence the event still has", ics(
			vevent("UID:o5", "SEQUENCE:1", "RECURRENCE-ID;VALUE=DATE:20260112", "DTSTART;VALUE=DATE:20260113"),
			vevent("UID:o5", "SEQUENCE:3", "DTSTART;VALUE=DATE:20260105", "RRULE:FREQ=WEEKLY;COUNT=3")),
			"2026-01-05 2026-01-13 2026-01-19"},
		{"an override as new as its event, of an excluded occurrence", ics(
			vevent("UID:o6", "DTSTART;VALUE=DATE:20260105", "RRULE:FREQ=WEEKLY;COUNT=3", "EXDATE;VALUE=DATE:20260112"),
			vevent("UID:o6", "RECURRENCE-ID;VALUE=DATE:20260112", "DTSTART;VALUE=DATE:20260113")),
			"2026-01-05 2026-01-13 2026-01-19"},
		// Several RRULEs (RFC 2445): their occurrences add up, each its
		// own COUNT.
		{"two RRULEs", ics(vevent("DTSTART;VALUE=DATE:20260101", "RRULE:FREQ=WEEKLY;BYDAY=TH;COUNT=3", "RRULE:FREQ=MONTHLY;BYDAY=2MO;COUNT=2")),
			"2026-01-01 2026-01-08 2026-01-12 2026-01-15 2026-02-09"},
		// BYWEEKNO without BYDAY: DTSTART's day of the week, as what a
		// rule leaves out comes from DTSTART. 8 June 2026 is the Monday of
		// ISO week 24.
		{"BYWEEKNO takes DTSTART's weekday", ics(vevent("DTSTART;VALUE=DATE:20260608", "RRULE:FREQ=YEARLY;BYWEEKNO=24;COUNT=3")),
			"2026-06-08 2027-06-14 2028-06-12"},
		{"BYWEEKNO with BYDAY, as written", ics(vevent("DTSTART;VALUE=DATE:20260608", "RRULE:FREQ=YEARLY;BYWEEKNO=24;BYDAY=MO,FR;COUNT=3")),
			"2026-06-08 2026-06-12 2027-06-14"},
		// An event that ends before it starts is read from its end to its
		// start (with a warning, TestEndBeforeStart).
		{"ends before it starts", ics(vevent("DTSTART;VALUE=DATE:20261227", "DTEND;VALUE=DATE:20261224")),
			"2026-12-24 2026-12-25 2026-12-26"},
	} {
		ds, err := Dates(c.src, calendar.MakeDate(2019, 1, 1), to)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got := texts(ds); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
}

// An event whose DTEND is before its DTSTART is read the other way round,
// and the reader says so.
func TestEndBeforeStart(t *testing.T) {
	t.Parallel()
	from, to := Horizon(now2026)
	res, err := Read(ics(vevent("UID:e1", "SUMMARY:Swapped", "DTSTART:20261218T234500", "DTEND:20261219T001500"),
		vevent("UID:e2", "SUMMARY:Late", "DTSTART:20261219T001500", "DTEND:20261218T234500")), from, to)
	if err != nil {
		t.Fatal(err)
	}
	if got := texts(res.Dates); got != "2026-12-18 2026-12-19" {
		t.Errorf("dates %s", got)
	}
	want := []string{`VEVENT 2 ("Late"): it ends before it starts: read as from its end to its start`}
	if !slices.Equal(res.Warnings, want) {
		t.Errorf("warnings:\n got %q\nwant %q", res.Warnings, want)
	}
}

// Rules and the days they give, as other readers' test suites state them
// (rule, DTSTART, expected dates), each worked out from RFC 5545 and
// docs/definitions.md ("iCalendar files"), not from a run.
func TestRulesNextN(t *testing.T) {
	t.Parallel()
	_, to := Horizon(now2026)
	for _, c := range []struct{ rule, start, want string }{
		// Friday the 13th; DTSTART, not one, is no occurrence.
		{"FREQ=MONTHLY;BYDAY=FR;BYMONTHDAY=13;COUNT=3", "20260101", "2026-02-13 2026-03-13 2026-11-13"},
		{"FREQ=YEARLY;BYMONTH=11;BYDAY=TH;BYMONTHDAY=22,23,24,25,26,27,28;COUNT=3", "20261126", "2026-11-26 2027-11-25 2028-11-23"},
		{"FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1;COUNT=3", "20260130", "2026-01-30 2026-02-27 2026-03-31"},
		{"FREQ=YEARLY;BYYEARDAY=1,-1;COUNT=4", "20260101", "2026-01-01 2026-12-31 2027-01-01 2027-12-31"},
		{"FREQ=WEEKLY;INTERVAL=2;BYDAY=TU,TH;UNTIL=20260201", "20260106", "2026-01-06 2026-01-08 2026-01-20 2026-01-22"},
		{"FREQ=DAILY;BYMONTH=1;UNTIL=20270105", "20261230", "2027-01-01 2027-01-02 2027-01-03 2027-01-04 2027-01-05"},
		{"FREQ=MONTHLY;BYMONTHDAY=-3;COUNT=3", "20260129", "2026-01-29 2026-02-26 2026-03-29"},
		{"FREQ=YEARLY;BYDAY=20MO;COUNT=2", "20260518", "2026-05-18 2027-05-17"},
		{"FREQ=MONTHLY;BYDAY=3MO,WE,FR;COUNT=4", "20260101", "2026-01-02 2026-01-07 2026-01-09 2026-01-14"},
		{"FREQ=YEARLY;BYWEEKNO=1;COUNT=2", "20251229", "2025-12-29 2027-01-04"},
		{"FREQ=WEEKLY;COUNT=3;BYDAY=MO", "20260105T090000", "2026-01-05 2026-01-12 2026-01-19"},
	} {
		dt := "DTSTART;VALUE=DATE:" + c.start
		if len(c.start) > 8 {
			dt = "DTSTART:" + c.start
		}
		ds, err := Dates(ics(vevent(dt, "RRULE:"+c.rule)), calendar.MakeDate(2019, 1, 1), to)
		if err != nil {
			t.Errorf("%s from %s: %v", c.rule, c.start, err)
			continue
		}
		if got := texts(ds); got != c.want {
			t.Errorf("%s from %s:\n got %s\nwant %s", c.rule, c.start, got, c.want)
		}
	}
}
