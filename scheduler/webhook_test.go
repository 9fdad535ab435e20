package scheduler

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
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

// TestWebhookRetriedOnVirtualTime fails a run that notifies a webhook
// whose receiver, a real HTTP server on loopback, is down for the first
// three attempts: the attempts come at the virtual instants the backoff
// gives (1 s, 2 s, 4 s apart), each recorded with why it failed, the
// fourth delivers, and nothing recorded or logged shows the URL's path.
func TestWebhookRetriedOnVirtualTime(t *testing.T) {
	t.Parallel()
	var (
		mu     sync.Mutex
		bodies []string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		bodies = append(bodies, string(b))
		if len(bodies) <= 3 {
			http.Error(w, "down", http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	var logs strings.Builder
	var logMu sync.Mutex
	m := openSimWith(t, t.TempDir(), t0, func(c *Config) {
		c.Hooks = notify.NewHooks(notify.HookConfig{Secret: []byte("k"), Timeout: 5 * time.Second})
		c.Logger = newTestLogger(&logs, &logMu)
	})
	defer m.stop()
	m.define(DefineFile{File: "a.def", Text: "insert_task: a\ntype: callable\ncommand: exit 3\nout_log_file: " + filepath.Join(m.dir, "a.out") +
		"\nerr_log_file: " + filepath.Join(m.dir, "a.err") + "\nalert_on: failure\nnotify: webhook:" + srv.URL + "/hook/T0K3N\n"})
	m.submit(engine.Act{Task: "a", Action: job.ActStart})
	m.advance(t0.Add(time.Minute))
	alerts, err := m.st.Alerts(context.Background(), store.AlertQuery{Task: "a"})
	if err != nil || len(alerts) != 1 || alerts[0].State != job.AlertSent || alerts[0].Attempts != 4 {
		t.Fatalf("alerts %+v, %v; want one, sent at the fourth attempt", alerts, err)
	}
	atts, err := m.st.Attempts(context.Background(), alerts[0].ID)
	if err != nil || len(atts) != 4 {
		t.Fatalf("attempts %+v, %v", atts, err)
	}
	for i, want := range []time.Duration{0, time.Second, 3 * time.Second, 7 * time.Second} {
		if got := atts[i].At.Sub(atts[0].At); got != want {
			t.Errorf("attempt %d at first + %s, want + %s", i+1, got, want)
		}
		if (i < 3) != strings.Contains(atts[i].Error, "answered 503 Service Unavailable") {
			t.Errorf("attempt %d: %q", i+1, atts[i].Error)
		}
	}
	mu.Lock()
	n := len(bodies)
	same := n == 4 && bodies[0] == bodies[3] && strings.Contains(bodies[0], `"task":"a"`)
	mu.Unlock()
	if !same {
		t.Errorf("the receiver got %d requests, want 4 of the same alert", n)
	}
	logMu.Lock()
	defer logMu.Unlock()
	for _, a := range atts {
		if strings.Contains(a.Error, "T0K3N") {
			t.Errorf("an attempt shows the URL's path: %q", a.Error)
		}
	}
	if strings.Contains(logs.String(), "T0K3N") || !strings.Contains(logs.String(), "alert sent") {
		t.Errorf("logs:\n%s", logs.String())
	}
}

// lockedWriter serialises writes to a builder shared with the test.
type lockedWriter struct {
	mu *sync.Mutex
	b  *strings.Builder
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

// newTestLogger logs as text into b, under mu.
func newTestLogger(b *strings.Builder, mu *sync.Mutex) *slog.Logger {
	return slog.New(slog.NewTextHandler(lockedWriter{mu, b}, nil))
}
