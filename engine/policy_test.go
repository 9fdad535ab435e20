package engine

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/job"
)

// restart moves the simulation to a new engine restored from the old
// one's tasks and runs in flight, as a scheduler started again does.
func (s *sim) restart() {
	s.t.Helper()
	var recs []job.Record
	for _, n := range s.e.Names() {
		def, st, _ := s.e.Task(n)
		recs = append(recs, job.Record{Def: &def, State: st})
	}
	e2 := New(Config{Workers: 10})
	if err := restore(e2, recs, s.e.ActiveRuns(), s.e.lastRun, nil); err != nil {
		s.t.Fatal(err)
	}
	s.e = e2
}

// runsOf returns the task's runs by id.
func (s *sim) runsOf(task string) []job.Run {
	var out []job.Run
	for _, r := range s.runs {
		if r.Task == task {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b job.Run) int { return int(a.ID - b.ID) })
	return out
}

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	at, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return at
}

func TestRetriesWithBackoff(t *testing.T) {
	t.Parallel()
	s := newSim(t, "2026-03-01T12:00:00Z",
		callable("a", "n_retrys: 3\nretry_delay: 1m\nretry_backoff: 2\nretry_max_delay: 3m\nalert_on: retry,failure\nalert_to: ops@example.com")+
			callable("onfail", "condition: fa(a)")+callable("onok", "condition: su(a)")+callable("free", "condition: nr(a)"))
	s.length["a"] = 10 * time.Second
	s.codes["a"] = []int{1, 1, 1}
	s.act("a", job.ActStart)
	var alerts []job.Outcome
	collect := func(out *Output) {
		for _, a := range out.Alerts {
			alerts = append(alerts, a.Outcome)
		}
	}
	// The first run fails at 12:00:10: retry 1 waits 1m, retry 2 2m,
	// retry 3 3m (4m capped), each after a 10 s run.
	out := s.apply(RunExited{RunID: s.started["a"], ExitCode: 1, Result: job.ResultNormal, At: s.now.Add(10 * time.Second)})
	collect(out)
	delete(s.ends, s.started["a"])
	s.codes["a"] = s.codes["a"][1:]
	_, st, _ := s.e.Task("a")
	if !st.Retrying() || st.Attempt != 1 || st.RetryOf != 1 || st.Status != job.Running {
		t.Fatalf("after the first failure: %+v", st)
	}
	s.want("onfail", "idle", "onok", "idle", "free", "idle")
	if got, want := s.e.NextWake(), mustTime(t, "2026-03-01T12:01:00Z"); !got.Equal(want) {
		t.Errorf("next wake %s, want %s (the retry)", got, want)
	}
	// Restarted while it waits: the retry still comes, once.
	s.restart()
	s.advance("2026-03-01T12:10:00Z")
	runs := s.runsOf("a")
	var starts []string
	for _, r := range runs {
		starts = append(starts, r.Start.Format("15:04:05")+" "+r.Trigger+" "+r.Status.String())
		if r.ID != 1 && (r.RetryOf != 1 || r.Attempt != int(r.ID-1)) {
			t.Errorf("run %d: attempt %d retry of %d", r.ID, r.Attempt, r.RetryOf)
		}
	}
	want := []string{"12:00:00 start failure", "12:01:00 retry failure", "12:03:10 retry failure", "12:06:20 retry success"}
	if !slices.Equal(starts, want) {
		t.Errorf("runs %q, want %q", starts, want)
	}
	// Dependents saw only the final outcome: onok ran once, onfail
	// never, and nr(a) held only when a was done.
	s.want("a", "success", "onok", "success", "onfail", "idle", "free", "success")
	if n := len(s.runsOf("onok")); n != 1 {
		t.Errorf("onok ran %d times", n)
	}
	if r := s.runsOf("free"); len(r) != 1 || !r[0].Start.Equal(mustTime(t, "2026-03-01T12:06:30Z")) {
		t.Errorf("free ran %+v, want once when a succeeded", r)
	}
	if _, st, _ := s.e.Task("a"); st.Attempt != 0 || st.RetryOf != 0 {
		t.Errorf("settled task keeps attempt %d retry of %d", st.Attempt, st.RetryOf)
	}
	if !slices.Equal(alerts, []job.Outcome{job.OutcomeRetry}) {
		t.Errorf("alerts %v, want one retry alert from the run before the restart", alerts)
	}
}

