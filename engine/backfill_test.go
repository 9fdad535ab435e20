package engine

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/job"
)

func instant(t *testing.T, s string) time.Time {
	t.Helper()
	at, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return at
}

// ledger is the fire ledger of a task as the store keeps it: the fires
// recorded, in order (the engine applies the store's rule to them).
func (s *sim) ledger(task string) []job.Fire {
	var out []job.Fire
	for _, f := range s.fires {
		if f.Task == task {
			out = append(out, f)
		}
	}
	return out
}

// backfill asks for a backfill of task over [from, to], as alice, with
// the ledger as it is.
func (s *sim) backfill(task, from, to string, parallel int) *BackfillResult {
	s.t.Helper()
	out := s.apply(Backfill{Task: task, From: instant(s.t, from), To: instant(s.t, to), MaxParallel: parallel, By: "alice", Ledger: s.ledger(task)})
	if out.Backfill == nil {
		s.t.Fatal("no backfill result")
	}
	return out.Backfill
}

// actions renders a result as "HH:MM action" lines, in UTC (or "Jan 02
// 15:04" when the range spans days).
func actions(r *BackfillResult, layout string) string {
	var b strings.Builder
	for _, o := range r.Occurrences {
		fmt.Fprintf(&b, "%s %s\n", o.Scheduled.UTC().Format(layout), o.Action)
	}
	return b.String()
}

// alertOutcomes returns the outcomes of the alerts so far, in order.
func (s *sim) alertOutcomes() []job.Outcome {
	var out []job.Outcome
	for _, a := range s.alerts {
		out = append(out, a.Outcome)
	}
	return out
}

// backfillRuns returns the backfill runs of a task, in order of ID, as
// "scheduled status" lines.
func (s *sim) backfillRuns(task string) string {
	var b strings.Builder
	for id := int64(1); id <= s.e.lastRun; id++ {
		r, ok := s.runs[id]
		if !ok || r.Task != task || r.Trigger != job.TriggerBackfill {
			continue
		}
		fmt.Fprintf(&b, "%s %s\n", r.Scheduled.UTC().Format("Jan 02 15:04"), r.Status)
	}
	return b.String()
}

func TestBackfillRunsEachOccurrenceOnceInOrder(t *testing.T) {
	t.Parallel()
	// Defined on 10 March: the occurrences before are no one's.
	s := newSim(t, "2026-03-10T12:00:00Z", callable("daily", "start_times: 02:00")+callable("after", "condition: su(daily)"))
	s.length["daily"] = 10 * time.Minute
	res := s.backfill("daily", "2026-03-05T00:00:00Z", "2026-03-08T02:00:00Z", 0)
	if got, want := actions(res, "Jan 02 15:04"), "Mar 05 02:00 queued\nMar 06 02:00 queued\nMar 07 02:00 queued\nMar 08 02:00 queued\n"; got != want {
		t.Fatalf("backfill:\n%s\nwant:\n%s", got, want)
	}
	if res.Occurrences[0].RunID == 0 || res.Occurrences[1].RunID != 0 {
		t.Errorf("the first occurrence starts at once, alone: %+v", res.Occurrences)
	}
	s.want("daily", "idle") // a backfill run does not change the task's status
	_, st, _ := s.e.Task("daily")
	if st.Backfill == nil || len(st.Backfill.Queue) != 3 || st.Backfill.Queue[0].By != "alice" {
		t.Fatalf("state %+v", st.Backfill)
	}
	s.advance("2026-03-10T13:00:00Z")
	if got, want := s.backfillRuns("daily"), "Mar 05 02:00 success\nMar 06 02:00 success\nMar 07 02:00 success\nMar 08 02:00 success\n"; got != want {
		t.Fatalf("backfill runs:\n%s\nwant:\n%s", got, want)
	}
	for _, r := range s.runs {
		if r.By != "alice" || r.Start.Before(instant(t, "2026-03-10T12:00:00Z")) {
			t.Errorf("run %+v", r)
		}
	}
	if _, st, _ := s.e.Task("daily"); st.Backfill != nil || st.Status != job.Idle {
		t.Errorf("after the backfill: %+v", st)
	}
	s.want("after", "idle") // dependents hear nothing of backfill runs
	for _, f := range s.ledger("daily") {
		if f.Fate != job.FateBackfilled || f.RunID == 0 || f.Reason != "backfilled at the request of alice" {
			t.Errorf("fire %+v", f)
		}
	}

	// Asked again, over a wider range: what was backfilled is done, and
	// only the new occurrences run.
	res = s.backfill("daily", "2026-03-04T00:00:00Z", "2026-03-08T23:00:00Z", 0)
	if got, want := actions(res, "Jan 02 15:04"), "Mar 04 02:00 queued\nMar 05 02:00 done\nMar 06 02:00 done\nMar 07 02:00 done\nMar 08 02:00 done\n"; got != want {
		t.Fatalf("repeated backfill:\n%s\nwant:\n%s", got, want)
	}
	if o := res.Occurrences[1]; o.Fate != job.FateBackfilled || o.RunID == 0 || !strings.HasPrefix(o.Reason, "it was backfilled (run ") {
		t.Errorf("done occurrence %+v", o)
	}
	s.advance("2026-03-10T14:00:00Z")
	if n := strings.Count(s.backfillRuns("daily"), "\n"); n != 5 {
		t.Errorf("%d backfill runs, want 5", n)
	}
	// And while they wait, a repeat queues none twice.
	s.backfill("daily", "2026-03-01T00:00:00Z", "2026-03-02T03:00:00Z", 0)
	res = s.backfill("daily", "2026-03-01T00:00:00Z", "2026-03-02T03:00:00Z", 0)
	if got, want := actions(res, "Jan 02 15:04"), "Mar 01 02:00 done\nMar 02 02:00 pending\n"; got != want {
		t.Errorf("backfill while one is under way:\n%s\nwant:\n%s", got, want)
	}
	s.advance("2026-03-10T15:00:00Z")
	if n := strings.Count(s.backfillRuns("daily"), "\n"); n != 7 {
		t.Errorf("%d backfill runs, want 7", n)
	}
}

