package defs

import (
	"fmt"
	"maps"
	"net/mail"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gnomon-sched/gnomon/calendar"
	"github.com/gnomon-sched/gnomon/cond"
	"github.com/gnomon-sched/gnomon/internal/termsafe"
	"github.com/gnomon-sched/gnomon/job"
)

// Result is what a definition file does when applied.
type Result struct {
	// Tasks holds the definitions of the Changed tasks.
	Tasks map[string]*job.Task
	// Changed lists inserted or updated tasks, sorted.
	Changed []string
	// Deleted lists tasks that no longer exist, sorted.
	Deleted []string
	// Calendars holds the definitions of the ChangedCalendars: named
	// calendars inserted or updated, sorted. DeletedCalendars lists the
	// calendars that no longer exist, sorted.
	Calendars        map[string]*job.Calendar
	ChangedCalendars []string
	DeletedCalendars []string
}

// Env is what Apply needs to know beyond the definitions. A nil Env, or a
// nil field, means nothing is active and every function name is accepted
// (an offline check cannot know which functions a server registers).
type Env struct {
	// Active reports whether a task is currently active.
	Active func(name string) bool
	// Function reports whether a function name is registered.
	Function func(name string) bool
	// Taken says what else owns a name, such as "a timeperiod process of
	// tree site", or "" when nothing does: no task may take it.
	Taken func(name string) string
	// Calendars are the named calendars defined, by name; nil means none.
	Calendars map[string]*job.Calendar
}

// Apply validates actions against the current definitions, in file order on
// a working copy, then checks the whole resulting set. It is all or nothing:
// on any error it returns Errors and cur is untouched.
//
// Apply reports every error of the file once, in line order, each naming
// its action: the grammar errors Parse left in the actions, and every error
// of meaning. An action with errors still does what it can to the working
// copy (a misspelt priority does not keep the task from being defined), so
// that what follows is checked against what the file means rather than
// reported again as a consequence. Past MaxErrors errors, the last one
// says how many more there are.
//
// Names and values hold printable text: a NUL, another control character
// (C0 but tab, DEL, C1) or a bidirectional formatting character
// (U+202A-U+202E, U+2066-U+2069) is refused, naming the attribute. The
// language has no way to write them visibly, a terminal would obey them
// when the definition is shown, and in a command they make what a reader
// sees differ from what the shell runs (a NUL ends the command at launch).
// A resource id in dependencies may hold any character but NUL, written
// as a JSON escape, as data events may.
func Apply(file string, cur map[string]*job.Task, acts []Action, env *Env) (*Result, error) {
	a := applier{
		file:     file,
		tasks:    overlay{base: cur, over: map[string]*job.Task{}},
		lines:    map[string]map[string]origin{},
		deletes:  map[string]deletion{},
		calLines: map[string]map[string]int{}, calDeletes: map[string]int{},
	}
	if env != nil {
		a.env = *env
	}
	a.cals = calOverlay{base: a.env.Calendars, over: map[string]*job.Calendar{}}
	if a.env.Active == nil {
		a.env.Active = func(string) bool { return false }
	}
	if a.env.Taken == nil {
		a.env.Taken = func(string) string { return "" }
	}
	if a.env.Function == nil {
		a.env.Function = func(string) bool { return true }
	}
	deleted := map[string]bool{}
	for i := range acts {
		act := &acts[i]
		if act.Kind.IsCalendar() {
			a.calendarAction(act)
			continue
		}
		if a.action(act) && act.Kind.base() == Delete {
			deleted[act.Name] = true
		}
	}
	a.global(deleted)
	if len(a.errs) > 0 {
		slices.SortStableFunc(a.errs, func(x, y *Error) int { return x.Line - y.Line })
		return nil, limit(a.errs)
	}
	res := &Result{Tasks: map[string]*job.Task{}}
	for name := range a.lines {
		if t, ok := a.tasks.get(name); ok {
			res.Changed = append(res.Changed, name)
			res.Tasks[name] = t
		}
	}
	for name := range deleted {
		if _, ok := a.tasks.get(name); !ok {
			res.Deleted = append(res.Deleted, name)
		}
	}
	slices.Sort(res.Changed)
	slices.Sort(res.Deleted)
	for name := range a.calLines {
		if c, ok := a.cals.get(name); ok {
			if res.Calendars == nil {
				res.Calendars = map[string]*job.Calendar{}
			}
			res.Calendars[name] = c
			res.ChangedCalendars = append(res.ChangedCalendars, name)
		}
	}
	for name := range a.calDeletes {
		if _, ok := a.cals.get(name); !ok {
			res.DeletedCalendars = append(res.DeletedCalendars, name)
		}
	}
	slices.Sort(res.ChangedCalendars)
	slices.Sort(res.DeletedCalendars)
	return res, nil
}

