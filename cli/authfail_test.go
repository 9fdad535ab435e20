package cli

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/gnomon-sched/gnomon/auth"
)

// lockedBuffer is a log the server writes while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Bad bearer tokens from one source get 401 ten times, then 429 with
// Retry-After, refused before any check, and are logged once; failed
// sign-ins are slowed the same way.
func TestFailedAuthenticationBacksOff(t *testing.T) {
	singleServer(t, "it reads the server's log")
	var log lockedBuffer
	f := setup(t, func(c *ServerConfig) { c.Logger = slog.New(slog.NewTextHandler(&log, nil)) })
	bad := "gnomon_0123456789abcdef_" + strings.Repeat("A", 43)
	statuses := map[int]int{}
	var retry string
	for i := range auth.FreeFailures + 10 {
		status, _, h := send(t, f.client.Base, bad, "GET", "/api/v1/info", "")
		statuses[status]++
		if i < auth.FreeFailures && status != http.StatusUnauthorized {
			t.Fatalf("bad token %d: %d, want 401", i+1, status)
		}
		if status == http.StatusTooManyRequests {
			retry = h.Get("Retry-After")
			break
		}
	}
	if statuses[http.StatusTooManyRequests] == 0 || retry == "" {
		t.Fatalf("%d bad tokens from one source were never slowed: %v", auth.FreeFailures+10, statuses)
	}
	if n := strings.Count(log.String(), "authentication failed"); n != 1 {
		t.Errorf("the failures of one source were logged %d times within a minute, want once:\n%s", n, log.String())
	}
	if !strings.Contains(log.String(), "source=127.0.0.1") {
		t.Errorf("the log does not name the source:\n%s", log.String())
	}

	// Sign-in counts its failures too: the same source is refused at once.
	resp, err := http.PostForm(f.client.Base+"/login", url.Values{"token": {bad}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
		t.Errorf("sign-in from a source that failed too often: %d, want 429 with Retry-After", resp.StatusCode)
	}
}
