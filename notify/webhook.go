package notify

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"text/template"
	"time"

	"github.com/gnomon-sched/gnomon/job"
)

// SignatureHeader carries the HMAC-SHA256 of a generic webhook's body,
// keyed with the server's webhook secret, as "sha256=" and the hex digest.
const SignatureHeader = "X-Gnomon-Signature"

// DeliveryHeader carries the alert's ID: the same for every attempt at one
// alert, so that a receiver can drop what it took already (delivery is at
// least once).
const DeliveryHeader = "X-Gnomon-Delivery"

// HookConfig is how webhook alerts are sent.
type HookConfig struct {
	// Secret keys the signature of generic webhooks (SignatureHeader);
	// empty sends them unsigned.
	Secret []byte
	// Client sends the requests; nil means one with Timeout.
	Client *http.Client
	// Timeout bounds one request; zero means 30s.
	Timeout time.Duration
	// Location is the zone of the times a Slack or Teams text shows; nil
	// means UTC.
	Location *time.Location
	// PagerDutyURL is where PagerDuty events are posted; empty means
	// PagerDutyEvents.
	PagerDutyURL string
}

// PagerDutyEvents is the endpoint of PagerDuty's Events API v2.
const PagerDutyEvents = "https://events.pagerduty.com/v2/enqueue"

// Hooks sends alerts to webhooks (job.HookTarget). It is safe for
// concurrent use.
type Hooks struct {
	cfg  HookConfig
	text *template.Template
}

// NewHooks returns a sender of webhook alerts.
func NewHooks(cfg HookConfig) *Hooks {
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Second
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{Timeout: cfg.Timeout}
	}
	if cfg.Location == nil {
		cfg.Location = time.UTC
	}
	if cfg.PagerDutyURL == "" {
		cfg.PagerDutyURL = PagerDutyEvents
	}
	return &Hooks{cfg: cfg, text: template.Must(template.New("hook").Option("missingkey=zero").Parse(DefaultTemplate))}
}

// Payload is the JSON body a generic webhook receives, and what its
// notify_template sees.
type Payload = job.HookPayload

// Send posts one alert to the webhook it is for (its one recipient). An
// answer 2xx is a delivery; 408, 429 and 5xx, or no answer, an error to
// retry; any other answer a permanent refusal. Errors name the webhook by
// its host only (job.Redact): its URL is often its secret.
func (h *Hooks) Send(ctx context.Context, a *job.Alert) error {
	if len(a.To) != 1 {
		return permanent{fmt.Errorf("a webhook alert has one recipient, not %d", len(a.To))}
	}
	kind, url, ok := job.HookTarget(a.To[0])
	if !ok {
		return permanent{fmt.Errorf("%s is not a webhook", job.Redact(a.To[0]))}
	}
	var (
		body []byte
		err  error
	)
	if kind == job.HookPagerDuty {
		var key string
		if key, err = readKey(strings.TrimPrefix(url, job.SecretFile)); err != nil {
			// The file may be fixed before the retries give up.
			return fmt.Errorf("%s: routing key: %v", a.To[0], err)
		}
		url = h.cfg.PagerDutyURL
		body, err = h.pagerDuty(key, a)
	} else {
		body, err = h.body(kind, a)
	}
	if err != nil {
		return permanent{fmt.Errorf("%s: %w", job.Redact(a.To[0]), err)}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return permanent{fmt.Errorf("%s: %v", job.Redact(a.To[0]), redactErr(err, url))}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "gnomon")
	req.Header.Set(DeliveryHeader, strconv.FormatInt(a.ID, 10))
	if kind == job.HookWebhook && len(h.cfg.Secret) > 0 {
		mac := hmac.New(sha256.New, h.cfg.Secret)
		mac.Write(body)
		req.Header.Set(SignatureHeader, "sha256="+hex.EncodeToString(mac.Sum(nil)))
	}
	resp, err := h.cfg.Client.Do(req)
	if err != nil {
		return fmt.Errorf("%s: %v", job.Redact(a.To[0]), redactErr(err, url))
	}
	defer resp.Body.Close()
	snippet, _ := io.ReadAll(io.LimitReader(resp.Body, 200))
	if resp.StatusCode/100 == 2 {
		return nil
	}
	err = fmt.Errorf("%s answered %s", job.Redact(a.To[0]), resp.Status)
	if s := strings.TrimSpace(string(snippet)); s != "" && !strings.Contains(s, url) {
		err = fmt.Errorf("%w: %q", err, s)
	}
	switch c := resp.StatusCode; {
	case c == http.StatusRequestTimeout, c == http.StatusTooManyRequests, c >= 500:
		return err
	}
	return permanent{err}
}

