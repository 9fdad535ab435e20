package calendar

import "time"

// Filtered is a time trigger restricted by named calendars: it yields the
// occurrences of the trigger whose day, their date in the trigger's zone,
// is a day of its run calendar (every day without one), and tells those
// whose day is a day of its exclude calendar (Excluded). An excluded
// occurrence is still an occurrence: the engine records it skipped, with
// the calendar's name, and forecasts mark it.
type Filtered struct {
	inner   Schedule
	loc     *time.Location
	run     *DaySet // nil: every day
	exclude *DaySet // nil: none
}

// maxSkips bounds how many times Next passes over an occurrence on a day
// the run calendar does not hold before it gives up: a trigger and a
// calendar that never meet (run_days mo, a calendar of Tuesdays) never
// fire.
const maxSkips = 4000

// Next implements Schedule. From an occurrence on a day the run calendar
// does not hold, it goes on from the start of the calendar's next day.
func (f *Filtered) Next(t time.Time) (time.Time, bool) {
	n, ok := f.inner.Next(t)
	if f.run == nil {
		return n, ok
	}
	for range maxSkips {
		if !ok {
			return time.Time{}, false
		}
		d := DateOf(n, f.loc)
		if f.run.Has(d) {
			return n, true
		}
		nd, found := f.run.Next(d + 1)
		if !found {
			return time.Time{}, false
		}
		// Just before the day starts; never back (a zone that falls back
		// over midnight has a date twice).
		from := nd.Start(f.loc).Add(-time.Nanosecond)
		if from.Before(n) {
			from = n
		}
		n, ok = f.inner.Next(from)
	}
	return time.Time{}, false
}

// Excluded returns the name of the exclude calendar that holds the day of
// the occurrence at, or "" when none does.
func (f *Filtered) Excluded(at time.Time) string {
	if f.exclude != nil && f.exclude.Has(DateOf(at, f.loc)) {
		return f.exclude.Name()
	}
	return ""
}

// Calendars returns the run and exclude calendars (nil when not set).
func (f *Filtered) Calendars() (run, exclude *DaySet) { return f.run, f.exclude }

// Location returns the zone whose dates are the days of occurrences.
func (f *Filtered) Location() *time.Location { return f.loc }

// Excluded returns the name of the calendar that excludes the occurrence
// of s at instant at (see Filtered), or "" when none does.
func Excluded(s Schedule, at time.Time) string {
	if f, ok := s.(*Filtered); ok {
		return f.Excluded(at)
	}
	return ""
}

// NextRun returns the first occurrence of s after t that no calendar
// excludes, passing over at most maxSkips excluded ones.
func NextRun(s Schedule, t time.Time) (time.Time, bool) {
	n, ok := s.Next(t)
	for i := 0; ok && Excluded(s, n) != "" && i < maxSkips; i++ {
		n, ok = s.Next(n)
	}
	if ok && Excluded(s, n) != "" {
		return time.Time{}, false
	}
	return n, ok
}
