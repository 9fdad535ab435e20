package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/api"
	"github.com/gnomon-sched/gnomon/auth"
	"github.com/gnomon-sched/gnomon/job"
)

// nightly runs at 02:30 in the server's zone (Europe/Paris): on 29 March
// 2026 that time does not exist, and it runs at 03:00.
const nightly = `insert_task: nightly
type: callable
command: echo "$GNOMON_SCHEDULED_TIME"
out_log_file: @DIR@/nightly.out
err_log_file: @DIR@/nightly.err
start_times: 02:30

insert_task: report
type: callable
command: echo report
out_log_file: @DIR@/report.out
err_log_file: @DIR@/report.err
condition: su(nightly)
`

// backfillRuns returns the backfill runs of a task, newest first.
func (f *fixture) backfillRuns(task string) []job.Run {
	f.t.Helper()
	rs, err := f.client.ListRuns(context.Background(), api.RunsQuery{Task: task, Count: 1000})
	if err != nil {
		f.t.Fatal(err)
	}
	var out []job.Run
	for _, r := range rs.Runs {
		if r.Trigger == job.TriggerBackfill {
			out = append(out, r.Run)
		}
	}
	return out
}

// TestBackfill backfills a task over the night the clocks spring forward,
// through the command line: a dry run changes nothing, each occurrence
// runs once as that occurrence however often it is asked for, the fire
// ledger says so, and what is not past yet is left to the schedule.
func TestBackfill(t *testing.T) {
	t.Parallel()
	f := setup(t, simulateFrom("2026-03-31 12:00"))
	f.mustRun("gnomon", "def", "-f", f.file("n.def", nightly))

	out := f.mustRun("gnomon", "backfill", "-j", "nightly", "--from", "2026-03-27", "--to", "2026-03-30 00:00", "--dry-run")
	want := "2026-03-27T02:30:00+01:00 would run\n2026-03-28T02:30:00+01:00 would run\n2026-03-29T03:00:00+02:00 would run\n" +
		"dry run: backfill of nightly: 3 occurrence(s): 3 would run; nothing was changed\n"
	if out != want {
		t.Errorf("dry run:\n%s\nwant:\n%s", out, want)
	}
	if out := f.mustRun("gnomon", "runs", "-j", "nightly", "--fires"); !strings.Contains(out, "no fires recorded yet") {
		t.Errorf("a dry run recorded fires:\n%s", out)
	}

	out = f.mustRun("gnomon", "backfill", "-j", "nightly", "--from", "2026-03-27", "--to", "2026-03-30 00:00", "--max-parallel", "2")
	if !strings.HasPrefix(out, "2026-03-27T02:30:00+01:00 queued    run ") || !strings.Contains(out, "2026-03-29T03:00:00+02:00 queued") ||
		!strings.HasSuffix(out, "backfill of nightly: 3 occurrence(s): 3 queued\n") {
		t.Errorf("backfill:\n%s", out)
	}
	f.mustRun("gnomon", "clock", "advance", "--to", "2026-03-31 12:01")
	ran, _ := readFile(f.dir, "nightly.out")
	for _, at := range []string{"2026-03-27T01:30:00Z", "2026-03-28T01:30:00Z", "2026-03-29T01:00:00Z"} {
		if n := strings.Count(ran, at+"\n"); n != 1 || strings.Count(ran, "\n") != 3 {
			t.Errorf("nightly ran %d times for %s:\n%s", n, at, ran)
		}
	}
	runs := f.backfillRuns("nightly")
	if len(runs) != 3 {
		t.Fatalf("%d backfill runs, want 3", len(runs))
	}
	for _, r := range runs {
		if r.By != "admin" || r.Status != job.Success {
			t.Errorf("run %+v", r)
		}
	}
	if out := squeeze(f.mustRun("gnomon", "runs", "-j", "nightly", "-n", "3")); !strings.Contains(out, " nightly [backfill of 20260329 03:00:00] 20260331 12:00:") {
		t.Errorf("runs:\n%s", out)
	}
	fires := squeeze(f.mustRun("gnomon", "runs", "-j", "nightly", "--fires"))
	if strings.Count(fires, "backfilled at the request of admin\n") != 3 || !strings.Contains(fires, "20260329 03:00:00 backfilled 3 ") {
		t.Errorf("fires:\n%s", fires)
	}
	if out := f.mustRun("gnomon", "why", "-j", "nightly", "--at", "2026-03-29 03:00"); !strings.HasPrefix(out,
		"the occurrence at 2026-03-29 03:00:00 CEST was backfilled (backfilled at the request of admin): run 3, success\n") {
		t.Errorf("why --at:\n%s", out)
	}
	// Dependents hear nothing of backfill runs.
	if st, _ := f.client.Status(context.Background(), "report"); st.Rows[0].Status != job.Idle {
		t.Errorf("report is %s", st.Rows[0].Status)
	}

	// Asked again, and beyond the clock: what ran is done, what comes is
	// the schedule's.
	out = f.mustRun("gnomon", "backfill", "-j", "nightly", "--from", "2026-03-28", "--to", "2026-04-02")
	want = "2026-03-28T02:30:00+01:00 done      it was backfilled (run "
	if !strings.HasPrefix(out, want) || !strings.Contains(out, "2026-03-30T02:30:00+02:00 queued") ||
		!strings.Contains(out, "2026-04-01T02:30:00+02:00 scheduled it is not past yet: the regular schedule runs it") ||
		!strings.Contains(out, "backfill of nightly: 5 occurrence(s): 2 queued, 2 already ran or backfilled, 1 left to the regular schedule "+
			"(a backfill runs occurrences before 2026-03-31T10:01:00Z only)") {
		t.Errorf("backfill again:\n%s", out)
	}
	f.mustRun("gnomon", "clock", "advance", "--to", "2026-04-01 03:00")
	ran, _ = readFile(f.dir, "nightly.out")
	for _, at := range []string{"2026-03-28T01:30:00Z", "2026-03-30T00:30:00Z", "2026-03-31T00:30:00Z", "2026-04-01T00:30:00Z"} {
		if n := strings.Count(ran, at); n != 1 {
			t.Errorf("nightly ran %d times for %s:\n%s", n, at, ran)
		}
	}
	var v api.BackfillResponse
	if err := json.Unmarshal([]byte(f.mustRun("gnomon", "backfill", "-j", "nightly", "--from", "2026-03-27", "--to", "2026-04-01 03:00", "--json")), &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Occurrences) != 6 || v.Occurrences[5].Action != "done" || v.Occurrences[5].Fate != job.FateRan || v.Occurrences[0].Fate != job.FateBackfilled {
		t.Errorf("backfill --json: %+v", v)
	}

	// Mistakes.
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"--from", "2026-03-27"}, ExitUsage, "--from and --to are required"},
		{[]string{"--from", "2026-03-27", "--to", "2026-03-26"}, ExitUsage, "is before from"},
		{[]string{"--from", "yesterday", "--to", "2026-03-26"}, ExitUsage, `from: "yesterday" is not an instant`},
		{[]string{"--from", "2026-03-27", "--to", "2026-03-28", "--max-parallel", "0"}, ExitUsage, "--max-parallel must be at least 1"},
		{[]string{"--cancel", "--from", "2026-03-27"}, ExitUsage, "--cancel and --status take no range"},
		{[]string{"--cancel"}, ExitRejected, "no backfill of nightly is under way"},
	} {
		_, errs, code := f.run(append([]string{"gnomon", "backfill", "-j", "nightly"}, c.args...)...)
		if code != c.code || !strings.Contains(errs, c.msg) {
			t.Errorf("backfill %v: exit %d %q, want %d %q", c.args, code, errs, c.code, c.msg)
		}
	}
	if _, errs, code := f.run("gnomon", "backfill", "-j", "report", "--from", "2026-03-27", "--to", "2026-03-28"); code != ExitRejected ||
		!strings.Contains(errs, "report has no time trigger") {
		t.Errorf("backfill of a task without time trigger: exit %d %q", code, errs)
	}
	if _, errs, code := f.run("gnomon", "backfill", "-j", "ghost", "--from", "2026-03-27", "--to", "2026-03-28"); code != ExitRejected ||
		!strings.Contains(errs, "ghost not found") {
		t.Errorf("backfill of an unknown task: exit %d %q", code, errs)
	}
}

