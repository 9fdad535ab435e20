package job

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"text/template"
	"time"
)

// Alert is one email alert: a task's outcome, the recipients that asked
// for it through one template, and what became of the sending.
type Alert struct {
	ID      int64     `json:"id"` // assigned by the store
	Task    string    `json:"task"`
	Outcome Outcome   `json:"outcome"`
	RunID   int64     `json:"run_id,omitempty"` // 0 for not_started
	Created time.Time `json:"created"`
	// To are the recipients; Sources the task or groups whose alert
	// settings named them; Template the template file ("" = default),
	// or for a generic webhook the template of its JSON body
	// (notify_template; "" = the default body).
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

// Hook kinds: the webhooks a notify target names, beside email.
const (
	HookWebhook = "webhook" // any HTTP endpoint: a JSON body of the alert, signed
	HookSlack   = "slack"   // a Slack incoming webhook: {"text": ...}
	HookTeams   = "teams"   // a Microsoft Teams incoming webhook: {"text": ...}
	// HookPagerDuty is PagerDuty's Events API v2: an alert triggers an
	// incident, a success resolves it. Its target is
	// pagerduty:@file:PATH, the file holding the routing key.
	HookPagerDuty = "pagerduty"
)

// SecretFile is what a pagerduty target's value starts with: the routing
// key is read from the file that follows, never written in a definition.
const SecretFile = "@file:"

// HookTarget reads an alert recipient that is a webhook, KIND:URL with
// KIND webhook, slack or teams and an http or https URL, or
// pagerduty:@file:/PATH (then url is @file:/PATH); ok is false for
// anything else (an email address).
func HookTarget(to string) (kind, url string, ok bool) {
	kind, url, ok = strings.Cut(to, ":")
	switch {
	case !ok:
		return "", "", false
	case kind == HookPagerDuty:
		if !strings.HasPrefix(url, SecretFile+"/") {
			return "", "", false
		}
		return kind, url, true
	case kind != HookWebhook && kind != HookSlack && kind != HookTeams:
		return "", "", false
	case !strings.HasPrefix(url, "https://") && !strings.HasPrefix(url, "http://"):
		return "", "", false
	}
	return kind, url, true
}

// Redact returns a recipient as logs and error messages may show it: a
// webhook's URL without its path and query, which often hold its secret
// (a Slack URL does); an email address as it is.
func Redact(to string) string {
	kind, url, ok := HookTarget(to)
	if !ok || kind == HookPagerDuty {
		return to // a pagerduty target names the key's file, not the key
	}
	scheme, rest, _ := strings.Cut(url, "://")
	host, _, hasPath := strings.Cut(rest, "/")
	if i := strings.LastIndexByte(host, '@'); i >= 0 {
		host = host[i+1:] // user:password@
	}
	if hasPath {
		return kind + ":" + scheme + "://" + host + "/…"
	}
	return kind + ":" + scheme + "://" + host
}

// RedactAll returns recipients as Redact shows them.
func RedactAll(to []string) []string {
	out := make([]string, len(to))
	for i, t := range to {
		out[i] = Redact(t)
	}
	return out
}

// HookPayload is the JSON body a generic webhook receives by default,
// and what its notify_template sees.
type HookPayload struct {
	AlertID  int64             `json:"alert_id"`
	Task     string            `json:"task"`
	Outcome  Outcome           `json:"outcome"`
	RunID    int64             `json:"run_id,omitempty"`
	Start    time.Time         `json:"start,omitzero"`
	End      time.Time         `json:"end,omitzero"`
	ExitCode int               `json:"exit_code"`
	Message  string            `json:"message,omitempty"`
	Data     map[string]string `json:"data,omitempty"`
	// Sources are the task or groups whose settings named the webhook.
	Sources []string  `json:"sources"`
	Created time.Time `json:"created"`
}

// HookBodyFuncs are the functions a webhook body template may call
// besides text/template's own: json writes a value as JSON (a string
// quoted and escaped).
var HookBodyFuncs = map[string]any{
	"json": func(v any) (string, error) {
		b, err := json.Marshal(v)
		return string(b), err
	},
}

// ParseHookBody parses the template of a generic webhook's JSON body
// (notify_template).
func ParseHookBody(text string) (*template.Template, error) {
	return template.New("notify_template").Funcs(HookBodyFuncs).Option("missingkey=zero").Parse(text)
}

// RenderHookBody renders a webhook body template with data and checks
// that the result is JSON.
func RenderHookBody(t *template.Template, data any) ([]byte, error) {
	var b bytes.Buffer
	if err := t.Execute(&b, data); err != nil {
		return nil, err
	}
	if !json.Valid(b.Bytes()) {
		out := b.String()
		if len(out) > 120 {
			out = out[:120] + "…"
		}
		return nil, fmt.Errorf("the body is not JSON: %q (write a string as {{json .Message}}, which quotes and escapes it)", out)
	}
	return b.Bytes(), nil
}