// overlay is the working copy of the definitions: the current ones, which
// it never modifies, under the file's changes (nil: deleted). Applying a
// file costs what the file touches, not the size of the current set.
type overlay struct {
	base, over map[string]*job.Task
}

func (o *overlay) get(name string) (*job.Task, bool) {
	if t, ok := o.over[name]; ok {
		return t, t != nil
	}
	t, ok := o.base[name]
	return t, ok
}

func (o *overlay) put(name string, t *job.Task) { o.over[name] = t }
func (o *overlay) del(name string)              { o.over[name] = nil }

// each calls fn for every definition, in no order.
func (o *overlay) each(fn func(name string, t *job.Task)) {
	for n, t := range o.base {
		if _, ok := o.over[n]; !ok {
			fn(n, t)
		}
	}
	for n, t := range o.over {
		if t != nil {
			fn(n, t)
		}
	}
}

type applier struct {
	file  string
	tasks overlay
	// lines tells, for each task the file defines, which action last set
	// each attribute ("" = the task itself), so that an error found on the
	// resulting set names the right line and action.
	lines map[string]map[string]origin
	env   Env
	errs  Errors
	// deletes holds the last delete of each task and what it deleted.
	deletes map[string]deletion
	// cals is the working copy of the named calendars; calLines tells,
	// for each calendar the file defines, the line of each attribute
	// ("" the action's), and calDeletes the line of the last delete of
	// each calendar the file deletes.
	cals       calOverlay
	calLines   map[string]map[string]int
	calDeletes map[string]int
}

// origin is the line of an attribute and the action it belongs to.
type origin struct {
	line int
	kind Kind
}

// deletion is a delete action and the type of what it deleted.
type deletion struct {
	line int
	kind Kind
	typ  job.Type
}

func (a *applier) errorf(act *Action, line int, format string, args ...any) {
	a.errs = append(a.errs, &Error{File: a.file, Line: line, Kind: act.Kind, Target: act.Name, Msg: fmt.Sprintf(format, args...)})
}

// errorAt reports an error on the line and action that set attribute key
// of a task the file defines (the action itself for key "" or a key the
// file did not set).
func (a *applier) errorAt(name, key string, format string, args ...any) {
	o, ok := a.lines[name][key]
	if !ok {
		o = a.lines[name][""]
	}
	a.errs = append(a.errs, &Error{File: a.file, Line: o.line, Kind: o.kind, Target: name, Msg: fmt.Sprintf(format, args...)})
}

var nameRE = regexp.MustCompile(`^[A-Za-z0-9_]+$`)

// checkName applies rule A1.
func checkName(name string) string {
	if msg := checkText(name); msg != "" {
		return "task name can only contain alpha numeric and underscore chars: it " + msg
	}
	switch {
	case !nameRE.MatchString(name):
		return "task name can only contain alpha numeric and underscore chars"
	case len(name) > cond.MaxName:
		return "task name can only have 64 characters"
	}
	return ""
}

