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
	"strings"

	"github.com/gnomon-sched/gnomon/auth"
	"github.com/gnomon-sched/gnomon/cond"
	"github.com/gnomon-sched/gnomon/defs"
	"github.com/gnomon-sched/gnomon/engine"
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
	if err := s.mayDefine(r, req); err != nil {
		return err
	}
	msg := "Successfully processed"
	if req.Check {
		msg = "Successfully validated"
	}
	switch req.Mode {
	case "":
		if err := s.sched.Submit(r.Context(), engine.Define{File: req.File, Text: req.Text, Check: req.Check, By: auth.NameOf(r.Context())}); err != nil {
			return err
		}
		return writeJSON(w, http.StatusOK, DefineResponse{Message: msg})
	case ModeApply, ModeSync:
	default:
		return badRequest("mode: %q should be %q or %q (or absent: apply the file as written)", req.Mode, ModeApply, ModeSync)
	}
	if periods.IsTreeFile(req.Text) {
		return s.defineTrees(w, r, req, msg)
	}
	d := s.sched.View().Definitions()
	p, err := planDefinitions(d, req)
	if err != nil {
		return err
	}
	// The engine checks the file again as it applies it (with what the
	// plan cannot know, such as the functions it has registered).
	if err := s.sched.Submit(r.Context(), engine.Define{File: req.File, Text: p.text, Check: req.Check, Declarative: true, By: auth.NameOf(r.Context())}); err != nil {
		return p.rewrite(err, true)
	}
	return writeJSON(w, http.StatusOK, DefineResponse{Message: msg, Changes: p.changes})
}

// plan is a definition file made ready for the apply or sync mode: the
// text to submit, and what it changes.
type plan struct {
	file string
	text string
	// lines maps a line of text to the line of the file it came from,
	// when text is not the file's own (nil: the same lines).
	lines []int
	// deletes holds the line, in text, of each delete the sync mode adds.
	deletes map[string]int
	changes *Changes
}

