package defs

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/gnomon-sched/gnomon/job"
)

// Mode is how a definition file is applied.
type Mode int

const (
	// AsWritten applies a file as written: an insert of a task that
	// exists is an error. A file of configurations is always declared.
	AsWritten Mode = iota
	// Declared makes an insert of what exists replace it (see
	// Declarative), so that a file can be applied again and again: the
	// apply mode, and the server's --definitions at every start.
	Declared
	// Synced is Declared, and deletes every definition of a kind the file
	// owns that it does not define: the file owns its tasks (callables,
	// bundles, groups and resources) if it defines at least one of them,
	// its configurations if it defines one, and the named calendars if it
	// defines one.
	Synced
)

// syncing is what the sync mode adds to a file: the deletes, numbered
// after the file's last line, and what the file owns.
type syncing struct {
	file    string
	gone    []Action
	deletes map[string]int // the line of each delete added
	owns    []string
}

// syncDeletes finds what a file in the sync mode deletes: every definition
// of cur (and every named calendar) of a kind the file owns that the file
// does not define. acts are the file's actions as written, decl as
// applied (Declarative), last the file's last line.
func syncDeletes(file string, acts, decl []Action, cur map[string]*job.Task, cals map[string]*job.Calendar, env *Env, last int) (*syncing, error) {
	alone, err := Apply(file, cur, decl, env)
	if err != nil {
		return nil, err
	}
	// What the file defines: the targets whose last action is not a
	// delete, and their kinds. Calendars have a name space of their own.
	lastKind := map[string]Kind{}
	lastCal := map[string]Kind{}
	for _, a := range acts {
		if a.Kind.IsCalendar() {
			lastCal[a.Name] = a.Kind
		} else {
			lastKind[a.Name] = a.Kind
		}
	}
	kept := map[string]bool{}
	ownTasks, ownConfigs := false, false
	for name, k := range lastKind {
		if k == Delete || k == DeleteGroup {
			continue
		}
		t := alone.Tasks[name]
		if t == nil {
			t = cur[name]
		}
		if t == nil {
			continue
		}
		kept[name] = true
		if t.Type == job.Configuration {
			ownConfigs = true
		} else {
			ownTasks = true
		}
	}
	s := &syncing{file: file, deletes: map[string]int{}}
	if ownTasks {
		s.owns = append(s.owns, "tasks")
	}
	if ownConfigs {
		s.owns = append(s.owns, "configurations")
	}
	keptCals := map[string]bool{}
	for name, k := range lastCal {
		if k != DeleteCalendar {
			keptCals[name] = true
		}
	}
	if len(keptCals) > 0 {
		s.owns = append(s.owns, "calendars")
	}
	for _, name := range slices.Sorted(maps.Keys(cur)) {
		t := cur[name]
		mine := ownConfigs && t.Type == job.Configuration || ownTasks && t.Type != job.Configuration
		if !mine || kept[name] || slices.Contains(alone.Deleted, name) {
			continue
		}
		s.gone = append(s.gone, Action{Kind: kindFor(Delete, t.Type), Name: name})
	}
	if len(keptCals) > 0 {
		for _, name := range slices.Sorted(maps.Keys(cals)) {
			if !keptCals[name] && !slices.Contains(alone.DeletedCalendars, name) {
				s.gone = append(s.gone, Action{Kind: DeleteCalendar, Name: name})
			}
		}
	}
	// Numbered after the file, as if written at its end below a line of
	// their own, so that errors about them can be told apart.
	line := last + 1
	for i := range s.gone {
		line++
		s.gone[i].Line = line
		s.deletes[s.gone[i].Name] = line
	}
	return s, nil
}

// rewrite tells the errors at a delete the sync mode added as such: with
// no line, and saying why the definition is deleted.
func (s *syncing) rewrite(err error) error {
	var errs Errors
	if s == nil || len(s.deletes) == 0 || !errors.As(err, &errs) {
		return err
	}
	out := make(Errors, len(errs))
	for i, e := range errs {
		c := *e
		if line, ok := s.deletes[c.Target]; ok && c.Line == line && (c.Kind == Delete || c.Kind == DeleteGroup || c.Kind == DeleteCalendar) {
			c.Line = 0
			c.Msg += fmt.Sprintf(" (the sync deletes %s: %s does not define it)", c.Target, s.file)
		}
		for name, line := range s.deletes {
			c.Msg = strings.Replace(c.Msg, fmt.Sprintf("(deleted on line %d)", line), fmt.Sprintf("(the sync deletes %s: %s does not define it)", name, s.file), 1)
		}
		out[i] = &c
	}
	return out
}

// lastLine is the last line actions come from.
func lastLine(acts []Action) int {
	last := 0
	for _, a := range acts {
		last = max(last, a.Line)
		for _, f := range a.Fields {
			last = max(last, f.Line)
		}
	}
	return last
}
