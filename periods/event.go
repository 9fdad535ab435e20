package periods

import (
	"encoding/json"
	"fmt"
	"time"
)

// Event is an input to a Forest. Events are plain data that encode as
// JSON, so that a journal of them, replayed with their instants, rebuilds
// the same state.
type Event interface{ kind() string }

// Define applies a tree file: its trees are added, or replace the trees
// the same file defined before, and trees the file no longer holds are
// removed.
//
// Plan is the file as planned where every definition is (defs.PlanTrees):
// parsed and checked against what lies outside the forest (the names of
// jobs, the functions registered, the owners allowed) and against the
// forest's other files (Others). Apply takes it as it stands and checks
// only what its own state tells: the periods a tree's start would build at
// once (Config.MaxPeriods) and the trees of other files that depend on a
// tree the file drops. The forest keeps the plan: the caller must not
// change it afterwards.
//
// Text is the file's JSON, as the journal entries of earlier builds hold
// it ({"file":…,"text":…}). Apply reads it only when Plan is nil: it
// parses it then, as those builds did, against the forest's other files
// and the lookups of Config.
type Define struct {
	File string `json:"file"`
	Plan *File  `json:"plan,omitempty"`
	Text string `json:"text,omitempty"`
}

// Remove removes one tree and its nodes. A tree that another tree depends
// on cannot be removed.
type Remove struct {
	Tree string `json:"tree"`
}

// Tick tells the forest the clock has moved: nodes are built up to the
// current period, due nodes start, and continuous levels whose tick has
// come run their open period again. The loop sends it when the instant
// NextWake returned has come.
type Tick struct{}

// ContinuousTick runs a tick of continuous levels without waiting for
// their schedule: of one process, or of every continuous level when
// Process is empty (an operator's "trigger now").
type ContinuousTick struct {
	Process string `json:"process,omitempty"`
	By      string `json:"by,omitempty"` // who asked: the runs it starts name them
}

// RunStarted reports that a worker started a run. It changes the run's
// status to running; nothing else depends on it.
type RunStarted struct {
	Process    string `json:"process"`
	Timeperiod Key    `json:"timeperiod"`
	RunID      int64  `json:"run_id"`
}

// RunResult reports how a run ended. A result for a run that is no
// longer its node's current run is ignored (Output.Stale).
type RunResult struct {
	Process    string  `json:"process"`
	Timeperiod Key     `json:"timeperiod"`
	RunID      int64   `json:"run_id"`
	Outcome    Outcome `json:"outcome"`
	// Message is the worker's explanation, kept in the node's event log.
	Message string `json:"message,omitempty"`
}

// Skip is an operator's skip of periods of one process (rules 14 and 15),
// with its cascade to their children and dependants. Timeperiods may be
// given at a finer precision than the level's: they are cast to it. With
// DryRun the output lists what the cascade would change and nothing
// changes.
type Skip struct {
	Process     string   `json:"process"`
	Timeperiods []string `json:"timeperiods"`
	By          string   `json:"by,omitempty"` // who asked, for the event log
	DryRun      bool     `json:"dry_run,omitempty"`
}

// Reprocess is an operator's reprocess of one period of a process (rule
// 16), with its cascade to its parents and dependants (§6). DryRun as for
// Skip.
type Reprocess struct {
	Process    string `json:"process"`
	Timeperiod string `json:"timeperiod"`
	By         string `json:"by,omitempty"`
	DryRun     bool   `json:"dry_run,omitempty"`
}

// Restart re-requests every outstanding run, with its ID, after the
// scheduler started again (§8): workers must be idempotent per process and
// timeperiod.
type Restart struct{}

func (Define) kind() string         { return "define" }
func (Remove) kind() string         { return "remove" }
func (Tick) kind() string           { return "tick" }
func (ContinuousTick) kind() string { return "continuous_tick" }
func (RunStarted) kind() string     { return "run_started" }
func (RunResult) kind() string      { return "run_result" }
func (Skip) kind() string           { return "skip" }
func (Reprocess) kind() string      { return "reprocess" }
func (Restart) kind() string        { return "restart" }

// Kind returns the journal name of an event.
func Kind(e Event) string { return e.kind() }

// DecodeEvent reads an event from its journal name (Kind) and its JSON.
func DecodeEvent(kind string, data []byte) (Event, error) {
	var ev Event
	var err error
	switch kind {
	case "define":
		ev, err = decode[Define](data)
	case "remove":
		ev, err = decode[Remove](data)
	case "tick":
		ev, err = decode[Tick](data)
	case "continuous_tick":
		ev, err = decode[ContinuousTick](data)
	case "run_started":
		ev, err = decode[RunStarted](data)
	case "run_result":
		ev, err = decode[RunResult](data)
	case "skip":
		ev, err = decode[Skip](data)
	case "reprocess":
		ev, err = decode[Reprocess](data)
	case "restart":
		ev, err = decode[Restart](data)
	case "backfill":
		ev, err = decode[Backfill](data)
	default:
		return nil, fmt.Errorf("decode event: unknown kind %q: %w", kind, ErrInvalid)
	}
	if err != nil {
		return nil, fmt.Errorf("decode %s event: %w", kind, err)
	}
	return ev, nil
}

