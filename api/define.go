package api

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/user"
	"slices"
	"strconv"

	"github.com/gnomon-sched/gnomon/auth"
	"github.com/gnomon-sched/gnomon/cond"
	"github.com/gnomon-sched/gnomon/defs"
	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/periods"
	"github.com/gnomon-sched/gnomon/scheduler"
)

// define applies a definition file: as written, or in the apply and sync
// modes declaratively, answering with what it changes.
func (s *Server) define(w http.ResponseWriter, r *http.Request) error {
	var req DefineRequest
	if err := decode(w, r, &req); err != nil {
		return err
	}
	if req.File == "" {
		req.File = "definitions"
	}
	syn, err := defs.ParseSyntax(req.Syntax)
	if err != nil {
		return badRequest("syntax: %v", err)
	}
	// Told here, once: what follows reads the file in this syntax.
	syn = syn.Of(req.Text)
	if syn == defs.Language {
		text, err := defs.ResolveICS(req.File, req.Text, func(path string) ([]byte, error) {
			f, ok := req.Files[path]
			if !ok {
				return nil, fmt.Errorf("not sent with the definition (gnomon def -f sends the files its ics_file lines name; the API takes them in files)")
			}
			return []byte(f), nil
		}, s.sched.Now())
		if err != nil {
			return err
		}
		req.Text = text
	}
	if err := s.mayDefine(r, req, syn); err != nil {
		return err
	}
	msg := "Successfully processed"
	if req.Check {
		msg = "Successfully validated"
	}
	mode := defs.AsWritten
	switch req.Mode {
	case "":
	case ModeApply:
		mode = defs.Declared
	case ModeSync:
		mode = defs.Synced
	default:
		return badRequest("mode: %q should be %q or %q (or absent: apply the file as written)", req.Mode, ModeApply, ModeSync)
	}
	if req.Mode != "" && syn == defs.Trees {
		return s.defineTrees(w, r, req, msg)
	}
	// The loop plans the file once, on its turn, against the definitions
	// as they are then, with everything the server knows.
	d, err := s.sched.Define(r.Context(), scheduler.DefineFile{File: req.File, Text: req.Text, Syntax: syn, Check: req.Check, Mode: mode,
		By: auth.NameOf(r.Context()), TouchFunc: scopeAllowed(identity(r)), AllowFunc: s.ownersAllowed(identity(r))})
	if err != nil {
		return err
	}
	if req.Mode == "" {
		return writeJSON(w, http.StatusOK, DefineResponse{Message: msg})
	}
	changes := diff(d.Before, &d.Plan)
	diffCalendars(changes, d.BeforeCalendars, &d.Plan)
	changes.SyncOwns = d.Owns
	return writeJSON(w, http.StatusOK, DefineResponse{Message: msg, Changes: changes})
}

// diffCalendars adds to c what p changes of the named calendars before
// holds.
func diffCalendars(c *Changes, before map[string]*job.Calendar, p *job.Plan) {
	for _, cal := range p.Calendars {
		name := cal.Name
		old, ok := before[name]
		if !ok {
			c.Added = append(c.Added, DefinitionRef{Name: name, Type: TypeCalendar})
			continue
		}
		if fields := attrChanges(defs.CalendarAttrs(old), defs.CalendarAttrs(cal)); len(fields) > 0 {
			c.Changed = append(c.Changed, ChangedDef{Name: name, Type: TypeCalendar, Fields: fields})
		}
	}
	for _, name := range p.DeletedCalendars {
		if _, ok := before[name]; ok {
			c.Deleted = append(c.Deleted, DefinitionRef{Name: name, Type: TypeCalendar})
		}
	}
}

