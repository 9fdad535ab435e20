package job

import "slices"

// Calendar is a named calendar (insert_calendar): a set of days that
// tasks name in run_calendar (they run only on its days) and
// exclude_calendar (they never run on its days). Its days are its Dates
// and the days its Rules yield. Holidays are days that are not business
// days for the rules that count them: a calendar's own holiday dates, and
// every day of the calendars it names there.
//
// Every field holds canonical text, as the definition language writes it
// (package defs checks it, package calendar compiles it): dates are
// YYYY-MM-DD, sorted and without repeats; rules are in canonical form, in
// definition order; holidays are calendar names (sorted) then dates
// (sorted); workdays is a comma list of two-letter days in su..sa order,
// empty for monday to friday.
type Calendar struct {
	Name        string   `json:"name"`
	Description string   `json:"description,omitempty"`
	Dates       []string `json:"dates,omitempty"`
	Rules       []string `json:"rules,omitempty"`
	Holidays    []string `json:"holidays,omitempty"`
	Workdays    string   `json:"workdays,omitempty"`
}

// Clone returns a deep copy.
func (c *Calendar) Clone() *Calendar {
	cp := *c
	cp.Dates = slices.Clone(c.Dates)
	cp.Rules = slices.Clone(c.Rules)
	cp.Holidays = slices.Clone(c.Holidays)
	return &cp
}

// Equal reports whether two calendars define the same days the same way.
func (c *Calendar) Equal(o *Calendar) bool {
	return c.Name == o.Name && c.Description == o.Description && slices.Equal(c.Dates, o.Dates) &&
		slices.Equal(c.Rules, o.Rules) && slices.Equal(c.Holidays, o.Holidays) && c.Workdays == o.Workdays
}

// HolidayCalendars returns the names of the calendars its holidays name.
func (c *Calendar) HolidayCalendars() []string {
	var out []string
	for _, h := range c.Holidays {
		if !isDateText(h) {
			out = append(out, h)
		}
	}
	return out
}

// isDateText tells a holiday date from a calendar's name: a date holds a
// '-', a name never does.
func isDateText(s string) bool { return slices.Contains([]byte(s), '-') }

// Calendars returns the calendars a task names: its run_calendar and its
// exclude_calendar, those it sets.
func (t *Task) Calendars() []string {
	x := t.Extras()
	var out []string
	if x.RunCalendar != "" {
		out = append(out, x.RunCalendar)
	}
	if x.ExcludeCalendar != "" && x.ExcludeCalendar != x.RunCalendar {
		out = append(out, x.ExcludeCalendar)
	}
	return out
}