func TestBackfillMakesUpMissedAndSkipped(t *testing.T) {
	t.Parallel()
	s := newSim(t, "2026-06-01T00:00:00Z", callable("slow", "cron: 0 * * * *"))
	s.length["slow"] = 90 * time.Minute
	s.advance("2026-06-01T03:59:00Z") // 00:00 ran, 01:00 skipped, 02:00 ran, 03:00 skipped
	// Down from 03:59 to 06:30: 04:00, 05:00 and 06:00 missed.
	var recs []job.Record
	for _, n := range s.e.Names() {
		def, st, _ := s.e.Task(n)
		recs = append(recs, job.Record{Def: &def, State: st})
	}
	var active []*job.Run
	for _, r := range s.e.ActiveRuns() {
		c := *r
		active = append(active, &c)
	}
	e2 := New(Config{Workers: 10})
	if err := restore(e2, recs, active, s.e.lastRun, nil); err != nil {
		t.Fatal(err)
	}
	s.e = e2
	s.now = instant(t, "2026-06-01T06:30:00Z")
	s.apply(Tick{})
	s.advance("2026-06-01T06:35:00Z")
	s.length["slow"] = 10 * time.Minute
	res := s.backfill("slow", "2026-06-01T00:00:00Z", "2026-06-01T07:00:00Z", 0)
	if got, want := actions(res, "15:04"), "00:00 done\n01:00 queued\n02:00 done\n03:00 queued\n04:00 queued\n05:00 queued\n06:00 queued\n07:00 scheduled\n"; got != want {
		t.Fatalf("backfill:\n%s\nwant:\n%s", got, want)
	}
	if o := res.Occurrences[1]; o.Fate != job.FateSkipped || !strings.HasPrefix(o.Reason, "it was skipped: the task is running") {
		t.Errorf("skipped occurrence %+v", o)
	}
	if o := res.Occurrences[7]; !strings.Contains(o.Reason, "regular schedule") {
		t.Errorf("later occurrence %+v", o)
	}
	// 06:35 01:00, 06:45 03:00, 06:55 04:00; the regular 07:00 waits for
	// it until 07:05, then 05:00 at 07:15 and 06:00 at 07:25.
	s.advance("2026-06-01T07:40:00Z")
	var fates []string
	for _, f := range s.ledger("slow") {
		if f.Fate == job.FateBackfilled {
			fates = append(fates, f.Scheduled.Format("15:04")+" "+f.Reason)
		}
	}
	want := []string{
		"01:00 backfilled at the request of alice; it was skipped: the task is running with run 1 (overlap skip)",
		"03:00 backfilled at the request of alice; it was skipped: the task is running with run 2 (overlap skip)",
	}
	if len(fates) != 5 || fates[0] != want[0] || fates[1] != want[1] || !strings.Contains(fates[2], "it was missed: the scheduler was not running") {
		t.Errorf("backfilled fires:\n%s", strings.Join(fates, "\n"))
	}
	// The clock runs 07:00 itself, once.
	n := 0
	for _, r := range s.runs {
		if r.Scheduled.Equal(instant(t, "2026-06-01T07:00:00Z")) {
			n++
			if r.Trigger != "schedule" {
				t.Errorf("07:00 run %+v", r)
			}
		}
	}
	if n != 1 {
		t.Errorf("07:00 ran %d times", n)
	}
	// Asked again: nothing left to do.
	res = s.backfill("slow", "2026-06-01T00:00:00Z", "2026-06-01T07:00:00Z", 0)
	if res.Count(BackfillQueued) != 0 || res.Count(BackfillDone) != 8 {
		t.Errorf("repeated backfill:\n%s", actions(res, "15:04"))
	}
}

