// Package job is gnomon's shared vocabulary: task definitions, statuses, runs
// and the actions operators send. It sits at the bottom of the import graph:
// of gnomon's own it imports only internal/termsafe, a leaf, with which
// audit lines are written.
package job

import (
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"
)

// Type is the kind of a task.
type Type string

// Task types.
const (
	Callable Type = "callable" // runs a command
	Bundle   Type = "bundle"   // a container that starts its callable children
	// Configuration is triggered by data events (seed 000) when all its
	// dependencies are met; its command is optional.
	Configuration Type = "configuration"
	// Group is a job group (seed 004): a named set of tasks that share
	// alert settings. It never runs.
	Group Type = "group"
)

// Priority orders ready tasks: higher runs first.
type Priority int

// Priorities, as named in the definition language.
const (
	Low       Priority = 0
	Normal    Priority = 1
	Important Priority = 2
	Critical  Priority = 3
)

// Days is a set of weekdays, bit i set for time.Weekday(i) (Sunday = 0).
// The zero value means "every day".
type Days uint8

// AllDays has every weekday set.
const AllDays Days = 0x7f

// Has reports whether the weekday is in the set; an empty set holds every day.
func (d Days) Has(w time.Weekday) bool { return d == 0 || d&(1<<uint(w)) != 0 }

// DayNames are the two-letter weekday names in su..sa order.
var DayNames = [7]string{"su", "mo", "tu", "we", "th", "fr", "sa"}

// String renders the set as a comma-joined list in su..sa order.
func (d Days) String() string {
	s := ""
	for i, n := range DayNames {
		if d&(1<<uint(i)) != 0 {
			if s != "" {
				s += ","
			}
			s += n
		}
	}
	return s
}

// Clock is a wall-clock time of day in minutes after midnight (0..1439).
type Clock int

// String renders the time as HH:MM.
func (c Clock) String() string { return fmt.Sprintf("%02d:%02d", int(c)/60, int(c)%60) }

// Window is a daily run window. Start > End means it runs past midnight and
// belongs to the day it opens.
type Window struct {
	Start, End Clock
}

// Task is one task definition. Optional string attributes are empty when
// unset; the definition language treats an empty value as "not set".
//
// The attributes most tasks leave unset live in Extra, nil when all of
// them are: a scheduler holds every definition in memory. Read them with
// Extras and set them through Edit. A Task encodes as one flat JSON object
// (see TaskJSON).
type Task struct {
	Name      string
	Type      Type
	Command   string
	Condition string // canonical form (cond.Expr.String)
	OutLog    string
	ErrLog    string
	Parent    string
	Priority  Priority
	RunDays   Days
	// StartTimes are ascending, without repeats.
	StartTimes []Clock
	Window     *Window
	StartMins  []int // ascending, without repeats
	Timezone   string
	// Cron is a cron expression, fields separated by single spaces.
	Cron string
	// StartDate, EndDate and Interval are an interval trigger: wall-clock
	// dates "YYYY-MM-DD HH:MM[:SS]" in the task's zone and "N unit(s)".
	StartDate string
	EndDate   string
	Interval  string
	Extra     *Extra
}

// Extra holds a task's less common attributes.
type Extra struct {
	Label   string
	Machine string
	Profile string
	// Owner is the OS user the command runs as, "user" or "user:group"
	// (without a group, the user's primary group); empty: the server's
	// default (see docs/security.md).
	Owner      string
	StartDelay Duration
	Overlap    Overlap
	// Deps are a configuration's data dependencies, in definition order.
	Deps []DataDep
	// Function names a Go function registered with the scheduler that a
	// run calls instead of a command.
	Function string
	// AlertOn, AlertTo and AlertTemplate configure email alerts: on which
	// outcomes, to whom (addresses, in definition order), and the path of
	// a text/template file (empty: the default template).
	AlertOn       []Outcome
	AlertTo       []string
	AlertTemplate string
	// Notify are the webhooks alerted on the same outcomes, KIND:URL (see
	// HookTarget), in definition order.
	Notify []string
	// NotifyTemplate is the text/template of the JSON body generic
	// webhooks (webhook:URL) receive; empty: notify.Payload.
	NotifyTemplate string
	// Jobs are a group's members, sorted.
	Jobs []string
	// KeepHistory is how long the task's runs, fires, audit records and
	// alerts are kept (a group's: its members'), instead of the server's
	// retention; zero leaves it to the server, Forever keeps them all.
	KeepHistory Duration
	// RunCalendar and ExcludeCalendar name calendars (see Calendar): the
	// task's time trigger fires only on the days of the first, and its
	// occurrences on the days of the second are skipped. The day of an
	// occurrence is its date in the task's time zone.
	RunCalendar     string
	ExcludeCalendar string
	// Policy holds retries, the time limit and the alarms, nil when the
	// task sets none of them.
	Policy *Policy
	// Environment holds the command's variables, working directory,
	// standard input, umask and parameters, nil when the task sets none.
	Environment *Environment
	// Amount is a resource's number of units (see Resource).
	Amount int
	// Claims are what each run of the task takes of shared resources
	// while it runs, in definition order, one per resource.
	Claims []Claim
	// Watch is the task's file watcher, nil without one.
	Watch *Watch
	// LogRotate is the task's own rotation of its log files, nil when it
	// leaves it to the server (see LogRotation).
	LogRotate *LogRotation
}