func TestRetriesExhaustedThenFinalFailure(t *testing.T) {
	t.Parallel()
	s := newSim(t, "2026-03-01T12:00:00Z", callable("a", "n_retrys: 1\nalert_on: failure\nalert_to: ops@example.com")+
		callable("onfail", "condition: fa(a)"))
	s.codes["a"] = []int{2, 3}
	s.act("a", job.ActStart)
	var outs []*Output
	for range 2 {
		s.now = s.now.Add(time.Second)
		id := s.started["a"]
		delete(s.ends, id)
		code := s.codes["a"][0]
		s.codes["a"] = s.codes["a"][1:]
		outs = append(outs, s.apply(RunExited{RunID: id, ExitCode: code, Result: job.ResultNormal}))
	}
	if len(outs[0].Alerts) != 0 {
		t.Errorf("an alert on a failure that is retried: %+v", outs[0].Alerts)
	}
	if len(outs[1].Alerts) != 1 || outs[1].Alerts[0].Outcome != job.OutcomeFailure || outs[1].Alerts[0].ExitCode != 3 {
		t.Errorf("final alerts %+v, want the failure of the retry", outs[1].Alerts)
	}
	s.want("a", "failure", "onfail", "running")
	if runs := s.runsOf("a"); len(runs) != 2 || runs[1].Trigger != "retry" || runs[1].Attempt != 1 {
		t.Errorf("runs %+v", runs)
	}
}

func TestAbortWhileWaitingToRetry(t *testing.T) {
	t.Parallel()
	s := newSim(t, "2026-03-01T12:00:00Z", callable("a", "n_retrys: 5\nretry_delay: 10m"))
	s.codes["a"] = []int{1}
	s.act("a", job.ActStart)
	s.advance("2026-03-01T12:05:00Z")
	if _, st, _ := s.e.Task("a"); !st.Retrying() {
		t.Fatalf("not retrying: %+v", st)
	}
	why, _ := s.e.Why("a", s.now)
	if len(why) == 0 || why[0].Kind != WhyRetry || !strings.Contains(why[0].Text, "retry 1 of 5") {
		t.Errorf("why %+v", why)
	}
	s.act("a", job.ActAbort)
	s.advance("2026-03-01T13:00:00Z")
	s.want("a", "aborted")
	if n := len(s.runsOf("a")); n != 1 {
		t.Errorf("%d runs after the abort, want 1", n)
	}
	if !s.e.NextWake().IsZero() {
		t.Errorf("next wake %s after the abort", s.e.NextWake())
	}
}

func TestTermRunTimeKillsAndRetries(t *testing.T) {
	t.Parallel()
	s := newSim(t, "2026-03-01T12:00:00Z", callable("a", "term_run_time: 5m\nn_retrys: 1")+callable("b", "condition: fa(a)"))
	s.length["a"] = time.Hour // it hangs
	s.act("a", job.ActStart)
	if got, want := s.e.NextWake(), mustTime(t, "2026-03-01T12:05:00Z"); !got.Equal(want) {
		t.Fatalf("next wake %s, want %s", got, want)
	}
	kills := func(from int) []int64 {
		var ids []int64
		for _, ef := range s.effects[from:] {
			if k, ok := ef.(KillRun); ok {
				ids = append(ids, k.RunID)
			}
		}
		return ids
	}
	for i, id := range []int64{1, 2} {
		n := len(s.effects)
		s.advance(s.now.Add(5 * time.Minute).Format(time.RFC3339))
		if got := kills(n); !slices.Equal(got, []int64{id}) {
			t.Fatalf("kill %d: killed %v, want run %d", i, got, id)
		}
		// The process dies of TERM: its supervisor reports a kill.
		delete(s.ends, id)
		s.apply(RunExited{RunID: id, ExitCode: -1, Result: job.ResultKilled, Message: "signal: terminated"})
		r := s.runs[id]
		if r.Status != job.Failure || r.Result != job.ResultTimeout || !strings.Contains(r.Message, "term_run_time") ||
			!strings.Contains(r.Message, "signal: terminated") {
			t.Errorf("run %d: %+v", id, r)
		}
	}
	s.want("a", "failure", "b", "running")
}

