// Package api is gnomon's HTTP interface: the JSON API under /api/v1 that
// the command line uses, and /healthz. See docs/api.md.
package api

import (
	"time"

	"github.com/gnomon-sched/gnomon/calendar"
	"github.com/gnomon-sched/gnomon/engine"
	"github.com/gnomon-sched/gnomon/job"
)

// DefineRequest applies (or with Check only validates) a definition file.
type DefineRequest struct {
	File  string `json:"file"`
	Text  string `json:"text"`
	Check bool   `json:"check,omitempty"`
	// Mode is how the file is applied: empty, as written (an insert of an
	// existing task is an error); ModeApply, declaratively (an insert of an
	// existing task replaces it); ModeSync, declaratively, and the tasks,
	// groups and configurations the file does not define are deleted (see
	// docs/definitions.md for what a file owns).
	Mode string `json:"mode,omitempty"`
	// Syntax declares the syntax Text is written in: "language",
	// "configurations" or "trees"; absent, the text tells it by its shape
	// (JSON with a top-level "trees" member is a tree file, other JSON
	// configurations, anything else the task language).
	Syntax string `json:"syntax,omitempty"`
	// Files are the iCalendar (.ics) files the text's ics_file lines
	// name, by the path as the line writes it: the server reads their
	// dates into the calendars before it applies the text (see
	// defs.ResolveICS). gnomon def sends them.
	Files map[string]string `json:"files,omitempty"`
}

// Modes of a DefineRequest.
const (
	ModeApply = "apply"
	ModeSync  = "sync"
)

// DefineResponse answers a DefineRequest that was accepted.
type DefineResponse struct {
	Message string `json:"message"`
	// Changes is what the file changes (with Check: would change), in the
	// apply and sync modes.
	Changes *Changes `json:"changes,omitempty"`
}

// Changes is what applying a definition file changes.
type Changes struct {
	Added   []DefinitionRef `json:"added"`
	Changed []ChangedDef    `json:"changed"`
	Deleted []DefinitionRef `json:"deleted"`
	// SyncOwns names, in the sync mode, the kinds of definitions the file
	// owns: "tasks" (callables, bundles and groups), "configurations" and
	// "calendars" (named calendars, listed with the type TypeCalendar);
	// for a tree file, "trees" (those of the file). Those of a kind it
	// does not own are left alone.
	//
	// A tree file lists its trees under Added, Changed and Deleted with
	// the type TypeTree; a changed tree's fields are its dependentOn, its
	// settings in effect and its levels ("level PROCESS", as the file
	// writes the level).
	SyncOwns []string `json:"sync_owns,omitempty"`
}

// DefinitionRef names a definition and its type (callable, bundle,
// configuration or group).
type DefinitionRef struct {
	Name string   `json:"name"`
	Type job.Type `json:"type"`
}

// ChangedDef is a definition the file changes, with the attributes that
// change, in the language's order.
type ChangedDef struct {
	Name   string        `json:"name"`
	Type   job.Type      `json:"type"`
	Fields []FieldChange `json:"fields"`
}

// FieldChange is one attribute that changes: its value before and after,
// as the definition language writes it (empty: not set).
type FieldChange struct {
	Field string `json:"field"`
	Old   string `json:"old"`
	New   string `json:"new"`
}

// EventRequest sends an action to a task.
type EventRequest struct {
	Event string `json:"event"`
	// Params are parameter values for a start's run, by name: each one
	// the task declares (its params); the others take their defaults.
	Params map[string]string `json:"params,omitempty"`
}

// ErrorResponse is the body of every error answer.
type ErrorResponse struct {
	Error string `json:"error"`
	// Errors lists every problem of a rejected definition file, one per
	// line, each naming the file and line.
	Errors []string `json:"errors,omitempty"`
}

