package engine

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/job"
)

// sim drives an engine on a simulated clock: runs end after the duration
// given for their task (zero: at once), and Ticks come at each NextWake.
type sim struct {
	*harness
	length map[string]time.Duration
	ends   map[int64]time.Time
	fires  []job.Fire
	// codes are the exit codes of a task's next runs, in order; a run
	// past them exits 0.
	codes map[string][]int
	// alerts are the alerts of every output.
	alerts []job.Alert
}

func newSim(t *testing.T, start string, definitions string) *sim {
	t.Helper()
	return newSimWith(t, Config{Workers: 10}, start, definitions)
}

func newSimWith(t *testing.T, cfg Config, start string, definitions string) *sim {
	t.Helper()
	at, err := time.Parse(time.RFC3339, start)
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, e: New(cfg), now: at, started: map[string]int64{}, runs: map[int64]job.Run{}}
	s := &sim{harness: h, length: map[string]time.Duration{}, ends: map[int64]time.Time{}, codes: map[string][]int{}}
	s.apply(file{"t.def", definitions})
	return s
}

func (s *sim) apply(ev Event) *Output {
	s.t.Helper()
	out := s.harness.apply(ev)
	s.fires = append(s.fires, out.Fires...)
	s.alerts = append(s.alerts, out.Alerts...)
	for _, ef := range out.Effects {
		if st, ok := ef.(StartRun); ok {
			s.ends[st.Run.ID] = s.now.Add(s.length[st.Run.Task])
		}
	}
	return out
}

func (s *sim) act(task string, a job.Action) { s.t.Helper(); s.apply(Act{Task: task, Action: a}) }

// advance moves the clock to the instant given, handling every wake and
// run end on the way in order.
func (s *sim) advance(to string) {
	s.t.Helper()
	end, err := time.Parse(time.RFC3339, to)
	if err != nil {
		s.t.Fatal(err)
	}
	for {
		next := s.e.NextWake()
		var exit int64
		for id, at := range s.ends {
			if (next.IsZero() || at.Before(next) || at.Equal(next)) && (exit == 0 || at.Before(s.ends[exit]) || (at.Equal(s.ends[exit]) && id < exit)) {
				next, exit = at, id
			}
		}
		if next.IsZero() || next.After(end) {
			s.now = end
			s.apply(Tick{})
			return
		}
		s.now = next
		if exit != 0 {
			delete(s.ends, exit)
			code := 0
			if task := s.runs[exit].Task; len(s.codes[task]) > 0 {
				code, s.codes[task] = s.codes[task][0], s.codes[task][1:]
			}
			s.apply(RunExited{RunID: exit, ExitCode: code, Result: job.ResultNormal})
			continue
		}
		s.apply(Tick{})
	}
}

// log renders fires as "local-time task fate" lines.
func (s *sim) log(loc *time.Location) string {
	var b strings.Builder
	for _, f := range s.fires {
		fmt.Fprintf(&b, "%s %s %s\n", f.Scheduled.In(loc).Format("Mon 02 15:04"), f.Task, f.Fate)
	}
	return b.String()
}

func (s *sim) wantLog(loc *time.Location, want string) {
	s.t.Helper()
	if got := s.log(loc); got != want {
		s.t.Errorf("fires:\n%s\nwant:\n%s", got, want)
	}
	s.fires = nil
}

func TestCalendarWeek(t *testing.T) {
	t.Parallel()
	// Monday 1 June 2026, UTC.
	s := newSim(t, "2026-06-01T00:00:00Z",
		callable("batch", "run_days: mo,we\nstart_times: 06:00,18:30")+
			callable("window", "run_days: tu\nrun_window: 04:00-05:00\nstart_mins: 0,30")+
			callable("night", "run_days: fr\nrun_window: 23:00-01:00\nstart_mins: 30"))
	s.advance("2026-06-08T00:00:00Z")
	s.wantLog(time.UTC, `Mon 01 06:00 batch ran
Mon 01 18:30 batch ran
Tue 02 04:00 window ran
Tue 02 04:30 window ran
Tue 02 05:00 window ran
Wed 03 06:00 batch ran
Wed 03 18:30 batch ran
Fri 05 23:30 night ran
Sat 06 00:30 night ran
`)
	n := 0
	for _, r := range s.runs {
		if r.Trigger != "schedule" || r.Scheduled.IsZero() || !r.Start.Equal(r.Scheduled) {
			t.Errorf("run %+v", r)
		}
		n++
	}
	if n != 9 {
		t.Errorf("%d runs, want 9", n)
	}
}

