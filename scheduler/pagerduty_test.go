package scheduler

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/engine"
	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/notify"
	"github.com/gnomon-sched/gnomon/store"
)

// TestPagerDutyOnVirtualTime fails a task that notifies PagerDuty, whose
// stand-in (a real HTTP server on loopback) answers 503 twice: the
// trigger is retried at the backoff's virtual instants and recorded as
// any webhook's alert; the next success of the task resolves the incident
// of the same dedup_key; nothing recorded or logged shows the key.
func TestPagerDutyOnVirtualTime(t *testing.T) {
	t.Parallel()
	var (
		mu     sync.Mutex
		events []notify.PagerDutyEvent
		calls  int
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		calls++
		if calls <= 2 {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		var ev notify.PagerDutyEvent
		if err := json.Unmarshal(b, &ev); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		events = append(events, ev)
		w.WriteHeader(http.StatusAccepted)
	}))
	defer srv.Close()
	dir := t.TempDir()
	key := filepath.Join(dir, "pd.key")
	if err := os.WriteFile(key, []byte("R0UT1NGK3Y\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var logs strings.Builder
	var logMu sync.Mutex
	m := openSimWith(t, dir, t0, func(c *Config) {
		c.Hooks = notify.NewHooks(notify.HookConfig{PagerDutyURL: srv.URL + "/v2/enqueue", Timeout: 5 * time.Second})
		c.Logger = newTestLogger(&logs, &logMu)
	})
	defer m.stop()
	marker := filepath.Join(dir, "ok")
	m.define(DefineFile{File: "a.def", Text: "insert_task: a\ntype: callable\ncommand: test -e " + marker + "\nout_log_file: " + filepath.Join(dir, "a.out") +
		"\nerr_log_file: " + filepath.Join(dir, "a.err") + "\nalert_on: failure\nnotify: pagerduty:@file:" + key + "\n"})
	m.submit(engine.Act{Task: "a", Action: job.ActStart})
	m.advance(t0.Add(time.Minute))
	if err := os.WriteFile(marker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	m.submit(engine.Act{Task: "a", Action: job.ActStart})
	m.advance(t0.Add(2 * time.Minute))
	alerts, err := m.st.Alerts(context.Background(), store.AlertQuery{Task: "a"})
	if err != nil || len(alerts) != 2 {
		t.Fatalf("alerts %+v, %v; want the failure's and the success's", alerts, err)
	}
	// Newest first.
	if alerts[1].Outcome != job.OutcomeFailure || alerts[1].State != job.AlertSent || alerts[1].Attempts != 3 ||
		alerts[0].Outcome != job.OutcomeSuccess || alerts[0].State != job.AlertSent || alerts[0].Attempts != 1 {
		t.Fatalf("alerts %+v", alerts)
	}
	mu.Lock()
	got := events
	mu.Unlock()
	if len(got) != 2 || got[0].EventAction != "trigger" || got[1].EventAction != "resolve" || got[0].DedupKey != "gnomon/a" ||
		got[1].DedupKey != got[0].DedupKey || got[0].RoutingKey != "R0UT1NGK3Y" {
		t.Fatalf("events %+v", got)
	}
	atts, err := m.st.Attempts(context.Background(), alerts[1].ID)
	if err != nil || len(atts) != 3 || !strings.Contains(atts[0].Error, "answered 503") {
		t.Fatalf("attempts %+v, %v", atts, err)
	}
	logMu.Lock()
	defer logMu.Unlock()
	if strings.Contains(logs.String(), "R0UT1NGK3Y") {
		t.Errorf("the logs show the key:\n%s", logs.String())
	}
}
