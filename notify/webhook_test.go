package notify

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/job"
)

// received is one request a test webhook took.
type received struct {
	path   string
	header http.Header
	body   []byte
}

// hookServer is a real HTTP server on loopback that answers each request
// with the next status of answers (then 200) and hands what it took to
// the test.
func hookServer(t *testing.T, answers ...int) (*httptest.Server, chan received) {
	t.Helper()
	got := make(chan received, 16)
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- received{r.URL.Path, r.Header.Clone(), b}
		if n < len(answers) {
			w.WriteHeader(answers[n])
			n++
			io.WriteString(w, "try again later")
			return
		}
		io.WriteString(w, "ok")
	}))
	t.Cleanup(srv.Close)
	return srv, got
}

var hookAlert = job.Alert{ID: 7, Task: "load", Outcome: job.OutcomeFailure, RunID: 42, ExitCode: 3, Message: "exit status 3",
	Start: time.Date(2026, 6, 1, 5, 0, 0, 0, time.UTC), End: time.Date(2026, 6, 1, 5, 1, 0, 0, time.UTC),
	Created: time.Date(2026, 6, 1, 5, 1, 0, 0, time.UTC), Sources: []string{"load"}, Data: map[string]string{"rows": "12"}}

func TestWebhookSigned(t *testing.T) {
	t.Parallel()
	srv, got := hookServer(t)
	h := NewHooks(HookConfig{Secret: []byte("s3cret")})
	a := hookAlert
	a.To = []string{"webhook:" + srv.URL + "/hooks/T0K3N"}
	if err := h.Send(context.Background(), &a); err != nil {
		t.Fatal(err)
	}
	r := <-got
	var p Payload
	if err := json.Unmarshal(r.body, &p); err != nil {
		t.Fatalf("body %s: %v", r.body, err)
	}
	if p.AlertID != 7 || p.Task != "load" || p.Outcome != job.OutcomeFailure || p.RunID != 42 || p.ExitCode != 3 || p.Data["rows"] != "12" || !p.End.Equal(a.End) {
		t.Errorf("payload %+v", p)
	}
	mac := hmac.New(sha256.New, []byte("s3cret"))
	mac.Write(r.body)
	if want := "sha256=" + hex.EncodeToString(mac.Sum(nil)); r.header.Get(SignatureHeader) != want {
		t.Errorf("signature %q, want %q", r.header.Get(SignatureHeader), want)
	}
	if r.header.Get(DeliveryHeader) != "7" || r.header.Get("Content-Type") != "application/json" || r.path != "/hooks/T0K3N" {
		t.Errorf("headers %v, path %s", r.header, r.path)
	}
}

func TestSlackShape(t *testing.T) {
	t.Parallel()
	srv, got := hookServer(t)
	h := NewHooks(HookConfig{Secret: []byte("s3cret")})
	for _, kind := range []string{"slack", "teams"} {
		a := hookAlert
		a.To = []string{kind + ":" + srv.URL + "/services/T/B/X"}
		if err := h.Send(context.Background(), &a); err != nil {
			t.Fatal(err)
		}
		r := <-got
		var v map[string]string
		if err := json.Unmarshal(r.body, &v); err != nil || len(v) != 1 {
			t.Fatalf("%s body %s: %v", kind, r.body, err)
		}
		for _, want := range []string{"Job load: failure.", "Run:       42", "Exit code: 3", "exit status 3", "rows: 12"} {
			if !strings.Contains(v["text"], want) {
				t.Errorf("%s text lacks %q:\n%s", kind, want, v["text"])
			}
		}
		if r.header.Get(SignatureHeader) != "" {
			t.Errorf("%s is signed: only generic webhooks are", kind)
		}
	}
}

// A receiver that fails now is tried again; one that refuses is not. No
// error shows the URL's path, where its secret is.
func TestWebhookErrors(t *testing.T) {
	t.Parallel()
	srv, _ := hookServer(t, http.StatusServiceUnavailable, http.StatusTooManyRequests, http.StatusNotFound)
	h := NewHooks(HookConfig{Timeout: 5 * time.Second})
	a := hookAlert
	a.To = []string{"webhook:" + srv.URL + "/hooks/T0K3N"}
	host := strings.TrimPrefix(srv.URL, "http://")
	for i, want := range []struct {
		permanent bool
		msg       string
	}{
		{false, "webhook:http://" + host + "/… answered 503 Service Unavailable: \"try again later\""},
		{false, "webhook:http://" + host + "/… answered 429 Too Many Requests"},
		{true, "webhook:http://" + host + "/… answered 404 Not Found"},
	} {
		err := h.Send(context.Background(), &a)
		var p interface{ Permanent() bool }
		isPerm := err != nil && asPermanent(err, &p) && p.Permanent()
		if err == nil || isPerm != want.permanent || !strings.HasPrefix(err.Error(), want.msg) || strings.Contains(err.Error(), "T0K3N") {
			t.Errorf("attempt %d: %v (permanent %v), want %q (permanent %v)", i+1, err, isPerm, want.msg, want.permanent)
		}
	}
	srv.Close()
	err := h.Send(context.Background(), &a)
	if err == nil || strings.Contains(err.Error(), "T0K3N") || asPermanentOK(err) {
		t.Errorf("nobody listening: %v, want a temporary error without the URL's path", err)
	}
}

func asPermanent(err error, p *interface{ Permanent() bool }) bool {
	pe, ok := err.(interface{ Permanent() bool })
	if ok {
		*p = pe
	}
	return ok
}

func asPermanentOK(err error) bool {
	var p interface{ Permanent() bool }
	return asPermanent(err, &p) && p.Permanent()
}

func TestRedact(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"slack:https://hooks.slack.com/services/T0/B0/XYZ": "slack:https://hooks.slack.com/…",
		"webhook:https://user:pw@example.com:8443/h?k=v":   "webhook:https://example.com:8443/…",
		"webhook:http://example.com":                       "webhook:http://example.com",
		"ops@example.com":                                  "ops@example.com",
	} {
		if got := job.Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestWebhookTemplate renders a generic webhook's body from its
// notify_template; Slack and Teams keep their text.
func TestWebhookTemplate(t *testing.T) {
	t.Parallel()
	srv, got := hookServer(t)
	h := NewHooks(HookConfig{})
	a := hookAlert
	a.To = []string{"webhook:" + srv.URL + "/h"}
	a.Template = `{"summary": {{json (printf "%s %s" .Task .Outcome)}}, "run": {{.RunID}}, "rows": {{json .Data.rows}}, "at": {{json .End}}}`
	if err := h.Send(context.Background(), &a); err != nil {
		t.Fatal(err)
	}
	r := <-got
	if want := `{"summary": "load failure", "run": 42, "rows": "12", "at": "2026-06-01T05:01:00Z"}`; string(r.body) != want {
		t.Errorf("body %s, want %s", r.body, want)
	}
	a.Template = `{"t": {{.Task}}}`
	if err := h.Send(context.Background(), &a); !asPermanentOK(err) || !strings.Contains(err.Error(), "not JSON") {
		t.Errorf("a body that is not JSON: %v, want a permanent error", err)
	}
}