func TestBackfillParallelism(t *testing.T) {
	t.Parallel()
	s := newSimWith(t, Config{Workers: 4}, "2026-06-02T00:30:00Z", callable("h", "cron: 0 * * * *")+callable("other", ""))
	s.length["h"] = 7 * time.Minute
	s.backfill("h", "2026-06-01T00:00:00Z", "2026-06-01T11:00:00Z", 2)
	most := 0
	var order []time.Time
	for s.now.Before(instant(t, "2026-06-02T01:40:00Z")) {
		if n := s.e.backfillTotal; n > most {
			most = n
		}
		checkBackfill(t, s.e)
		s.advance(s.now.Add(time.Minute).Format(time.RFC3339))
	}
	for id := int64(1); id <= s.e.lastRun; id++ {
		if r, ok := s.runs[id]; ok && r.Trigger == job.TriggerBackfill {
			order = append(order, r.Scheduled)
		}
	}
	if most != 2 || len(order) != 12 {
		t.Fatalf("at most %d backfill runs at once (want 2), %d runs (want 12)", most, len(order))
	}
	for i := 1; i < len(order); i++ {
		if !order[i].After(order[i-1]) {
			t.Fatalf("runs out of order: %v", order)
		}
	}

	// Together backfill runs leave a worker slot to the regular schedule.
	s.backfill("h", "2026-05-30T00:00:00Z", "2026-05-30T11:00:00Z", 10)
	if s.e.backfillTotal != 3 || s.e.running != 3 {
		t.Fatalf("%d backfill runs of %d running, want 3 of 4 workers", s.e.backfillTotal, s.e.running)
	}
	s.act("other", job.ActStart)
	s.want("other", "running")
}

// checkBackfill checks the engine's backfill counts against its runs.
func checkBackfill(t *testing.T, e *Engine) {
	t.Helper()
	total := 0
	per := map[string]int{}
	for _, r := range e.runs {
		if r.Trigger == job.TriggerBackfill {
			total++
			per[r.Task]++
		}
	}
	if total != e.backfillTotal || total > e.backfillSlots() {
		t.Fatalf("%d backfill runs, counted %d, slots %d", total, e.backfillTotal, e.backfillSlots())
	}
	for name, en := range e.tasks {
		if per[name] != en.backfilling {
			t.Fatalf("%s: %d backfill runs, counted %d", name, per[name], en.backfilling)
		}
		if bf := en.st.Backfill; bf != nil && per[name] > max(1, bf.MaxParallel) {
			t.Fatalf("%s: %d backfill runs, at most %d", name, per[name], bf.MaxParallel)
		}
	}
	checkInvariants(t, e)
}