// Extras returns the task's less common attributes, for reading only:
// without any, it is a shared zero Extra.
func (t *Task) Extras() *Extra {
	if t.Extra == nil {
		return &noExtra
	}
	return t.Extra
}

var noExtra Extra

// RunPolicy returns the task's run policy, for reading only: without one, a
// shared zero Policy.
func (x *Extra) RunPolicy() *Policy {
	if x.Policy == nil {
		return &noPolicy
	}
	return x.Policy
}

var noPolicy Policy

// EditPolicy returns the task's run policy for setting it.
func (t *Task) EditPolicy() *Policy {
	x := t.Edit()
	if x.Policy == nil {
		x.Policy = &Policy{}
	}
	return x.Policy
}

// Edit returns the task's less common attributes for setting them.
func (t *Task) Edit() *Extra {
	if t.Extra == nil {
		t.Extra = &Extra{}
	}
	return t.Extra
}

// Compact drops an Extra that sets nothing, so that equal definitions
// compare equal.
func (t *Task) Compact() {
	if t.Extra != nil && t.Extra.Policy.IsZero() {
		t.Extra.Policy = nil
	}
	if t.Extra != nil && t.Extra.Environment.IsZero() {
		t.Extra.Environment = nil
	}
	if t.Extra != nil && t.Extra.Watch.IsZero() {
		t.Extra.Watch = nil
	}
	if t.Extra != nil && t.Extra.LogRotate.IsZero() {
		t.Extra.LogRotate = nil
	}
	if t.Extra != nil && t.Extra.empty() {
		t.Extra = nil
	}
}

func (x *Extra) empty() bool {
	return x.Label == "" && x.Machine == "" && x.Profile == "" && x.Owner == "" && x.StartDelay == 0 && x.Overlap == "" && len(x.Deps) == 0 &&
		x.Function == "" && len(x.AlertOn) == 0 && len(x.AlertTo) == 0 && x.AlertTemplate == "" && len(x.Jobs) == 0 &&
		x.KeepHistory == 0 && x.RunCalendar == "" && x.ExcludeCalendar == "" && x.Policy.IsZero() && x.Environment.IsZero() &&
		x.Amount == 0 && len(x.Claims) == 0 && len(x.Notify) == 0 && x.NotifyTemplate == "" && x.Watch.IsZero() && x.LogRotate.IsZero()
}