// planDefinitions plans a file in the apply or sync mode against the
// definitions d, validating it as the engine will. In the sync
// mode it adds a delete for every definition of a kind the file owns that
// the file does not define: the file owns its tasks (callables, bundles
// and groups) if it defines at least one of them, and its configurations
// if it defines at least one configuration.
func planDefinitions(d *scheduler.Definitions, req DefineRequest) (*plan, error) {
	p := &plan{file: req.File, text: req.Text, deletes: map[string]int{}}
	acts, err := defs.Parse(req.File, req.Text)
	if err != nil {
		return nil, err
	}
	cur := d.Tasks
	cals := d.Calendars
	env := &defs.Env{Active: d.Active, Calendars: cals}
	decl := defs.DeclarativeCalendars(req.File, cals, defs.Declarative(req.File, cur, acts))
	var owns []string
	if req.Mode == ModeSync {
		alone, err := defs.Apply(req.File, cur, decl, env)
		if err != nil {
			return nil, err
		}
		// What the file defines: the targets whose last action is not a
		// delete, and their kinds. Calendars have a name space of their
		// own.
		last := map[string]defs.Kind{}
		lastCal := map[string]defs.Kind{}
		for _, a := range acts {
			if a.Kind.IsCalendar() {
				lastCal[a.Name] = a.Kind
			} else {
				last[a.Name] = a.Kind
			}
		}
		kept := map[string]bool{}
		ownTasks, ownConfigs := false, false
		for name, k := range last {
			if k == defs.Delete || k == defs.DeleteGroup {
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
		if ownTasks {
			owns = append(owns, "tasks")
		}
		if ownConfigs {
			owns = append(owns, "configurations")
		}
		keptCals := map[string]bool{}
		for name, k := range lastCal {
			if k != defs.DeleteCalendar {
				keptCals[name] = true
			}
		}
		if len(keptCals) > 0 {
			owns = append(owns, "calendars")
		}
		var gone []defs.Action
		for _, name := range sortedNames(cur) {
			t := cur[name]
			mine := ownConfigs && t.Type == job.Configuration || ownTasks && t.Type != job.Configuration
			if !mine || kept[name] || slices.Contains(alone.Deleted, name) {
				continue
			}
			kind := defs.Delete
			switch t.Type {
			case job.Group:
				kind = defs.DeleteGroup
			case job.Resource:
				kind = defs.DeleteResource
			}
			gone = append(gone, defs.Action{Kind: kind, Name: name})
		}
		if len(keptCals) > 0 {
			for _, name := range d.CalendarNames() {
				if !keptCals[name] && !slices.Contains(alone.DeletedCalendars, name) {
					gone = append(gone, defs.Action{Kind: defs.DeleteCalendar, Name: name})
				}
			}
		}
		if err := p.addDeletes(acts, gone); err != nil {
			return nil, err
		}
		decl = append(decl, gone...)
	}
	res, err := defs.Apply(req.File, cur, decl, env)
	if err != nil {
		return nil, p.rewrite(err, false)
	}
	p.changes = diff(cur, res)
	diffCalendars(p.changes, cals, res)
	p.changes.SyncOwns = owns
	return p, nil
}

// diffCalendars adds to c what res changes of the named calendars cur
// holds.
func diffCalendars(c *Changes, cur map[string]*job.Calendar, res *defs.Result) {
	for _, name := range res.ChangedCalendars {
		cal := res.Calendars[name]
		old, ok := cur[name]
		if !ok {
			c.Added = append(c.Added, DefinitionRef{Name: name, Type: TypeCalendar})
			continue
		}
		if fields := attrChanges(defs.CalendarAttrs(old), defs.CalendarAttrs(cal)); len(fields) > 0 {
			c.Changed = append(c.Changed, ChangedDef{Name: name, Type: TypeCalendar, Fields: fields})
		}
	}
	for _, name := range res.DeletedCalendars {
		if _, ok := cur[name]; ok {
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

// addDeletes appends the deletes of the sync mode to the text to submit,
// after the file's own lines, and numbers them as they are there. A file in
// the JSON shape, which cannot hold deletes, is written in the task
// language first.
func (p *plan) addDeletes(acts []defs.Action, gone []defs.Action) error {
	if len(gone) == 0 {
		return nil
	}
	var b strings.Builder
	if defs.IsJSON(p.text) {
		lines, err := defs.FormatActions(&b, p.file, acts)
		if err != nil {
			return err
		}
		p.lines = lines
	} else {
		b.WriteString(p.text)
		if !strings.HasSuffix(p.text, "\n") {
			b.WriteByte('\n')
		}
	}
	line := strings.Count(b.String(), "\n") + 1
	fmt.Fprintf(&b, "# not in %s: deleted by the sync\n", p.file)
	for i := range gone {
		line++
		gone[i].Line = line
		p.deletes[gone[i].Name] = line
		fmt.Fprintf(&b, "%s: %s\n", gone[i].Kind, gone[i].Name)
	}
	p.text = b.String()
	return nil
}

// rewrite tells definition errors in terms of the file: an error at a
// delete the sync mode added names no line and says why the definition is
// deleted, and, from the engine (fromText), the lines of text written from
// a JSON file are those of the file.
func (p *plan) rewrite(err error, fromText bool) error {
	var errs defs.Errors
	if !errors.As(err, &errs) {
		return err
	}
	out := make(defs.Errors, len(errs))
	for i, e := range errs {
		c := *e
		if line, ok := p.deletes[c.Target]; ok && c.Line == line && (c.Kind == defs.Delete || c.Kind == defs.DeleteGroup || c.Kind == defs.DeleteCalendar) {
			c.Line = 0
			c.Msg += fmt.Sprintf(" (the sync deletes %s: %s does not define it)", c.Target, p.file)
		} else if fromText && p.lines != nil && c.Line > 0 && c.Line <= len(p.lines) {
			c.Line = p.lines[c.Line-1]
		}
		for name, line := range p.deletes {
			c.Msg = strings.Replace(c.Msg, fmt.Sprintf("(deleted on line %d)", line), fmt.Sprintf("(the sync deletes %s: %s does not define it)", name, p.file), 1)
		}
		out[i] = &c
	}
	return out
}

// diff tells what res changes in cur.
func diff(cur map[string]*job.Task, res *defs.Result) *Changes {
	c := &Changes{Added: []DefinitionRef{}, Changed: []ChangedDef{}, Deleted: []DefinitionRef{}}
	for _, name := range res.Changed {
		t := res.Tasks[name]
		old, ok := cur[name]
		if !ok {
			c.Added = append(c.Added, DefinitionRef{Name: name, Type: t.Type})
			continue
		}
		if fields := fieldChanges(old, t); len(fields) > 0 {
			c.Changed = append(c.Changed, ChangedDef{Name: name, Type: t.Type, Fields: fields})
		}
	}
	for _, name := range res.Deleted {
		if old, ok := cur[name]; ok {
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

func sortedNames(m map[string]*job.Task) []string {
	out := make([]string, 0, len(m))
	for n := range m {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// mayRunAs returns a *auth.Denied when the definitions the file results
// in hold a command that would run as an owner the identity may not
// define commands for (see auth.Identity.MayRunAs): each task or
// configuration it inserts or updates that has a command (or a profile,
// which the command's shell sources), whether the file sets the command
// or the owner or not, since what runs is the definition that results.
// A command without an owner runs as the default owner; so does a tree
// file level's without one.
func (s *Server) mayRunAs(r *http.Request, id *auth.Identity, req DefineRequest) error {
	if id.Owners == nil && len(id.Scope) == 0 {
		return nil // any owner
	}
	dflt := s.defaultOwner()
	if periods.IsTreeFile(req.Text) {
		f, err := periods.Parse(req.File, []byte(req.Text), periods.Options{})
		if err != nil {
			return err
		}
		for _, t := range f.Trees {
			for _, l := range t.Levels {
				if l.Command == "" {
					continue
				}
				owner := cmp.Or(l.Owner, dflt)
				if err := id.MayRunAs(owner); err != nil {
					var den *auth.Denied
					if errors.As(err, &den) {
						den.Task = "timeperiod process " + l.Process
					}
					return err
				}
			}
		}
		return nil
	}
	acts, err := defs.Parse(req.File, req.Text)
	if err != nil {
		return err
	}
	d := s.sched.View().Definitions()
	cur, cals := d.Tasks, d.Calendars
	if req.Mode != "" || defs.IsJSON(req.Text) {
		acts = defs.DeclarativeCalendars(req.File, cals, defs.Declarative(req.File, cur, acts))
	}
	// Apply is more lenient here than in the engine (every task is
	// idle, every function registered): a file it refuses, the
	// engine refuses too.
	res, err := defs.Apply(req.File, cur, acts, &defs.Env{Calendars: cals})
	if err != nil {
		return err
	}
	for _, name := range res.Changed {
		t := res.Tasks[name]
		if t.Command == "" && t.Extras().Profile == "" {
			continue
		}
		owner := cmp.Or(t.Extras().Owner, dflt)
		if err := id.MayRunAs(owner); err != nil {
			var den *auth.Denied
			if errors.As(err, &den) {
				den.Task = name
			}
			return err
		}
	}
	return nil
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

// mayDefine returns a *auth.Denied when the request's identity has a scope
// and the file touches a task outside it: each task or configuration it
// inserts, updates or deletes, everything an action on it reaches (the
// members of a bundle, its bundle, the tasks whose condition names it),
// the bundle it joins and the tasks its condition names must be in the
// scope. Groups, tree files and the sync mode (which
// deletes what the file does not name) concern every task: they are for
// identities without a scope.
func (s *Server) mayDefine(r *http.Request, req DefineRequest) error {
	id := identity(r)
	if err := s.mayRunAs(r, id, req); err != nil {
		return err
	}
	if len(id.Scope) == 0 {
		return nil
	}
	if req.Mode == ModeSync || periods.IsTreeFile(req.Text) {
		return unscoped(r, auth.Define)
	}
	// A calendar concerns every task that names it, now or later.
	acts, err := defs.Parse(req.File, req.Text)
	if err != nil {
		return err
	}
	// What changes with the task: what its runs and status reach now (a
	// change of its command can fail or succeed for the tasks whose
	// condition names it), the members of a bundle it deletes, the
	// bundle it joins, and the tasks its condition names, whose status it
	// would show and wait on. The reach of each task and bundle is read
	// at once, from one commit.
	var roots []string
	for _, a := range acts {
		roots = append(roots, a.Name)
		for _, f := range a.Fields {
			if f.Key == "parent" || f.Key == "box_name" {
				roots = append(roots, f.Value)
			}
		}
	}
	reach, err := s.sched.Reached(r.Context(), true, roots...)
	if err != nil {
		return err
	}
	for _, a := range acts {
		if a.Kind.IsGroup() {
			return &auth.Denied{Identity: id, Permission: auth.Define, Task: "group " + a.Name}
		}
		if a.Kind.IsCalendar() {
			return &auth.Denied{Identity: id, Permission: auth.Define, Task: "calendar " + a.Name}
		}
		names := reach[0]
		reach = reach[1:]
		for _, f := range a.Fields {
			switch f.Key {
			case "parent", "box_name":
				names = append(names, reach[0]...) // joining a bundle changes its runs
				reach = reach[1:]
			case "condition":
				if c, err := cond.Parse(f.Value); err == nil {
					names = append(names, c.Names()...)
				}
			}
		}
		var groups map[string][]string
		if id.Scope.NeedsGroups() {
			if groups, err = s.sched.Groups(r.Context(), names); err != nil {
				return err
			}
		}
		if err := covered(id, auth.Define, a.Name, names, groups); err != nil {
			return err
		}
	}
	return nil
}