func TestBackfillYieldsToTheRegularSchedule(t *testing.T) {
	t.Parallel()
	s := newSim(t, "2026-06-02T09:50:00Z", callable("h", "cron: 0 * * * *"))
	s.length["h"] = 20 * time.Minute
	s.backfill("h", "2026-06-01T00:00:00Z", "2026-06-01T02:00:00Z", 0)
	s.advance("2026-06-02T10:00:00Z")
	// 09:50 the 00:00 backfill run started; at 10:00 the regular
	// occurrence fires: it ran (it is not skipped), and the task waits
	// for the backfill run to end.
	s.want("h", "ready")
	if f := s.fires[len(s.fires)-1]; f.Fate != job.FateRan || !f.Scheduled.Equal(instant(t, "2026-06-02T10:00:00Z")) {
		t.Fatalf("regular fire %+v", f)
	}
	rs, _ := s.e.Why("h", s.now)
	if len(rs) == 0 || rs[0].Kind != WhyBackfill || !strings.Contains(rs[0].Text, "waits for its 1 backfill run(s) to end") {
		t.Errorf("why: %+v", rs)
	}
	s.advance("2026-06-02T10:10:00Z")
	s.want("h", "running") // before the next backfill run
	if s.e.backfillTotal != 0 {
		t.Fatal("a backfill run started beside the regular one")
	}
	rs, _ = s.e.Why("h", s.now)
	if !strings.Contains(fmt.Sprint(rs), "the backfill waits for the running regular trigger of h to end") {
		t.Errorf("why: %+v", rs)
	}
	s.advance("2026-06-02T11:30:00Z")
	// 10:10 regular until 10:30, then backfill 01:00 until 10:50 and 02:00
	// until 11:10 (the 11:00 occurrence waits for it until 11:10).
	var got []string
	for id := int64(1); id <= s.e.lastRun; id++ {
		r := s.runs[id]
		got = append(got, fmt.Sprintf("%s %s %s-%s", r.Trigger, r.Scheduled.Format("02 15:04"), r.Start.Format("15:04"), r.End.Format("15:04")))
	}
	want := "backfill 01 00:00 09:50-10:10,schedule 02 10:00 10:10-10:30,backfill 01 01:00 10:30-10:50,backfill 01 02:00 10:50-11:10,schedule 02 11:00 11:10-11:30"
	if strings.Join(got, ",") != want {
		t.Errorf("runs:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.ReplaceAll(want, ",", "\n"))
	}
}

func TestBackfillBesideOverlapAllow(t *testing.T) {
	t.Parallel()
	s := newSim(t, "2026-06-02T09:50:00Z", callable("h", "cron: 0 * * * *\noverlap: allow"))
	s.length["h"] = 20 * time.Minute
	s.backfill("h", "2026-06-01T00:00:00Z", "2026-06-01T01:00:00Z", 0)
	s.advance("2026-06-02T10:00:00Z")
	s.want("h", "running")
	if s.e.backfillTotal != 1 {
		t.Fatal("the backfill run did not run beside the regular one")
	}
	s.advance("2026-06-02T10:40:00Z")
	if got := s.backfillRuns("h"); got != "Jun 01 00:00 success\nJun 01 01:00 success\n" {
		t.Errorf("backfill runs:\n%s", got)
	}
	s.want("h", "success")
}

func TestBackfillCancel(t *testing.T) {
	t.Parallel()
	s := newSim(t, "2026-06-02T09:00:00Z", callable("h", "cron: 0 * * * *"))
	s.length["h"] = time.Hour
	s.backfill("h", "2026-06-01T00:00:00Z", "2026-06-01T05:00:00Z", 2)
	out := s.apply(BackfillCancel{Task: "h", By: "bob"})
	if got, want := actions(out.Backfill, "15:04"), "00:00 killed\n01:00 killed\n02:00 canceled\n03:00 canceled\n04:00 canceled\n05:00 canceled\n"; got != want {
		t.Fatalf("cancel:\n%s\nwant:\n%s", got, want)
	}
	kills := 0
	for _, ef := range out.Effects {
		if _, ok := ef.(KillRun); ok {
			kills++
		}
	}
	if kills != 2 {
		t.Errorf("%d kills", kills)
	}
	if _, err := s.e.Apply(BackfillCancel{Task: "h"}, s.now); !errors.Is(err, ErrRefused) {
		t.Errorf("second cancel: %v", err)
	}
	s.now = s.now.Add(time.Second)
	for _, r := range s.e.BackfillRuns("h") {
		delete(s.ends, r.ID)
		s.apply(RunExited{RunID: r.ID, ExitCode: -1, Result: job.ResultNormal, Message: "signal: terminated"})
	}
	if got := s.backfillRuns("h"); got != "Jun 01 00:00 aborted\nJun 01 01:00 aborted\n" {
		t.Errorf("backfill runs:\n%s", got)
	}
	for _, r := range s.runs {
		if r.EndedBy != "bob" {
			t.Errorf("run %+v", r)
		}
	}
	_, st, _ := s.e.Task("h")
	if st.Backfill != nil || st.Status != job.Idle {
		t.Errorf("state %+v", st)
	}

	// An abort of the task cancels its backfill too, settled or not.
	s.backfill("h", "2026-05-01T00:00:00Z", "2026-05-01T02:00:00Z", 0)
	s.act("h", job.ActAbort)
	s.want("h", "idle")
	if _, st, _ := s.e.Task("h"); st.Backfill == nil || len(st.Backfill.Queue) != 0 || len(st.Backfill.Killed) != 1 {
		t.Errorf("after abort: %+v", st.Backfill)
	}
	s.advance("2026-06-02T11:00:00Z")
	if got := s.backfillRuns("h"); !strings.HasSuffix(got, "May 01 00:00 aborted\n") {
		t.Errorf("backfill runs:\n%s", got)
	}
	// What a cancel dropped may be backfilled again; what it killed was.
	res := s.backfill("h", "2026-06-01T00:00:00Z", "2026-06-01T03:00:00Z", 0)
	if got := actions(res, "15:04"); got != "00:00 done\n01:00 done\n02:00 queued\n03:00 queued\n" {
		t.Errorf("backfill after cancel:\n%s", got)
	}
}

func TestBackfillWaitsWhileFrozen(t *testing.T) {
	t.Parallel()
	s := newSim(t, "2026-06-02T09:30:00Z", callable("h", "cron: 0 * * * *"))
	s.act("h", job.ActFreeze)
	s.backfill("h", "2026-06-01T00:00:00Z", "2026-06-01T01:00:00Z", 0)
	s.advance("2026-06-02T09:45:00Z")
	if s.backfillRuns("h") != "" {
		t.Fatal("a frozen task ran a backfill")
	}
	rs, _ := s.e.Why("h", s.now)
	if !strings.Contains(fmt.Sprint(rs), "the backfill waits while h is frozen") {
		t.Errorf("why: %+v", rs)
	}
	s.act("h", job.ActReset)
	s.advance("2026-06-02T09:50:00Z")
	if got := s.backfillRuns("h"); got != "Jun 01 00:00 success\nJun 01 01:00 success\n" {
		t.Errorf("backfill runs:\n%s", got)
	}
}

// A restart in the middle of a backfill: the occurrences left still run,
// and none twice.
func TestBackfillAcrossRestart(t *testing.T) {
	t.Parallel()
	s := newSim(t, "2026-06-02T09:00:00Z", callable("h", "cron: 0 * * * *"))
	s.length["h"] = 10 * time.Minute
	s.backfill("h", "2026-06-01T00:00:00Z", "2026-06-01T09:00:00Z", 2)
	// 09:00 00:00 and 01:00 start, and the regular 09:00 waits for them
	// until 09:10; it runs until 09:20, then 02:00 and 03:00 start.
	s.advance("2026-06-02T09:25:00Z")
	var recs []job.Record
	for _, n := range s.e.Names() {
		def, st, _ := s.e.Task(n)
		recs = append(recs, job.Record{Def: &def, State: st})
	}
	var active []*job.Run
	for _, r := range s.e.ActiveRuns() {
		c := *r
		active = append(active, &c)
	}
	if len(active) != 2 {
		t.Fatalf("%d runs in flight, want 2", len(active))
	}
	e2 := New(Config{Workers: 10})
	if err := restore(e2, recs, active, s.e.lastRun, nil); err != nil {
		t.Fatal(err)
	}
	s.e = e2
	if e2.backfillTotal != 2 || e2.running != 2 || e2.tasks["h"].active != 0 || e2.tasks["h"].backfilling != 2 {
		t.Fatalf("restored counts: %d backfill, %d running", e2.backfillTotal, e2.running)
	}
	// Asked again meanwhile: nothing is queued twice.
	res := s.backfill("h", "2026-06-01T00:00:00Z", "2026-06-01T09:00:00Z", 2)
	if res.Count(BackfillQueued) != 0 || res.Count(BackfillDone) != 4 || res.Count(BackfillPending) != 6 {
		t.Errorf("repeated backfill:\n%s", actions(res, "15:04"))
	}
	s.advance("2026-06-02T10:35:00Z")
	checkBackfill(t, s.e)
	seen := map[time.Time]int{}
	for _, r := range s.runs {
		if r.Trigger == job.TriggerBackfill {
			seen[r.Scheduled]++
			if r.Status != job.Success {
				t.Errorf("run %+v", r)
			}
		}
	}
	if len(seen) != 10 {
		t.Errorf("%d occurrences backfilled, want 10", len(seen))
	}
	for at, n := range seen {
		if n != 1 {
			t.Errorf("%s ran %d times", at, n)
		}
	}
}

// A range over the nights the clocks change in Paris yields each local
// occurrence once: a time that does not exist fires once after the gap;
// a repeated time once, unless the schedule steps through the day.
func TestBackfillOverDST(t *testing.T) {
	t.Parallel()
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Fatal(err)
	}
	s := newSim(t, "2026-11-01T00:00:00Z", callable("night", "start_times: 02:30\ntimezone: Europe/Paris")+
		callable("half", "cron: 30 * * * *\ntimezone: Europe/Paris"))
	local := func(r *BackfillResult) string {
		var b strings.Builder
		for _, o := range r.Occurrences {
			fmt.Fprintf(&b, "%s %s\n", o.Scheduled.In(paris).Format("Jan 02 15:04 MST"), o.Action)
		}
		return b.String()
	}
	for _, c := range []struct{ task, from, to, want string }{
		{"night", "2026-03-27T12:00:00Z", "2026-03-30T12:00:00Z",
			"Mar 28 02:30 CET queued\nMar 29 03:00 CEST queued\nMar 30 02:30 CEST queued\n"},
		{"night", "2026-10-24T12:00:00Z", "2026-10-26T12:00:00Z",
			"Oct 25 02:30 CEST queued\nOct 26 02:30 CET queued\n"},
		{"half", "2026-03-29T00:00:00Z", "2026-03-29T02:00:00Z", // 00:00 to 04:00 in Paris
			"Mar 29 01:30 CET queued\nMar 29 03:00 CEST queued\nMar 29 03:30 CEST queued\n"},
		{"half", "2026-10-24T22:00:00Z", "2026-10-25T02:59:00Z", // 00:00 to 03:59 in Paris
			"Oct 25 00:30 CEST queued\nOct 25 01:30 CEST queued\nOct 25 02:30 CEST queued\nOct 25 02:30 CET queued\nOct 25 03:30 CET queued\n"},
	} {
		res := s.backfill(c.task, c.from, c.to, 10)
		if got := local(res); got != c.want {
			t.Errorf("%s from %s to %s:\n%s\nwant:\n%s", c.task, c.from, c.to, got, c.want)
		}
	}
	s.advance("2026-11-01T01:00:00Z")
	n := 0
	for _, task := range []string{"night", "half"} {
		seen := map[time.Time]bool{}
		for _, r := range s.runs {
			if r.Task == task && r.Trigger == job.TriggerBackfill {
				if seen[r.Scheduled] {
					t.Errorf("%s ran %s twice", task, r.Scheduled)
				}
				seen[r.Scheduled] = true
				n++
			}
		}
	}
	if n != 13 {
		t.Errorf("%d backfill runs, want 13", n)
	}
}

