package defs

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gnomon-sched/gnomon/calendar"
	"github.com/gnomon-sched/gnomon/cond"
	"github.com/gnomon-sched/gnomon/eventdep"
	"github.com/gnomon-sched/gnomon/job"
)

// attr is one attribute of the language: its name, the kinds of
// definition it is given for, and how a value of it is set, cleared and
// written. attrTable lists every attribute once; parsing, applying,
// Attrs and Label all read it, so that adding an attribute to the
// language is adding its entry.
type attr struct {
	// name is the key of the attribute's lines.
	name string
	// on are the kinds of definition a line of the attribute is accepted
	// for. The rules on the resulting definition may refuse more (a
	// bundle's function, a bundle's file watcher).
	on kinds
	// repeat says that the lines of the attribute in one action add up,
	// where another attribute given twice is an error.
	repeat bool
	// required says that a callable task that runs no function needs the
	// attribute: an insert gives it and an update does not empty it.
	required bool
	// setFunc parses a non-empty value into a task; nil sets nothing.
	setFunc func(t *job.Task, v string) error
	// clearFunc resets the attribute to its default; nil clears nothing.
	clearFunc func(t *job.Task)
	// formatFunc returns the value Attrs writes, "" when the attribute is
	// not set; nil for an attribute Attrs never writes (another name of
	// one it writes, or one of a calendar).
	formatFunc func(t *job.Task) string
}

// kinds is a set of the kinds of definition an attribute is given for.
type kinds uint8

// The kinds of definition.
const (
	onCallable kinds = 1 << iota
	onBundle
	onConfiguration
	onGroup
	onResource
	onCalendar

	// onTask is every type of task.
	onTask = onCallable | onBundle | onConfiguration
	// onRunner are the tasks that run a command themselves (a bundle
	// runs its children).
	onRunner = onCallable | onConfiguration
	// onScheduled are the tasks a time trigger starts (a configuration's
	// dependencies trigger it).
	onScheduled = onCallable | onBundle
)

// kindOf returns the kind of a definition of type typ, or none for a
// type unknown.
func kindOf(typ job.Type) kinds {
	switch typ {
	case job.Callable:
		return onCallable
	case job.Bundle:
		return onBundle
	case job.Configuration:
		return onConfiguration
	case job.Group:
		return onGroup
	case job.Resource:
		return onResource
	}
	return 0
}

// attrTable holds the attributes of the language in their canonical
// order, the one Attrs writes them in (and schd_task shows them in).
// Each family of attributes contributes its entries from its file.
var attrTable = slices.Concat(taskTable, policyTable, claimTable, envTable, watchTable, alertTable, logRotateTable, priorityTable, calendarTable)

// attrIndex finds the entries of attrTable by name.
var attrIndex = func() map[string]*attr {
	m := make(map[string]*attr, len(attrTable))
	for i := range attrTable {
		if _, dup := m[attrTable[i].name]; dup {
			panic("defs: attribute listed twice: " + attrTable[i].name)
		}
		m[attrTable[i].name] = &attrTable[i]
	}
	return m
}()

// noAttr stands for a key that is not an attribute: it is given for no
// kind of definition, and sets, clears and writes nothing.
var noAttr attr

// attrOf returns the attribute named key, or noAttr.
func attrOf(key string) *attr {
	if a, ok := attrIndex[key]; ok {
		return a
	}
	return &noAttr
}

// isAttribute reports whether key names an attribute of the language.
func isAttribute(key string) bool {
	_, ok := attrIndex[key]
	return ok
}

// attributeNames are the attributes of the language, sorted: those an
// invalid field is compared with.
var attributeNames = func() []string {
	names := make([]string, len(attrTable))
	for i, a := range attrTable {
		names[i] = a.name
	}
	slices.Sort(names)
	return names
}()

// Label returns the label a definition shows an attribute under, as
// schd_task does: its name in CamelCase (out_log_file: OutLogFile), or ""
// for a key that is not an attribute.
func Label(key string) string {
	if !isAttribute(key) {
		return ""
	}
	var b strings.Builder
	for word := range strings.SplitSeq(key, "_") {
		if word != "" {
			b.WriteString(strings.ToUpper(word[:1]) + word[1:])
		}
	}
	return b.String()
}

// set parses a non-empty attribute value into t.
func set(t *job.Task, key, v string) error {
	if a := attrOf(key); a.setFunc != nil {
		return a.setFunc(t, v)
	}
	return nil
}