func TestBusyAndFrozenOccurrencesAreSkipped(t *testing.T) {
	t.Parallel()
	s := newSim(t, "2026-06-01T00:00:00Z", callable("slow", "cron: 0 * * * *")+callable("cold", "cron: 30 * * * *"))
	s.length["slow"] = 90 * time.Minute
	s.act("cold", job.ActFreeze)
	s.advance("2026-06-01T04:10:00Z")
	s.wantLog(time.UTC, `Mon 01 00:00 slow ran
Mon 01 00:30 cold skipped
Mon 01 01:00 slow skipped
Mon 01 01:30 cold skipped
Mon 01 02:00 slow ran
Mon 01 02:30 cold skipped
Mon 01 03:00 slow skipped
Mon 01 03:30 cold skipped
Mon 01 04:00 slow ran
`)
	s.advance("2026-06-01T05:00:00Z")
	if f := s.fires[len(s.fires)-1]; f.Task != "slow" || f.Reason != "the task is running with run 3 (overlap skip)" {
		t.Errorf("fire %+v", f)
	}
	if f := s.fires[0]; f.Task != "cold" || f.Reason != "the task is frozen" {
		t.Errorf("fire %+v", f)
	}
}

func TestMissedWhileDown(t *testing.T) {
	t.Parallel()
	// Seed 004: hourly from 01 Mar 01:00. Defined (started) 03 Mar 03:05:
	// the next run is 04:00 and nothing before counts as missed.
	s := newSim(t, "2026-03-03T03:05:00Z", callable("a", "start_date: 2026-03-01 01:00\ninterval: 1 hour"))
	if _, st, _ := s.e.Task("a"); !st.NextFire.Equal(time.Date(2026, 3, 3, 4, 0, 0, 0, time.UTC)) {
		t.Fatalf("next fire %s", st.NextFire)
	}
	s.advance("2026-03-04T04:05:00Z")
	s.fires = nil
	// Stopped at 04:05 after the 04:00 run; restarted at 07:30.
	var recs []job.Record
	for _, n := range s.e.Names() {
		def, st, _ := s.e.Task(n)
		recs = append(recs, job.Record{Def: &def, State: st})
	}
	e2 := New(Config{Workers: 10})
	if err := restore(e2, recs, nil, s.e.lastRun, nil); err != nil {
		t.Fatal(err)
	}
	s.e = e2
	s.now = time.Date(2026, 3, 4, 7, 30, 0, 0, time.UTC)
	s.apply(Tick{})
	s.wantLog(time.UTC, `Wed 04 05:00 a missed
Wed 04 06:00 a missed
Wed 04 07:00 a missed
`)
	if _, st, _ := s.e.Task("a"); !st.NextFire.Equal(time.Date(2026, 3, 4, 8, 0, 0, 0, time.UTC)) {
		t.Fatalf("next fire after restart %s, want 08:00", st.NextFire)
	}
	// A restart within the grace period still starts the occurrence.
	s.advance("2026-03-04T08:00:00Z")
	s.wantLog(time.UTC, "Wed 04 08:00 a ran\n")
}

func TestLongStopIsSummed(t *testing.T) {
	t.Parallel()
	s := newSim(t, "2026-03-01T00:00:00Z", callable("a", "cron: * * * * *"))
	var recs []job.Record
	def, st, _ := s.e.Task("a")
	recs = append(recs, job.Record{Def: &def, State: st})
	e2 := New(Config{})
	if err := restore(e2, recs, nil, 0, nil); err != nil {
		t.Fatal(err)
	}
	s.e = e2
	s.now = s.now.Add(30 * 24 * time.Hour)
	out := s.apply(Tick{})
	missed, summed := 0, 0
	for _, f := range out.Fires {
		if f.Fate == job.FateMissed {
			missed++
		}
		if strings.Contains(f.Reason, "not listed") {
			summed++
		}
	}
	if missed > maxMissed+1 || summed != 1 {
		t.Fatalf("%d missed, %d summaries", missed, summed)
	}
	if _, st, _ := s.e.Task("a"); !st.NextFire.After(s.now.Add(-2 * time.Minute)) {
		t.Errorf("next fire %s is still in the past", st.NextFire)
	}
}

func TestSameTickQueuesAllFirst(t *testing.T) {
	t.Parallel()
	// Two tasks that exclude each other and are due at the same instant:
	// exactly one runs, the one first in dispatch order.
	s := newSim(t, "2026-06-01T00:00:00Z",
		callable("x", "start_times: 10:00\ncondition: nr(y)")+callable("y", "start_times: 10:00\ncondition: nr(x)\npriority: 2"))
	s.length["x"], s.length["y"] = time.Hour, time.Hour
	s.advance("2026-06-01T10:00:00Z")
	s.want("y", "running", "x", "waiting")
}