// checkText returns what is wrong with a name or a value that holds a
// character a definition may not (see Apply), or "".
func checkText(s string) string {
	for _, r := range s {
		switch {
		case r == '\t' || !termsafe.Unsafe(r):
		case r == 0:
			return "holds a NUL character"
		case r > 0x9f:
			return fmt.Sprintf("holds the bidirectional formatting character %U, which shows the text around it in another order than it is read", r)
		default:
			return fmt.Sprintf("holds the control character %U (a definition holds printable text and tabs only)", r)
		}
	}
	return ""
}

// action applies one action to the working copy, reporting its errors, and
// reports whether it changed the working copy as the action says (for a
// delete: whether the task is gone).
//
// An action that names an existing task of the right kind (or inserts a
// new one) changes the working copy even when some of its attributes are
// wrong: those are left out, so that later actions and the checks on the
// resulting set see the task instead of reporting it missing. An action
// whose target is unusable (an empty name, an insert of a name taken, an
// update of a name not defined) changes nothing, and only the values of its
// attributes are checked.
func (a *applier) action(act *Action) bool {
	a.errs = append(a.errs, act.Syntax...)
	kind := act.Kind.base()
	if act.Name != "" {
		if msg := checkName(act.Name); msg != "" {
			a.errorf(act, act.Line, "%s", msg)
		}
	}
	old, exists := a.tasks.get(act.Name)
	usable := act.Name != ""
	switch {
	case !usable:
		// Reported by Parse.
	case kind == Insert && exists && act.Kind.IsResource() != (old.Type == job.Resource):
		a.errorf(act, act.Line, "name %s is already taken by a %s", act.Name, noun(old))
		usable = false
	case kind == Insert && exists && act.Kind.IsGroup() != (old.Type == job.Group):
		a.errorf(act, act.Line, "name %s is already taken by a %s", act.Name, noun(old))
		usable = false
	case kind == Insert && exists:
		a.errorf(act, act.Line, "%s already exist", noun(old))
		usable = false
	case kind == Insert && a.env.Taken(act.Name) != "":
		a.errorf(act, act.Line, "name %s is already taken by %s", act.Name, a.env.Taken(act.Name))
		usable = false
	case kind != Insert && !exists && act.Kind.IsGroup():
		a.errorf(act, act.Line, "group not exist")
		usable = false
	case kind != Insert && !exists && act.Kind.IsResource():
		a.errorf(act, act.Line, "resource %s does not exist", act.Name)
		usable = false
	case kind != Insert && exists && act.Kind.IsResource() != (old.Type == job.Resource):
		verb, what, _ := strings.Cut(string(act.Kind), "_")
		a.errorf(act, act.Line, "%s is a %s, not a %s (use %s_%s)", act.Name, noun(old), what, verb, noun(old))
		usable = false
	case kind != Insert && !exists:
		a.errorf(act, act.Line, "task not exist")
		usable = false
	case kind != Insert && act.Kind.IsGroup() && old.Type != job.Group:
		a.errorf(act, act.Line, "%s is a task, not a group (use %s)", act.Name, strings.Replace(string(act.Kind), "group", "task", 1))
		usable = false
	case kind != Insert && !act.Kind.IsGroup() && old.Type == job.Group:
		a.errorf(act, act.Line, "%s is a group, not a task (use %s)", act.Name, strings.Replace(string(act.Kind), "task", "group", 1))
		usable = false
	}
	if kind == Delete {
		for _, f := range act.Fields {
			a.errorf(act, f.Line, "%s should not have other attributes", strings.Replace(string(act.Kind), "_", " ", 1))
		}
		if !usable {
			return false
		}
		if old.Type != job.Group && a.env.Active(act.Name) {
			a.errorf(act, act.Line, "task %s is active and cannot be deleted", act.Name)
		}
		if old.Type == job.Bundle {
			for _, c := range a.children(act.Name) {
				if a.env.Active(c) {
					a.errorf(act, act.Line, "task %s is active and cannot be deleted (bundle %s is running it)", c, act.Name)
				}
			}
		}
		a.tasks.del(act.Name)
		delete(a.lines, act.Name)
		a.deletes[act.Name] = deletion{line: act.Line, kind: act.Kind, typ: old.Type}
		return true
	}
	if kind == Update && !usable {
		a.values(act)
		return false
	}

	var t *job.Task
	switch {
	case act.Kind == InsertGroup:
		t = &job.Task{Name: act.Name, Type: job.Group}
	case act.Kind == InsertResource:
		t = &job.Task{Name: act.Name, Type: job.Resource}
	case kind == Insert:
		// A missing or unknown type leaves Type empty: the task is
		// defined, of a type unknown, and no rule that depends on the
		// type is applied to it or to what refers to it.
		t = &job.Task{Name: act.Name}
		typ, ok := field(act, "type")
		switch {
		case !ok || typ.Value == "":
			a.errorf(act, act.Line, "type: field is required")
		case typ.Value != string(job.Callable) && typ.Value != string(job.Bundle) && typ.Value != string(job.Configuration):
			a.errorf(act, typ.Line, "type attribute should be either bundle/callable/configuration, got %q", typ.Value)
		case typ.Value == string(job.Configuration):
			t = job.NewWithExtra(act.Name, job.Configuration)
		default:
			t.Type = job.Type(typ.Value)
		}
	default:
		t = old.Clone()
	}
	lines := map[string]origin{"": {act.Line, act.Kind}}
	if act.Kind == InsertGroup || act.Kind == InsertResource {
		lines["type"] = origin{act.Line, act.Kind}
	}
	// bad holds the attributes whose line had an error: the rules on the
	// resulting definition that involve one of them are not applied, as
	// they would only repeat it.
	bad := map[string]bool{}
	for _, k := range act.Meant {
		bad[k] = true
	}
	fieldErr := func(f Field, format string, args ...any) {
		bad[f.Key] = true
		a.errorf(act, f.Line, format, args...)
	}
	// The lines of a repeatable attribute add up to its new value.
	restarted := map[string]bool{}
	for _, f := range act.Fields {
		at := attrOf(f.Key)
		if at.repeats(act.Kind) && !restarted[f.Key] {
			restarted[f.Key] = true
			clear(t, f.Key)
		}
		if msg := kindError(t.Type, at); msg != "" {
			fieldErr(f, "%s: %s", f.Key, msg)
			continue
		}
		if f.Key == "type" {
			if act.Kind == Update {
				fieldErr(f, "type attribute cannot be changed")
			}
			lines["type"] = origin{f.Line, act.Kind}
			continue
		}
		lines[f.Key] = origin{f.Line, act.Kind}
		if msg := checkText(f.Value); msg != "" {
			fieldErr(f, "%s: %s", f.Key, msg)
			clear(t, f.Key)
			continue
		}
		if msg := taskKindError(t.Type, at); msg != "" {
			fieldErr(f, "%s: %s", f.Key, msg)
			continue
		}
		if f.Value == "" {
			if act.Kind == Update && at.required && t.Type == job.Callable && t.Extras().Function == "" {
				fieldErr(f, "%s: value is empty", f.Key)
				continue
			}
			clear(t, f.Key)
			continue
		}
		if err := set(t, f.Key, f.Value); err != nil {
			fieldErr(f, "%v", err)
			clear(t, f.Key) // what a wrong value would have set is left out
		}
	}
	t.Compact()
	a.resulting(act, t, lines, bad)
	if !usable {
		return false
	}
	a.tasks.put(act.Name, t)
	if a.lines[act.Name] == nil || kind == Insert {
		a.lines[act.Name] = lines
	} else {
		maps.Copy(a.lines[act.Name], lines)
	}
	return true
}

