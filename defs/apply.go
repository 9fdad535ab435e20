package defs

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gnomon-sched/gnomon/calendar"
	"github.com/gnomon-sched/gnomon/cond"
	"github.com/gnomon-sched/gnomon/eventdep"
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
}

// Apply validates actions against the current definitions, in file order on
// a working copy, then checks the whole resulting set. It is all or nothing:
// on any error it returns Errors and cur is untouched. active reports whether
// a task is currently active (it may be nil when nothing is).
func Apply(file string, cur map[string]*job.Task, acts []Action, active func(name string) bool) (*Result, error) {
	a := applier{
		file:    file,
		tasks:   overlay{base: cur, over: map[string]*job.Task{}},
		lines:   map[string]map[string]int{},
		active:  active,
		deletes: map[string]int{},
	}
	if a.active == nil {
		a.active = func(string) bool { return false }
	}
	deleted := map[string]bool{}
	for i := range acts {
		act := &acts[i]
		if a.action(act) && act.Kind == Delete {
			deleted[act.Name] = true
		}
	}
	a.global(deleted)
	if len(a.errs) > 0 {
		slices.SortStableFunc(a.errs, func(x, y *Error) int { return x.Line - y.Line })
		return nil, a.errs
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
	file   string
	tasks  overlay
	lines  map[string]map[string]int // task → attribute ("" = action) → line that last set it
	active func(string) bool
	errs   Errors
	// deletes holds the line of the last delete of each task.
	deletes map[string]int
}

func (a *applier) errorf(act *Action, line int, format string, args ...any) {
	a.errs = append(a.errs, &Error{File: a.file, Line: line, Kind: act.Kind, Target: act.Name, Msg: fmt.Sprintf(format, args...)})
}

var nameRE = regexp.MustCompile(`^[A-Za-z0-9_]+$`)

// checkName applies rule A1.
func checkName(name string) string {
	switch {
	case !nameRE.MatchString(name):
		return "task name can only contain alpha numeric and underscore chars"
	case len(name) > cond.MaxName:
		return "task name can only have 64 characters"
	}
	return ""
}

// action applies one action to the working copy and reports whether it was
// valid.
func (a *applier) action(act *Action) bool {
	nerr := len(a.errs)
	if act.Name == "" {
		return false // reported by Parse
	}
	if msg := checkName(act.Name); msg != "" {
		a.errorf(act, act.Line, "%s", msg)
		return false
	}
	old, exists := a.tasks.get(act.Name)
	switch act.Kind {
	case Insert:
		if exists {
			a.errorf(act, act.Line, "task already exist")
			return false
		}
	case Update, Delete:
		if !exists {
			a.errorf(act, act.Line, "task not exist")
			return false
		}
	}
	if act.Kind == Delete {
		for _, f := range act.Fields {
			a.errorf(act, f.Line, "delete task should not have other attributes")
		}
		if a.active(act.Name) {
			a.errorf(act, act.Line, "task %s is active and cannot be deleted", act.Name)
		}
		if old.Type == job.Bundle {
			for _, c := range a.children(act.Name) {
				if a.active(c) {
					a.errorf(act, act.Line, "task %s is active and cannot be deleted (bundle %s is running it)", c, act.Name)
				}
			}
		}
		if len(a.errs) > nerr {
			return false
		}
		a.tasks.del(act.Name)
		delete(a.lines, act.Name)
		a.deletes[act.Name] = act.Line
		return true
	}

	var t *job.Task
	if act.Kind == Insert {
		t = &job.Task{Name: act.Name}
		typ, ok := field(act, "type")
		switch {
		case !ok || typ.Value == "":
			a.errorf(act, act.Line, "type: field is required")
		case typ.Value != string(job.Callable) && typ.Value != string(job.Bundle) && typ.Value != string(job.Configuration):
			a.errorf(act, typ.Line, "type attribute should be either bundle/callable/configuration")
		default:
			t.Type = job.Type(typ.Value)
		}
	} else {
		t = old.Clone()
	}
	lines := map[string]int{"": act.Line}
	for _, f := range act.Fields {
		if f.Key == "type" {
			if act.Kind == Update {
				a.errorf(act, f.Line, "type attribute cannot be changed")
			}
			lines["type"] = f.Line
			continue
		}
		lines[f.Key] = f.Line
		if t.Type == job.Bundle && bundleForbidden[f.Key] {
			a.errorf(act, f.Line, "%s: field is not allowed for bundle", f.Key)
			continue
		}
		if t.Type == job.Configuration && configurationForbidden[f.Key] {
			a.errorf(act, f.Line, "%s: field is not allowed for configuration (its dependencies trigger it)", f.Key)
			continue
		}
		if t.Type != job.Configuration && f.Key == "dependencies" && t.Type != "" {
			a.errorf(act, f.Line, "dependencies: field is only allowed for type configuration")
			continue
		}
		if f.Value == "" {
			if act.Kind == Update && callableRequired[f.Key] && t.Type == job.Callable {
				a.errorf(act, f.Line, "%s: value is empty", f.Key)
				continue
			}
			clear(t, f.Key)
			continue
		}
		if err := set(t, f.Key, f.Value); err != nil {
			a.errorf(act, f.Line, "%v", err)
		}
	}
	if len(a.errs) > nerr {
		return false
	}
	// Rules on the resulting definition.
	if t.Type == job.Callable && act.Kind == Insert {
		for _, k := range []string{"command", "out_log_file", "err_log_file"} {
			if f, ok := field(act, k); !ok || f.Value == "" {
				a.errorf(act, act.Line, "%s: field is required", k)
			}
		}
	}
	at := func(keys ...string) int {
		for _, k := range keys {
			if l, ok := lines[k]; ok {
				return l
			}
		}
		return act.Line
	}
	if t.Type == job.Configuration {
		a.checkConfiguration(act, t, at)
	}
	if len(t.StartTimes) > 0 && (t.Window != nil || len(t.StartMins) > 0) {
		a.errorf(act, at("start_times", "run_window", "start_mins"), "task should not have both batch run and window run")
	}
	if (t.Window != nil) != (len(t.StartMins) > 0) {
		a.errorf(act, at("run_window", "start_mins"), "window run should have both 'run_window' and 'start_mins' attributes")
	}
	if t.Parent != "" && (t.HasTimeTrigger() || len(t.StartMins) > 0 || t.RunDays != 0 || t.EndDate != "" || t.Interval != "") {
		a.errorf(act, at("start_times", "run_window", "start_mins", "run_days", "cron", "start_date", "end_date", "interval", "parent"), "scheduling attributes are not allowed on a task inside a bundle")
	}
	a.checkTimeTrigger(act, t, at)
	if len(a.errs) > nerr {
		return false
	}
	a.tasks.put(act.Name, t)
	if a.lines[act.Name] == nil || act.Kind == Insert {
		a.lines[act.Name] = lines
	} else {
		maps.Copy(a.lines[act.Name], lines)
	}
	return true
}

func field(act *Action, key string) (Field, bool) {
	for _, f := range act.Fields {
		if f.Key == key {
			return f, true
		}
	}
	return Field{}, false
}

var bundleForbidden = map[string]bool{
	"command": true, "condition": true, "out_log_file": true, "err_log_file": true, "profile": true, "parent": true,
	"start_delay": true,
}

var configurationForbidden = map[string]bool{
	"condition": true, "parent": true, "run_days": true, "run_window": true, "start_mins": true, "start_times": true,
	"timezone": true, "cron": true, "start_date": true, "end_date": true, "interval": true, "start_delay": true,
}

// checkConfiguration applies the rules of configurations: dependencies are
// required, and a command comes with its log files.
func (a *applier) checkConfiguration(act *Action, t *job.Task, at func(...string) int) {
	if len(t.Deps) == 0 {
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

var callableRequired = map[string]bool{"command": true, "out_log_file": true, "err_log_file": true}

// unsupported attributes are part of the language but not of this version.
var unsupported = map[string]string{
	"function": "function jobs",
	"alert_on": "email alerts", "alert_to": "email alerts", "alert_template": "email alerts",
}

// clear resets an attribute to its default (an empty value on update).
func clear(t *job.Task, key string) {
	switch key {
	case "command":
		t.Command = ""
	case "condition":
		t.Condition = ""
	case "out_log_file":
		t.OutLog = ""
	case "err_log_file":
		t.ErrLog = ""
	case "label":
		t.Label = ""
	case "machine":
		t.Machine = ""
	case "parent":
		t.Parent = ""
	case "priority":
		t.Priority = job.Low
	case "profile":
		t.Profile = ""
	case "run_days":
		t.RunDays = 0
	case "start_times":
		t.StartTimes = nil
	case "run_window":
		t.Window = nil
	case "start_mins":
		t.StartMins = nil
	case "timezone":
		t.Timezone = ""
	case "cron":
		t.Cron = ""
	case "start_date":
		t.StartDate = ""
	case "end_date":
		t.EndDate = ""
	case "interval":
		t.Interval = ""
	case "start_delay":
		t.StartDelay = 0
	case "overlap":
		t.Overlap = ""
	case "dependencies":
		t.Deps = nil
	}
}

// set parses a non-empty attribute value into t.
func set(t *job.Task, key, v string) error {
	var err error
	switch key {
	case "command":
		t.Command = v
	case "condition":
		var e *cond.Expr
		if e, err = cond.Parse(v); err == nil {
			t.Condition = e.String()
		}
	case "out_log_file":
		t.OutLog = v
	case "err_log_file":
		t.ErrLog = v
	case "label":
		t.Label = v
	case "machine":
		t.Machine = v
	case "parent":
		t.Parent = v
	case "priority":
		t.Priority, err = ParsePriority(v)
	case "profile":
		t.Profile = v
	case "run_days":
		t.RunDays, err = ParseRunDays(v)
	case "start_times":
		t.StartTimes, err = ParseStartTimes(v)
	case "run_window":
		t.Window, err = ParseWindow(v)
	case "start_mins":
		t.StartMins, err = ParseStartMins(v)
	case "timezone":
		if _, lerr := time.LoadLocation(v); lerr != nil || v == "Local" {
			err = fmt.Errorf("timezone: unknown time zone %q (want an IANA name such as Europe/Paris)", v)
		}
		t.Timezone = v
	case "cron":
		if _, err = calendar.ParseCron(v, time.UTC); err == nil {
			t.Cron = strings.Join(strings.Fields(v), " ")
		}
	case "start_date", "end_date":
		var d calendar.DateTime
		if d, err = calendar.ParseDateTime(v); err != nil {
			err = fmt.Errorf("%s: %w", key, err)
		} else if key == "start_date" {
			t.StartDate = d.String()
		} else {
			t.EndDate = d.String()
		}
	case "interval":
		var e calendar.Every
		if e, err = calendar.ParseEvery(v); err == nil {
			t.Interval = e.String()
		}
	case "start_delay":
		var d time.Duration
		d, err = time.ParseDuration(v)
		if err != nil || d < 0 {
			err = fmt.Errorf("start_delay: %q is not a duration such as 10s, 1500ms or 2m", v)
		}
		t.StartDelay = job.Duration(d)
	case "overlap":
		switch job.Overlap(v) {
		case job.OverlapSkip:
			t.Overlap = job.OverlapSkip
		case job.OverlapAllow, job.OverlapQueue:
			err = fmt.Errorf("overlap: %q is not supported by this version (only skip)", v)
		default:
			err = fmt.Errorf("overlap: %q should be one of skip, allow, queue", v)
		}
	case "dependencies":
		if t.Deps, err = eventdep.ParseDeps(v); err != nil {
			err = fmt.Errorf("dependencies: %w", err)
		}
	default:
		if what, ok := unsupported[key]; ok {
			err = fmt.Errorf("%s: %s are not supported by this version", key, what)
		}
	}
	return err
}

// ParsePriority reads a priority: 0-3 or low, normal, important, critical.
func ParsePriority(v string) (job.Priority, error) {
	for i, n := range []string{"low", "normal", "important", "critical"} {
		if v == n || v == strconv.Itoa(i) {
			return job.Priority(i), nil
		}
	}
	return 0, fmt.Errorf("priority should be either (low=0, normal=1, important=2, critical=3)")
}

// ParseRunDays reads "all" or a comma list of su,mo,tu,we,th,fr,sa.
func ParseRunDays(v string) (job.Days, error) {
	bad := fmt.Errorf("run_days attribute should be comma separated any values of su,mo,tu,we,th,fr,sa")
	if strings.EqualFold(strings.TrimSpace(v), "all") {
		return job.AllDays, nil
	}
	var d job.Days
	for item := range strings.SplitSeq(v, ",") {
		i := slices.Index(job.DayNames[:], strings.ToLower(strings.TrimSpace(item)))
		if i < 0 {
			return 0, bad
		}
		if d&(1<<uint(i)) != 0 {
			return 0, fmt.Errorf("run_days attribute contains repeated days")
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
			return nil, fmt.Errorf("start_times attribute should be comma separated values of time in format hh:mm")
		}
		if slices.Contains(out, c) {
			return nil, fmt.Errorf("start_times attribute contains repeated times")
		}
		out = append(out, c)
	}
	slices.Sort(out)
	return out, nil
}

// ParseWindow reads "H:MM-H:MM"; a start after the end is an overnight window.
func ParseWindow(v string) (*job.Window, error) {
	bad := fmt.Errorf("run_window attribute should only have start and end time separated by '-' (hh:mm-hh:mm)")
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
		return nil, fmt.Errorf("run_window attribute should only have start and end time separated by '-': start and end are equal")
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
			return nil, fmt.Errorf("start_min attribute should be comma separated values of minutes (0-59)")
		}
		m, _ := strconv.Atoi(item)
		if slices.Contains(out, m) {
			return nil, fmt.Errorf("start_mins attribute contains repeated minutes")
		}
		out = append(out, m)
	}
	slices.Sort(out)
	return out, nil
}

// checkTimeTrigger applies the rules on time triggers: at most one of a
// calendar, a cron expression and an interval; an interval needs its start;
// run_days belongs to calendars.
func (a *applier) checkTimeTrigger(act *Action, t *job.Task, at func(...string) int) {
	kinds := 0
	for _, has := range []bool{len(t.StartTimes) > 0 || t.Window != nil, t.Cron != "", t.StartDate != ""} {
		if has {
			kinds++
		}
	}
	if kinds > 1 {
		a.errorf(act, at("cron", "start_date", "start_times", "run_window"), "task should have only one time trigger: start_times or run_window, cron, or start_date")
	}
	if t.StartDate == "" && (t.EndDate != "" || t.Interval != "") {
		a.errorf(act, at("interval", "end_date"), "start_date: field is required with interval and end_date")
	}
	if t.RunDays != 0 && (t.Cron != "" || t.StartDate != "") {
		a.errorf(act, at("run_days"), "run_days applies to start_times and run_window only (a cron expression has its own day fields)")
	}
	if t.StartDate != "" && t.EndDate != "" {
		if _, err := calendar.IntervalOf(t.StartDate, t.EndDate, t.Interval, time.UTC); err != nil {
			a.errorf(act, at("end_date", "start_date"), "%v", err)
		}
	}
}
