package defs

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/gnomon-sched/gnomon/calendar"
	"github.com/gnomon-sched/gnomon/job"
)

// Named calendars: insert_calendar, update_calendar and delete_calendar,
// with the attributes description, dates, rule, holidays, workdays and
// ics_file (which the client that reads the file replaces by dates, see
// ResolveICS). They have a name space of their own: a calendar may share
// its name with a task.

// calendarTable holds the attributes of a calendar, set by
// setCalendar and written by CalendarAttrs. The lines of dates, rule and
// ics_file add up.
var calendarTable = []attr{
	{name: "description", on: onCalendar},
	{name: "dates", on: onCalendar, repeat: true},
	{name: "rule", on: onCalendar, repeat: true},
	{name: "holidays", on: onCalendar},
	{name: "workdays", on: onCalendar},
	{name: "ics_file", on: onCalendar, repeat: true},
}

// calOverlay is the working copy of the calendars, as overlay is of the
// tasks.
type calOverlay struct {
	base, over map[string]*job.Calendar
}

func (o *calOverlay) get(name string) (*job.Calendar, bool) {
	if c, ok := o.over[name]; ok {
		return c, c != nil
	}
	c, ok := o.base[name]
	return c, ok
}

func (o *calOverlay) each(fn func(name string, c *job.Calendar)) {
	for n, c := range o.base {
		if _, ok := o.over[n]; !ok {
			fn(n, c)
		}
	}
	for n, c := range o.over {
		if c != nil {
			fn(n, c)
		}
	}
}

// calendarAction applies one calendar action to the working copy.
func (a *applier) calendarAction(act *Action) {
	a.errs = append(a.errs, act.Syntax...)
	kind := act.Kind.base()
	if act.Name != "" {
		if msg := checkName(act.Name); msg != "" {
			a.errorf(act, act.Line, "%s", strings.Replace(msg, "task name", "calendar name", 1))
		}
	}
	old, exists := a.cals.get(act.Name)
	usable := act.Name != ""
	switch {
	case !usable:
	case kind == Insert && exists:
		a.errorf(act, act.Line, "calendar already exist")
		usable = false
	case kind != Insert && !exists:
		a.errorf(act, act.Line, "calendar not exist")
		usable = false
	}
	if kind == Delete {
		for _, f := range act.Fields {
			a.errorf(act, f.Line, "delete calendar should not have other attributes")
		}
		if usable {
			a.cals.over[act.Name] = nil
			delete(a.calLines, act.Name)
			a.calDeletes[act.Name] = act.Line
		}
		return
	}
	c := &job.Calendar{Name: act.Name}
	if kind == Update && exists {
		c = old.Clone()
	}
	lines := map[string]int{"": act.Line}
	// given holds the attributes the action sets: the first line of a
	// repeatable one replaces what the calendar held, the others add.
	given := map[string]bool{}
	for _, f := range act.Fields {
		switch {
		case !attrOf(f.Key).only(onCalendar):
			a.errorf(act, f.Line, "%s: field is not allowed for a calendar (a calendar has description, dates, rule, holidays, workdays and ics_file)", f.Key)
			continue
		case f.Key == "ics_file":
			a.errorf(act, f.Line, "ics_file: %s was not read: the client that sends the definition reads it (gnomon def -f, or the files of the request); give its dates instead", f.Value)
			continue
		}
		if _, ok := lines[f.Key]; !ok {
			lines[f.Key] = f.Line
		}
		if msg := checkText(f.Value); msg != "" {
			a.errorf(act, f.Line, "%s: %s", f.Key, msg)
			continue
		}
		first := !given[f.Key]
		given[f.Key] = true
		if err := setCalendar(c, f.Key, f.Value, first); err != nil {
			a.errorf(act, f.Line, "%v", err)
		}
	}
	if !usable {
		return
	}
	a.cals.over[act.Name] = c
	if a.calLines[act.Name] == nil || kind == Insert {
		a.calLines[act.Name] = lines
	} else {
		maps.Copy(a.calLines[act.Name], lines)
	}
}

// setCalendar sets one attribute line of a calendar; first is set for
// the first line of the attribute in its action, which replaces what the
// calendar held.
func setCalendar(c *job.Calendar, key, v string, first bool) error {
	switch key {
	case "description":
		c.Description = v
	case "workdays":
		c.Workdays = ""
		if v != "" {
			d, err := calendar.ParseWorkdays(v)
			if err != nil {
				return err
			}
			c.Workdays = d.String()
		}
	case "dates":
		if first {
			c.Dates = nil
		}
		ds, err := ParseDates("dates", v)
		if err != nil {
			return err
		}
		c.Dates = mergeDates(c.Dates, ds)
	case "rule":
		if first {
			c.Rules = nil
		}
		if v == "" {
			return nil
		}
		r, err := calendar.ParseRule(v)
		if err != nil {
			return err
		}
		if s := r.String(); !slices.Contains(c.Rules, s) {
			c.Rules = append(c.Rules, s)
		}
	case "holidays":
		if v == "" {
			c.Holidays = nil
			return nil
		}
		h, err := ParseHolidays(v)
		if err != nil {
			return err
		}
		c.Holidays = h
	}
	return nil
}

