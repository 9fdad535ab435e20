package engine

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/gnomon-sched/gnomon/calendar"
	"github.com/gnomon-sched/gnomon/job"
)

// Named calendars. The engine keeps their definitions and their compiled
// day sets; a task's schedule holds the day sets of the calendars it
// names (calendar.Filtered), so a calendar that changes recompiles the
// schedules of the tasks that name it, directly or through the holidays of
// another calendar, and moves their next occurrence as the changed
// definition of a task would (from now on).

// RestoreCalendars loads the stored calendars. It must be called on a new
// engine before Prepare, whose schedules name them. A calendar that cannot
// be compiled (a definition stored by a later version) is reported among
// the problems, and the tasks naming it are not armed.
func (e *Engine) RestoreCalendars(cals []job.Calendar) {
	for i := range cals {
		c := &cals[i]
		e.cals[c.Name] = c
	}
	e.problems = append(e.problems, e.compileCalendars(slices.Sorted(maps.Keys(e.cals)))...)
}

// compileCalendars compiles the named calendars again, each after those
// its holidays name, and returns what could not be compiled.
func (e *Engine) compileCalendars(names []string) []string {
	cals := make([]*job.Calendar, len(names))
	for i, n := range names {
		cals[i] = e.cals[n]
		delete(e.days, n)
	}
	days, errs := calendar.CompileAll(cals, e.daySet)
	maps.Copy(e.days, days)
	problems := make([]string, len(errs))
	for i, err := range errs {
		problems[i] = err.Error()
	}
	return problems
}

// daySet finds a compiled calendar (calendar.Lookup).
func (e *Engine) daySet(name string) *calendar.DaySet { return e.days[name] }

// defineCalendars applies the calendars a definition file changes and
// returns the tasks whose schedule they change, but those the file
// changes itself, which are compiled again anyway.
func (e *Engine) defineCalendars(res *job.Plan) []string {
	if len(res.Calendars) == 0 {
		return nil
	}
	changed := make([]string, len(res.Calendars))
	for i, c := range res.Calendars {
		e.cals[c.Name] = c
		changed[i] = c.Name
	}
	affected := e.dependents(changed)
	e.problems = append(e.problems, e.compileCalendars(affected)...)
	users := map[string]bool{}
	for _, c := range affected {
		for t := range e.calUsers[c] {
			users[t] = true
		}
	}
	for _, t := range res.Tasks {
		delete(users, t.Name)
	}
	if e.out.calendars == nil {
		e.out.calendars = map[string]bool{}
	}
	for _, n := range changed {
		e.out.calendars[n] = true
	}
	return slices.Sorted(maps.Keys(users))
}

// dependents returns the calendars named and those whose holidays name
// them, directly or not.
func (e *Engine) dependents(names []string) []string {
	set := map[string]bool{}
	queue := slices.Clone(names)
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		if set[n] {
			continue
		}
		set[n] = true
		for _, o := range slices.Sorted(maps.Keys(e.cals)) {
			if !set[o] && slices.Contains(e.cals[o].HolidayCalendars(), n) {
				queue = append(queue, o)
			}
		}
	}
	return slices.Sorted(maps.Keys(set))
}

// deleteCalendars removes the calendars a file deletes: the validator saw
// that nothing names them any more.
func (e *Engine) deleteCalendars(res *job.Plan) {
	for _, n := range res.DeletedCalendars {
		delete(e.cals, n)
		delete(e.days, n)
		e.out.DeletedCalendars = append(e.out.DeletedCalendars, n)
	}
}

// replanUsers compiles again the schedules of tasks whose calendars
// changed, and arms them from now on.
func (e *Engine) replanUsers(names []string) {
	for _, n := range names {
		en := e.tasks[n]
		if en == nil {
			continue
		}
		e.plan(en)
		e.replan(en)
	}
}

// Calendar returns a named calendar's definition. The caller must not
// modify it.
func (e *Engine) Calendar(name string) (*job.Calendar, bool) {
	c, ok := e.cals[name]
	return c, ok
}

// CalendarNames returns the names of the calendars, sorted.
func (e *Engine) CalendarNames() []string { return slices.Sorted(maps.Keys(e.cals)) }

// Calendars returns the calendars' definitions, by name. The caller must
// not modify them.
func (e *Engine) Calendars() map[string]*job.Calendar { return e.cals }

// DaySet returns a calendar compiled, nil if there is none. A DaySet is
// immutable and may be used on any goroutine.
func (e *Engine) DaySet(name string) *calendar.DaySet { return e.days[name] }

// CalendarUsers returns the tasks that name a calendar in run_calendar or
// exclude_calendar, sorted.
func (e *Engine) CalendarUsers(name string) []string { return sortedSet(e.calUsers[name]) }

// exclusion says why a task's occurrence at instant at is skipped for its
// exclude_calendar, or returns "" if it is not.
func exclusion(s calendar.Schedule, at time.Time) string {
	f, ok := s.(*calendar.Filtered)
	if !ok {
		return ""
	}
	name := f.Excluded(at)
	if name == "" {
		return ""
	}
	return fmt.Sprintf("%s is a day of calendar %s (exclude_calendar)", calendar.DateOf(at, f.Location()), name)
}
