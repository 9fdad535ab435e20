package job

import "time"

// Alert is one email alert: a task's outcome, the recipients that asked
// for it through one template, and what became of the sending.
type Alert struct {
	ID      int64     `json:"id"` // assigned by the store
	Task    string    `json:"task"`
	Outcome Outcome   `json:"outcome"`
	RunID   int64     `json:"run_id,omitempty"` // 0 for not_started
	Created time.Time `json:"created"`
	// To are the recipients; Sources the task or groups whose alert
	// settings named them; Template the template file ("" = default).
	To       []string `json:"to"`
	Sources  []string `json:"sources"`
	Template string   `json:"template,omitempty"`
	// What the template shows of the run (zero for not_started).
	Start    time.Time         `json:"start,omitzero"`
	End      time.Time         `json:"end,omitzero"`
	ExitCode int               `json:"exit_code"`
	Message  string            `json:"message,omitempty"` // the run's status message, or why it did not start
	Data     map[string]string `json:"data,omitempty"`

	// Delivery, kept by the sender.
	State    AlertState `json:"state"`
	Attempts int        `json:"attempts"`
	// FirstAttempt is when sending was first tried.
	FirstAttempt time.Time `json:"first_attempt,omitzero"`
	LastError    string    `json:"last_error,omitempty"`
	NextAt       time.Time `json:"next_at,omitzero"`
	SentAt       time.Time `json:"sent_at,omitzero"`
}

// AlertState is where an alert is in its delivery.
type AlertState string

// Alert states.
const (
	AlertPending AlertState = "pending" // not sent yet; retried at NextAt
	AlertSent    AlertState = "sent"
	AlertFailed  AlertState = "failed" // given up: a permanent error, or retried too long
)

// Attempt is one try at sending an alert.
type Attempt struct {
	Alert int64     `json:"alert"`
	At    time.Time `json:"at"`
	Error string    `json:"error,omitempty"` // empty when the server accepted the message
}