// ParseDates reads a comma list of dates (YYYY-MM-DD) for attribute key,
// sorted and without repeats; an empty value is no date.
func ParseDates(key, v string) ([]string, error) {
	var out []string
	for it := range strings.SplitSeq(v, ",") {
		it = strings.TrimSpace(it)
		if it == "" && strings.TrimSpace(v) == "" {
			continue
		}
		d, err := calendar.ParseDate(it)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
		out = append(out, d.String())
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// mergeDates merges two sorted lists of dates without repeats.
func mergeDates(a, b []string) []string {
	out := append(slices.Clone(a), b...)
	slices.Sort(out)
	return slices.Compact(out)
}

// ParseHolidays reads a comma list of calendar names and dates, as a
// calendar's holidays: names sorted, then dates sorted.
func ParseHolidays(v string) ([]string, error) {
	var names, dates []string
	for it := range strings.SplitSeq(v, ",") {
		it = strings.TrimSpace(it)
		if calendar.IsDate(it) {
			d, err := calendar.ParseDate(it)
			if err != nil {
				return nil, fmt.Errorf("holidays: %w", err)
			}
			dates = append(dates, d.String())
			continue
		}
		if msg := checkName(it); msg != "" {
			return nil, fmt.Errorf("holidays: %q is neither a date (YYYY-MM-DD) nor a calendar's name: %s", it, strings.Replace(msg, "task name", "a calendar name", 1))
		}
		if slices.Contains(names, it) {
			return nil, fmt.Errorf("holidays: calendar %s given more than once", it)
		}
		names = append(names, it)
	}
	slices.Sort(names)
	slices.Sort(dates)
	return append(names, slices.Compact(dates)...), nil
}

// calendarsGlobal checks what the file leaves of calendars: every
// calendar a task or a calendar names exists, holidays do not go round,
// and a deleted calendar is named by nothing.
func (a *applier) calendarsGlobal(touched []string) {
	gone := func(name string) (int, bool) {
		_, ok := a.cals.get(name)
		line, deleted := a.calDeletes[name]
		return line, !ok && deleted
	}
	// What a delete leaves naming the calendar, reported at the delete.
	for _, name := range slices.Sorted(maps.Keys(a.calDeletes)) {
		line, ok := gone(name)
		if !ok {
			continue
		}
		act := &Action{Kind: DeleteCalendar, Name: name, Line: line}
		var tasks, cals []string
		a.tasks.each(func(n string, t *job.Task) {
			if slices.Contains(t.Calendars(), name) {
				tasks = append(tasks, n)
			}
		})
		a.cals.each(func(n string, c *job.Calendar) {
			if slices.Contains(c.HolidayCalendars(), name) {
				cals = append(cals, n)
			}
		})
		slices.Sort(tasks)
		slices.Sort(cals)
		if len(tasks) > 0 {
			a.errorf(act, line, "calendar %s is named by task(s) %s (run_calendar or exclude_calendar): change them first", name, strings.Join(tasks, ", "))
		}
		if len(cals) > 0 {
			a.errorf(act, line, "calendar %s is named in the holidays of calendar(s) %s: change them first", name, strings.Join(cals, ", "))
		}
	}
	// The calendars tasks name.
	for _, name := range touched {
		t, _ := a.tasks.get(name)
		x := t.Extras()
		for _, key := range []string{"run_calendar", "exclude_calendar"} {
			c := x.RunCalendar
			if key == "exclude_calendar" {
				c = x.ExcludeCalendar
			}
			if c == "" {
				continue
			}
			if _, ok := a.cals.get(c); ok {
				continue
			}
			if line, ok := gone(c); ok {
				a.errorAt(name, key, "%s: calendar %s does not exist (deleted on line %d)", key, c, line)
			} else {
				a.errorAt(name, key, "%s: calendar %s does not exist", key, c)
			}
		}
		if x.RunCalendar != "" && x.RunCalendar == x.ExcludeCalendar {
			a.errorAt(name, "exclude_calendar", "run_calendar and exclude_calendar both name calendar %s: the task would never run", x.RunCalendar)
		}
	}
	// The calendars the holidays of a calendar name.
	names := slices.Sorted(maps.Keys(a.calLines))
	for _, name := range names {
		c, ok := a.cals.get(name)
		if !ok {
			continue
		}
		for _, h := range c.HolidayCalendars() {
			at := &Action{Kind: InsertCalendar, Name: name, Line: a.calLines[name]["holidays"]}
			if at.Line == 0 {
				at.Line = a.calLines[name][""]
			}
			switch _, ok := a.cals.get(h); {
			case h == name:
				a.errorf(at, at.Line, "holidays: a calendar cannot name itself")
			case !ok:
				if line, ok := gone(h); ok {
					a.errorf(at, at.Line, "holidays: calendar %s does not exist (deleted on line %d)", h, line)
				} else {
					a.errorf(at, at.Line, "holidays: calendar %s does not exist", h)
				}
			}
		}
	}
	a.holidayCycles(names)
}

// holidayCycles reports calendars whose holidays name, through others,
// themselves.
func (a *applier) holidayCycles(touched []string) {
	reported := map[string]bool{}
	for _, start := range touched {
		// Depth-first from start, looking for a way back to it.
		var path []string
		seen := map[string]bool{}
		var visit func(n string) bool
		visit = func(n string) bool {
			c, ok := a.cals.get(n)
			if !ok {
				return false
			}
			for _, h := range c.HolidayCalendars() {
				if h == start && n != start {
					path = append(path, n)
					return true
				}
				if h == n || seen[h] {
					continue
				}
				seen[h] = true
				if visit(h) {
					path = append(path, n)
					return true
				}
			}
			return false
		}
		if !visit(start) {
			continue
		}
		slices.Reverse(path)
		cyc := append(path, start)
		key := canonicalCycle(cyc)
		if reported[key] {
			continue
		}
		reported[key] = true
		line := a.calLines[start]["holidays"]
		if line == 0 {
			line = a.calLines[start][""]
		}
		a.errorf(&Action{Kind: InsertCalendar, Name: start, Line: line}, line, "holidays go round: %s", strings.Join(cyc, " -> "))
	}
}

// CalendarAttrs returns a calendar's set attributes as (key, value) pairs
// in the language's order, as Format writes them: the dates one line a
// year, each rule on its own line.
func CalendarAttrs(c *job.Calendar) [][2]string {
	var out [][2]string
	add := func(k, v string) {
		if v != "" {
			out = append(out, [2]string{k, v})
		}
	}
	add("description", c.Description)
	for i := 0; i < len(c.Dates); {
		j := i + 1
		for j < len(c.Dates) && c.Dates[j][:4] == c.Dates[i][:4] {
			j++
		}
		add("dates", strings.Join(c.Dates[i:j], ", "))
		i = j
	}
	for _, r := range c.Rules {
		add("rule", r)
	}
	add("holidays", strings.Join(c.Holidays, ", "))
	add("workdays", c.Workdays)
	return out
}

// calendarOf returns the calendar an insert_calendar action defines, and
// false if a line of it is wrong.
func calendarOf(a *Action) (*job.Calendar, bool) {
	c := &job.Calendar{Name: a.Name}
	given := map[string]bool{}
	for _, f := range a.Fields {
		if !attrOf(f.Key).only(onCalendar) || f.Key == "ics_file" || checkText(f.Value) != "" {
			return nil, false
		}
		first := !given[f.Key]
		given[f.Key] = true
		if setCalendar(c, f.Key, f.Value, first) != nil {
			return nil, false
		}
	}
	return c, len(a.Syntax) == 0
}

// DeclarativeCalendars rewrites the calendar actions of a file as
// Declarative does those of tasks: an insert_calendar of a calendar that
// exists becomes an update_calendar that sets every attribute the file
// gives and clears every other one, and is dropped if it would change
// nothing.
func DeclarativeCalendars(file string, cur map[string]*job.Calendar, acts []Action) []Action {
	var out []Action
	for _, a := range acts {
		old, ok := cur[a.Name]
		if a.Kind != InsertCalendar || !ok {
			out = append(out, a)
			continue
		}
		if c, ok := calendarOf(&a); ok && c.Equal(old) {
			continue
		}
		up := Action{Kind: UpdateCalendar, Name: a.Name, Line: a.Line, Syntax: a.Syntax, Fields: slices.Clone(a.Fields)}
		given := map[string]bool{}
		for _, f := range a.Fields {
			given[f.Key] = true
		}
		for _, at := range calendarTable {
			if !given[at.name] && at.name != "ics_file" {
				up.Fields = append(up.Fields, Field{Key: at.name, Line: a.Line})
			}
		}
		slices.SortStableFunc(up.Fields[len(a.Fields):], func(x, y Field) int { return strings.Compare(x.Key, y.Key) })
		out = append(out, up)
	}
	return out
}
