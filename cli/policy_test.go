package cli

import (
	"context"
	"regexp"
	"strings"
	"testing"
)

const policyDefs = `insert_task: flaky
type: callable
command: n=$(cat @DIR@/flaky.n 2>/dev/null || echo 0); n=$((n+1)); echo $n > @DIR@/flaky.n; echo "try $n (attempt $GNOMON_ATTEMPT) for $GNOMON_SCHEDULED_TIME"; [ $n -ge 3 ]
out_log_file: @DIR@/flaky.out
err_log_file: @DIR@/flaky.err
start_times: 01:00
n_retrys: 3
retry_delay: 10m
retry_backoff: 2
alert_on: retry,failure
alert_to: ops@example.com

insert_task: after_flaky
type: callable
command: true
out_log_file: @DIR@/after.out
err_log_file: @DIR@/after.err
condition: su(flaky)

insert_task: on_fail
type: callable
command: true
out_log_file: @DIR@/on_fail.out
err_log_file: @DIR@/on_fail.err
condition: fa(flaky)

insert_task: hung
type: callable
command: sleep 60
out_log_file: @DIR@/hung.out
err_log_file: @DIR@/hung.err
start_times: 02:00
term_run_time: 2s
max_run_alarm: 1s

insert_task: gate
type: callable
command: true
out_log_file: @DIR@/gate.out
err_log_file: @DIR@/gate.err

insert_task: late
type: callable
command: true
out_log_file: @DIR@/late.out
err_log_file: @DIR@/late.err
start_times: 03:00
condition: su(gate)
must_start_by: +15m
must_complete_by: 04:00
`

// Retries, a time limit and alarms on a simulated night, read back through
// the command line, with a restart while a retry waits.
func TestRetriesTimeoutsAndAlarms(t *testing.T) {
	t.Parallel()
	f := setup(t, simulateFrom("2026-06-01 00:00"))
	f.mustRun("gnomon", "def", "-f", f.file("policy.def", policyDefs))

	// 01:00 fails (try 1); retry 1 is due at 01:10.
	f.mustRun("gnomon", "clock", "advance", "--to", "2026-06-01 01:05")
	status := f.mustRun("schd_status", "-j", "flaky")
	if !regexp.MustCompile(`flaky +20260601 01:00:\d\d +running`).MatchString(status) ||
		!regexp.MustCompile(`flaky: failed, retry 1 of 3 at 20260601 01:10:\d\d`).MatchString(status) {
		t.Errorf("status while waiting to retry:\n%s", status)
	}
	why := f.mustRun("gnomon", "why", "-j", "flaky")
	if !strings.Contains(why, "retry 1 of 3") {
		t.Errorf("why:\n%s", why)
	}
	f.stop()
	f.start(simulateFrom("2026-06-01 01:05"))

	// Retry 1 at 01:10 fails (try 2), retry 2 at 01:30 succeeds (try 3).
	f.mustRun("gnomon", "clock", "advance", "--to", "2026-06-01 05:00")
	out, _ := readFile(f.dir, "flaky.out")
	if want := "try 1 (attempt 1) for 2026-05-31T23:00:00Z\ntry 2 (attempt 2) for 2026-05-31T23:00:00Z\ntry 3 (attempt 3) for 2026-05-31T23:00:00Z\n"; out != want {
		t.Errorf("flaky ran:\n%s\nwant:\n%s", out, want)
	}
	runs, err := f.client.Runs(context.Background(), "flaky", 10, "")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range runs.Runs {
		got = append(got, r.Start.Format("15:04")+" "+r.Trigger+" "+r.Status.String())
		if r.Trigger == "retry" && (r.RetryOf == 0 || r.Attempt == 0) {
			t.Errorf("retry run %+v", r.Run)
		}
	}
	if want := []string{"01:30 retry success", "01:10 retry failure", "01:00 schedule failure"}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("flaky runs %q, want %q", got, want)
	}
	if table := f.mustRun("gnomon", "runs", "-j", "flaky", "-n", "10"); !strings.Contains(table, "flaky [retry 1]") || !strings.Contains(table, "flaky [retry 2]") {
		t.Errorf("runs table does not name the retries:\n%s", table)
	}
	// Dependents saw the final outcome only.
	if out := squeeze(f.mustRun("gnomon", "runs", "-j", "after_flaky")); strings.Count(out, "success") != 1 {
		t.Errorf("after_flaky:\n%s", out)
	}
	if out := f.mustRun("gnomon", "runs", "-j", "on_fail"); strings.Contains(out, "2026") {
		t.Errorf("on_fail ran:\n%s", out)
	}
	alerts := f.mustRun("gnomon", "alerts", "-j", "flaky")
	if strings.Count(alerts, "retry") != 2 || strings.Contains(alerts, "failure") {
		t.Errorf("alerts: want two retries and no final failure:\n%s", alerts)
	}

	// hung: killed at its term_run_time of 2s, after the alarm at 1s.
	if runs, err = f.client.Runs(context.Background(), "hung", 10, ""); err != nil {
		t.Fatal(err)
	}
	if len(runs.Runs) != 1 {
		t.Fatalf("hung runs %+v", runs.Runs)
	}
	if r := runs.Runs[0]; r.Status.String() != "failure" || r.Result != "timeout" || !strings.Contains(r.Message, "term_run_time") ||
		r.End.Sub(r.Start).Seconds() < 2 || r.End.Sub(r.Start).Seconds() > 30 {
		t.Errorf("hung run %+v", r.Run)
	}
	if status := f.mustRun("schd_status", "-j", "hung"); !strings.Contains(status, "hung: ALARM max_run_alarm at 20260601 02:00:01") {
		t.Errorf("status of hung:\n%s", status)
	}

	// late waits for gate: must_start_by at 03:15, must_complete_by at
	// 04:00, both raised and shown.
	status = f.mustRun("schd_status", "-j", "late")
	if !strings.Contains(status, "late: ALARM must_start_by at 20260601 03:15:00") ||
		!strings.Contains(status, "late: ALARM must_complete_by at 20260601 04:00:00") {
		t.Errorf("status of late:\n%s", status)
	}
	// The export round-trips every attribute.
	export := f.mustRun("gnomon", "export", "-j", "flaky")
	for _, line := range []string{"n_retrys: 3", "retry_delay: 10m", "retry_backoff: 2", "alert_on: retry,failure"} {
		if !strings.Contains(export, line+"\n") {
			t.Errorf("export lacks %q:\n%s", line, export)
		}
	}
}