// kindError returns what is wrong with a line of attribute at in an
// action on a definition of type typ that is not of the attribute's kind
// (a resource, a group, a calendar), or "".
func kindError(typ job.Type, at *attr) string {
	switch {
	case typ == job.Resource && at.on&onResource == 0:
		return "field is not allowed for a resource (a resource has amount and label)"
	case typ != job.Resource && at.only(onResource):
		return "field is only allowed for a resource (insert_resource)"
	case typ == job.Group && at.on&onGroup == 0:
		return "field is not allowed for a group (a group has jobs, label, alert_*, notify*, keep_history and log_rotate_*/log_keep fields)"
	case typ != job.Group && at.only(onGroup):
		return "field is only allowed for a group"
	case at.only(onCalendar):
		return "field is only allowed for a calendar (insert_calendar)"
	}
	return ""
}

// taskKindError returns what is wrong with a line of attribute at in an
// action on a task of type typ that the attribute is not given for, or
// "". A task of a type unknown takes every task attribute.
func taskKindError(typ job.Type, at *attr) string {
	k := kindOf(typ)
	if k&onTask == 0 || at.on&onTask == 0 || at.on&k != 0 {
		return ""
	}
	switch {
	case at.only(onConfiguration):
		return "field is only allowed for type configuration"
	case k == onBundle:
		return "field is not allowed for bundle"
	case k == onConfiguration:
		return "field is not allowed for configuration (its dependencies trigger it)"
	}
	return "field is not allowed for " + string(typ)
}

