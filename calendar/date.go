package calendar

import (
	"fmt"
	"strings"
	"time"
)

// Date is a civil date without a zone: the number of days since 1970-01-01
// in the proleptic Gregorian calendar. Named calendars hold dates; the day
// of an occurrence is the date its instant has in the task's time zone
// (DateOf).
type Date int64

// Bounds on the dates a calendar may hold, as on start_date.
const (
	minYear = 1900
	maxYear = 9999
)

// MakeDate returns the date of a year, month and day, normalizing out of
// range months and days as time.Date does.
func MakeDate(y int, m time.Month, d int) Date {
	t := time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	return Date(daysFromCivil(int64(t.Year()), int64(t.Month()), int64(t.Day())))
}

// DateOf returns the date instant t has in loc: the day an occurrence
// belongs to.
func DateOf(t time.Time, loc *time.Location) Date {
	d, _ := wallOf(t, loc).days()
	return Date(d)
}

// ParseDate reads a date written YYYY-MM-DD, from 1900 to 9999.
func ParseDate(s string) (Date, error) {
	s = strings.TrimSpace(s)
	t, err := time.Parse(time.DateOnly, s)
	if err != nil || len(s) != len(time.DateOnly) {
		return 0, fmt.Errorf("%q is not a date such as 2026-12-25 (YYYY-MM-DD)", s)
	}
	if t.Year() < minYear || t.Year() > maxYear {
		return 0, fmt.Errorf("%q is out of range: years from %d to %d", s, minYear, maxYear)
	}
	return MakeDate(t.Year(), t.Month(), t.Day()), nil
}

// YMD returns the date's year, month and day.
func (d Date) YMD() (int, time.Month, int) {
	y, m, dd := civilFromDays(int64(d))
	return int(y), time.Month(m), int(dd)
}

// Weekday returns the date's day of the week.
func (d Date) Weekday() time.Weekday { return weekdayOf(int64(d)) }

// String renders the date as YYYY-MM-DD.
func (d Date) String() string {
	y, m, dd := d.YMD()
	return fmt.Sprintf("%04d-%02d-%02d", y, m, dd)
}

// Start returns the first instant of the date in loc: its midnight, or
// where midnight does not exist (the clock springs forward over it, as in
// America/Santiago), the instant the gap ends. A date that a zone skips
// whole (Pacific/Apia on 2011-12-30) starts where the next one does.
func (d Date) Start(loc *time.Location) time.Time {
	return time.Unix(resolve(wall(int64(d)*day), loc), 0).UTC()
}