func TestBackfillDryRunChangesNothing(t *testing.T) {
	t.Parallel()
	s := newSim(t, "2026-06-02T09:30:00Z", callable("h", "cron: 0 * * * *"))
	_, before, _ := s.e.Task("h")
	ev := Backfill{Task: "h", From: instant(t, "2026-06-01T00:00:00Z"), To: instant(t, "2026-06-01T03:00:00Z"), By: "alice"}
	res, err := s.e.PlanBackfill(ev, s.now)
	if err != nil {
		t.Fatal(err)
	}
	if res.Count(BackfillQueued) != 4 {
		t.Errorf("dry run:\n%s", actions(res, "15:04"))
	}
	if _, after, _ := s.e.Task("h"); after.Backfill != nil || after.NextFire != before.NextFire || s.e.lastRun != 0 || len(s.e.backfills) != 0 {
		t.Errorf("a dry run changed the state: %+v", after)
	}
}

func TestBackfillRefusals(t *testing.T) {
	t.Parallel()
	h := setup(t, 10, callable("plain", "")+callable("hourly", "cron: * * * * *")+
		"insert_task: box\ntype: bundle\nstart_times: 02:00\n\n")
	h.apply(file{"c.json", `[{"name":"cfg","dependencies":[{"type":"TABLE","resourceId":"t","lifeDuration":3600}]}]`})
	at := func(s string) time.Time { return instant(t, s) }
	for _, c := range []struct {
		ev   Backfill
		want string
	}{
		{Backfill{Task: "nope"}, "task nope not found"},
		{Backfill{Task: "plain"}, "plain has no time trigger"},
		{Backfill{Task: "box"}, "box is a bundle"},
		{Backfill{Task: "cfg"}, "configuration cfg has no command or function"},
		{Backfill{Task: "hourly", From: at("2026-02-01T00:00:00Z"), To: at("2026-01-01T00:00:00Z")}, "is before from"},
		{Backfill{Task: "hourly", From: at("2026-01-01T00:00:00Z"), To: at("2026-02-01T00:00:00Z")}, "more than 10000 occurrences"},
		{Backfill{Task: "hourly", From: at("2026-02-01T00:00:00Z"), To: at("2026-02-01T01:00:00Z"), MaxParallel: -1}, "max_parallel must be at least 1"},
	} {
		_, err := h.e.Apply(c.ev, h.now)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.ev, err, c.want)
		}
	}
	if _, err := h.e.Apply(BackfillCancel{Task: "hourly"}, h.now); !errors.Is(err, ErrRefused) {
		t.Errorf("cancel without backfill: %v", err)
	}
	// A task whose backfill is under way cannot be deleted.
	h.apply(Backfill{Task: "hourly", From: at("2026-03-01T10:00:00Z"), To: at("2026-03-01T10:02:00Z")})
	if _, err := apply(h.e, file{"d", "delete_task: hourly\n"}, h.now); err == nil || !strings.Contains(err.Error(), "hourly is active") {
		t.Errorf("delete: %v", err)
	}
}