// clear resets an attribute to its default (an empty value on update).
func clear(t *job.Task, key string) {
	if a := attrOf(key); a.clearFunc != nil {
		a.clearFunc(t)
	}
}

// asWritten reads a value that is held as it is written.
func asWritten(v string) (string, error) { return v, nil }

// taskText is an attribute held as text in the field of the task that
// ptr returns: parse checks a value and returns what is held.
func taskText(name string, on kinds, ptr func(t *job.Task) *string, parse func(v string) (string, error)) attr {
	return attr{name: name, on: on,
		setFunc: func(t *job.Task, v string) error {
			s, err := parse(v)
			if err == nil {
				*ptr(t) = s
			}
			return err
		},
		clearFunc:  func(t *job.Task) { *ptr(t) = "" },
		formatFunc: func(t *job.Task) string { return *ptr(t) },
	}
}

// extraText is taskText for a field of the task's less common
// attributes (job.Extra).
func extraText(name string, on kinds, ptr func(x *job.Extra) *string, parse func(v string) (string, error)) attr {
	return attr{name: name, on: on,
		setFunc: func(t *job.Task, v string) error {
			s, err := parse(v)
			if err == nil {
				*ptr(t.Edit()) = s
			}
			return err
		},
		clearFunc:  func(t *job.Task) { *ptr(t.Edit()) = "" },
		formatFunc: func(t *job.Task) string { return *ptr(t.Extras()) },
	}
}

// taskTable holds the attributes of what a task is, runs and when,
// with a group's jobs and a resource's amount: the first in the
// canonical order.
var taskTable = []attr{
	{name: "type", on: onTask, formatFunc: func(t *job.Task) string { return string(t.Type) }},
	taskText("parent", onCallable, func(t *job.Task) *string { return &t.Parent }, asWritten),
	extraText("machine", onTask, func(x *job.Extra) *string { return &x.Machine }, asWritten),
	required(taskText("command", onRunner, func(t *job.Task) *string { return &t.Command }, asWritten)),
	extraText("function", onTask, func(x *job.Extra) *string { return &x.Function }, parseFunction),
	taskText("condition", onCallable, func(t *job.Task) *string { return &t.Condition }, parseCondition),
	required(taskText("out_log_file", onRunner, func(t *job.Task) *string { return &t.OutLog }, asWritten)),
	required(taskText("err_log_file", onRunner, func(t *job.Task) *string { return &t.ErrLog }, asWritten)),
	{name: "jobs", on: onGroup,
		setFunc:    func(t *job.Task, v string) (err error) { t.Edit().Jobs, err = ParseJobs(v); return err },
		clearFunc:  func(t *job.Task) { t.Edit().Jobs = nil },
		formatFunc: func(t *job.Task) string { return strings.Join(t.Extras().Jobs, ",") }},
	{name: "amount", on: onResource,
		setFunc:    func(t *job.Task, v string) (err error) { t.Edit().Amount, err = ParseAmount(v); return err },
		clearFunc:  func(t *job.Task) { t.Edit().Amount = 0 },
		formatFunc: func(t *job.Task) string { return positive(t.Extras().Amount) }},
	extraText("label", onTask|onGroup|onResource, func(x *job.Extra) *string { return &x.Label }, asWritten),
	extraText("profile", onRunner, func(x *job.Extra) *string { return &x.Profile }, asWritten),
	extraText("owner", onRunner, func(x *job.Extra) *string { return &x.Owner }, func(v string) (string, error) { return v, CheckOwner(v) }),
	{name: "run_days", on: onScheduled,
		setFunc:    func(t *job.Task, v string) (err error) { t.RunDays, err = ParseRunDays(v); return err },
		clearFunc:  func(t *job.Task) { t.RunDays = 0 },
		formatFunc: func(t *job.Task) string { return t.RunDays.String() }},
	{name: "start_times", on: onScheduled,
		setFunc:    func(t *job.Task, v string) (err error) { t.StartTimes, err = ParseStartTimes(v); return err },
		clearFunc:  func(t *job.Task) { t.StartTimes = nil },
		formatFunc: func(t *job.Task) string { return JoinClocks(t.StartTimes) }},
	{name: "run_window", on: onScheduled,
		setFunc:    func(t *job.Task, v string) (err error) { t.Window, err = ParseWindow(v); return err },
		clearFunc:  func(t *job.Task) { t.Window = nil },
		formatFunc: formatWindow},
	{name: "start_mins", on: onScheduled,
		setFunc:    func(t *job.Task, v string) (err error) { t.StartMins, err = ParseStartMins(v); return err },
		clearFunc:  func(t *job.Task) { t.StartMins = nil },
		formatFunc: func(t *job.Task) string { return JoinMins(t.StartMins) }},
	taskText("cron", onScheduled, func(t *job.Task) *string { return &t.Cron }, parseCron),
	taskText("start_date", onScheduled, func(t *job.Task) *string { return &t.StartDate }, parseDateTime("start_date")),
	taskText("end_date", onScheduled, func(t *job.Task) *string { return &t.EndDate }, parseDateTime("end_date")),
	taskText("interval", onScheduled, func(t *job.Task) *string { return &t.Interval }, parseEvery),
	taskText("timezone", onScheduled, func(t *job.Task) *string { return &t.Timezone }, parseTimezone),
	extraText("run_calendar", onScheduled, func(x *job.Extra) *string { return &x.RunCalendar }, calendarName("run_calendar")),
	extraText("exclude_calendar", onScheduled, func(x *job.Extra) *string { return &x.ExcludeCalendar }, calendarName("exclude_calendar")),
	{name: "start_delay", on: onCallable,
		setFunc:    setStartDelay,
		clearFunc:  func(t *job.Task) { t.Edit().StartDelay = 0 },
		formatFunc: func(t *job.Task) string { return durationValue(t.Extras().StartDelay) }},
	{name: "overlap", on: onTask,
		setFunc:    setOverlap,
		clearFunc:  func(t *job.Task) { t.Edit().Overlap = "" },
		formatFunc: func(t *job.Task) string { return string(t.Extras().Overlap) }},
	{name: "dependencies", on: onConfiguration,
		setFunc:    setDeps,
		clearFunc:  func(t *job.Task) { t.Edit().Deps = nil },
		formatFunc: formatDeps},
}