// StateView is a task's state (job.State) with its times in the server's
// zone.
type StateView struct {
	Status        job.Status    `json:"status"`
	Start         time.Time     `json:"start,omitzero"`
	End           time.Time     `json:"end,omitzero"`
	ReadySeq      int64         `json:"ready_seq,omitempty"`
	RunID         int64         `json:"run_id,omitempty"`
	BundleRun     int64         `json:"bundle_run,omitempty"`
	BundleOutcome job.Status    `json:"bundle_outcome,omitempty"`
	Trigger       string        `json:"trigger,omitempty"`
	By            string        `json:"by,omitempty"`
	DueAt         time.Time     `json:"due_at,omitzero"`
	Scheduled     time.Time     `json:"scheduled,omitzero"`
	NextFire      time.Time     `json:"next_fire,omitzero"`
	LastExec      time.Time     `json:"last_exec,omitzero"`
	Pending       []job.Pending `json:"pending,omitempty"`
	// Attempt and RetryOf: see job.State.
	Attempt int         `json:"attempt,omitempty"`
	RetryOf int64       `json:"retry_of,omitempty"`
	Alarms  []job.Alarm `json:"alarms,omitempty"`
	// Params and WaitsFor: see job.State.
	Params   []job.Var `json:"params,omitempty"`
	WaitsFor string    `json:"waits_for,omitempty"`
	// SetBy is the operator's event that set a settled status: see
	// job.State.
	SetBy *SetByView `json:"set_by,omitempty"`
}

// SetByView is the operator's event that set a task's status, its time
// in the server's zone.
type SetByView struct {
	Action job.Action `json:"action"`
	By     string     `json:"by,omitempty"`
	At     time.Time  `json:"at"`
}

// Retrying reports whether the task waits to retry a failed run.
func (v *StateView) Retrying() bool { return v.Status == job.Running && v.RunID == 0 && v.Attempt > 0 }

// TaskView is a task's definition and state; a bundle lists its children.
type TaskView struct {
	Task     job.Task   `json:"task"`
	State    StateView  `json:"state"`
	Children []TaskView `json:"children,omitempty"`
	// Stored summarises, for a configuration, the events each dependency
	// holds.
	Stored []StoredEvents `json:"stored,omitempty"`
}

// StoredEvents is what a configuration's dependency holds of the events
// it accepted: how many, the oldest and the newest.
type StoredEvents struct {
	Type     job.DataType `json:"type"`
	Resource string       `json:"resourceId"`
	Count    int          `json:"count"`
	Oldest   time.Time    `json:"oldest,omitzero"`
	Newest   time.Time    `json:"newest,omitzero"`
}

func storedOf(in []engine.Stored) []StoredEvents {
	if in == nil {
		return nil
	}
	out := make([]StoredEvents, len(in))
	for i, s := range in {
		out[i] = StoredEvents(s)
	}
	return out
}

// Reason is one line of why a task is, or is not, running: what kind of
// reason, the task it is about (another, for a condition), its status, the
// line, and how deep it sits under the one it explains.
type Reason struct {
	Kind   string     `json:"kind"`
	Task   string     `json:"task"`
	Status job.Status `json:"status"`
	Text   string     `json:"text"`
	Depth  int        `json:"depth"`
}

func reasonsOf(in []engine.Reason) []Reason {
	out := make([]Reason, len(in))
	for i, r := range in {
		out[i] = Reason{Kind: string(r.Kind), Task: r.Task, Status: r.Status, Text: r.Text, Depth: r.Depth}
	}
	return out
}

// BackfillOccurrence is one occurrence of a backfill's range: its instant,
// what the backfill does with it (queued, ran, skipped, ...), what the
// fire ledger recorded of it before, why, and its run.
type BackfillOccurrence struct {
	Scheduled time.Time `json:"scheduled"`
	Action    string    `json:"action"`
	Fate      job.Fate  `json:"fate,omitempty"`
	Reason    string    `json:"reason,omitempty"`
	RunID     int64     `json:"run_id,omitempty"`
}

// Validated is a configuration's dependency a data event validated.
type Validated struct {
	Configuration string       `json:"configuration"`
	Type          job.DataType `json:"type"`
	Resource      string       `json:"resourceId"`
}

