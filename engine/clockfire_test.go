package engine

import (
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/job"
)

// externalSim is a sim whose engine leaves finding occurrences to clock
// nodes: the test plays them.
func externalSim(t *testing.T, start, definitions string) *sim {
	t.Helper()
	return newSimWith(t, Config{Workers: 10, ExternalClock: true}, start, definitions)
}

func (s *sim) at(rfc string) time.Time {
	s.t.Helper()
	at, err := time.Parse(time.RFC3339, rfc)
	if err != nil {
		s.t.Fatal(err)
	}
	return at
}

func TestExternalClockFiresOnlyWhenHandedOccurrences(t *testing.T) {
	t.Parallel()
	s := externalSim(t, "2026-06-01T00:00:30Z", callable("a", "cron: * * * * *")+callable("b", "cron: */5 * * * *"))
	// The engine keeps the next occurrence for forecasts but never wakes
	// for it.
	if w := s.e.NextWake(); !w.IsZero() {
		t.Fatalf("NextWake = %v, want none", w)
	}
	if _, st, _ := s.e.Task("a"); !st.NextFire.Time().Equal(s.at("2026-06-01T00:01:00Z")) {
		t.Fatalf("next fire of a = %v", st.NextFire)
	}
	s.advance("2026-06-01T00:10:00Z")
	if len(s.fires) != 0 || len(s.started) != 0 {
		t.Fatalf("fires %v, runs %v without a clock", s.fires, s.started)
	}

	fire := func(task, at, found string) ClockFire {
		return ClockFire{Task: task, Scheduled: s.at(at), At: s.at(found)}
	}
	// Handed a little late, out of order, one twice, one before the
	// definition, one the trigger does not yield.
	s.apply(Fired{Fires: []ClockFire{
		fire("b", "2026-06-01T00:05:00Z", "2026-06-01T00:05:01Z"),
		fire("a", "2026-06-01T00:01:00Z", "2026-06-01T00:01:02Z"),
		fire("a", "2026-06-01T00:01:00Z", "2026-06-01T00:01:02Z"),
		fire("a", "2026-06-01T00:00:00Z", "2026-06-01T00:00:01Z"),
		fire("b", "2026-06-01T00:07:00Z", "2026-06-01T00:07:00Z"),
	}})
	s.wantLog(time.UTC, "Mon 01 00:01 a ran\nMon 01 00:05 b ran\n")
	if s.started["a"] == 0 || s.started["b"] == 0 {
		t.Fatalf("runs started: %v", s.started)
	}
	if _, st, _ := s.e.Task("b"); !st.NextFire.Time().Equal(s.at("2026-06-01T00:10:00Z")) {
		t.Errorf("next fire of b = %v, want 00:10", st.NextFire)
	}
	s.advance("2026-06-01T00:12:00Z")

	// The same occurrence handed again after it ran changes nothing.
	s.apply(Fired{Fires: []ClockFire{fire("a", "2026-06-01T00:01:00Z", "2026-06-01T00:01:02Z")}})
	if len(s.fires) != 0 {
		t.Fatalf("a fire handed twice was handled twice: %v", s.fires)
	}

	// No clock node owned a's partition from 00:02 to 00:04: those are
	// missed when 00:05 is handed, and one found past the grace is too.
	s.apply(Fired{Fires: []ClockFire{
		fire("a", "2026-06-01T00:05:00Z", "2026-06-01T00:05:00Z"),
		fire("b", "2026-06-01T00:10:00Z", "2026-06-01T00:11:30Z"),
	}})
	s.wantLog(time.UTC, `Mon 01 00:02 a missed
Mon 01 00:03 a missed
Mon 01 00:04 a missed
Mon 01 00:05 a ran
Mon 01 00:10 b missed
`)
}

func TestExternalClockSkipsFrozenAndBusy(t *testing.T) {
	t.Parallel()
	s := externalSim(t, "2026-06-01T00:00:30Z", callable("slow", "cron: * * * * *")+callable("cold", "cron: * * * * *"))
	s.length["slow"] = 90 * time.Second
	s.act("cold", job.ActFreeze)
	for _, at := range []string{"2026-06-01T00:01:00Z", "2026-06-01T00:02:00Z"} {
		s.now = s.at(at)
		s.apply(Fired{Fires: []ClockFire{{Task: "slow", Scheduled: s.now, At: s.now}, {Task: "cold", Scheduled: s.now, At: s.now}}})
	}
	s.wantLog(time.UTC, `Mon 01 00:01 cold skipped
Mon 01 00:01 slow ran
Mon 01 00:02 cold skipped
Mon 01 00:02 slow skipped
`)
}