// attrChanges lists the attributes whose values differ, in the order of
// after (those only before has last); an attribute given on several lines
// (a calendar's dates, its rules) is compared as all its lines joined.
func attrChanges(before, after [][2]string) []FieldChange {
	join := func(kvs [][2]string) (map[string]string, []string) {
		m := map[string]string{}
		var keys []string
		for _, kv := range kvs {
			if v, ok := m[kv[0]]; ok {
				m[kv[0]] = v + "; " + kv[1]
				continue
			}
			m[kv[0]] = kv[1]
			keys = append(keys, kv[0])
		}
		return m, keys
	}
	b, bkeys := join(before)
	a, keys := join(after)
	for _, k := range bkeys {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	var out []FieldChange
	for _, k := range keys {
		if b[k] != a[k] {
			out = append(out, FieldChange{Field: k, Old: b[k], New: a[k]})
		}
	}
	return out
}

// diff tells what p changes of the definitions before holds.
func diff(before map[string]*job.Task, p *job.Plan) *Changes {
	c := &Changes{Added: []DefinitionRef{}, Changed: []ChangedDef{}, Deleted: []DefinitionRef{}}
	for _, t := range p.Tasks {
		name := t.Name
		old, ok := before[name]
		if !ok {
			c.Added = append(c.Added, DefinitionRef{Name: name, Type: t.Type})
			continue
		}
		if fields := fieldChanges(old, t); len(fields) > 0 {
			c.Changed = append(c.Changed, ChangedDef{Name: name, Type: t.Type, Fields: fields})
		}
	}
	for _, name := range p.Deleted {
		if old, ok := before[name]; ok {
			c.Deleted = append(c.Deleted, DefinitionRef{Name: name, Type: old.Type})
		}
	}
	return c
}

// fieldChanges lists the attributes whose values differ, in the language's
// order (those only the old definition has last).
func fieldChanges(old, t *job.Task) []FieldChange {
	before := map[string]string{}
	var keys []string
	for _, kv := range defs.Attrs(old) {
		before[kv[0]] = kv[1]
	}
	after := map[string]string{}
	for _, kv := range defs.Attrs(t) {
		after[kv[0]] = kv[1]
		keys = append(keys, kv[0])
	}
	for _, kv := range defs.Attrs(old) {
		if _, ok := after[kv[0]]; !ok {
			keys = append(keys, kv[0])
		}
	}
	var out []FieldChange
	for _, k := range keys {
		if before[k] != after[k] {
			out = append(out, FieldChange{Field: k, Old: before[k], New: after[k]})
		}
	}
	return out
}

// mayRunAs returns a *auth.Denied when a tree file holds a command that
// would run as an owner the identity may not define commands for (see
// auth.Identity.MayRunAs); a level's command without an owner runs as
// the default owner. The file is planned on the loop, as it will be when
// applied (Scheduler.CheckTrees), and its plan is checked: the owners a
// plan names come from its text alone. A file in the task language or
// configuration JSON is checked on its plan as it is applied (see
// ownersAllowed).
func (s *Server) mayRunAs(r *http.Request, req DefineRequest, syn defs.Syntax) error {
	id := identity(r)
	if id.Owners == nil && len(id.Scope) == 0 || syn != defs.Trees {
		return nil
	}
	facts, err := s.sched.CheckTrees(r.Context(), periods.Define{File: req.File, Text: req.Text})
	if err != nil {
		return err
	}
	dflt := s.defaultOwner()
	for _, t := range facts.Plan.Trees {
		for _, l := range t.Levels {
			if l.Command == "" {
				continue
			}
			if err := runsAs(id, cmp.Or(l.Owner, dflt), "timeperiod process "+l.Process); err != nil {
				return err
			}
		}
	}
	return nil
}

// ownersAllowed returns the check of a plan for an identity limited in
// the owners it may define commands for, nil for one that is not: each
// task or configuration the plan inserts or updates that has a command
// (or a profile, which the command's shell sources) must run as an owner
// the identity may define commands for, whether the file set the command
// or the owner or not, since what runs is the definition that results.
// A command without an owner runs as the default owner.
func (s *Server) ownersAllowed(id *auth.Identity) func(*job.Plan) error {
	if id.Owners == nil && len(id.Scope) == 0 {
		return nil // any owner
	}
	dflt := s.defaultOwner()
	return func(p *job.Plan) error {
		for _, t := range p.Tasks {
			if t.Command == "" && t.Extras().Profile == "" {
				continue
			}
			if err := runsAs(id, cmp.Or(t.Extras().Owner, dflt), t.Name); err != nil {
				return err
			}
		}
		return nil
	}
}

// runsAs returns a *auth.Denied naming what when id may not define
// commands that run as owner.
func runsAs(id *auth.Identity, owner, what string) error {
	err := id.MayRunAs(owner)
	var den *auth.Denied
	if errors.As(err, &den) {
		den.Task = what
	}
	return err
}

// defaultOwner is whom the commands of tasks without an owner run as: the
// server's DefaultOwner, else the user the server runs as.
func (s *Server) defaultOwner() string {
	if s.DefaultOwner != "" {
		return s.DefaultOwner
	}
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return strconv.Itoa(os.Geteuid())
}

// mayDefine returns a *auth.Denied when the request's identity may not
// send the file at all: a tree file with a command its owners may not
// run (mayRunAs); with a scope, a tree file or the sync mode (which
// deletes what the file does not name), which concern every task. What a
// file in the task language or configuration JSON does is checked on its
// plan (see scopeAllowed, ownersAllowed).
func (s *Server) mayDefine(r *http.Request, req DefineRequest, syn defs.Syntax) error {
	// A scope is refused first: a tree file's plan would tell of trees
	// outside it.
	if len(identity(r).Scope) > 0 && (req.Mode == ModeSync || syn == defs.Trees) {
		return unscoped(r, auth.Define)
	}
	return s.mayRunAs(r, req, syn)
}

// scopeAllowed returns the check of what a file touches for an identity
// with a scope, nil for one without: each task or configuration it
// inserts, updates or deletes, everything an action on it reaches (the
// members of a bundle, its bundle, the tasks whose condition names it),
// the bundle it joins and the tasks its condition names must be in the
// scope. Groups and calendars concern every task (a calendar, every task
// that names it, now or later): they are for identities without a scope.
// The loop asks it before it plans the file, with the definitions it
// plans it against.
func scopeAllowed(id *auth.Identity) func([]defs.Action, scheduler.Facts) error {
	if len(id.Scope) == 0 {
		return nil
	}
	return func(acts []defs.Action, f scheduler.Facts) error {
		// What changes with the task: what its runs and status reach now
		// (a change of its command can fail or succeed for the tasks
		// whose condition names it), the members of a bundle it deletes,
		// the bundle it joins, and the tasks its condition names, whose
		// status it would show and wait on.
		var roots []string
		for _, a := range acts {
			if a.Kind.IsGroup() {
				return &auth.Denied{Identity: id, Permission: auth.Define, Task: "group " + a.Name}
			}
			if a.Kind.IsCalendar() {
				return &auth.Denied{Identity: id, Permission: auth.Define, Task: "calendar " + a.Name}
			}
			roots = append(roots, a.Name)
			for _, fd := range a.Fields {
				if fd.Key == "parent" || fd.Key == "box_name" {
					roots = append(roots, fd.Value)
				}
			}
		}
		reach := f.Reached(true, roots...)
		for _, a := range acts {
			names := reach[0]
			reach = reach[1:]
			for _, fd := range a.Fields {
				switch fd.Key {
				case "parent", "box_name":
					names = append(slices.Clone(names), reach[0]...) // joining a bundle changes its runs
					reach = reach[1:]
				case "condition":
					if c, err := cond.Parse(fd.Value); err == nil {
						names = append(names, c.Names()...)
					}
				}
			}
			var groups map[string][]string
			if id.Scope.NeedsGroups() {
				groups = f.Groups(names)
			}
			if err := covered(id, auth.Define, a.Name, names, groups); err != nil {
				return err
			}
		}
		return nil
	}
}
