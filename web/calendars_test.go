package web

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

const calendarDefs = `insert_calendar: mondays
description: every Monday
rule: every monday

insert_calendar: closing
dates: 2027-01-04
holidays: mondays

insert_task: weekly
type: callable
function: log
cron: 0 9 * * *
exclude_calendar: mondays
`

// The calendars' pages: each calendar with what defines it and names
// it; a year of its days drawn as months, the days it holds marked; the
// occurrences it keeps from running.
func TestCalendarPages(t *testing.T) {
	t.Parallel()
	s, u := startScheduler(t, calendarDefs)
	get := func(fn func(*http.Request) (string, any, error), path, name string) any {
		t.Helper()
		r := httptest.NewRequest(http.MethodGet, path, nil)
		r.SetPathValue("name", name)
		_, d, err := fn(r)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		return d
	}
	list := get(u.calendars, "/calendars", "").(calendarsData)
	if len(list.Calendars) != 2 || list.Calendars[0].Def.Name != "closing" || list.Calendars[1].Def.Name != "mondays" {
		t.Fatalf("calendars listed: %+v", list.Calendars)
	}
	mondays := list.Calendars[1]
	if strings.Join(mondays.UsedBy, ",") != "weekly" || strings.Join(mondays.HolidaysOf, ",") != "closing" {
		t.Errorf("mondays is named by %v, holidays of %v", mondays.UsedBy, mondays.HolidaysOf)
	}
	if mondays.Year < 52 || mondays.Year > 53 || len(mondays.Next) != nextDays {
		t.Errorf("mondays holds %d days in a year, next %v", mondays.Year, mondays.Next)
	}
	for _, d := range mondays.Next {
		if d.Weekday() != time.Monday {
			t.Errorf("next day %s is a %s", d, d.Weekday())
		}
	}

	page := get(u.calendarPage, "/calendars/mondays?from=2026-11", "mondays").(calendarData)
	if len(page.Months) != 12 || page.Months[0].Title != "November 2026" || page.Months[11].Title != "October 2027" ||
		page.Earlier != "2025-11" || page.Later != "2027-11" {
		t.Fatalf("months %d, first %q, last %q, links %s %s", len(page.Months), page.Months[0].Title, page.Months[11].Title, page.Earlier, page.Later)
	}
	// November 2026 begins on a Sunday: the first week holds one day, in
	// the last column; every Monday is held and nothing else.
	nov := page.Months[0]
	if w := nov.Weeks[0]; w[6].Day != 1 || w[5].Day != 0 || w[0].Day != 0 {
		t.Errorf("first week of November 2026: %+v", w)
	}
	held := 0
	for _, m := range page.Months {
		for _, w := range m.Weeks {
			for col, c := range w {
				if c.Held != (c.Day != 0 && col == 0) {
					t.Errorf("%s %d (column %d) held: %v", m.Title, c.Day, col, c.Held)
				}
				if c.Held {
					held++
				}
			}
		}
	}
	if held != page.Year || held != 52 {
		t.Errorf("%d days drawn held, %d counted, want 52", held, page.Year)
	}
	// weekly's occurrences on the Mondays of the next 31 days are kept
	// from running.
	if len(page.Excluded) < 4 || len(page.Excluded) > 5 {
		t.Errorf("excluded occurrences: %+v", page.Excluded)
	}
	now := s.Now()
	for _, x := range page.Excluded {
		if x.Task != "weekly" || x.At.Weekday() != time.Monday || x.At.Hour() != 9 || x.At.Before(now) || x.At.After(now.Add(excludedSpan)) {
			t.Errorf("excluded: %+v", x)
		}
	}
	// A calendar of dates holds them (its holidays bend only its
	// business-day rules), and excludes nothing that nothing names.
	closing := get(u.calendarPage, "/calendars/closing?from=2027-01", "closing").(calendarData)
	if closing.Year != 1 || !closing.Months[0].Weeks[1][0].Held || closing.Months[0].Weeks[1][0].Date != "2027-01-04" || len(closing.Excluded) != 0 {
		t.Errorf("closing holds %d days (%+v), excludes %v", closing.Year, closing.Months[0].Weeks[1], closing.Excluded)
	}

	for path, want := range map[string]string{
		"/calendars/nothing":               "calendar nothing not found",
		"/calendars/mondays?from=november": `from: "november" is not a month such as 2026-11`,
	} {
		r := httptest.NewRequest(http.MethodGet, path, nil)
		r.SetPathValue("name", strings.TrimPrefix(strings.Split(path, "?")[0], "/calendars/"))
		if _, _, err := u.calendarPage(r); err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %q", path, err, want)
		}
	}
}