// StatusRow is one row of a status table.
type StatusRow struct {
	Name   string     `json:"name"`
	Level  int        `json:"level"` // 0 for the task, 1 for a bundle's children
	Start  time.Time  `json:"start,omitzero"`
	End    time.Time  `json:"end,omitzero"`
	Status job.Status `json:"status"`
	// RunningStatus and Data are what a running function run reported
	// (empty otherwise).
	RunningStatus string            `json:"running_status,omitempty"`
	Data          map[string]string `json:"data,omitempty"`
	// Attempt is the retry the task runs or waits for (0 if none), of
	// Retries; RetryAt is when a retry it waits for is due.
	Attempt int       `json:"attempt,omitempty"`
	Retries int       `json:"retries,omitempty"`
	RetryAt time.Time `json:"retry_at,omitzero"`
	// Alarms are those raised since the task was last triggered.
	Alarms []job.Alarm `json:"alarms,omitempty"`
	// WaitsFor names the resource a ready task waits for (its why says
	// who holds it).
	WaitsFor string `json:"waits_for,omitempty"`
}

// AlertView is an alert and every attempt at sending it.
type AlertView struct {
	job.Alert
	AttemptLog []job.Attempt `json:"attempt_log"`
}

// AlertsResponse lists alerts, newest first.
type AlertsResponse struct {
	Alerts []AlertView `json:"alerts"`
	// Next, when set, is the cursor of the next page: more alerts remain
	// (see docs/api.md, Paging).
	Next string `json:"next,omitempty"`
}

// AuditView is an audit record and its line in audit.log.
type AuditView struct {
	job.AuditRecord
	Line string `json:"line"`
}

// AuditResponse lists audit records, oldest first.
type AuditResponse struct {
	Records []AuditView `json:"records"`
	// Next, when set, is the cursor of the next page: more records remain
	// (see docs/api.md, Paging).
	Next string `json:"next,omitempty"`
}

// StatusResponse is the latest status of a task (and a bundle's children).
type StatusResponse struct {
	Rows []StatusRow `json:"rows"`
}

// RunView is one past run; a bundle run lists the runs of its children.
type RunView struct {
	job.Run
	Children []job.Run `json:"children,omitempty"`
}

// RunsResponse lists past runs, newest first.
type RunsResponse struct {
	Runs []RunView `json:"runs"`
	// Next, when set, is the cursor of the next page: more runs remain
	// (see docs/api.md, Paging).
	Next string `json:"next,omitempty"`
}

// TasksResponse lists task names, sorted.
type TasksResponse struct {
	Tasks []string `json:"tasks"`
	// Next, when set, is the cursor of the next page: more names remain
	// (only when a count was asked; see docs/api.md, Paging).
	Next string `json:"next,omitempty"`
}

// Info describes the server.
type Info struct {
	Timezone string      `json:"timezone"`
	Version  string      `json:"version"`
	Runtime  RuntimeInfo `json:"runtime"`
}

// RuntimeInfo is what the server process's Go runtime reports: enough to
// tell, under load, whether a slow interval held a garbage collection.
type RuntimeInfo struct {
	Goroutines uint64 `json:"goroutines"`
	HeapBytes  uint64 `json:"heap_bytes"` // live and not yet collected objects
	GCCycles   uint64 `json:"gc_cycles"`  // completed collections since the start
}

// FiresResponse lists the recorded fates of a task's occurrences, newest
// first.
type FiresResponse struct {
	Fires []job.Fire `json:"fires"`
	// Next, when set, is the cursor of the next page: more fires remain
	// (see docs/api.md, Paging).
	Next string `json:"next,omitempty"`
}

// ForecastResponse lists planned fires, sorted by instant then task.
type ForecastResponse struct {
	From  time.Time          `json:"from"`
	To    time.Time          `json:"to"`
	Fires []calendar.Planned `json:"fires"`
	// Truncated is set when the limit left fires out; Next is then the
	// cursor of the next page (see docs/api.md, Paging).
	Truncated bool   `json:"truncated,omitempty"`
	Next      string `json:"next,omitempty"`
}

// ClockRequest moves a simulating server's clock, ticks its continuous
// timeperiod levels, or both (the move first). One of them is required.
type ClockRequest struct {
	// To is an RFC 3339 instant or a local date and time in the server's
	// zone.
	To string `json:"to,omitempty"`
	// Tick runs a tick of every continuous timeperiod level now, as if
	// its schedule had come.
	Tick bool `json:"tick,omitempty"`
}

// ClockResponse tells the server's time.
type ClockResponse struct {
	Now       time.Time `json:"now"`
	Simulated bool      `json:"simulated"`
}
