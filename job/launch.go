package job

import "time"

// Launch is what a runner needs to start one run of a task: a shell
// command under a supervisor, or a Go function in process.
type Launch struct {
	RunID   int64
	Task    string
	Command string
	// Function names the Go function to call instead of Command.
	Function string
	Profile  string
	// Owner is the OS user ("user" or "user:group") the command runs
	// as; empty: the runner's default.
	Owner  string `json:",omitempty"`
	OutLog string
	ErrLog string
	// Scheduled is the occurrence the run is for, zero if none.
	Scheduled time.Time
	// Attempt is the run's retry number: 0 for a first run, n for its
	// n-th retry (see Run.Attempt).
	Attempt int `json:",omitempty"`
	// Period is the timeperiod of a timeperiod process's run, nil for a
	// task's.
	Period *Period
	// Machine, if set, names the machines that may run it (a cluster's
	// workers serve machine names); Priority orders it among the runs
	// waiting for a worker.
	Machine  string
	Priority Priority
	// Env is the task's environment with the run's parameters resolved
	// (see Environment.Resolve); nil when it has none.
	Env *Environment `json:",omitempty"`
	// LogRotate is the task's own rotation of its log files, over the
	// runner's; nil when it has none.
	LogRotate *LogRotation `json:",omitempty"`
}

// Exit is how a run ended, as its runner reports it.
type Exit struct {
	RunID   int64  `json:"run_id"`
	Code    int    `json:"exit_code"`
	Result  Result `json:"result"`
	Message string `json:"message,omitempty"`
	// End is when the run ended, by the runner's clock.
	End time.Time `json:"end"`
	// Data is the message data of a function run.
	Data map[string]string `json:"data,omitempty"`
	// Log is where the run's output is in its task's log files, when the
	// runner knows.
	Log *LogSpan `json:"log,omitempty"`
}
