package notify

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gnomon-sched/gnomon/job"
)

// keyFile writes a routing key to a file only its owner may read.
func keyFile(t *testing.T, key string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "pd.key")
	if err := os.WriteFile(p, []byte(key+"\n"), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestPagerDuty posts a failure then a success of one task to a loopback
// server standing for the Events API: the first is a trigger, retried
// while the server answers 503 and 429, the second a resolve of the same
// dedup_key; the routing key comes from its file and no error shows it.
func TestPagerDuty(t *testing.T) {
	t.Parallel()
	srv, got := hookServer(t, http.StatusServiceUnavailable, http.StatusTooManyRequests)
	key := keyFile(t, "R0UT1NGK3Y", 0o600)
	h := NewHooks(HookConfig{PagerDutyURL: srv.URL + "/v2/enqueue"})
	a := hookAlert
	a.To = []string{"pagerduty:@file:" + key}
	for i := range 2 {
		err := h.Send(context.Background(), &a)
		if err == nil || asPermanentOK(err) || strings.Contains(err.Error(), "R0UT1NGK3Y") || !strings.Contains(err.Error(), "answered") {
			t.Fatalf("attempt %d: %v; want an error to retry, without the key", i+1, err)
		}
		<-got
	}
	if err := h.Send(context.Background(), &a); err != nil {
		t.Fatal(err)
	}
	r := <-got
	var ev PagerDutyEvent
	if err := json.Unmarshal(r.body, &ev); err != nil {
		t.Fatal(err)
	}
	if r.path != "/v2/enqueue" || ev.RoutingKey != "R0UT1NGK3Y" || ev.EventAction != "trigger" || ev.DedupKey != "gnomon/load" ||
		ev.Payload == nil || ev.Payload.Severity != "error" || ev.Payload.Summary != "gnomon: load failure: exit status 3" || ev.Payload.Source != "gnomon" {
		t.Errorf("trigger: %s %s", r.path, r.body)
	}
	ok := a
	ok.Outcome, ok.Message = job.OutcomeSuccess, ""
	if err := h.Send(context.Background(), &ok); err != nil {
		t.Fatal(err)
	}
	r = <-got
	ev = PagerDutyEvent{}
	if err := json.Unmarshal(r.body, &ev); err != nil {
		t.Fatal(err)
	}
	if ev.EventAction != "resolve" || ev.DedupKey != "gnomon/load" || ev.Payload != nil {
		t.Errorf("resolve: %s", r.body)
	}
}

func TestPagerDutyRefused(t *testing.T) {
	t.Parallel()
	srv, got := hookServer(t, http.StatusBadRequest)
	h := NewHooks(HookConfig{PagerDutyURL: srv.URL})
	a := hookAlert
	a.To = []string{"pagerduty:@file:" + keyFile(t, "K", 0o600)}
	if err := h.Send(context.Background(), &a); !asPermanentOK(err) {
		t.Fatalf("400: %v, want a permanent refusal", err)
	}
	<-got
	// A key others may read is refused, to be retried once it is fixed;
	// a missing file too.
	for _, to := range []string{"pagerduty:@file:" + keyFile(t, "K", 0o644), "pagerduty:@file:/nonexistent/pd.key"} {
		a.To = []string{to}
		err := h.Send(context.Background(), &a)
		if err == nil || asPermanentOK(err) || !strings.Contains(err.Error(), "routing key") {
			t.Errorf("%s: %v", to, err)
		}
	}
}