// values checks the values of an action whose target is unusable, so that
// their errors are not hidden by the target's: without a definition to
// apply them to, only what each value must look like is checked.
func (a *applier) values(act *Action) {
	scratch := &job.Task{Name: act.Name}
	for _, f := range act.Fields {
		if f.Value == "" || f.Key == "type" {
			continue
		}
		if msg := checkText(f.Value); msg != "" {
			a.errorf(act, f.Line, "%s: %s", f.Key, msg)
			continue
		}
		if err := set(scratch, f.Key, f.Value); err != nil {
			a.errorf(act, f.Line, "%v", err)
		}
	}
}

// resulting applies the rules on the definition an insert or update
// results in. A rule that involves an attribute whose line had an error is
// not applied.
func (a *applier) resulting(act *Action, t *job.Task, lines map[string]origin, bad map[string]bool) {
	ok := func(keys ...string) bool {
		for _, k := range keys {
			if bad[k] {
				return false
			}
		}
		return true
	}
	at := func(keys ...string) int {
		for _, k := range keys {
			if l, ok := lines[k]; ok {
				return l.line
			}
		}
		return act.Line
	}
	if t.Type == job.Callable && act.Kind == Insert && t.Extras().Function == "" && ok("function") {
		for _, at := range attrTable {
			if !at.required {
				continue
			}
			if f, ok := field(act, at.name); (!ok || f.Value == "") && !bad[at.name] {
				a.errorf(act, act.Line, "%s: field is required", at.name)
			}
		}
	}
	if t.Type == job.Configuration && ok("dependencies", "command", "out_log_file", "err_log_file") {
		a.checkConfiguration(act, t, at)
	}
	if ok("function", "command", "owner") {
		a.checkRunner(act, t, at)
	}
	if (t.Extras().Overlap == job.OverlapAllow || t.Extras().Overlap == job.OverlapQueue) && (t.Type == job.Bundle || t.Parent != "") && ok("parent") {
		a.errorf(act, at("overlap", "parent"), "overlap: %s is not allowed for a bundle or a task inside one (a bundle run starts each child once)", t.Extras().Overlap)
	}
	if t.Type == job.Resource && t.Extras().Amount == 0 && ok("amount") {
		a.errorf(act, at("amount"), "amount: field is required (the resource's number of units)")
	}
	if t.Type == job.Group && len(t.Extras().Jobs) == 0 && ok("jobs") {
		a.errorf(act, at("jobs"), "jobs: a group should contain at least one job")
	}
	x := t.Extras()
	switch {
	case len(x.Notify) > 0 && len(x.AlertOn) == 0 && ok("alert_on", "notify"):
		a.errorf(act, at("notify"), "notify needs alert_on: the outcomes that notify (success, failure, not_started, retry, alarm)")
	case len(x.Notify) > 0:
	case (len(x.AlertOn) > 0) != (len(x.AlertTo) > 0) && ok("alert_on", "alert_to"):
		a.errorf(act, at("alert_on", "alert_to"), "alerts need both alert_on and alert_to")
	}
	if x.NotifyTemplate != "" && !slices.ContainsFunc(x.Notify, func(to string) bool { return strings.HasPrefix(to, job.HookWebhook+":") }) && ok("notify") {
		a.errorf(act, at("notify_template"), "notify_template needs a webhook:URL in notify: it is the body generic webhooks receive")
	}
	if x.AlertTemplate != "" && len(x.AlertTo) == 0 && len(x.Notify) == 0 && ok("alert_on", "alert_to") {
		a.errorf(act, at("alert_template"), "alert_template needs alert_on and alert_to")
	}
	if len(t.StartTimes) > 0 && (t.Window != nil || len(t.StartMins) > 0) {
		a.errorf(act, at("start_times", "run_window", "start_mins"), "task should not have both batch run and window run")
	}
	if (t.Window != nil) != (len(t.StartMins) > 0) && ok("run_window", "start_mins") {
		a.errorf(act, at("run_window", "start_mins"), "window run should have both 'run_window' and 'start_mins' attributes")
	}
	if t.Parent != "" && (t.HasTimeTrigger() || len(t.StartMins) > 0 || t.RunDays != 0 || t.EndDate != "" || t.Interval != "" || len(t.Calendars()) > 0) {
		a.errorf(act, at("start_times", "run_window", "start_mins", "run_days", "cron", "start_date", "end_date", "interval", "run_calendar", "exclude_calendar", "parent"), "scheduling attributes are not allowed on a task inside a bundle")
	} else if len(t.Calendars()) > 0 && !t.HasTimeTrigger() && t.Type != job.Configuration && ok("start_times", "run_window", "cron", "start_date") {
		a.errorf(act, at("run_calendar", "exclude_calendar"), "%s needs a time trigger (start_times, run_window, cron or start_date): a calendar only says on which days it fires",
			strings.Join(calendarKeys(t), " and "))
	}
	a.checkTimeTrigger(act, t, at, ok)
	a.checkPolicy(act, t, at, ok)
	a.checkEnv(act, t, at, ok)
	a.checkWatch(act, t, at, ok)
	if len(t.Extras().Claims) > 0 && !t.Executes() && t.Type != "" && ok("command", "function") {
		a.errorf(act, at("resources"), "resources: a task takes resources for its runs: it needs a command or a function")
	}
}