func decode[E Event](data []byte) (Event, error) {
	var ev E
	err := json.Unmarshal(data, &ev)
	return ev, err
}

// Effect is something the caller must do once the output is durable.
type Effect interface{ effect() }

// StartRun asks for a run of one period of a process. With neither
// Command nor Function set, an external worker handles it; whoever runs
// it reports RunStarted and RunResult with the same RunID.
type StartRun struct {
	RunID      int64     `json:"run_id"`
	Process    string    `json:"process"`
	Tree       string    `json:"tree"`
	Qualifier  Qualifier `json:"qualifier"`
	Timeperiod Key       `json:"timeperiod"`
	// Start and End bound the period, [Start, End), in UTC.
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
	// Final is set for the final run of a node (state final_run).
	Final bool `json:"final,omitempty"`
	// Attempt counts the runs since the node last started: 1 plus the
	// failures before this run.
	Attempt  int    `json:"attempt"`
	Command  string `json:"command,omitempty"`
	Owner    string `json:"owner,omitempty"` // whom Command runs as; empty: the default owner
	Function string `json:"function,omitempty"`
	// External is set when the level has neither command nor function:
	// a worker outside the scheduler does the work.
	External bool `json:"external,omitempty"`
}

// CancelRun asks to stop a run that is no longer wanted: its node was
// skipped, reprocessed or removed. A result it still reports is ignored.
type CancelRun struct {
	RunID      int64  `json:"run_id"`
	Process    string `json:"process"`
	Timeperiod Key    `json:"timeperiod"`
}

func (StartRun) effect()  {}
func (CancelRun) effect() {}

// Change is one transition of a node. From equals To for a logged
// decision that kept the state: a retry after a failure (rule 10), a run
// ending while the node awaits (rule 6), a continuous tick (rule 8), an
// operator's skip of a finished node (rule 15), a restart.
type Change struct {
	Process    string `json:"process"`
	Timeperiod Key    `json:"timeperiod"`
	From       State  `json:"from"`
	To         State  `json:"to"`
	// Rule is the row of the state-machine table that applied (1 to 16),
	// or 0 for a restart.
	Rule int `json:"rule"`
	// Cause says why: see the Cause constants.
	Cause Cause `json:"cause"`
	// RunID is the run the change started, ended or canceled, if any.
	RunID int64 `json:"run_id,omitempty"`
}

// Run is a run whose status changed: a store keeps runs by ID, inserting a
// requested one and updating it later.
type Run struct {
	ID         int64     `json:"id"`
	Process    string    `json:"process"`
	Timeperiod Key       `json:"timeperiod"`
	Status     RunStatus `json:"status"`
	Final      bool      `json:"final,omitempty"`
	Attempt    int       `json:"attempt"`
	// At is the instant of this status.
	At time.Time `json:"at"`
	// By names the operator whose Skip or Reprocess requested the run,
	// in the record of its request: a node the operator's cascade, or
	// what it released, made due in the same Apply. A run requested by a
	// Tick, a result or a restart names no one. EndedBy names the
	// operator whose Skip or Reprocess canceled it, in the record of its
	// end.
	By      string `json:"by,omitempty"`
	EndedBy string `json:"ended_by,omitempty"`
}

// NodeLogEntry is an entry written to one node's event log.
type NodeLogEntry struct {
	Process    string   `json:"process"`
	Timeperiod Key      `json:"timeperiod"`
	Entry      LogEntry `json:"entry"`
}

// Dropped says which nodes of a process no longer exist: all of them, or
// with Before set those before that key (the tree's start moved later).
type Dropped struct {
	Process string `json:"process"`
	Before  Key    `json:"before,omitempty"`
}

// Output is what one Apply did. Every slice is in the order things
// happened unless its comment says otherwise.
type Output struct {
	// Changes are the node transitions, including those that kept the
	// state (see Change).
	Changes []Change
	// Effects are to be performed in order once the output is durable.
	Effects []Effect
	// Runs are the runs created or updated.
	Runs []Run
	// Log holds the entries written to the event logs of nodes.
	Log []NodeLogEntry
	// Nodes are the nodes created or updated, as a store keeps them,
	// sorted by process and timeperiod; their logs are in Log.
	Nodes []Node
	// Dropped lists the nodes removed with a tree or a level, sorted by
	// process.
	Dropped []Dropped
	// Trees names the trees defined or redefined, sorted; Removed the
	// trees removed, sorted.
	Trees, Removed []string
	// Stale is set when a RunStarted or RunResult named a run that is not
	// its node's current run (or a node that no longer exists): it
	// changed nothing.
	Stale bool
	// DryRun is set for a Skip, Reprocess or Backfill with DryRun:
	// Changes lists what its cascade would do and nothing else is filled
	// (but Backfill).
	DryRun bool
	// Backfill lists, for a Backfill, the periods of its range that have
	// a node, in order, and what it did with each.
	Backfill []BackfillPeriod
}
