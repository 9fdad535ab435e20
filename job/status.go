package job

import "fmt"

// Status is the current state of a task.
type Status uint8

// Statuses. Staged and Queued are transient internal states.
const (
	Idle Status = iota
	Staged
	Queued
	Waiting
	Ready
	Running
	Success
	Failure
	Aborted
	Frozen
)

var statusNames = [...]string{"idle", "staged", "queued", "waiting", "ready", "running", "success", "failure", "aborted", "frozen"}

// String returns the lower-case display name.
func (s Status) String() string {
	if int(s) < len(statusNames) {
		return statusNames[s]
	}
	return fmt.Sprintf("status(%d)", int(s))
}

// ParseStatus reads a display name.
func ParseStatus(name string) (Status, error) {
	for i, n := range statusNames {
		if n == name {
			return Status(i), nil
		}
	}
	return 0, fmt.Errorf("unknown status %q", name)
}

// MarshalText implements encoding.TextMarshaler.
func (s Status) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (s *Status) UnmarshalText(b []byte) error {
	v, err := ParseStatus(string(b))
	*s = v
	return err
}

// Active reports whether the status is staged, queued, waiting, ready or running.
func (s Status) Active() bool { return s >= Staged && s <= Running }

// Settled reports whether the status is idle, success, failure, aborted or frozen.
func (s Status) Settled() bool { return !s.Active() }

// Action is an operator event sent to a task with schd_event.
type Action string

// Operator actions.
const (
	ActStart  Action = "start"
	ActAbort  Action = "abort"
	ActFreeze Action = "freeze"
	ActReset  Action = "reset"
	ActGreen  Action = "green"
	ActRed    Action = "red"
)

// ParseAction reads an action name; names are lower-case and case-sensitive.
func ParseAction(s string) (Action, bool) {
	switch a := Action(s); a {
	case ActStart, ActAbort, ActFreeze, ActReset, ActGreen, ActRed:
		return a, true
	}
	return "", false
}