func field(act *Action, key string) (Field, bool) {
	for _, f := range act.Fields {
		if f.Key == key {
			return f, true
		}
	}
	return Field{}, false
}

// calendarKeys names the calendar attributes a task sets.
func calendarKeys(t *job.Task) []string {
	var out []string
	if t.Extras().RunCalendar != "" {
		out = append(out, "run_calendar")
	}
	if t.Extras().ExcludeCalendar != "" {
		out = append(out, "exclude_calendar")
	}
	return out
}

// checkConfiguration applies the rules of configurations: dependencies are
// required, and a command comes with its log files.
func (a *applier) checkConfiguration(act *Action, t *job.Task, at func(...string) int) {
	if len(t.Extras().Deps) == 0 {
		a.errorf(act, at("dependencies"), "dependencies: field is required")
	}
	if t.Command != "" {
		for _, k := range []string{"out_log_file", "err_log_file"} {
			if (k == "out_log_file" && t.OutLog == "") || (k == "err_log_file" && t.ErrLog == "") {
				a.errorf(act, at("command"), "%s: field is required with a command", k)
			}
		}
	} else if t.OutLog != "" || t.ErrLog != "" {
		a.errorf(act, at("out_log_file", "err_log_file"), "out_log_file and err_log_file need a command")
	}
}