// TaskJSON is the JSON form of a Task: every attribute in one object.
type TaskJSON struct {
	Name          string    `json:"name"`
	Type          Type      `json:"type"`
	Command       string    `json:"command,omitempty"`
	Condition     string    `json:"condition,omitempty"`
	OutLog        string    `json:"out_log_file,omitempty"`
	ErrLog        string    `json:"err_log_file,omitempty"`
	Label         string    `json:"label,omitempty"`
	Machine       string    `json:"machine,omitempty"`
	Parent        string    `json:"parent,omitempty"`
	Priority      Priority  `json:"priority"`
	Profile       string    `json:"profile,omitempty"`
	Owner         string    `json:"owner,omitempty"`
	RunDays       Days      `json:"run_days,omitempty"`
	StartTimes    []Clock   `json:"start_times,omitempty"`
	Window        *Window   `json:"run_window,omitempty"`
	StartMins     []int     `json:"start_mins,omitempty"`
	Timezone      string    `json:"timezone,omitempty"`
	Cron          string    `json:"cron,omitempty"`
	StartDate     string    `json:"start_date,omitempty"`
	EndDate       string    `json:"end_date,omitempty"`
	Interval      string    `json:"interval,omitempty"`
	StartDelay    Duration  `json:"start_delay,omitempty"`
	Overlap       Overlap   `json:"overlap,omitempty"`
	Deps          []DataDep `json:"dependencies,omitempty"`
	Function      string    `json:"function,omitempty"`
	AlertOn       []Outcome `json:"alert_on,omitempty"`
	AlertTo       []string  `json:"alert_to,omitempty"`
	AlertTemplate string    `json:"alert_template,omitempty"`
	Jobs          []string  `json:"jobs,omitempty"`
	KeepHistory   Duration  `json:"keep_history,omitempty"`
	RunCalendar   string    `json:"run_calendar,omitempty"`
	// ExcludeCalendar is the task's exclude_calendar.
	ExcludeCalendar string `json:"exclude_calendar,omitempty"`
	// The run policy (see Policy).
	Retries        int      `json:"n_retrys,omitempty"`
	RetryDelay     Duration `json:"retry_delay,omitempty"`
	RetryBackoff   float64  `json:"retry_backoff,omitempty"`
	RetryMaxDelay  Duration `json:"retry_max_delay,omitempty"`
	TermRunTime    Duration `json:"term_run_time,omitempty"`
	MaxRunAlarm    Duration `json:"max_run_alarm,omitempty"`
	MinRunAlarm    Duration `json:"min_run_alarm,omitempty"`
	MustStartBy    Deadline `json:"must_start_by,omitzero"`
	MustCompleteBy Deadline `json:"must_complete_by,omitzero"`
	// The environment (see Environment).
	Envvars    []Var  `json:"envvars,omitempty"`
	WorkingDir string `json:"working_dir,omitempty"`
	StdIn      string `json:"std_in_file,omitempty"`
	Umask      string `json:"umask,omitempty"`
	Params     []Var  `json:"params,omitempty"`
	// A resource's units, and the resources a task's runs take.
	Amount    int     `json:"amount,omitempty"`
	Resources []Claim `json:"resources,omitempty"`
	// Notify: see Extra.Notify.
	Notify         []string `json:"notify,omitempty"`
	NotifyTemplate string   `json:"notify_template,omitempty"`
	// The file watcher (see Watch).
	WatchFile     string   `json:"watch_file,omitempty"`
	WatchMinSize  int64    `json:"watch_min_size,omitempty"`
	WatchSteady   Duration `json:"watch_steady,omitempty"`
	WatchInterval Duration `json:"watch_interval,omitempty"`
	// The task's own log rotation (see LogRotation).
	LogRotateSize int64    `json:"log_rotate_size,omitempty"`
	LogRotateAge  Duration `json:"log_rotate_age,omitempty"`
	LogKeep       int      `json:"log_keep,omitempty"`
}

// JSON returns the task's JSON form.
func (t *Task) JSON() TaskJSON {
	x := t.Extras()
	p := x.RunPolicy()
	e := x.Env()
	w := x.Watch
	if w == nil {
		w = &Watch{}
	}
	return TaskJSON{
		Name: t.Name, Type: t.Type, Command: t.Command, Condition: t.Condition, OutLog: t.OutLog, ErrLog: t.ErrLog,
		Label: x.Label, Machine: x.Machine, Parent: t.Parent, Priority: t.Priority, Profile: x.Profile, Owner: x.Owner, RunDays: t.RunDays,
		StartTimes: t.StartTimes, Window: t.Window, StartMins: t.StartMins, Timezone: t.Timezone, Cron: t.Cron,
		StartDate: t.StartDate, EndDate: t.EndDate, Interval: t.Interval, StartDelay: x.StartDelay, Overlap: x.Overlap,
		Deps: x.Deps, Function: x.Function, AlertOn: x.AlertOn, AlertTo: x.AlertTo, AlertTemplate: x.AlertTemplate, Jobs: x.Jobs,
		KeepHistory: x.KeepHistory, RunCalendar: x.RunCalendar, ExcludeCalendar: x.ExcludeCalendar,
		Retries: p.Retries, RetryDelay: p.RetryDelay, RetryBackoff: p.RetryBackoff, RetryMaxDelay: p.RetryMaxDelay,
		TermRunTime: p.TermRunTime, MaxRunAlarm: p.MaxRunAlarm, MinRunAlarm: p.MinRunAlarm,
		MustStartBy: p.MustStartBy, MustCompleteBy: p.MustCompleteBy,
		Envvars: e.Vars, WorkingDir: e.WorkingDir, StdIn: e.StdIn, Umask: e.Umask, Params: e.Params,
		Amount: x.Amount, Resources: x.Claims, Notify: x.Notify, NotifyTemplate: x.NotifyTemplate,
		WatchFile: w.File, WatchMinSize: w.MinSize, WatchSteady: w.Steady, WatchInterval: w.Interval,
		LogRotateSize: x.LogRotate.size(), LogRotateAge: x.LogRotate.age(), LogKeep: x.LogRotate.keep(),
	}
}