// slowly sleeps through each backfill run, so that a test finds them in
// flight.
const slowly = `insert_task: slowly
type: callable
command: sleep 1; echo "$GNOMON_SCHEDULED_TIME"
out_log_file: @DIR@/slowly.out
err_log_file: @DIR@/slowly.err
cron: 0 * * * *
timezone: UTC
`

// A restart in the middle of a backfill: the occurrences left still run,
// none twice, and one at a time.
func TestBackfillRestart(t *testing.T) {
	t.Parallel()
	f := setup(t, simulateFrom("2026-06-02T09:30:00Z"))
	f.mustRun("gnomon", "def", "-f", f.file("s.def", slowly))
	f.mustRun("gnomon", "backfill", "-j", "slowly", "--from", "2026-06-01T00:00:00Z", "--to", "2026-06-01T05:00:00Z")
	out := f.mustRun("gnomon", "backfill", "-j", "slowly", "--status")
	if !strings.HasPrefix(out, "backfill of slowly: 1 run(s) in flight, 5 occurrence(s) waiting (at most 1 at once)\n2026-06-01T00:00:00Z running   run 1") ||
		!strings.Contains(out, "2026-06-01T05:00:00Z waiting asked by admin") {
		t.Errorf("status:\n%s", out)
	}
	f.stop() // lets the run in flight end, starts none
	f.start(simulateFrom("2026-06-02T09:30:00Z"))
	// Asked again after the restart, before it is done: nothing twice.
	out = f.mustRun("gnomon", "backfill", "-j", "slowly", "--from", "2026-06-01T00:00:00Z", "--to", "2026-06-01T05:00:00Z", "--max-parallel", "3")
	if !strings.Contains(out, "2026-06-01T00:00:00Z done") || strings.Contains(out, " queued") || !strings.Contains(out, "6 occurrence(s): ") {
		t.Errorf("backfill after the restart:\n%s", out)
	}
	f.mustRun("gnomon", "clock", "advance", "--to", "2026-06-02T09:40:00Z")
	ran, _ := readFile(f.dir, "slowly.out")
	for h := range 6 {
		at := time.Date(2026, 6, 1, h, 0, 0, 0, time.UTC).Format(time.RFC3339)
		if n := strings.Count(ran, at); n != 1 {
			t.Errorf("slowly ran %d times for %s:\n%s", n, at, ran)
		}
	}
	runs := f.backfillRuns("slowly")
	if len(runs) != 6 {
		t.Errorf("%d backfill runs, want 6", len(runs))
	}
	// The latest --max-parallel applies to what was left: never more
	// than 3 at once.
	for _, r := range runs {
		at := 0 // runs in flight when r started
		for _, o := range runs {
			if !o.Start.After(r.Start) && r.Start.Before(o.End) {
				at++
			}
		}
		if at > 3 {
			t.Errorf("%d backfill runs in flight when run %d started", at, r.ID)
		}
	}
	if out := f.mustRun("gnomon", "backfill", "-j", "slowly", "--status"); out != "no backfill of slowly is under way\n" {
		t.Errorf("status after:\n%s", out)
	}
}

