// Package calendar computes when time triggers fire: seed-001 calendars
// (run_days with start_times, or a run_window with start_mins), intervals
// from a start date and cron expressions, each in its own time zone.
//
// A schedule first yields nominal wall-clock times, which are then mapped to
// instants by one rule for daylight-saving changes:
//
//   - a wall time that does not exist (the clock springs forward over it)
//     fires once, at the first instant after the gap;
//   - a wall time that happens twice (the clock falls back) fires once, at
//     its first occurrence, unless the schedule steps through the day (a
//     run window with start_mins, a cron expression whose second, minute or
//     hour field starts with '*', an interval counted in seconds, minutes
//     or hours): those follow real elapsed time and fire at both
//     occurrences, so that no slot is lost;
//   - nominal times that map to the same instant fire once.
package calendar

import (
	"errors"
	"fmt"
	"iter"
	"time"

	"github.com/gnomon-sched/gnomon/job"
)

// Schedule is a time trigger.
type Schedule interface {
	// Next returns the first fire instant strictly after t, in UTC, and
	// false if the schedule never fires after t.
	Next(t time.Time) (time.Time, bool)
}

// ErrNoTrigger is returned by ForTask for a task without a time trigger.
var ErrNoTrigger = errors.New("task has no time trigger")

// ForTask compiles the time trigger of a task definition. Calendars use the
// task's timezone, or def when it names none. A task that names a named
// calendar (run_calendar, exclude_calendar) needs ForTaskWith.
func ForTask(t *job.Task, def *time.Location) (Schedule, error) {
	return ForTaskWith(t, def, nil)
}

// ForTaskWith compiles the time trigger of a task definition as ForTask
// does, with the named calendars cals finds: the schedule yields only the
// occurrences whose day (their date in the task's zone) is a day of the
// task's run_calendar, and tells those on a day of its exclude_calendar
// (see Excluded).
func ForTaskWith(t *job.Task, def *time.Location, cals Lookup) (Schedule, error) {
	loc := def
	if t.Timezone != "" {
		l, err := time.LoadLocation(t.Timezone)
		if err != nil {
			return nil, fmt.Errorf("timezone: %w", err)
		}
		loc = l
	}
	if loc == nil {
		loc = time.UTC
	}
	var (
		s   Schedule
		err error
	)
	switch {
	case len(t.StartTimes) > 0:
		s = NewBatch(t.RunDays, t.StartTimes, loc)
	case t.Window != nil:
		s = NewWindow(t.RunDays, *t.Window, t.StartMins, loc)
	case t.Cron != "":
		s, err = ParseCron(t.Cron, loc)
	case t.StartDate != "":
		s, err = IntervalOf(t.StartDate, t.EndDate, t.Interval, loc)
	default:
		return nil, ErrNoTrigger
	}
	if err != nil {
		return nil, err
	}
	x := t.Extras()
	if x.RunCalendar == "" && x.ExcludeCalendar == "" {
		return s, nil
	}
	f := &Filtered{inner: s, loc: loc}
	for _, c := range []struct {
		key, name string
		set       **DaySet
	}{{"run_calendar", x.RunCalendar, &f.run}, {"exclude_calendar", x.ExcludeCalendar, &f.exclude}} {
		if c.name == "" {
			continue
		}
		var d *DaySet
		if cals != nil {
			d = cals(c.name)
		}
		if d == nil {
			return nil, fmt.Errorf("%s: calendar %s is not defined", c.key, c.name)
		}
		*c.set = d
	}
	return f, nil
}

// Between returns the fire instants in [from, to), at most limit of them
// (no limit when limit <= 0), and whether more were left out.
func Between(s Schedule, from, to time.Time, limit int) ([]time.Time, bool) {
	var out []time.Time
	t, ok := s.Next(from.Add(-time.Nanosecond))
	for ok && t.Before(to) {
		if limit > 0 && len(out) == limit {
			return out, true
		}
		out = append(out, t)
		t, ok = s.Next(t)
	}
	return out, false
}

// stepper is the part every schedule shares: nominal wall times and the rule
// that maps them to instants.
type stepper struct {
	loc *time.Location
	// elapsed schedules fire at both occurrences of a repeated wall time.
	elapsed bool
	// walls yields the nominal wall times at or after from, ascending; it
	// may stop early when no more are planned.
	walls func(from wall) iter.Seq[wall]
}

// Next implements Schedule.
func (s *stepper) Next(t time.Time) (time.Time, bool) {
	now := wallOf(t, s.loc)
	// A wall time at or before now first occurred at or before t.
	from := now + 1
	if s.elapsed {
		// But it may occur again if the clock falls back within a day.
		if back := offset(t.Unix(), s.loc) - offset(t.Unix()+day+day/12, s.loc); back > 0 {
			from = now - wall(back)
		}
	}
	var best int64
	found := false
	ts := t.Unix() // instants are whole seconds: c > t exactly when c > ts
	after := func(c int64) bool { return c > ts }
	for w := range s.walls(from) {
		f, sec, n := occurrences(w, s.loc)
		if n == 0 {
			f = resolve(w, s.loc)
		}
		if found && f >= best {
			break
		}
		if after(f) {
			best, found = f, true
			if !s.elapsed {
				break
			}
		}
		if s.elapsed && n == 2 && after(sec) && (!found || sec < best) {
			best, found = sec, true
		}
	}
	if !found {
		return time.Time{}, false
	}
	return time.Unix(best, 0).UTC(), true
}

// NewBatch returns a seed-001 batch calendar: each start time on each run
// day. Start times are fixed: a repeated wall time fires once.
func NewBatch(days job.Days, times []job.Clock, loc *time.Location) Schedule {
	offs := make([]int64, len(times))
	for i, c := range times {
		offs[i] = int64(c) * 60
	}
	return &stepper{loc: loc, walls: daily(days, offs)}
}

// NewWindow returns a seed-001 window calendar: every minute of the window
// whose minute is in mins, both ends included. A window that ends before it
// starts runs past midnight and belongs to the day it opens. Window slots
// follow elapsed time through a repeated hour.
func NewWindow(days job.Days, w job.Window, mins []int, loc *time.Location) Schedule {
	end := int(w.End)
	if w.End < w.Start {
		end += 24 * 60
	}
	in := map[int]bool{}
	for _, m := range mins {
		in[m] = true
	}
	var offs []int64
	for m := int(w.Start); m <= end; m++ {
		if in[m%60] {
			offs = append(offs, int64(m)*60)
		}
	}
	return &stepper{loc: loc, elapsed: true, walls: daily(days, offs)}
}

// daily yields, for each run day, the day's start plus each offset
// (ascending; offsets past a day belong to the day before).
func daily(days job.Days, offs []int64) func(wall) iter.Seq[wall] {
	return func(from wall) iter.Seq[wall] {
		return func(yield func(wall) bool) {
			if len(offs) == 0 {
				return
			}
			d0, _ := from.days()
			// An overnight window of the day before may still be open.
			for d := d0 - 1; d <= d0+8; d++ {
				if !days.Has(weekdayOf(d)) {
					continue
				}
				for _, o := range offs {
					w := wall(d*day + o)
					if w >= from && !yield(w) {
						return
					}
				}
			}
		}
	}
}