// checkRunner applies the rules on what a run executes: a command or a
// registered function, not both; log files go with a command (a function
// may have them too: its run writes to them).
func (a *applier) checkRunner(act *Action, t *job.Task, at func(...string) int) {
	if t.Extras().Function == "" {
		return
	}
	switch {
	case t.Type == job.Bundle:
		a.errorf(act, at("function"), "function: field is not allowed for bundle")
	case t.Command != "":
		a.errorf(act, at("function", "command"), "a task runs either a command or a function, not both")
	case t.Extras().Owner != "":
		a.errorf(act, at("owner", "function"), "owner: a function runs inside the server, as the server's user: owner applies to a command (remove owner, or run a command)")
	case !a.env.Function(t.Extras().Function):
		a.errorf(act, at("function"), "function: %s is not registered with this scheduler", t.Extras().Function)
	}
}

// noun names what a definition is.
func noun(t *job.Task) string {
	switch t.Type {
	case job.Group:
		return "group"
	case job.Resource:
		return "resource"
	}
	return "task"
}

// parseList reads a comma list for attribute key: each trimmed item goes
// through item, and an item given twice is an error.
func parseList[T comparable](key, v string, item func(string) (T, error)) ([]T, error) {
	var out []T
	for it := range strings.SplitSeq(v, ",") {
		x, err := item(strings.TrimSpace(it))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
		if slices.Contains(out, x) {
			return nil, fmt.Errorf("%s: %v given more than once", key, x)
		}
		out = append(out, x)
	}
	return out, nil
}

// ParseAlertOn reads a comma list of success, failure and not_started.
func ParseAlertOn(v string) ([]job.Outcome, error) {
	return parseList("alert_on", v, func(item string) (job.Outcome, error) {
		switch o := job.Outcome(strings.ToLower(item)); o {
		case job.OutcomeSuccess, job.OutcomeFailure, job.OutcomeNotStarted, job.OutcomeRetry, job.OutcomeAlarm:
			return o, nil
		}
		return "", fmt.Errorf("%q should be a comma list of success, failure, not_started, retry, alarm", item)
	})
}

// ParseAddresses reads a comma list of email addresses (user@host, without
// display names).
func ParseAddresses(v string) ([]string, error) {
	return parseList("alert_to", v, func(item string) (string, error) {
		if a, err := mail.ParseAddress(item); err != nil || a.Name != "" || a.Address != item {
			return "", fmt.Errorf("%q is not an email address such as ops@example.com", item)
		}
		return item, nil
	})
}

// ParseJobs reads a group's comma list of task names, sorted.
func ParseJobs(v string) ([]string, error) {
	out, err := parseList("jobs", v, func(item string) (string, error) {
		if msg := checkName(item); msg != "" {
			return "", fmt.Errorf("%q: %s", item, msg)
		}
		return item, nil
	})
	slices.Sort(out)
	return out, err
}

// ParsePriority reads a priority: 0-3 or low, normal, important, critical.
func ParsePriority(v string) (job.Priority, error) {
	for i, n := range []string{"low", "normal", "important", "critical"} {
		if v == n || v == strconv.Itoa(i) {
			return job.Priority(i), nil
		}
	}
	return 0, fmt.Errorf("priority should be either (low=0, normal=1, important=2, critical=3), got %q", v)
}

// ParseRunDays reads "all" or a comma list of su,mo,tu,we,th,fr,sa.
func ParseRunDays(v string) (job.Days, error) {
	if strings.EqualFold(strings.TrimSpace(v), "all") {
		return job.AllDays, nil
	}
	var d job.Days
	for item := range strings.SplitSeq(v, ",") {
		i := slices.Index(job.DayNames[:], strings.ToLower(strings.TrimSpace(item)))
		if i < 0 {
			return 0, fmt.Errorf("run_days attribute should be comma separated any values of su,mo,tu,we,th,fr,sa, got %q in %q", item, v)
		}
		if d&(1<<uint(i)) != 0 {
			return 0, fmt.Errorf("run_days attribute contains repeated days: %q in %q", strings.TrimSpace(item), v)
		}
		d |= 1 << uint(i)
	}
	return d, nil
}