func TestConditionGatesTimeTrigger(t *testing.T) {
	t.Parallel()
	s := newSim(t, "2026-06-01T00:01:00Z", callable("gate", "")+callable("a", "cron: 0 * * * *\ncondition: su(gate)"))
	s.advance("2026-06-01T01:00:00Z")
	s.want("a", "waiting")
	s.advance("2026-06-01T02:00:00Z")
	s.wantLog(time.UTC, "Mon 01 01:00 a ran\nMon 01 02:00 a skipped\n")
	s.act("gate", job.ActStart)
	s.advance("2026-06-01T02:00:00Z")
	s.want("a", "success")
	if r := s.runs[s.started["a"]]; !r.Scheduled.Equal(time.Date(2026, 6, 1, 1, 0, 0, 0, time.UTC)) {
		t.Errorf("run scheduled for %s, want the 01:00 occurrence", r.Scheduled)
	}
}

func TestRedefinition(t *testing.T) {
	t.Parallel()
	s := newSim(t, "2026-03-03T03:00:00Z", callable("b", "start_date: 2026-03-01 02:00\ninterval: 30 minutes"))
	s.advance("2026-03-03T03:45:00Z")
	// An update that leaves the trigger alone keeps the plan...
	s.apply(file{"u.def", "update_task: b\nlabel: x\n"})
	if _, st, _ := s.e.Task("b"); !st.NextFire.Equal(time.Date(2026, 3, 3, 4, 0, 0, 0, time.UTC)) {
		t.Fatalf("next %s", st.NextFire)
	}
	// ... and one that changes it plans from the definition, not the log.
	s.apply(file{"u.def", "update_task: b\ninterval: 45 minutes\n"})
	if _, st, _ := s.e.Task("b"); !st.NextFire.Equal(time.Date(2026, 3, 3, 4, 15, 0, 0, time.UTC)) {
		t.Fatalf("next after change %s, want 04:15", st.NextFire)
	}
	s.apply(file{"u.def", "update_task: b\nstart_date:\ninterval:\n"})
	if _, st, _ := s.e.Task("b"); !st.NextFire.IsZero() || !s.e.NextWake().IsZero() {
		t.Fatalf("a task without trigger is still armed: %s", st.NextFire)
	}
	s.apply(file{"u.def", "update_task: b\ncron: 0 5 * * *\n\ndelete_task: b\n"})
	if !s.e.NextWake().IsZero() {
		t.Fatal("a deleted task is still armed")
	}
}

func TestScheduledBundle(t *testing.T) {
	t.Parallel()
	s := newSim(t, "2026-06-01T00:00:00Z", "insert_task: box\ntype: bundle\nstart_times: 02:00\n\n"+
		callable("k1", "parent: box")+callable("k2", "parent: box\ncondition: su(k1)"))
	s.advance("2026-06-01T02:00:00Z")
	s.want("box", "success", "k1", "success", "k2", "success")
	at := time.Date(2026, 6, 1, 2, 0, 0, 0, time.UTC)
	for _, r := range s.runs {
		if !r.Scheduled.Equal(at) {
			t.Errorf("run %d of %s scheduled %s", r.ID, r.Task, r.Scheduled)
		}
	}
	if r := s.runs[s.started["k1"]]; r.Trigger != "bundle" {
		t.Errorf("child trigger %q", r.Trigger)
	}
}

func TestZones(t *testing.T) {
	t.Parallel()
	ny, _ := time.LoadLocation("America/New_York")
	e := New(Config{Location: ny})
	if _, err := apply(e, file{"z", callable("local", "start_times: 02:30") + callable("paris", "start_times: 02:30\ntimezone: Europe/Paris")}, time.Date(2026, 3, 7, 12, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"local": "2026-03-08T07:00:00Z", // 02:30 does not exist in New York that day
		"paris": "2026-03-08T01:30:00Z",
	} {
		if _, st, _ := e.Task(name); st.NextFire.Time().Format(time.RFC3339) != want {
			t.Errorf("%s next %s, want %s", name, st.NextFire.Time().Format(time.RFC3339), want)
		}
	}
}

// A week of an every-minute schedule on the simulated clock: every minute
// runs once, in order, and nothing is skipped.
func TestMinuteWeek(t *testing.T) {
	t.Parallel()
	s := newSim(t, "2026-10-20T00:00:00Z", callable("m", "cron: * * * * *\ntimezone: Europe/London"))
	s.advance("2026-10-26T23:59:30Z") // over the end of British summer time
	ran := 0
	for i, f := range s.fires {
		if f.Fate != job.FateRan || (i > 0 && f.Scheduled.Sub(s.fires[i-1].Scheduled) != time.Minute) {
			t.Fatalf("fire %d: %+v", i, f)
		}
		ran++
	}
	if ran != 7*24*60 || len(s.runs) != ran {
		t.Errorf("%d fires, %d runs, want %d", ran, len(s.runs), 7*24*60)
	}
}
