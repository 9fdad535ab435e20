package periods

import (
	"encoding/json"
	"errors"
	"strings"
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

func TestRestoreRejects(t *testing.T) {
	t.Parallel()
	s := newSim(t, "2024-01-01T00:00", siteAndClient("normal"))
	tick("2024-01-01T02:06")(s)
	good := s.f.Snapshot()
	tests := []struct {
		name   string
		change func(*Snapshot)
		want   string
	}{
		{"bad file", func(s *Snapshot) { s.Files[0].Text = "{" }, "invalid JSON"},
		{"file twice", func(s *Snapshot) { s.Files = append(s.Files, s.Files[0]) }, "twice"},
		{"unknown process", func(s *Snapshot) { s.Nodes[0].Process = "nope" }, "no such process"},
		{"future node", func(s *Snapshot) { s.Nodes[0].Timeperiod = 2024020100 }, "no such period"},
		{"node twice", func(s *Snapshot) { s.Nodes = append(s.Nodes, s.Nodes[0]) }, "listed twice"},
		{"run on a finished node", func(s *Snapshot) {
			s.Nodes[0].State, s.Nodes[0].RunID, s.Nodes[0].RunStatus = Processed, 99, RunRequested
		}, "run 99 on a processed node"},
		{"run without status", func(s *Snapshot) { s.Nodes[0].RunID = 99 }, `run 99 with status ""`},
		{"final run without a run", func(s *Snapshot) { s.Nodes[0].State = FinalRun }, "final_run without a run"},
		{"run on two nodes", func(s *Snapshot) {
			for i := range s.Nodes {
				if s.Nodes[i].Process == "site_hourly" && s.Nodes[i].Timeperiod == 2024010100 {
					s.Nodes[i].RunID = 1 // the client's
				}
			}
		}, "run 1 on two nodes"},
		{"tick of a discrete level", func(s *Snapshot) { s.Ticks = []LevelTick{{Process: "site_daily"}} }, "no such continuous process"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			snap := roundTrip(t, good)
			tt.change(&snap)
			f := New(Config{})
			err := f.Restore(snap)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Restore: %v; want %q", err, tt.want)
			}
			if len(f.Trees()) != 0 {
				t.Error("a failed restore left trees")
			}
		})
	}
	f := New(Config{})
	if err := f.Restore(good); err != nil {
		t.Fatal(err)
	}
	if err := f.Restore(good); !errors.Is(err, ErrRefused) {
		t.Errorf("restore into a full forest: %v", err)
	}
}

func TestRunIDFunc(t *testing.T) {
	t.Parallel()
	next := int64(1000)
	f := New(Config{NextRunIDFunc: func() int64 { next += 10; return next }})
	now := parseTime(t, "2024-01-01T01:06")
	if _, err := f.Apply(Define{File: "a.json", Text: hourly}, now); err != nil {
		t.Fatal(err)
	}
	if o := f.Outstanding(); len(o) != 1 || o[0].RunID != 1010 {
		t.Fatalf("outstanding %v", o)
	}
	if s := f.Snapshot(); s.LastRunID != 1010 {
		t.Errorf("last run %d", s.LastRunID)
	}
}

func TestStampWrap(t *testing.T) {
	t.Parallel()
	s := newSim(t, "2024-01-01T00:00", siteAndClient("normal"))
	tick("2024-01-01T02:06")(s)
	s.f.stamp = ^uint32(0) - 1
	skip("site_hourly@2024010100")(s)
	skip("site_hourly@2024010101")(s) // wraps: every mark is cleared
	want("site_hourly@2024010101=skipped", "client_hourly@2024010101=skipped")(s)
	if s.f.stamp != 1 {
		t.Errorf("stamp %d", s.f.stamp)
	}
}