// A cancel drops what has not started and kills the backfill runs in
// flight; a scoped operator backfills its own tasks only.
func TestBackfillCancel(t *testing.T) {
	t.Parallel()
	f := setup(t, simulateFrom("2026-06-02T09:30:00Z"))
	f.mustRun("gnomon", "def", "-f", f.file("s.def", strings.ReplaceAll(slowly, "sleep 1", "sleep 30")))
	f.mustRun("gnomon", "backfill", "-j", "slowly", "--from", "2026-06-01T00:00:00Z", "--to", "2026-06-01T05:00:00Z", "--max-parallel", "2")
	out := f.mustRun("gnomon", "backfill", "-j", "slowly", "--cancel")
	want := "2026-06-01T00:00:00Z killed    run 1 its backfill run was killed\n2026-06-01T01:00:00Z killed    run 2 its backfill run was killed\n" +
		"2026-06-01T02:00:00Z canceled  dropped before it started\n"
	if !strings.HasPrefix(out, want) || !strings.HasSuffix(out, "backfill of slowly canceled: 4 occurrence(s) dropped, 2 backfill run(s) killed\n") {
		t.Errorf("cancel:\n%s\nwant it to start with:\n%s", out, want)
	}
	f.mustRun("gnomon", "clock", "advance", "--to", "2026-06-02T09:31:00Z")
	for _, r := range f.backfillRuns("slowly") {
		if r.Status != job.Aborted || r.EndedBy != "admin" {
			t.Errorf("run %+v", r)
		}
	}

	// A viewer may read but not backfill; an operator scoped to other
	// tasks may not either.
	viewer := f.token("viewer", auth.Viewer)
	other := f.token("fin-ops", auth.Operator, "finance_*")
	for _, tok := range []string{viewer, other} {
		_, errs, code := f.runEnv(map[string]string{"GNOMON_TOKEN": tok}, "gnomon", "backfill", "-j", "slowly", "--from", "2026-06-01", "--to", "2026-06-02", "--dry-run")
		if code != ExitRejected || !strings.Contains(errs, "tasks:operate") {
			t.Errorf("backfill as another: exit %d %q", code, errs)
		}
	}
	if _, errs, code := f.runEnv(map[string]string{"GNOMON_TOKEN": viewer}, "gnomon", "backfill", "-j", "slowly", "--status"); code != 0 {
		t.Errorf("status as a viewer: exit %d %q", code, errs)
	}
}

