package periods

import "fmt"

// State is the state of a node. Embryo, InProgress and FinalRun are
// active; Processed, Noop and Skipped are finished. The zero value is
// Embryo, the state of a new node.
type State uint8

// States of a node.
const (
	// Embryo is a node waiting to start (a display may say "queued").
	Embryo State = iota
	// InProgress is a started node: a run is outstanding, or it awaits
	// its final run.
	InProgress
	// FinalRun is a node whose last run is outstanding.
	FinalRun
	// Processed is a node done.
	Processed
	// Noop is a node done with nothing to do.
	Noop
	// Skipped is a node given up: by an operator, by failures or by a
	// cascade.
	Skipped
	numStates
)

var stateNames = [...]string{"embryo", "in_progress", "final_run", "processed", "noop", "skipped"}

// String returns the state's name.
func (s State) String() string {
	if s < numStates {
		return stateNames[s]
	}
	return fmt.Sprintf("state(%d)", int(s))
}

// ParseState reads a state's name.
func ParseState(name string) (State, error) {
	for i, n := range stateNames {
		if n == name {
			return State(i), nil
		}
	}
	return 0, fmt.Errorf("unknown state %q", name)
}

// MarshalText implements encoding.TextMarshaler.
func (s State) MarshalText() ([]byte, error) {
	if s >= numStates {
		return nil, fmt.Errorf("marshal %s", s)
	}
	return []byte(s.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (s *State) UnmarshalText(b []byte) error {
	v, err := ParseState(string(b))
	*s = v
	return err
}

// Active reports whether the state is embryo, in_progress or final_run.
func (s State) Active() bool { return s <= FinalRun }

// Finished reports whether the state is processed, noop or skipped.
func (s State) Finished() bool { return s >= Processed && s < numStates }

// StateMachine is how a level runs its periods. The zero value is
// Discrete.
type StateMachine uint8

// State machines.
const (
	// Discrete runs a period once it is due (ended, plus the lag), and
	// once more if it was not finalizable then.
	Discrete StateMachine = iota
	// Continuous runs a period while it is open, once per tick of the
	// level, and a final run once it is finalizable.
	Continuous
)

var machineNames = [...]string{"discrete", "continuous"}

// String returns the name definition files use.
func (m StateMachine) String() string {
	if int(m) < len(machineNames) {
		return machineNames[m]
	}
	return fmt.Sprintf("stateMachine(%d)", int(m))
}

// ParseStateMachine reads a state machine's name.
func ParseStateMachine(s string) (StateMachine, error) {
	for i, n := range machineNames {
		if n == s {
			return StateMachine(i), nil
		}
	}
	return 0, fmt.Errorf("unknown stateMachine %q (want discrete or continuous)", s)
}

// MarshalText implements encoding.TextMarshaler.
func (m StateMachine) MarshalText() ([]byte, error) {
	if int(m) >= len(machineNames) {
		return nil, fmt.Errorf("marshal %s", m)
	}
	return []byte(m.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (m *StateMachine) UnmarshalText(b []byte) error {
	v, err := ParseStateMachine(string(b))
	*m = v
	return err
}

// Blocking is the precondition a level's nodes need to start (§4 of the
// semantics). The zero value is Normal.
type Blocking uint8

// Blocking kinds.
const (
	// Normal starts without precondition; finalization still waits for
	// the children and the counterparts.
	Normal Blocking = iota
	// Children starts only when every child and every counterpart is
	// finished.
	Children
	// Dependencies starts only when every counterpart is processed or
	// noop, and skips the node when one is skipped.
	Dependencies
)

var blockingNames = [...]string{"normal", "children", "dependencies"}

// String returns the name definition files use.
func (b Blocking) String() string {
	if int(b) < len(blockingNames) {
		return blockingNames[b]
	}
	return fmt.Sprintf("blocking(%d)", int(b))
}

// ParseBlocking reads a blocking kind's name.
func ParseBlocking(s string) (Blocking, error) {
	for i, n := range blockingNames {
		if n == s {
			return Blocking(i), nil
		}
	}
	return 0, fmt.Errorf("unknown blocking %q (want normal, children or dependencies)", s)
}

// MarshalText implements encoding.TextMarshaler.
func (b Blocking) MarshalText() ([]byte, error) {
	if int(b) >= len(blockingNames) {
		return nil, fmt.Errorf("marshal %s", b)
	}
	return []byte(b.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (b *Blocking) UnmarshalText(text []byte) error {
	v, err := ParseBlocking(string(text))
	*b = v
	return err
}

// Outcome is how a run ended, as its worker reports it.
type Outcome string

// Outcomes of a run.
const (
	// OutcomeProcessed is a run that did its work.
	OutcomeProcessed Outcome = "processed"
	// OutcomeNoop is a run that found nothing to do.
	OutcomeNoop Outcome = "noop"
	// OutcomeFailed is a run that failed; the node retries.
	OutcomeFailed Outcome = "failed"
	// OutcomeCanceled is a run that was canceled; the node is skipped.
	OutcomeCanceled Outcome = "canceled"
)

func (o Outcome) valid() bool {
	switch o {
	case OutcomeProcessed, OutcomeNoop, OutcomeFailed, OutcomeCanceled:
		return true
	}
	return false
}

// RunStatus is where a run is: requested, running, or one of the outcomes.
type RunStatus string

// Run statuses besides the outcomes.
const (
	// RunRequested is a run asked for that no worker has said it started.
	RunRequested RunStatus = "requested"
	// RunRunning is a run a worker said it started.
	RunRunning RunStatus = "running"
)

// Outstanding reports whether the run has not ended.
func (s RunStatus) Outstanding() bool { return s == RunRequested || s == RunRunning }
