package cluster

import (
	"context"
	"testing"
)

// TestMemberLifecycle checks the one lifecycle on a node: Stop of a node
// never started returns at once, twice; Start after Stop, a second Start,
// and a Start with a done context are refused; a node that cannot go on
// stops by itself and says why.
func TestMemberLifecycle(t *testing.T) {
	ctx := context.Background()
	m := NewMember(Config{})
	for range 2 {
		if err := m.Stop(ctx); err != nil {
			t.Fatalf("Stop of a node never started: %v", err)
		}
	}
	if err := m.Start(ctx); err == nil {
		t.Fatal("Start after Stop accepted")
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	if err := NewMember(Config{}).Start(done); err == nil {
		t.Fatal("Start with a done context accepted")
	}
	// A node without a registry cannot go on: it stops by itself.
	m = NewMember(Config{})
	if err := m.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := m.Start(ctx); err == nil {
		t.Fatal("a second Start accepted")
	}
	<-m.Done()
	if m.Err() == nil {
		t.Fatal("a node without a registry stopped without saying why")
	}
	for range 2 {
		if err := m.Stop(ctx); err == nil || err.Error() != m.Err().Error() {
			t.Fatalf("Stop after the node stopped by itself: %v, want %v", err, m.Err())
		}
	}
}
