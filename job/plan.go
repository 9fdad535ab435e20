package job

import (
	"slices"
	"strings"
)

// Plan is what a definition file changes, checked against the definitions
// it was planned on: the definitions package makes one, the engine applies
// it as it stands, and the journal records it.
type Plan struct {
	// Tasks are the tasks inserted or updated, whole, sorted by name.
	Tasks []*Task `json:"tasks,omitempty"`
	// Deleted are the names of the tasks that no longer exist, sorted.
	Deleted []string `json:"deleted,omitempty"`
	// Calendars are the named calendars inserted or updated, whole,
	// sorted by name; DeletedCalendars the names of those that no longer
	// exist, sorted.
	Calendars        []*Calendar `json:"calendars,omitempty"`
	DeletedCalendars []string    `json:"deleted_calendars,omitempty"`
}

// Task returns the definition the plan gives a task, or nil if it does
// not change it.
func (p *Plan) Task(name string) *Task {
	if i, ok := slices.BinarySearchFunc(p.Tasks, name, func(t *Task, n string) int { return strings.Compare(t.Name, n) }); ok {
		return p.Tasks[i]
	}
	return nil
}

// Calendar returns the definition the plan gives a named calendar, or nil
// if it does not change it.
func (p *Plan) Calendar(name string) *Calendar {
	if i, ok := slices.BinarySearchFunc(p.Calendars, name, func(c *Calendar, n string) int { return strings.Compare(c.Name, n) }); ok {
		return p.Calendars[i]
	}
	return nil
}

// Touched returns the names of the tasks the plan inserts, updates or
// deletes, and those of the calendars.
func (p *Plan) Touched() (tasks, calendars []string) {
	for _, t := range p.Tasks {
		tasks = append(tasks, t.Name)
	}
	for _, c := range p.Calendars {
		calendars = append(calendars, c.Name)
	}
	return append(tasks, p.Deleted...), append(calendars, p.DeletedCalendars...)
}
