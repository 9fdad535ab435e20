package job

import "time"

// Period is the timeperiod a run of a timeperiod process is for: one node
// of a tree, as its command or function sees it.
type Period struct {
	// Key is the timeperiod's key, YYYYMMDDHH (UTC).
	Key string `json:"key"`
	// Start and End bound the period, [Start, End), in UTC.
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
}

// ExitNoop is the exit status with which the command of a timeperiod
// process says it found nothing to do: its node becomes noop instead of
// processed. Any other status but 0 is a failure.
const ExitNoop = 99
