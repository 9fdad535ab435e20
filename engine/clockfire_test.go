package engine

import (
	"strings"
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

// A fire found past the grace (a clock node took the partition after an
// outage) is missed, and so are the occurrences the node will not fire:
// up to the grace before it found it, as a single server records them
// when it starts again.
func TestExternalClockLateFireMissesTheOutage(t *testing.T) {
	t.Parallel()
	s := externalSim(t, "2026-06-01T00:00:30Z", callable("a", "cron: 0 * * * *"))
	s.now = s.at("2026-06-01T03:30:00Z")
	s.apply(Fired{Fires: []ClockFire{{Task: "a", Scheduled: s.at("2026-06-01T01:00:00Z"), At: s.now}}})
	for i, late := range []string{"2h30m", "1h30m", "30m"} {
		if want := "no clock node owned the task's partition at that time (it was noticed " + late + " later)"; i >= len(s.fires) || s.fires[i].Reason != want {
			t.Errorf("fire %d: %+v, want the reason %q", i, s.fires, want)
		}
	}
	s.wantLog(time.UTC, "Mon 01 01:00 a missed\nMon 01 02:00 a missed\nMon 01 03:00 a missed\n")
	if _, st, _ := s.e.Task("a"); !st.NextFire.Time().Equal(s.at("2026-06-01T04:00:00Z")) {
		t.Errorf("next fire of a = %v, want 04:00", st.NextFire)
	}
}

// Due lists the occurrences the engine waits for by an instant, earliest
// first; NextOccurrence is the earliest, with an external clock too.
func TestExternalClockDue(t *testing.T) {
	t.Parallel()
	s := externalSim(t, "2026-06-01T00:00:30Z", callable("a", "cron: */5 * * * *")+callable("b", "cron: * * * * *")+
		callable("c", "cron: 0 * * * *")+callable("d", "cron: 2 * * * *")+callable("e", "cron: 1 * * * *"))
	if got := s.e.NextOccurrence(); !got.Equal(s.at("2026-06-01T00:01:00Z")) {
		t.Errorf("NextOccurrence = %v", got)
	}
	var got []string
	for _, f := range s.e.Due(s.at("2026-06-01T00:02:00Z")) {
		got = append(got, f.Task+"@"+f.Scheduled.Format("15:04"))
	}
	if want := "b@00:01 e@00:01 d@00:02"; strings.Join(got, " ") != want {
		t.Errorf("Due = %v, want %s", got, want)
	}
	if due := s.e.Due(s.at("2026-06-01T00:00:59Z")); len(due) != 0 {
		t.Errorf("Due before the first occurrence = %v", due)
	}
}
