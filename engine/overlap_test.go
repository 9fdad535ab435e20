package engine

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/job"
)

// runLog renders runs in id order as "task start-end status trigger".
func runLog(h *harness) string {
	var ids []int64
	for id := range h.runs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var b strings.Builder
	for _, id := range ids {
		r := h.runs[id]
		end := "…"
		if !r.End.IsZero() {
			end = r.End.Format("15:04")
		}
		fmt.Fprintf(&b, "%s %s-%s %s %s\n", r.Task, r.Start.Format("15:04"), end, r.Status, r.Trigger)
	}
	return b.String()
}

func TestOverlapAllowRunsConcurrently(t *testing.T) {
	t.Parallel()
	// Every hour, 90 minutes long: runs overlap. Each run's success starts
	// the dependent once.
	s := newSim(t, "2026-06-01T00:00:00Z", callable("slow", "cron: 0 * * * *\noverlap: allow")+callable("after", "condition: su(slow)"))
	s.length["slow"] = 90 * time.Minute
	s.advance("2026-06-01T02:10:00Z")
	s.wantLog(time.UTC, `Mon 01 00:00 slow ran
Mon 01 01:00 slow ran
Mon 01 02:00 slow ran
`)
	if got, want := runLog(s.harness), `slow 00:00-01:30 success schedule
slow 01:00-… running schedule
after 01:30-01:30 success condition
slow 02:00-… running schedule
`; got != want {
		t.Errorf("runs:\n%s\nwant:\n%s", got, want)
	}
	s.want("slow", "running")
	// The 01:00 run ends at 02:30 while the 02:00 run goes on: the
	// dependent starts again on that run's success.
	s.advance("2026-06-01T02:40:00Z")
	if n := strings.Count(runLog(s.harness), "after "); n != 2 {
		t.Errorf("after ran %d times, want 2:\n%s", n, runLog(s.harness))
	}
	s.want("slow", "running")
	s.advance("2026-06-01T03:10:00Z")
	// Abort kills every run in flight (02:00 and 03:00).
	s.act("slow", job.ActAbort)
	var kills int
	for _, ef := range s.effects {
		if _, ok := ef.(KillRun); ok {
			kills++
		}
	}
	if kills != 2 {
		t.Errorf("abort killed %d runs, want 2", kills)
	}
}

func TestOverlapQueueRunsInTurn(t *testing.T) {
	t.Parallel()
	s := newSim(t, "2026-06-01T00:00:00Z", callable("slow", "cron: 0 * * * *\noverlap: queue"))
	s.length["slow"] = 150 * time.Minute
	s.advance("2026-06-01T02:10:00Z")
	_, st, _ := s.e.Task("slow")
	if len(st.Pending) != 2 || !st.Pending[0].Scheduled.Equal(time.Date(2026, 6, 1, 1, 0, 0, 0, time.UTC)) {
		t.Fatalf("pending %+v", st.Pending)
	}
	s.advance("2026-06-01T05:10:00Z")
	// 00:00 runs to 02:30; the 01:00 trigger runs then, to 05:00; the
	// 02:00 trigger then, and the 03:00 and 04:00 ones wait.
	if got, want := runLog(s.harness), `slow 00:00-02:30 success schedule
slow 02:30-05:00 success schedule
slow 05:00-… running schedule
`; got != want {
		t.Errorf("runs:\n%s\nwant:\n%s", got, want)
	}
	var sched []string
	for _, r := range s.runs {
		sched = append(sched, r.Scheduled.Format("15:04"))
	}
	slices.Sort(sched)
	if !slices.Equal(sched, []string{"00:00", "01:00", "02:00"}) {
		t.Errorf("runs for occurrences %v", sched)
	}
	// An abort drops what waits.
	s.act("slow", job.ActAbort)
	if _, st, _ := s.e.Task("slow"); len(st.Pending) != 0 {
		t.Errorf("pending after abort: %+v", st.Pending)
	}
}

func TestOverlapAllowRespectsWorkersAndDelay(t *testing.T) {
	t.Parallel()
	h := setup(t, 2, callable("a", "overlap: allow\nstart_delay: 10s"))
	h.act("a", job.ActStart) // a start bypasses the delay
	for range 3 {
		h.act("a", job.ActStart) // three more wait 10s each
	}
	if n := len(h.started); n != 1 {
		t.Fatalf("%d started at once", n)
	}
	if wake := h.e.NextWake(); !wake.Equal(h.now.Add(10 * time.Second)) {
		t.Fatalf("next wake %v", wake)
	}
	h.now = h.now.Add(10 * time.Second)
	h.apply(Tick{})
	// Two workers: one more run starts, two wait for a free worker.
	if n := len(h.e.ActiveRuns()); n != 2 {
		t.Fatalf("%d runs, want 2", n)
	}
	_, st, _ := h.e.Task("a")
	if len(st.Pending) != 2 {
		t.Fatalf("pending %+v", st.Pending)
	}
	h.apply(RunExited{RunID: h.e.ActiveRuns()[0].ID, Result: job.ResultNormal})
	if n := len(h.e.ActiveRuns()); n != 2 {
		t.Fatalf("after an exit: %d runs, want 2", n)
	}
	h.want("a", "running")
	for len(h.e.ActiveRuns()) > 0 {
		h.apply(RunExited{RunID: h.e.ActiveRuns()[0].ID, Result: job.ResultNormal})
	}
	h.want("a", "success")
	if n := len(h.runs); n != 4 {
		t.Errorf("%d runs, want 4", n)
	}
}

func TestOverlapSkipIsTheDefault(t *testing.T) {
	t.Parallel()
	h := setup(t, 5, callable("a", "")+callable("b", "condition: su(a)"))
	h.act("a", job.ActStart)
	h.exit("a", 0)
	h.want("b", "running")
	h.act("a", job.ActStart)
	h.exit("a", 0) // b still runs: not started
	var reasons []string
	for _, ef := range h.effects {
		if ns, ok := ef.(NotStarted); ok {
			reasons = append(reasons, ns.Reason)
		}
	}
	if len(reasons) != 1 || !strings.Contains(reasons[0], "(overlap skip)") {
		t.Errorf("not started: %q", reasons)
	}
}

// What waits survives a restart: the state holds it, and a restored
// engine starts it when the active run ends.
func TestPendingSurvivesRestart(t *testing.T) {
	t.Parallel()
	h := setup(t, 5, callable("q", "overlap: queue"))
	h.act("q", job.ActStart)
	h.act("q", job.ActStart) // waits
	def, st, _ := h.e.Task("q")
	if len(st.Pending) != 1 || st.Pending[0].Trigger != "start" {
		t.Fatalf("pending %+v", st.Pending)
	}
	again := New(Config{Workers: 5})
	if err := restore(again, []job.Record{{Def: &def, State: st}}, h.e.ActiveRuns(), 1, nil); err != nil {
		t.Fatal(err)
	}
	out, err := again.Apply(RunExited{RunID: st.RunID, Result: job.ResultNormal}, h.now.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	var started []int64
	for _, ef := range out.Effects {
		if s, ok := ef.(StartRun); ok {
			started = append(started, s.Run.ID)
		}
	}
	if len(started) != 1 || started[0] != 2 {
		t.Fatalf("after the restart and the exit, started %v; want run 2", started)
	}
	if _, st, _ := again.Task("q"); len(st.Pending) != 0 || st.Status != job.Running {
		t.Errorf("state %+v", st)
	}
}