func TestBackfillConfiguration(t *testing.T) {
	t.Parallel()
	s := newSim(t, "2026-06-02T09:30:00Z", `[{"name":"cfg","dependencies":[{"type":"TABLE","resourceId":"t","lifeDuration":3600}],"command":"load","out_log_file":"/tmp/o","err_log_file":"/tmp/e"}]`)
	// The scheduler replays the stored events: these are the instants
	// they trigger the configuration at. One ran at the time.
	occ := []time.Time{instant(t, "2026-06-01T10:00:00Z"), instant(t, "2026-06-01T11:00:00Z"), instant(t, "2026-06-01T12:00:00Z"), instant(t, "2026-06-03T12:00:00Z")}
	ledger := []job.Fire{{Task: "cfg", Scheduled: occ[1], Fate: job.FateRan, RunID: 1}}
	out := s.apply(Backfill{Task: "cfg", From: instant(t, "2026-06-01T10:30:00Z"), To: instant(t, "2026-06-04T00:00:00Z"), Occurrences: occ, Ledger: ledger})
	if got := actions(out.Backfill, "Jan 02 15:04"); got != "Jun 01 11:00 done\nJun 01 12:00 queued\nJun 03 12:00 scheduled\n" {
		t.Errorf("backfill:\n%s", got)
	}
	s.advance("2026-06-02T09:31:00Z")
	if got := s.backfillRuns("cfg"); got != "Jun 01 12:00 success\n" {
		t.Errorf("backfill runs:\n%s", got)
	}
}