// body renders the alert for a webhook of a kind.
func (h *Hooks) body(kind string, a *job.Alert) ([]byte, error) {
	if kind == job.HookWebhook {
		p := Payload{AlertID: a.ID, Task: a.Task, Outcome: a.Outcome, RunID: a.RunID, Start: a.Start, End: a.End,
			ExitCode: a.ExitCode, Message: a.Message, Data: a.Data, Sources: a.Sources, Created: a.Created}
		if a.Template == "" {
			return json.Marshal(p)
		}
		// The task's notify_template, checked when it was defined.
		t, err := job.ParseHookBody(a.Template)
		if err != nil {
			return nil, fmt.Errorf("notify_template: %w", err)
		}
		if p.Data == nil {
			p.Data = map[string]string{}
		}
		b, err := job.RenderHookBody(t, p)
		if err != nil {
			return nil, fmt.Errorf("notify_template: %w", err)
		}
		return b, nil
	}
	// Slack and Teams take a text: the mail's default body.
	var b strings.Builder
	fields := map[string]any{"JobName": a.Task, "JobStatus": string(a.Outcome), "RunID": a.RunID,
		"Start": a.Start.In(h.cfg.Location), "End": a.End.In(h.cfg.Location), "ExitCode": a.ExitCode, "Message": a.Message}
	if len(a.Data) > 0 {
		fields["Data"] = a.Data
	}
	if err := h.text.Execute(&b, fields); err != nil {
		return nil, err
	}
	return json.Marshal(map[string]string{"text": strings.TrimSpace(b.String())})
}

// permanent is an error not worth retrying.
type permanent struct{ error }

// Permanent reports true: see scheduler.IsPermanent.
func (permanent) Permanent() bool { return true }

func (p permanent) Unwrap() error { return p.error }

// redactErr returns err without the URL in it (net/http writes it in its
// errors).
func redactErr(err error, url string) error {
	var ue interface{ Unwrap() error }
	msg := err.Error()
	if errors.As(err, &ue) && ue.Unwrap() != nil {
		msg = ue.Unwrap().Error()
	}
	return errors.New(strings.ReplaceAll(msg, url, "…"))
}

// PagerDutyEvent is the body of an event of PagerDuty's Events API v2.
type PagerDutyEvent struct {
	RoutingKey  string `json:"routing_key"`
	EventAction string `json:"event_action"` // trigger or resolve
	// DedupKey is the task's: a success resolves the incident its
	// failures opened, and every trigger while it is open adds to it.
	DedupKey string            `json:"dedup_key"`
	Payload  *PagerDutyPayload `json:"payload,omitempty"`
	Client   string            `json:"client,omitempty"`
}

// PagerDutyPayload describes what triggered an incident.
type PagerDutyPayload struct {
	Summary       string         `json:"summary"`
	Source        string         `json:"source"`
	Severity      string         `json:"severity"` // critical, error, warning or info
	Timestamp     time.Time      `json:"timestamp,omitzero"`
	Component     string         `json:"component,omitempty"`
	CustomDetails map[string]any `json:"custom_details,omitempty"`
}

// PagerDutyDedupKey is the dedup_key of a task's events.
func PagerDutyDedupKey(task string) string { return "gnomon/" + task }

// pagerDuty renders the alert as an event: a success resolves, any other
// outcome triggers (a failure or a not_started as an error, a retry or an
// alarm as a warning).
func (h *Hooks) pagerDuty(key string, a *job.Alert) ([]byte, error) {
	ev := PagerDutyEvent{RoutingKey: key, EventAction: "trigger", DedupKey: PagerDutyDedupKey(a.Task), Client: "gnomon"}
	if a.Outcome == job.OutcomeSuccess {
		ev.EventAction = "resolve"
		return json.Marshal(ev)
	}
	severity := "error"
	if a.Outcome == job.OutcomeRetry || a.Outcome == job.OutcomeAlarm {
		severity = "warning"
	}
	summary := fmt.Sprintf("gnomon: %s %s", a.Task, a.Outcome)
	if a.Message != "" {
		summary += ": " + a.Message
	}
	if len(summary) > 1024 {
		summary = summary[:1024]
	}
	details := map[string]any{"alert_id": a.ID, "outcome": a.Outcome, "exit_code": a.ExitCode, "sources": a.Sources}
	if a.RunID != 0 {
		details["run_id"] = a.RunID
	}
	if len(a.Data) > 0 {
		details["data"] = a.Data
	}
	ev.Payload = &PagerDutyPayload{Summary: summary, Source: "gnomon", Severity: severity, Timestamp: a.Created.UTC(), Component: a.Task, CustomDetails: details}
	return json.Marshal(ev)
}

// maxKey bounds a routing key file.
const maxKey = 4096

// readKey reads a routing key from a file only the server's user may
// read. Its errors never hold the file's content.
func readKey(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	switch {
	case !fi.Mode().IsRegular():
		return "", fmt.Errorf("%s is not a regular file", path)
	case fi.Mode().Perm()&0o077 != 0:
		return "", fmt.Errorf("%s may be read or written by others (mode %04o): chmod 600 it", path, fi.Mode().Perm())
	}
	b, err := io.ReadAll(io.LimitReader(f, maxKey+1))
	if err != nil {
		return "", err
	}
	key := strings.TrimSpace(string(b))
	switch {
	case len(b) > maxKey:
		return "", fmt.Errorf("%s is larger than %d bytes", path, maxKey)
	case key == "":
		return "", fmt.Errorf("%s is empty", path)
	}
	return key, nil
}