func TestTermRunTimeSurvivesRestart(t *testing.T) {
	t.Parallel()
	s := newSim(t, "2026-03-01T12:00:00Z", callable("a", "term_run_time: 30m"))
	s.length["a"] = time.Hour
	s.act("a", job.ActStart)
	s.advance("2026-03-01T12:20:00Z")
	s.restart()
	n := len(s.effects)
	s.advance("2026-03-01T12:30:00Z")
	if len(s.effects) == n {
		t.Fatal("no kill at 12:30 after a restart")
	}
	if k, ok := s.effects[n].(KillRun); !ok || k.RunID != 1 {
		t.Errorf("effect %#v", s.effects[n])
	}
	// Killed once: a later wake does not kill it again.
	kills := func(from int) int {
		k := 0
		for _, ef := range s.effects[from:] {
			if _, ok := ef.(KillRun); ok {
				k++
			}
		}
		return k
	}
	n = len(s.effects)
	s.apply(Tick{})
	if k := kills(n); k != 0 {
		t.Errorf("killed %d more times", k)
	}
	// Restarted before the run ended: the kill may have been lost with
	// the old server, and the new one kills it again, once.
	s.restart()
	n = len(s.effects)
	s.apply(Tick{})
	s.apply(Tick{})
	if k := kills(n); k != 1 {
		t.Errorf("after a restart, killed %d times, want 1", k)
	}
	s.apply(RunExited{RunID: 1, ExitCode: -1, Result: job.ResultKilled, Message: "signal: terminated"})
	if r := s.runs[1]; r.Status != job.Failure || r.Result != job.ResultTimeout || strings.Count(r.Message, "term_run_time") != 1 {
		t.Errorf("run %+v", r)
	}
}

func TestRunAlarms(t *testing.T) {
	t.Parallel()
	s := newSim(t, "2026-03-01T12:00:00Z",
		callable("long", "max_run_alarm: 10m\nalert_on: alarm\nalert_to: ops@example.com")+callable("short", "min_run_alarm: 2m"))
	s.length["long"] = 15 * time.Minute
	s.length["short"] = 30 * time.Second
	s.act("long", job.ActStart)
	s.act("short", job.ActStart)
	var alarms []string
	for s.now.Before(mustTime(t, "2026-03-01T12:20:00Z")) {
		next := s.e.NextWake()
		for _, at := range s.ends {
			if next.IsZero() || at.Before(next) {
				next = at
			}
		}
		if next.IsZero() {
			break
		}
		n := len(s.effects)
		s.advance(next.Format(time.RFC3339))
		for _, ef := range s.effects[n:] {
			if a, ok := ef.(Alarmed); ok {
				alarms = append(alarms, a.Alarm.At.Format("15:04:05")+" "+a.Task+" "+string(a.Alarm.Kind))
			}
		}
	}
	want := []string{"12:00:30 short min_run_alarm", "12:10:00 long max_run_alarm"}
	if !slices.Equal(alarms, want) {
		t.Errorf("alarms %q, want %q", alarms, want)
	}
	// The alarm is a mark on the status, not an outcome: long still
	// succeeds and keeps its mark until it is triggered again.
	s.want("long", "success", "short", "success")
	_, st, _ := s.e.Task("long")
	if len(st.Alarms) != 1 || st.Alarms[0].RunID != 1 || !strings.Contains(st.Alarms[0].Message, "longer than max_run_alarm 10m") {
		t.Errorf("alarms of long: %+v", st.Alarms)
	}
	if len(s.alerts) != 1 || s.alerts[0].Outcome != job.OutcomeAlarm || s.alerts[0].Task != "long" || s.alerts[0].RunID != 1 {
		t.Errorf("alerts %+v, want long's alarm mailed (short asks for none)", s.alerts)
	}
	s.act("long", job.ActStart)
	if _, st, _ := s.e.Task("long"); len(st.Alarms) != 0 {
		t.Errorf("a new trigger keeps the last one's alarms: %+v", st.Alarms)
	}
}

