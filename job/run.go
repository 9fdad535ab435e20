package job

import "time"

// Result says how a run ended, as the audit log names it.
type Result string

// Results of a finished run.
const (
	ResultNormal   Result = "normal"   // the command ran to completion
	ResultKilled   Result = "killed"   // aborted by an operator or a shutdown
	ResultLaunch   Result = "launch"   // it could not be started
	ResultLost     Result = "lost"     // its supervisor died with the server
	ResultInternal Result = "internal" // gnomon failed while running it
	ResultTimeout  Result = "timeout"  // killed when it reached its task's term_run_time
)

// Run is one execution of a task (or one run of a bundle).
type Run struct {
	ID       int64     `json:"id"`
	Task     string    `json:"task"`
	Status   Status    `json:"status"` // running, success, failure or aborted
	Start    time.Time `json:"start"`
	End      time.Time `json:"end,omitzero"`
	ExitCode int       `json:"exit_code"`
	Result   Result    `json:"result,omitempty"`
	Message  string    `json:"message,omitempty"`
	// Data is the message data a function run reported, by field name.
	Data      map[string]string `json:"data,omitempty"`
	BundleRun int64             `json:"bundle_run,omitempty"` // the bundle run that started it, 0 if none
	Trigger   string            `json:"trigger,omitempty"`    // what started it: "start", "bundle", "condition", ...
	Scheduled time.Time         `json:"scheduled,omitzero"`   // the occurrence it ran for, if any
	// Timeperiod is the period a timeperiod process's run is for (Task
	// is the process), and Outcome how it ended: processed, noop, failed
	// or canceled. Both are empty for a task's run.
	Timeperiod string `json:"timeperiod,omitempty"`
	Outcome    string `json:"outcome,omitempty"`
	// By names the identity whose API call started the run (an operator's
	// start, a data event posted with a token, the start of the bundle run
	// it belongs to, an operator's skip or reprocess of timeperiod nodes
	// that made the node due); empty when the clock, a condition, a
	// dependency or the server itself did.
	By string `json:"by,omitempty"`
	// EndedBy names the identity whose API call ended the run before it
	// ended by itself: an operator's abort, which kills it (and ends the
	// bundle run it belongs to), or a skip or reprocess of timeperiod
	// nodes, which cancels a node's run. It is set when the call is
	// applied, while the run may still be running, and empty for a run
	// that ended on its own.
	EndedBy string `json:"ended_by,omitempty"`
	// Attempt counts the retries before this run of one trigger: 0 for
	// the first run, n for the nth retry. RetryOf is the first run's ID
	// for a retry, 0 otherwise.
	Attempt int   `json:"attempt,omitempty"`
	RetryOf int64 `json:"retry_of,omitempty"`
	// Log says where the run's output is in its task's log files, nil
	// when that is not known.
	Log *LogSpan `json:"log,omitempty"`
	// Params are the parameter values the start or backfill that made
	// the run gave (the task's defaults fill the others), in the order
	// given; nil when none were.
	Params []Var `json:"params,omitempty"`
}

// LogSpan is the output of one run in its task's log files, which every
// run of the task appends to: the byte ranges [OutFrom, OutTo) of
// out_log_file and [ErrFrom, ErrTo) of err_log_file, by the files' sizes
// when the run was launched and when it ended. A From of -1 is not known
// (a run taken up again after a restart of the server): the output ends
// at To. Runs of one task that overlap share their ranges, and a log file
// rotated or truncated while a run lasts makes them wrong.
type LogSpan struct {
	OutFrom int64 `json:"out_from"`
	OutTo   int64 `json:"out_to"`
	ErrFrom int64 `json:"err_from"`
	ErrTo   int64 `json:"err_to"`
	// OutFile and ErrFile identify the files the ranges are in (their
	// inode numbers, which a rotation's rename keeps), 0 when not known:
	// a rotated file is found by them.
	OutFile uint64 `json:"out_file,omitempty"`
	ErrFile uint64 `json:"err_file,omitempty"`
	// Node names the cluster's worker that ran the run: the files are
	// on its machine, where it measured the ranges. It is empty for a
	// run of this server's own.
	Node string `json:"node,omitempty"`
}

// Done reports whether the run has ended.
func (r *Run) Done() bool { return r.Status != Running }

