package cli

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
)

// TestServerLifecycle: a server never started stops at once, twice; a
// started one refuses a second Start, serves until its first Stop, and
// a second Stop is harmless; a Start after Stop is refused; a failed
// Start releases the data directory.
func TestServerLifecycle(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	data := filepath.Join(t.TempDir(), "data")
	cfg := ServerConfig{Data: data, DB: testDB(t, data), Listen: "127.0.0.1:0", Logger: nopLogger()}

	idle := NewServer(cfg)
	for range 2 {
		if err := idle.Stop(ctx); err != nil {
			t.Fatalf("Stop of a server never started: %v", err)
		}
	}
	if err := idle.Start(ctx); err == nil || !strings.Contains(err.Error(), "Start after Stop") {
		t.Fatalf("Start after Stop: %v", err)
	}

	s := NewServer(cfg)
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); err == nil || !strings.Contains(err.Error(), "already started") {
		t.Fatalf("second Start: %v", err)
	}
	resp, err := http.Get("http://" + s.Addr() + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/healthz of a started server: %s", resp.Status)
	}
	// A server whose data directory another holds does not start, and
	// stops at once.
	held := NewServer(cfg)
	if err := held.Start(ctx); err == nil || !strings.Contains(err.Error(), data) {
		t.Fatalf("Start on a data directory a server holds: %v", err)
	}
	if err := held.Stop(ctx); err != nil {
		t.Fatalf("Stop after a Start refused the data directory: %v", err)
	}
	if err := s.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Stop(ctx); err != nil {
		t.Fatalf("second Stop: %v", err)
	}

	// A Start that fails (an address that cannot be listened on) leaves
	// the data directory free for the next server.
	bad := cfg
	bad.Listen = "127.0.0.1:-1"
	f := NewServer(bad)
	if err := f.Start(ctx); err == nil {
		t.Fatal("a server listening on port -1 started")
	}
	if err := f.Stop(ctx); err != nil {
		t.Fatalf("Stop after a failed Start: %v", err)
	}
	next := NewServer(cfg)
	if err := next.Start(ctx); err != nil {
		t.Fatalf("the data directory after a failed Start: %v", err)
	}
	if err := next.Stop(ctx); err != nil {
		t.Fatal(err)
	}
}