// A backfill keeps the task's run policy: each occurrence's first run
// fails, and its retry, which sees GNOMON_ATTEMPT 2, succeeds.
func TestBackfillRetries(t *testing.T) {
	t.Parallel()
	f := setup(t, simulateFrom("2026-06-10 12:00"))
	f.mustRun("gnomon", "def", "-f", f.file("b.def", `insert_task: load
type: callable
command: echo "$GNOMON_SCHEDULED_TIME attempt $GNOMON_ATTEMPT"; [ "$GNOMON_ATTEMPT" -ge 2 ]
out_log_file: @DIR@/load.out
err_log_file: @DIR@/load.err
start_times: 02:00
n_retrys: 2
retry_delay: 5m
`))
	f.mustRun("gnomon", "backfill", "-j", "load", "--from", "2026-06-01", "--to", "2026-06-02 23:00")
	f.mustRun("gnomon", "clock", "advance", "--to", "2026-06-10 12:30")
	out, _ := readFile(f.dir, "load.out")
	want := "2026-06-01T00:00:00Z attempt 1\n2026-06-02T00:00:00Z attempt 1\n2026-06-01T00:00:00Z attempt 2\n2026-06-02T00:00:00Z attempt 2\n"
	if out != want {
		t.Errorf("load ran:\n%s\nwant:\n%s", out, want)
	}
	table := f.mustRun("gnomon", "runs", "-j", "load", "-n", "10")
	for _, tag := range []string{"load [backfill of 2026-06-01 02:00:00 CEST, retry 1]", "load [backfill of 2026-06-02 02:00:00 CEST, retry 1]"} {
		if !strings.Contains(table, tag) {
			t.Errorf("runs table has no %q:\n%s", tag, table)
		}
	}
	if strings.Count(table, "success") != 2 || strings.Count(table, "failure") != 2 {
		t.Errorf("runs table:\n%s", table)
	}
	if fires := f.mustRun("gnomon", "runs", "-j", "load", "--fires"); strings.Count(fires, "backfilled at the request of") != 2 {
		t.Errorf("fire ledger: want one backfilled record per occurrence:\n%s", fires)
	}
}