// State is the current, mutable state of one task.
type State struct {
	Status Status  `json:"status"`
	Start  Instant `json:"start,omitzero"`
	End    Instant `json:"end,omitzero"`
	// ReadySeq orders ready tasks of equal priority: lower became ready first.
	ReadySeq int64 `json:"ready_seq,omitempty"`
	// RunID is the task's active run, 0 if none.
	RunID int64 `json:"run_id,omitempty"`
	// BundleRun is the bundle run this task takes part in, 0 if none.
	BundleRun int64 `json:"bundle_run,omitempty"`
	// BundleOutcome is the first settled status the task reached in that
	// bundle run (Idle while it has not settled): it alone counts for the
	// bundle.
	BundleOutcome Status `json:"bundle_outcome,omitempty"`
	// Trigger says what made an active task active ("start", "bundle",
	// "condition"); its run records it.
	Trigger string `json:"trigger,omitempty"`
	// By names the identity whose call made the task active, empty if no
	// call did (see Run.By); its run records it. Like Trigger, it is kept
	// while the task waits for its condition, its start delay or a worker.
	By string `json:"by,omitempty"`
	// Params are the parameter values the start that made the task active
	// gave (see Run.Params), kept as By is.
	Params []Var `json:"params,omitempty"`
	// WaitsFor names the resource a ready task waits for (see
	// Extra.Claims), empty when it waits for none.
	WaitsFor string `json:"waits_for,omitempty"`
	// DueAt is when a staged task (start_delay) becomes ready.
	DueAt Instant `json:"due_at,omitzero"`
	// Scheduled is the occurrence of the time trigger that made the task
	// active, zero if something else did; its run records it.
	Scheduled Instant `json:"scheduled,omitzero"`
	// NextFire is the next occurrence of the task's time trigger that has
	// not been handled yet, zero if it has none.
	NextFire Instant `json:"next_fire,omitzero"`
	// Backfill is what remains of the backfills asked for the task, nil
	// when nothing does: the occurrences still to run, in order.
	Backfill *Backfill `json:"backfill,omitempty"`
	// LastExec is the timestamp of the data event that last triggered a
	// configuration, zero if none has.
	LastExec Instant `json:"last_exec,omitzero"`
	// Pending are triggers that came while the task was active and wait,
	// oldest first: under overlap queue for the active run to end, under
	// overlap allow to start a concurrent run.
	Pending []Pending `json:"pending,omitempty"`
	// Attempt is how many times the current trigger's failed run was
	// retried, and RetryOf its first run, while the task retries it; DueAt
	// is then when the next retry is due, with no run in flight.
	Attempt int   `json:"attempt,omitempty"`
	RetryOf int64 `json:"retry_of,omitempty"`
	// Alarms are those raised since the task was last triggered, oldest
	// first.
	Alarms []Alarm `json:"alarms,omitempty"`
	// SetBy is the operator's event that set the task's settled status
	// (a freeze, reset, green, red or abort), until the task is active
	// again; nil when a run or a trigger set it.
	SetBy *StatusEvent `json:"set_by,omitempty"`
}

// StatusEvent is an operator's event that set a task's status: what,
// who sent it (empty: the server itself) and when.
type StatusEvent struct {
	Action Action  `json:"action"`
	By     string  `json:"by,omitempty"`
	At     Instant `json:"at"`
}

// Retrying reports whether the task waits to retry a failed run: it is
// running for its dependents, with no run in flight.
func (s *State) Retrying() bool { return s.Status == Running && s.RunID == 0 && s.Attempt > 0 }

// Pending is a trigger that waits to start a run.
type Pending struct {
	Trigger   string    `json:"trigger"`
	Scheduled time.Time `json:"scheduled,omitzero"`
	// Due is when its start delay has passed (zero: at once).
	Due time.Time `json:"due,omitzero"`
	// By names the identity whose call made the trigger (see Run.By).
	By string `json:"by,omitempty"`
	// Params are the parameter values the trigger gave (see Run.Params).
	Params []Var `json:"params,omitempty"`
}

// Fate is what became of one planned occurrence of a time trigger.
type Fate string

// Fates of an occurrence.
const (
	FateRan     Fate = "ran"     // it started the task (the run may wait for its condition or a worker)
	FateSkipped Fate = "skipped" // the task was busy or frozen; only a backfill makes it up
	FateMissed  Fate = "missed"  // the scheduler was not running; only a backfill makes it up
)

// Fire records the fate of one occurrence, keyed by (Task, Scheduled).
type Fire struct {
	Task      string    `json:"task"`
	Scheduled time.Time `json:"scheduled"`
	Fate      Fate      `json:"fate"`
	Reason    string    `json:"reason,omitempty"`
	// At is when the fate was decided.
	At time.Time `json:"at"`
	// RunID is the run the occurrence started, once known (0 if none).
	RunID int64 `json:"run_id,omitempty"`
}

// Validation is the timestamp of a data event stored because it validated
// one dependency of a configuration, or with Expire set, the clearing of
// what dependency Dep stores (every dependency of Task when Dep is empty).
type Validation struct {
	Task string `json:"task"`
	// Dep is the dependency's Key.
	Dep    string    `json:"dep"`
	TS     time.Time `json:"ts"` // the event's timestamp
	Expire bool      `json:"expire,omitempty"`
}

// Record is one task as stored: its definition and its state.
type Record struct {
	Def   *Task
	State State
}
