package engine

import (
	"time"

	"github.com/gnomon-sched/gnomon/job"
)

// Event is an input to the engine. Every event is journaled before its
// effects are performed, so replaying the journal rebuilds the state.
type Event interface{ kind() string }

// Define applies a plan of definition changes, checked against the
// definitions as they are when it is applied (defs.PlanFile makes one from
// a file). The engine applies it as it stands.
type Define struct {
	// File names where the definitions came from, for the record.
	File string `json:"file"`
	job.Plan
	// By names the identity that sent it (empty: the server itself).
	By string `json:"by,omitempty"`
}

// Act sends an operator action to a task.
type Act struct {
	Task   string     `json:"task"`
	Action job.Action `json:"action"`
	By     string     `json:"by,omitempty"` // the identity that sent it
	// Params are parameter values for a start's run: each must be one the
	// task declares (see job.Environment.Params).
	Params []job.Var `json:"params,omitempty"`
}

// RunExited reports that a run's process ended (or never started, or was
// lost).
type RunExited struct {
	RunID    int64      `json:"run_id"`
	ExitCode int        `json:"exit_code"`
	Result   job.Result `json:"result"`
	Message  string     `json:"message,omitempty"`
	// Data is the message data a function run reported.
	Data map[string]string `json:"data,omitempty"`
	// At is when the run ended, as its supervisor recorded it; zero means
	// the instant the event is applied.
	At time.Time `json:"at,omitzero"`
	// Log is where the run's output is in its task's log files, if known.
	Log *job.LogSpan `json:"log,omitempty"`
}

// Data is a data event (seed 000): a resource of a type seen at instant
// At, the event's own timestamp. It validates the dependencies of the
// configurations it matches and triggers those whose dependencies are then
// all met at At.
type Data struct {
	Type     job.DataType `json:"type"`
	Resource string       `json:"resource"`
	At       time.Time    `json:"ts"`
	By       string       `json:"by,omitempty"` // the identity that posted it
}

// Tick moves staged tasks whose start delay has passed to ready. The loop
// sends it when the instant NextWake returned has come.
type Tick struct{}

// Fired hands the engine occurrences of time triggers that a clock node
// found due and recorded (Config.ExternalClock). An occurrence the engine
// handled already, or that its task's trigger no longer yields, is
// ignored, so a fire handed twice counts once.
type Fired struct {
	Fires []ClockFire `json:"fires"`
}

// ClockFire is one occurrence a clock node found due.
type ClockFire struct {
	Task      string    `json:"task"`
	Scheduled time.Time `json:"scheduled"`
	// At is when the clock node recorded it: how late it was found is
	// At minus Scheduled, however late the engine is handed it.
	At   time.Time `json:"at"`
	Node string    `json:"node,omitempty"`
}

// NodeGone records in the journal that a node of a cluster was found
// dead, or had left, and what became of the runs its worker held: those
// never started were queued again, those started were lost (their
// outcomes come as RunExited). It changes nothing in the engine.
type NodeGone struct {
	Node string `json:"node"`
	// State is dead or left.
	State    string    `json:"state"`
	At       time.Time `json:"at"`
	Requeued []int64   `json:"requeued,omitempty"`
	Lost     []int64   `json:"lost,omitempty"`
}

func (NodeGone) kind() string  { return "node_gone" }
func (Fired) kind() string     { return "fired" }
func (Define) kind() string    { return "define" }
func (Act) kind() string       { return "act" }
func (RunExited) kind() string { return "run_exited" }
func (Tick) kind() string      { return "tick" }
func (Data) kind() string      { return "data" }

// Kind returns the journal name of an event.
func Kind(e Event) string { return e.kind() }

// Effect is something the loop must do after the output is committed.
type Effect interface{ effect() }

// StartRun starts a run of a callable task.
type StartRun struct {
	Run  job.Run
	Task job.Task
}

// KillRun stops a run's process group: TERM, then KILL after a grace period.
// Reason is empty for an abort, and says why otherwise.
type KillRun struct {
	RunID  int64
	Reason string
}

// NotStarted records that a condition-triggered task did not start when a
// task its condition names completed.
type NotStarted struct {
	Task   string
	Reason string
}

// Triggered records that a configuration triggered at instant At, for
// the log.
type Triggered struct {
	Task     string
	At       time.Time
	Type     job.DataType
	Resource string
	RunID    int64 // the recorded run of a configuration without command
}

func (Triggered) effect()  {}
func (StartRun) effect()   {}
func (KillRun) effect()    {}
func (NotStarted) effect() {}