// alertTable holds the attributes of alerts, and the history a task
// keeps; a group has them too.
var alertTable = []attr{
	{name: "alert_on", on: onTask | onGroup,
		setFunc:    func(t *job.Task, v string) (err error) { t.Edit().AlertOn, err = ParseAlertOn(v); return err },
		clearFunc:  func(t *job.Task) { t.Edit().AlertOn = nil },
		formatFunc: formatAlertOn},
	{name: "alert_to", on: onTask | onGroup,
		setFunc:    func(t *job.Task, v string) (err error) { t.Edit().AlertTo, err = ParseAddresses(v); return err },
		clearFunc:  func(t *job.Task) { t.Edit().AlertTo = nil },
		formatFunc: func(t *job.Task) string { return strings.Join(t.Extras().AlertTo, ",") }},
	extraText("alert_template", onTask|onGroup, func(x *job.Extra) *string { return &x.AlertTemplate }, asWritten),
	{name: "notify", on: onTask | onGroup,
		setFunc:    func(t *job.Task, v string) (err error) { t.Edit().Notify, err = ParseNotify(v); return err },
		clearFunc:  func(t *job.Task) { t.Edit().Notify = nil },
		formatFunc: func(t *job.Task) string { return strings.Join(t.Extras().Notify, ", ") }},
	extraText("notify_template", onTask|onGroup, func(x *job.Extra) *string { return &x.NotifyTemplate },
		func(v string) (string, error) { return v, CheckNotifyTemplate(v) }),
	{name: "keep_history", on: onTask | onGroup,
		setFunc:   setKeepHistory,
		clearFunc: func(t *job.Task) { t.Edit().KeepHistory = 0 },
		formatFunc: func(t *job.Task) string {
			if k := t.Extras().KeepHistory; k != 0 {
				return k.Retention()
			}
			return ""
		}},
}

// priorityTable holds the priority, which every task has: Attrs writes
// it last.
var priorityTable = []attr{
	{name: "priority", on: onTask,
		setFunc:    func(t *job.Task, v string) (err error) { t.Priority, err = ParsePriority(v); return err },
		clearFunc:  func(t *job.Task) { t.Priority = job.Low },
		formatFunc: func(t *job.Task) string { return strconv.Itoa(int(t.Priority)) }},
}

// required marks an attribute as required of a callable task that runs
// no function.
func required(a attr) attr {
	a.required = true
	return a
}

// positive writes a count, "" for none.
func positive(n int) string {
	if n > 0 {
		return strconv.Itoa(n)
	}
	return ""
}

// durationValue writes a duration as the language reads it, "" for none.
func durationValue(d job.Duration) string {
	if d > 0 {
		return FormatDuration(time.Duration(d))
	}
	return ""
}