// Into sets t to the task j describes.
func (j *TaskJSON) Into(t *Task) {
	*t = Task{
		Name: j.Name, Type: j.Type, Command: j.Command, Condition: j.Condition, OutLog: j.OutLog, ErrLog: j.ErrLog,
		Parent: j.Parent, Priority: j.Priority, RunDays: j.RunDays, StartTimes: j.StartTimes, Window: j.Window,
		StartMins: j.StartMins, Timezone: j.Timezone, Cron: j.Cron, StartDate: j.StartDate, EndDate: j.EndDate, Interval: j.Interval,
	}
	x := Extra{Label: j.Label, Machine: j.Machine, Profile: j.Profile, Owner: j.Owner, StartDelay: j.StartDelay, Overlap: j.Overlap,
		Deps: j.Deps, Function: j.Function, AlertOn: j.AlertOn, AlertTo: j.AlertTo, AlertTemplate: j.AlertTemplate, Jobs: j.Jobs,
		KeepHistory: j.KeepHistory, RunCalendar: j.RunCalendar, ExcludeCalendar: j.ExcludeCalendar, Amount: j.Amount, Claims: j.Resources, Notify: j.Notify, NotifyTemplate: j.NotifyTemplate}
	p := Policy{Retries: j.Retries, RetryDelay: j.RetryDelay, RetryBackoff: j.RetryBackoff, RetryMaxDelay: j.RetryMaxDelay,
		TermRunTime: j.TermRunTime, MaxRunAlarm: j.MaxRunAlarm, MinRunAlarm: j.MinRunAlarm,
		MustStartBy: j.MustStartBy, MustCompleteBy: j.MustCompleteBy}
	if !p.IsZero() {
		x.Policy = &p
	}
	if e := (Environment{Vars: j.Envvars, WorkingDir: j.WorkingDir, StdIn: j.StdIn, Umask: j.Umask, Params: j.Params}); !e.IsZero() {
		x.Environment = &e
	}
	if w := (Watch{File: j.WatchFile, MinSize: j.WatchMinSize, Steady: j.WatchSteady, Interval: j.WatchInterval}); !w.IsZero() {
		x.Watch = &w
	}
	if r := (LogRotation{Size: j.LogRotateSize, Age: j.LogRotateAge, Keep: j.LogKeep}); !r.IsZero() {
		x.LogRotate = &r
	}
	if !x.empty() {
		t.Extra = new(x)
	}
}

// MarshalJSON implements json.Marshaler.
func (t Task) MarshalJSON() ([]byte, error) { return json.Marshal(t.JSON()) }

// UnmarshalJSON implements json.Unmarshaler.
func (t *Task) UnmarshalJSON(b []byte) error {
	var j TaskJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	j.Into(t)
	return nil
}

// Outcome is what a run of a task, or a trigger of it, came to, as alerts
// and listeners name it.
type Outcome string

// Outcomes.
const (
	OutcomeSuccess    Outcome = "success"
	OutcomeFailure    Outcome = "failure"
	OutcomeNotStarted Outcome = "not_started"
	// OutcomeRetry is a failed run that is retried: the failure is not
	// final yet.
	OutcomeRetry Outcome = "retry"
	// OutcomeAlarm is an alarm of the task's policy (see Alarm).
	OutcomeAlarm Outcome = "alarm"
)

// Alerts reports whether the task (or group) alerts on outcome o.
func (t *Task) Alerts(o Outcome) bool {
	x := t.Extras()
	return (len(x.AlertTo) > 0 || len(x.Notify) > 0) && slices.Contains(x.AlertOn, o)
}

// DataDep is one dependency of a configuration: an event of this type and
// resource validates it, and it stays met for Life seconds after the
// event's timestamp.
type DataDep struct {
	Type     DataType `json:"type"`
	Resource string   `json:"resourceId"`
	Life     int64    `json:"lifeDuration"`
}