// The periods of a timeperiod process are reprocessed over a range, and a
// configuration runs again for the events the server stored.
func TestBackfillTreesAndConfigurations(t *testing.T) {
	t.Parallel()
	f := setup(t, simulateFrom("2026-11-24T00:30:00Z"))
	f.mustRun("gnomon", "def", "-f", f.file("trees.json", treesFile))
	f.mustRun("gnomon", "clock", "advance", "--to", "2026-11-24 03:02")
	for _, k := range []string{"2026112400", "2026112401"} {
		f.mustRun("gnomon", "node", "start", "site_hourly", k)
		f.mustRun("gnomon", "node", "complete", "site_hourly", k, "--outcome", "processed")
	}
	out := f.mustRun("gnomon", "backfill", "-j", "site_hourly", "--from", "2026112400", "--to", "2026-11-24T02:00:00Z", "--dry-run")
	if !strings.HasPrefix(out, "site_hourly 2026112400 processed: would be reprocessed\nsite_hourly 2026112401 processed: would be reprocessed\n"+
		"site_hourly 2026112402 queued: left as it is (queued or running)\nsite_hourly 2026112400 processed -> queued\n") ||
		!strings.HasSuffix(out, "dry run: backfill of site_hourly: 2 period(s) would be reprocessed, 1 queued or running already (left as they are); nothing was changed\n") {
		t.Errorf("dry run:\n%s", out)
	}
	out = f.mustRun("gnomon", "backfill", "-j", "site_hourly", "--from", "2026112400", "--to", "2026112402")
	if !strings.Contains(out, "site_hourly 2026112400 processed -> queued\n") || !strings.HasSuffix(out, "backfill of site_hourly: 2 period(s) reprocessed, 1 queued or running already (left as they are)\n") {
		t.Errorf("backfill:\n%s", out)
	}
	if _, errs, code := f.run("gnomon", "backfill", "-j", "site_hourly", "--from", "2026112400", "--to", "2026112402", "--max-parallel", "2"); code != ExitUsage ||
		!strings.Contains(errs, "a backfill sets no parallelism") {
		t.Errorf("--max-parallel for a process: exit %d %q", code, errs)
	}

	// Events stored before the configuration existed: it runs for each
	// instant they would have triggered it.
	for _, ts := range []string{"2026-11-23T10:00:00Z", "2026-11-23T11:00:00Z", "2026-11-23T12:00:00Z"} {
		f.mustRun("gnomon", "post-event", "--type", "TABLE", "--resource", "sales", "--timestamp", ts)
	}
	f.mustRun("gnomon", "def", "-f", f.file("c.json", `[{"name":"load","command":"echo \"$GNOMON_SCHEDULED_TIME\"","out_log_file":"@DIR@/load.out","err_log_file":"@DIR@/load.err",
	 "dependencies":[{"type":"TABLE","resourceId":"sales","lifeDuration":60}]}]`))
	out = f.mustRun("gnomon", "backfill", "-j", "load", "--from", "2026-11-23T10:30:00Z", "--to", "2026-11-24T00:00:00Z", "--timezone", "UTC")
	if !strings.HasPrefix(out, "2026-11-23T11:00:00Z queued    run ") || !strings.Contains(out, "\n2026-11-23T12:00:00Z queued\n") ||
		!strings.HasSuffix(out, "backfill of load: 2 occurrence(s): 2 queued\n") {
		t.Errorf("backfill of a configuration:\n%s", out)
	}
	f.mustRun("gnomon", "clock", "advance", "--to", "2026-11-24 03:03")
	if ran, _ := readFile(f.dir, "load.out"); ran != "2026-11-23T11:00:00Z\n2026-11-23T12:00:00Z\n" {
		t.Errorf("load ran for:\n%s", ran)
	}
}

