package calendar

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/gnomon-sched/gnomon/job"
)

// DaySet is a named calendar compiled: the days it holds, which are its
// dates and the days its rules yield. Rules that count business days
// count the calendar's workdays (Monday to Friday unless it says) that are
// not its holidays: holiday dates of its own and the days of the
// calendars its holidays name. A DaySet is immutable and safe for
// concurrent use; it holds the DaySets its holidays name, as they were
// when it was compiled.
type DaySet struct {
	name     string
	dates    []Date // sorted, without repeats
	rules    []Rule
	workdays job.Days
	holDates []Date // sorted, without repeats
	holCals  []*DaySet
}

// Lookup finds a compiled calendar by name; it returns nil for a name no
// calendar has.
type Lookup func(name string) *DaySet

// Compile compiles a calendar definition. lookup finds the calendars its
// holidays name; each must be compiled before it.
func Compile(c *job.Calendar, lookup Lookup) (*DaySet, error) {
	s := &DaySet{name: c.Name, workdays: weekdaysSet}
	var err error
	if s.dates, err = parseDates(c.Dates); err != nil {
		return nil, fmt.Errorf("calendar %s: dates: %w", c.Name, err)
	}
	for _, text := range c.Rules {
		r, err := ParseRule(text)
		if err != nil {
			return nil, fmt.Errorf("calendar %s: %w", c.Name, err)
		}
		s.rules = append(s.rules, r)
	}
	if c.Workdays != "" {
		if s.workdays, err = ParseWorkdays(c.Workdays); err != nil {
			return nil, fmt.Errorf("calendar %s: %w", c.Name, err)
		}
	}
	for _, h := range c.Holidays {
		if IsDate(h) {
			d, err := ParseDate(h)
			if err != nil {
				return nil, fmt.Errorf("calendar %s: holidays: %w", c.Name, err)
			}
			s.holDates = append(s.holDates, d)
			continue
		}
		var hc *DaySet
		if lookup != nil {
			hc = lookup(h)
		}
		if hc == nil {
			return nil, fmt.Errorf("calendar %s: holidays: calendar %s is not defined", c.Name, h)
		}
		s.holCals = append(s.holCals, hc)
	}
	slices.Sort(s.holDates)
	s.holDates = slices.Compact(s.holDates)
	return s, nil
}

// CompileAll compiles calendars, each after the calendars its holidays
// name, which are among cals or found by known (nil: none). It returns
// those compiled, by name, and why the others could not be.
func CompileAll(cals []*job.Calendar, known Lookup) (map[string]*DaySet, []error) {
	pending := make(map[string]*job.Calendar, len(cals))
	for _, c := range cals {
		pending[c.Name] = c
	}
	out := make(map[string]*DaySet, len(cals))
	lookup := func(name string) *DaySet {
		if d := out[name]; d != nil {
			return d
		}
		if pending[name] == nil && known != nil {
			return known(name)
		}
		return nil
	}
	var errs []error
	for len(pending) > 0 {
		progress := false
		for _, n := range slices.Sorted(maps.Keys(pending)) {
			c := pending[n]
			if slices.ContainsFunc(c.HolidayCalendars(), func(h string) bool { return h != n && pending[h] != nil }) {
				continue
			}
			delete(pending, n)
			progress = true
			d, err := Compile(c, lookup)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			out[n] = d
		}
		if !progress {
			for _, n := range slices.Sorted(maps.Keys(pending)) {
				errs = append(errs, fmt.Errorf("calendar %s: holidays go round", n))
			}
			break
		}
	}
	return out, errs
}

// IsDate reports whether a holidays item is a date (it holds a '-', which
// no calendar name does) rather than a calendar's name.
func IsDate(item string) bool { return strings.Contains(item, "-") }

// ParseWorkdays reads a comma list of days of the week (su,mo,...,
// monday, ...), as the workdays attribute holds them.
func ParseWorkdays(v string) (job.Days, error) {
	words := strings.Fields(strings.ToLower(strings.ReplaceAll(v, ",", " , ")))
	days, rest, err := dayList(words)
	if err == nil && (len(rest) > 0 || days == 0) {
		err = fmt.Errorf("%q should be a comma list of days of the week such as mo,tu,we,th,fr", v)
	}
	if err != nil {
		return 0, fmt.Errorf("workdays: %w", err)
	}
	return days, nil
}

// parseDates reads dates into a sorted list without repeats.
func parseDates(items []string) ([]Date, error) {
	out := make([]Date, 0, len(items))
	for _, it := range items {
		d, err := ParseDate(it)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// Name returns the calendar's name.
func (s *DaySet) Name() string { return s.name }

// Has reports whether the calendar holds date d.
func (s *DaySet) Has(d Date) bool {
	if _, ok := slices.BinarySearch(s.dates, d); ok {
		return true
	}
	for i := range s.rules {
		if n, ok := s.rules[i].next(d, d, s.Business); ok && n == d {
			return true
		}
	}
	return false
}

// Business reports whether d is a business day of the calendar: one of
// its workdays that is not a holiday.
func (s *DaySet) Business(d Date) bool {
	if !s.workdays.Has(d.Weekday()) {
		return false
	}
	if _, ok := slices.BinarySearch(s.holDates, d); ok {
		return false
	}
	for _, h := range s.holCals {
		if h.Has(d) {
			return false
		}
	}
	return true
}

// Next returns the first date at or after from that the calendar holds.
// Its dates are searched to the last; its rules up to nine years ahead
// (29 February may be eight years away), past which a rule that yields
// nothing (holidays took every day it could) is taken to yield nothing
// more.
func (s *DaySet) Next(from Date) (Date, bool) {
	var best Date
	found := false
	if i, _ := slices.BinarySearch(s.dates, from); i < len(s.dates) {
		best, found = s.dates[i], true
	}
	limit := from + horizon
	for i := range s.rules {
		l := limit
		if found {
			l = min(l, best-1)
		}
		if d, ok := s.rules[i].next(from, l, s.Business); ok {
			best, found = d, true
		}
	}
	return best, found
}

// Between returns the dates the calendar holds from from to to, both
// included, at most limit of them (no limit when limit <= 0), and
// whether more were left out.
func (s *DaySet) Between(from, to Date, limit int) ([]Date, bool) {
	var out []Date
	for d, ok := s.Next(from); ok && d <= to; d, ok = s.Next(d + 1) {
		if limit > 0 && len(out) == limit {
			return out, true
		}
		out = append(out, d)
	}
	return out, false
}

// Last returns the last of the calendar's explicit dates, false when it
// has none.
func (s *DaySet) Last() (Date, bool) {
	if len(s.dates) == 0 {
		return 0, false
	}
	return s.dates[len(s.dates)-1], true
}

// HasRules reports whether the calendar has rules.
func (s *DaySet) HasRules() bool { return len(s.rules) > 0 }