// parseFunction reads the name of a registered function.
func parseFunction(v string) (string, error) {
	if !nameRE.MatchString(v) {
		return "", fmt.Errorf("function: %q is not a function name (letters, digits and underscores)", v)
	}
	return v, nil
}

// parseCondition reads a condition, held in its canonical spelling.
func parseCondition(v string) (string, error) {
	e, err := cond.Parse(v)
	if err != nil {
		return "", err
	}
	return e.String(), nil
}

// parseCron reads a cron expression, held with single spaces.
func parseCron(v string) (string, error) {
	if _, err := calendar.ParseCron(v, time.UTC); err != nil {
		return "", err
	}
	return strings.Join(strings.Fields(v), " "), nil
}

// parseDateTime reads the date and time of attribute key.
func parseDateTime(key string) func(v string) (string, error) {
	return func(v string) (string, error) {
		d, err := calendar.ParseDateTime(v)
		if err != nil {
			return "", fmt.Errorf("%s: %w", key, err)
		}
		return d.String(), nil
	}
}

// parseEvery reads an interval, held in its canonical spelling.
func parseEvery(v string) (string, error) {
	e, err := parseInterval(v)
	if err != nil {
		return "", err
	}
	return e.String(), nil
}

// parseTimezone reads an IANA time zone name.
func parseTimezone(v string) (string, error) {
	if _, err := time.LoadLocation(v); err != nil || v == "Local" {
		return "", fmt.Errorf("timezone: unknown time zone %q (want an IANA name such as Europe/Paris)", v)
	}
	return v, nil
}

// calendarName reads the name of a calendar that attribute key names.
func calendarName(key string) func(v string) (string, error) {
	return func(v string) (string, error) {
		if msg := checkName(v); msg != "" {
			return "", fmt.Errorf("%s: %q is not a calendar name: %s", key, v, strings.Replace(msg, "task name", "a calendar name", 1))
		}
		return v, nil
	}
}

// formatWindow writes the run window, "" for none.
func formatWindow(t *job.Task) string {
	if t.Window == nil {
		return ""
	}
	return t.Window.Start.String() + "-" + t.Window.End.String()
}

// setStartDelay reads the delay of a start after its trigger.
func setStartDelay(t *job.Task, v string) error {
	d, err := ParseDuration("start_delay", v)
	if err == nil && d < 0 {
		err = fmt.Errorf("start_delay: %q is negative; a delay is 0 or more", v)
	}
	t.Edit().StartDelay = job.Duration(d)
	return err
}

// setOverlap reads what a start does while a run is in flight.
func setOverlap(t *job.Task, v string) error {
	switch job.Overlap(v) {
	case job.OverlapSkip, job.OverlapAllow, job.OverlapQueue:
		t.Edit().Overlap = job.Overlap(v)
		return nil
	}
	return fmt.Errorf("overlap: %q should be one of skip, allow, queue", v)
}

// setDeps reads a configuration's data dependencies.
func setDeps(t *job.Task, v string) error {
	var err error
	if t.Edit().Deps, err = eventdep.ParseDeps(v); err != nil {
		return fmt.Errorf("dependencies: %w", err)
	}
	return nil
}

// formatDeps writes the data dependencies, "" for none.
func formatDeps(t *job.Task) string {
	if deps := t.Extras().Deps; len(deps) > 0 {
		return DepsJSON(deps)
	}
	return ""
}

// formatAlertOn writes the outcomes that alert.
func formatAlertOn(t *job.Task) string {
	on := make([]string, len(t.Extras().AlertOn))
	for i, o := range t.Extras().AlertOn {
		on[i] = string(o)
	}
	return strings.Join(on, ",")
}

// setKeepHistory reads how long the task's history is kept.
func setKeepHistory(t *job.Task, v string) error {
	d, err := job.ParseRetention(v)
	if err != nil {
		err = fmt.Errorf("keep_history: %w", err)
	} else if d > 0 && time.Duration(d) < job.HistoryFloor {
		err = fmt.Errorf("keep_history: %s is below the floor of 1d: the last day's runs stay for whoever looks into them; give at least 1d, or forever", v)
	}
	t.Edit().KeepHistory = d
	return err
}

// only reports whether the attribute is given for the kinds k only.
func (a *attr) only(k kinds) bool { return a.on == k }

// repeats reports whether the attribute may be given more than once in
// an action of kind k, its lines adding up: a calendar's in a calendar
// action, a task's in another.
func (a *attr) repeats(k Kind) bool {
	return a.repeat && a.only(onCalendar) == k.IsCalendar()
}