func TestMustStartAndCompleteBy(t *testing.T) {
	t.Parallel()
	// Daily at 05:00 Paris; it waits for gate, which succeeds at 06:40;
	// it must start by +30m and complete by 07:00 (Paris).
	s := newSim(t, "2026-03-28T00:00:00Z",
		callable("gate", "")+
			callable("a", "start_times: 05:00\ntimezone: Europe/Paris\ncondition: su(gate)\nmust_start_by: +30m\nmust_complete_by: 07:00\nalert_on: alarm\nalert_to: ops@example.com"))
	s.length["a"] = 30 * time.Minute
	var alarms []string
	step := func(to string) {
		n := len(s.effects)
		s.advance(to)
		for _, ef := range s.effects[n:] {
			if a, ok := ef.(Alarmed); ok {
				alarms = append(alarms, a.Alarm.At.UTC().Format("02 15:04")+" "+string(a.Alarm.Kind))
			}
		}
	}
	step("2026-03-28T05:39:00Z") // 06:39 Paris
	s.want("a", "waiting")
	s.act("gate", job.ActStart)
	s.length["gate"] = 0
	step("2026-03-28T06:00:00Z") // a started at 06:39, ends 07:09 Paris
	step("2026-03-28T07:00:00Z")
	// The next day is the spring-forward night: 05:00 Paris is 03:00 UTC,
	// and a is released at once (gate succeeded): no alarm.
	step("2026-03-29T07:00:00Z")
	want := []string{"28 04:30 must_start_by", "28 06:00 must_complete_by"}
	if !slices.Equal(alarms, want) {
		t.Errorf("alarms %q, want %q", alarms, want)
	}
	for _, r := range s.runsOf("a") {
		if r.Status != job.Success {
			t.Errorf("run %+v", r)
		}
	}
	if len(s.alerts) != 2 || s.alerts[0].Outcome != job.OutcomeAlarm || s.alerts[0].RunID != 0 || !strings.Contains(s.alerts[1].Message, "has not completed by") {
		t.Errorf("alerts %+v", s.alerts)
	}
}

// A time limit and retries inside a bundle: the bundle waits for the
// child's final outcome, and a child killed at its limit fails the bundle
// only when no retry is left.
func TestTimeoutAndRetryInsideABundle(t *testing.T) {
	t.Parallel()
	defs := bundleDefs + callable("k1", "parent: box\nterm_run_time: 5m\nn_retrys: 1\nretry_delay: 1m") + callable("k2", "parent: box\ncondition: su(k1)")
	for _, tc := range []struct {
		name            string
		k1              time.Duration // how long each run of k1 takes
		box, k2, killed string
	}{
		{"both runs hang", time.Hour, "failure", "idle", "1,2"},
		{"the retry succeeds", 0, "success", "success", "1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newSim(t, "2026-03-01T12:00:00Z", defs)
			s.length["k1"] = time.Hour
			s.act("box", job.ActStart)
			s.advance("2026-03-01T12:05:00Z") // the first run is killed
			for _, ef := range s.effects {
				if k, ok := ef.(KillRun); ok {
					delete(s.ends, k.RunID)
					s.apply(RunExited{RunID: k.RunID, ExitCode: -1, Result: job.ResultKilled})
				}
			}
			s.want("box", "running", "k1", "running", "k2", "waiting")
			s.length["k1"] = tc.k1
			n := len(s.effects)
			s.advance("2026-03-01T12:11:00Z") // the retry at 12:06, killed at 12:11 if it hangs
			for _, ef := range s.effects[n:] {
				if k, ok := ef.(KillRun); ok {
					delete(s.ends, k.RunID)
					s.apply(RunExited{RunID: k.RunID, ExitCode: -1, Result: job.ResultKilled})
				}
			}
			s.advance("2026-03-01T13:00:00Z")
			s.want("box", tc.box, "k2", tc.k2)
			var killed []string
			for _, r := range s.runsOf("k1") {
				if r.Result == job.ResultTimeout {
					killed = append(killed, fmt.Sprint(r.ID-1)) // run 1 is the bundle's
				}
			}
			if strings.Join(killed, ",") != tc.killed {
				t.Errorf("runs killed at the limit: %v, want %s", killed, tc.killed)
			}
		})
	}
}
