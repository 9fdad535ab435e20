package periods

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// roundTrip encodes a snapshot as JSON and decodes it, as a store would.
func roundTrip(t *testing.T, s Snapshot) Snapshot {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var back Snapshot
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	return back
}

func sameSnapshot(t *testing.T, want, got Snapshot) {
	t.Helper()
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("snapshots differ (-want +got):\n%s", d)
	}
}

func sameOutput(t *testing.T, i int, want, got *Output) {
	t.Helper()
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("output %d differs (-want +got):\n%s", i, d)
	}
}