// The task's run policy holds for its backfill runs: a failed run is
// retried after its delay, across a restart, without a worker slot while
// it waits; a hung run raises max_run_alarm and is killed at term_run_time
// and retried; only the last failure is alerted as final.
func TestBackfillRunPolicy(t *testing.T) {
	t.Parallel()
	s := newSim(t, "2026-03-10T12:00:00Z", callable("d", `start_times: 02:00
n_retrys: 1
retry_delay: 5m
term_run_time: 30m
max_run_alarm: 10m
alert_on: retry,failure,alarm
alert_to: ops@example.com`))
	s.length["d"] = 2 * time.Minute
	s.codes["d"] = []int{1}
	s.backfill("d", "2026-03-05T00:00:00Z", "2026-03-06T23:00:00Z", 1)
	// 12:00 run 1 (Mar 05) fails at 12:02; its retry waits until 12:07
	// while run 2 (Mar 06) runs 12:02-12:04.
	s.advance("2026-03-10T12:05:00Z")
	_, st, _ := s.e.Task("d")
	if st.Backfill == nil || len(st.Backfill.Queue) != 1 || st.Backfill.Queue[0].Attempt != 1 || st.Backfill.Queue[0].RetryOf != 1 {
		t.Fatalf("waiting retry: %+v", st.Backfill)
	}
	if got, want := s.e.NextWake(), mustTime(t, "2026-03-10T12:07:00Z"); !got.Equal(want) {
		t.Errorf("next wake %s, want %s (the retry)", got, want)
	}
	rs, _ := s.e.Why("d", s.now)
	if !slices.ContainsFunc(rs, func(r Reason) bool {
		return r.Kind == WhyRetry && r.Text == "the backfill run of 2026-03-05T02:00:00Z failed: retry 1 of 1 at 2026-03-10T12:07:00Z"
	}) {
		t.Errorf("why: %+v", rs)
	}
	checkBackfill(t, s.e)
	s.restart()
	s.advance("2026-03-10T12:10:00Z")
	checkBackfill(t, s.e)
	runs := s.runsOf("d")
	if len(runs) != 3 {
		t.Fatalf("%d runs, want 3: %+v", len(runs), runs)
	}
	r := runs[2]
	if r.Status != job.Success || r.Trigger != job.TriggerBackfill || r.Attempt != 1 || r.RetryOf != 1 ||
		!r.Scheduled.Equal(instant(t, "2026-03-05T02:00:00Z")) || !r.Start.Equal(instant(t, "2026-03-10T12:07:00Z")) || r.By != "alice" {
		t.Errorf("retry run %+v", r)
	}
	if n := len(s.ledger("d")); n != 2 {
		t.Errorf("%d fires, want one per occurrence: %+v", n, s.ledger("d"))
	}
	if got := s.alertOutcomes(); !slices.Equal(got, []job.Outcome{job.OutcomeRetry}) {
		t.Errorf("alerts %v, want one retry", got)
	}

	// A hung backfill run: alarmed at 10 minutes, killed at 30, retried
	// 5 minutes later, killed again: the final failure is alerted.
	s.length["d"] = time.Hour
	s.backfill("d", "2026-03-07T00:00:00Z", "2026-03-07T23:00:00Z", 1)
	kills := 0
	for _, at := range []string{"2026-03-10T12:40:00Z", "2026-03-10T13:15:00Z"} {
		n := len(s.effects)
		s.advance(at)
		var id int64
		for _, ef := range s.effects[n:] {
			if k, ok := ef.(KillRun); ok && k.Reason == "term_run_time" {
				id = k.RunID
			}
		}
		if id == 0 {
			t.Fatalf("no run killed by %s", at)
		}
		kills++
		delete(s.ends, id)
		s.apply(RunExited{RunID: id, ExitCode: -1, Result: job.ResultKilled, Message: "signal: terminated"})
		if r := s.runs[id]; r.Status != job.Failure || r.Result != job.ResultTimeout || !strings.Contains(r.Message, "term_run_time") {
			t.Errorf("killed run %+v", r)
		}
	}
	checkBackfill(t, s.e)
	runs = s.runsOf("d")
	if len(runs) != 5 || runs[4].Attempt != 1 || runs[4].RetryOf != runs[3].ID || !runs[4].Start.Equal(instant(t, "2026-03-10T12:45:00Z")) {
		t.Errorf("runs of the hung occurrence: %+v", runs[3:])
	}
	_, st, _ = s.e.Task("d")
	var alarms []int64
	for _, a := range st.Alarms {
		if a.Kind == job.AlarmMaxRun {
			alarms = append(alarms, a.RunID)
		}
	}
	if !slices.Equal(alarms, []int64{runs[3].ID, runs[4].ID}) {
		t.Errorf("max_run_alarm on runs %v, want %d and %d", alarms, runs[3].ID, runs[4].ID)
	}
	if st.Backfill != nil || st.Status != job.Idle {
		t.Errorf("after the backfill: %+v", st)
	}
	want := []job.Outcome{job.OutcomeRetry, job.OutcomeAlarm, job.OutcomeRetry, job.OutcomeAlarm, job.OutcomeFailure}
	if got := s.alertOutcomes(); !slices.Equal(got, want) {
		t.Errorf("alerts %v, want %v", got, want)
	}
}

// A cancel drops a backfill retry that waits, as any occurrence not
// started.
func TestBackfillCancelDropsWaitingRetry(t *testing.T) {
	t.Parallel()
	s := newSim(t, "2026-03-10T12:00:00Z", callable("d", "start_times: 02:00\nn_retrys: 3\nretry_delay: 1h"))
	s.length["d"] = time.Minute
	s.codes["d"] = []int{1}
	s.backfill("d", "2026-03-05T00:00:00Z", "2026-03-05T23:00:00Z", 1)
	s.advance("2026-03-10T12:30:00Z")
	out := s.apply(BackfillCancel{Task: "d", By: "bob"})
	if got, want := actions(out.Backfill, "Jan 02 15:04"), "Mar 05 02:00 canceled\n"; got != want {
		t.Errorf("cancel:\n%s\nwant:\n%s", got, want)
	}
	s.advance("2026-03-10T15:00:00Z")
	if n := len(s.runsOf("d")); n != 1 {
		t.Errorf("%d runs after the cancel, want 1", n)
	}
	if _, st, _ := s.e.Task("d"); st.Backfill != nil {
		t.Errorf("backfill left: %+v", st.Backfill)
	}
	checkBackfill(t, s.e)
}