// Over the night the clocks fall back in Paris, a schedule that steps
// through the day runs the repeated hour twice and a fixed time once: each
// local occurrence once.
func TestBackfillFallBack(t *testing.T) {
	t.Parallel()
	f := setup(t, simulateFrom("2026-10-26 12:00"))
	f.mustRun("gnomon", "def", "-f", f.file("h.def", `insert_task: half
type: callable
command: echo "$GNOMON_SCHEDULED_TIME"
out_log_file: @DIR@/half.out
err_log_file: @DIR@/half.err
cron: 30 * * * *

insert_task: fixed
type: callable
command: echo "$GNOMON_SCHEDULED_TIME"
out_log_file: @DIR@/fixed.out
err_log_file: @DIR@/fixed.err
start_times: 02:30
`))
	out := f.mustRun("gnomon", "backfill", "-j", "half", "--from", "2026-10-25 00:00", "--to", "2026-10-25 03:59", "--max-parallel", "5")
	want := []string{"2026-10-25T00:30:00+02:00 queued", "2026-10-25T01:30:00+02:00 queued", "2026-10-25T02:30:00+02:00 queued",
		"2026-10-25T02:30:00+01:00 queued", "2026-10-25T03:30:00+01:00 queued", "backfill of half: 5 occurrence(s): 5 queued"}
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("backfill of half lacks %q:\n%s", w, out)
		}
	}
	out = f.mustRun("gnomon", "backfill", "-j", "fixed", "--from", "2026-10-24 12:00", "--to", "2026-10-26 00:00")
	// It starts at once, or once half's backfill runs leave a worker slot.
	if !strings.HasPrefix(out, "2026-10-25T02:30:00+02:00 queued") || !strings.HasSuffix(out, "backfill of fixed: 1 occurrence(s): 1 queued\n") {
		t.Errorf("backfill of fixed:\n%s", out)
	}
	f.mustRun("gnomon", "clock", "advance", "--to", "2026-10-26 12:01")
	if ran, _ := readFile(f.dir, "half.out"); strings.Count(ran, "\n") != 5 || strings.Count(ran, "2026-10-25T00:30:00Z\n") != 1 || strings.Count(ran, "2026-10-25T01:30:00Z\n") != 1 {
		t.Errorf("half ran for:\n%s", ran)
	}
	if ran, _ := readFile(f.dir, "fixed.out"); ran != "2026-10-25T00:30:00Z\n" {
		t.Errorf("fixed ran for:\n%s", ran)
	}
}