// PackStrings makes a configuration's name and its dependencies'
// resources share one allocation: a million configurations are then a
// million objects for the garbage collector instead of four million. The
// strings keep their values.
func (t *Task) PackStrings() {
	if t.Type != Configuration || t.Extra == nil {
		return
	}
	deps := t.Extra.Deps
	n := len(t.Name)
	for _, d := range deps {
		n += len(d.Resource)
	}
	var b strings.Builder
	b.Grow(n)
	b.WriteString(t.Name)
	for _, d := range deps {
		b.WriteString(d.Resource)
	}
	all := b.String()
	t.Name, all = all[:len(t.Name)], all[len(t.Name):]
	for i := range deps {
		deps[i].Resource, all = all[:len(deps[i].Resource)], all[len(deps[i].Resource):]
	}
}

// Key identifies the dependency within its configuration: its type and
// resource, a FILE directory cleaned as matching reads it.
func (d DataDep) Key() string {
	if d.Type == File {
		return string(d.Type) + ":" + path.Clean(d.Resource)
	}
	return string(d.Type) + ":" + d.Resource
}

// DataType is the type of a data event and of the dependencies it
// validates.
type DataType string

// Data event types. TIME_BASED_CRON is read as TIME_BASED.
const (
	File      DataType = "FILE"
	Table     DataType = "TABLE"
	TimeBased DataType = "TIME_BASED"
)

// ParseDataType reads an event or dependency type. Names are
// case-sensitive; TIME_BASED_CRON is an alias of TIME_BASED.
func ParseDataType(s string) (DataType, bool) {
	switch s {
	case "FILE":
		return File, true
	case "TABLE":
		return Table, true
	case "TIME_BASED", "TIME_BASED_CRON":
		return TimeBased, true
	}
	return "", false
}

// HasTimeTrigger reports whether the task has a time trigger of its own: a
// calendar, a cron expression or an interval.
func (t *Task) HasTimeTrigger() bool {
	return len(t.StartTimes) > 0 || t.Window != nil || t.Cron != "" || t.StartDate != ""
}

// Executes reports whether the task's runs execute something: a callable,
// or a configuration with a command or a function. Such runs take a worker
// slot.
func (t *Task) Executes() bool {
	return t.Type == Callable || (t.Type == Configuration && (t.Command != "" || t.Extras().Function != ""))
}

// ConditionTriggered reports whether the task starts on its own when its
// condition turns true: a standalone callable with a condition and no time
// trigger.
func (t *Task) ConditionTriggered() bool {
	return t.Type == Callable && t.Parent == "" && t.Condition != "" && !t.HasTimeTrigger()
}

// Clone returns a deep copy.
func (t *Task) Clone() *Task {
	var c *Task
	if t.Extra != nil {
		p := &taskAndExtra{t: *t, x: *t.Extra}
		p.x.Deps = slices.Clone(p.x.Deps)
		p.x.AlertOn = slices.Clone(p.x.AlertOn)
		p.x.AlertTo = slices.Clone(p.x.AlertTo)
		p.x.Jobs = slices.Clone(p.x.Jobs)
		if p.x.Policy != nil {
			p.x.Policy = new(*p.x.Policy)
		}
		p.x.Environment = p.x.Environment.Clone()
		p.x.Claims = slices.Clone(p.x.Claims)
		p.x.Notify = slices.Clone(p.x.Notify)
		p.t.Extra = &p.x
		c = &p.t
	} else {
		cp := *t
		c = &cp
	}
	c.StartTimes = append([]Clock(nil), t.StartTimes...)
	c.StartMins = append([]int(nil), t.StartMins...)
	if t.Window != nil {
		w := *t.Window
		c.Window = &w
	}
	return c
}

// taskAndExtra is a task and its less common attributes in one
// allocation: one object for the garbage collector instead of two, which
// counts with a million configurations.
type taskAndExtra struct {
	t Task
	x Extra
}

// NewWithExtra returns a task of a name and type whose Extra, empty, is
// allocated with it: for a task that sets some (a configuration's
// dependencies are there).
func NewWithExtra(name string, typ Type) *Task {
	p := &taskAndExtra{}
	p.t.Name, p.t.Type, p.t.Extra = name, typ, &p.x
	return &p.t
}

// Duration is a time.Duration that marshals as text ("10s").
type Duration time.Duration

// MarshalText implements encoding.TextMarshaler.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// Overlap says what happens when a trigger comes while the task is active.
type Overlap string

// Overlap policies. The empty value means Skip.
const (
	OverlapSkip  Overlap = "skip"
	OverlapAllow Overlap = "allow"
	OverlapQueue Overlap = "queue"
)
