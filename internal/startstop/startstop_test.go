package startstop

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func TestGuard(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var g Guard
	if started, first := g.Stop(); started || !first {
		t.Fatalf("Stop of a part never started: started %v, first %v; want false, true", started, first)
	}
	if err := g.Start(ctx, "part", "New", func() error { t.Fatal("started after Stop"); return nil }); err == nil || !strings.Contains(err.Error(), "part: Start after Stop") || !strings.Contains(err.Error(), "with New") {
		t.Fatalf("Start after Stop: %v", err)
	}

	var h Guard
	ran := 0
	if err := h.Start(ctx, "part", "New", func() error { ran++; return nil }); err != nil || ran != 1 {
		t.Fatalf("first Start: %v, ran %d", err, ran)
	}
	if err := h.Start(ctx, "part", "New", func() error { ran++; return nil }); err == nil || !strings.Contains(err.Error(), "already started") || ran != 1 {
		t.Fatalf("second Start: %v, ran %d", err, ran)
	}
	if started, first := h.Stop(); !started || !first {
		t.Fatalf("first Stop: started %v, first %v", started, first)
	}
	if started, first := h.Stop(); !started || first {
		t.Fatalf("second Stop: started %v, first %v", started, first)
	}

	// A failed start leaves the part started: Stop ends what it began.
	var f Guard
	boom := errors.New("boom")
	if err := f.Start(ctx, "part", "New", func() error { return boom }); !errors.Is(err, boom) {
		t.Fatalf("failed start: %v", err)
	}
	if started, _ := f.Stop(); !started {
		t.Fatal("a part whose start failed is not marked started")
	}

	done, cancel := context.WithCancel(ctx)
	cancel()
	var c Guard
	if err := c.Start(done, "part", "New", func() error { t.Fatal("started with ctx done"); return nil }); !errors.Is(err, context.Canceled) {
		t.Fatalf("Start with ctx done: %v", err)
	}
}