var clockRE = regexp.MustCompile(`^([01]?[0-9]|2[0-3]):([0-5][0-9])$`)

func parseClock(v string) (job.Clock, bool) {
	m := clockRE.FindStringSubmatch(strings.TrimSpace(v))
	if m == nil {
		return 0, false
	}
	h, _ := strconv.Atoi(m[1])
	mi, _ := strconv.Atoi(m[2])
	return job.Clock(h*60 + mi), true
}

// ParseStartTimes reads a comma list of H:MM or HH:MM times, sorted.
func ParseStartTimes(v string) ([]job.Clock, error) {
	var out []job.Clock
	for item := range strings.SplitSeq(v, ",") {
		c, ok := parseClock(item)
		if !ok {
			return nil, fmt.Errorf("start_times attribute should be comma separated values of time in format hh:mm, got %q in %q", item, v)
		}
		if slices.Contains(out, c) {
			return nil, fmt.Errorf("start_times attribute contains repeated times: %q in %q", strings.TrimSpace(item), v)
		}
		out = append(out, c)
	}
	slices.Sort(out)
	return out, nil
}

// ParseWindow reads "H:MM-H:MM"; a start after the end is an overnight window.
func ParseWindow(v string) (*job.Window, error) {
	bad := fmt.Errorf("run_window attribute should only have start and end time separated by '-' (hh:mm-hh:mm), got %q", v)
	s, e, ok := strings.Cut(v, "-")
	if !ok {
		return nil, bad
	}
	start, ok1 := parseClock(s)
	end, ok2 := parseClock(e)
	if !ok1 || !ok2 {
		return nil, bad
	}
	if start == end {
		return nil, fmt.Errorf("run_window attribute should only have start and end time separated by '-': start and end are equal in %q", v)
	}
	return &job.Window{Start: start, End: end}, nil
}

var minuteRE = regexp.MustCompile(`^[0-5]?[0-9]$`)

// ParseStartMins reads a comma list of minutes 0-59, sorted.
func ParseStartMins(v string) ([]int, error) {
	var out []int
	for item := range strings.SplitSeq(v, ",") {
		item = strings.TrimSpace(item)
		if !minuteRE.MatchString(item) {
			return nil, fmt.Errorf("start_min attribute should be comma separated values of minutes (0-59), got %q in %q", item, v)
		}
		m, _ := strconv.Atoi(item)
		if slices.Contains(out, m) {
			return nil, fmt.Errorf("start_mins attribute contains repeated minutes: %q in %q", item, v)
		}
		out = append(out, m)
	}
	slices.Sort(out)
	return out, nil
}

// checkTimeTrigger applies the rules on time triggers: at most one of a
// calendar, a cron expression and an interval; an interval needs its start;
// run_days belongs to calendars.
func (a *applier) checkTimeTrigger(act *Action, t *job.Task, at func(...string) int, ok func(...string) bool) {
	kinds := 0
	for _, has := range []bool{len(t.StartTimes) > 0 || t.Window != nil, t.Cron != "", t.StartDate != ""} {
		if has {
			kinds++
		}
	}
	if kinds > 1 {
		a.errorf(act, at("cron", "start_date", "start_times", "run_window"), "task should have only one time trigger: start_times or run_window, cron, or start_date")
	}
	if t.StartDate == "" && (t.EndDate != "" || t.Interval != "") && ok("start_date") {
		a.errorf(act, at("interval", "end_date"), "start_date: field is required with interval and end_date")
	}
	if t.RunDays != 0 && (t.Cron != "" || t.StartDate != "") {
		a.errorf(act, at("run_days"), "run_days applies to start_times and run_window only (a cron expression has its own day fields)")
	}
	if t.StartDate != "" && t.EndDate != "" && ok("interval") {
		if _, err := calendar.IntervalOf(t.StartDate, t.EndDate, t.Interval, time.UTC); err != nil {
			a.errorf(act, at("end_date", "start_date"), "%v", err)
		}
	}
}
