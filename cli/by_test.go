package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gnomon-sched/gnomon/auth"
	"github.com/gnomon-sched/gnomon/scheduler"
)

// Runs, audit records and audit.log name the identity whose call started
// a run: an operator's start, a data event posted with an ingest token.
// What the clock or a condition started names no one.
func TestRunsAndAuditNameWhoStartedThem(t *testing.T) {
	t.Parallel()
	f := setup(t, simulateFrom("2026-06-01T09:00:00Z"))
	f.mustRun("gnomon", "def", "-f", f.file("who.def", `insert_task: x
type: callable
command: true
out_log_file: @DIR@/x.out
err_log_file: @DIR@/x.err

insert_task: after_x
type: callable
command: true
condition: su(x)
out_log_file: @DIR@/a.out
err_log_file: @DIR@/a.err

insert_task: tick
type: callable
command: true
cron: 5 * * * *
out_log_file: @DIR@/t.out
err_log_file: @DIR@/t.err
`))
	f.mustRun("gnomon", "def", "-f", f.file("load.json", `{"name": "load", "dependencies": [{"type": "TABLE", "resourceId": "orders", "lifeDuration": 0}]}`))
	as := func(name string, role auth.Role) map[string]string {
		return map[string]string{"GNOMON_TOKEN": f.token(name, role)}
	}
	alice, feed := as("alice", auth.Operator), as("feed", auth.Ingest)
	mustRunAs := func(env map[string]string, args ...string) {
		t.Helper()
		if out, errs, code := f.runEnv(env, args...); code != 0 {
			t.Fatalf("%v: exit %d\n%s%s", args, code, out, errs)
		}
	}
	mustRunAs(alice, "gnomon", "event", "-j", "x", "-e", "start")
	f.waitStatus("after_x", "success") // its condition started it
	mustRunAs(feed, "gnomon", "post-event", "--type", "TABLE", "--resource", "orders", "--timestamp", "2026-06-01T09:00:00Z")
	f.mustRun("gnomon", "clock", "advance", "--to", "2026-06-01T09:06:00Z")
	f.waitStatus("tick", "success") // the clock started it

	for task, by := range map[string]string{"x": "alice", "load": "feed", "after_x": "", "tick": ""} {
		if wide := squeeze(f.mustRun("gnomon", "runs", task, "-o", "wide")); !strings.Contains(wide, " "+dash(by)+" - ") {
			t.Errorf("gnomon runs %s -o wide does not name %q as who started it:\n%s", task, by, wide)
		}
		out := f.mustRun("schd_runs", "-j", task)
		lines := strings.Split(strings.TrimSpace(out), "\n")
		header, row := lines[0], lines[len(lines)-1]
		if by == "" {
			if strings.HasSuffix(header, " By") || !strings.HasSuffix(row, " success") {
				t.Errorf("runs of %s, started by no one:\n%s", task, out)
			}
		} else if !strings.HasSuffix(header, " Status     By") || !strings.HasSuffix(row, " success    "+by) {
			t.Errorf("runs of %s, started by %s:\n%s", task, by, out)
		}
	}

	audit := f.mustRun("gnomon", "audit")
	for task, suffix := range map[string]string{"x": " : normal : success : by alice", "load": " : normal : success: event TABLE orders : by feed",
		"after_x": " : normal : success", "tick": " : normal : success"} {
		found := false
		for _, line := range strings.Split(audit, "\n") {
			if strings.HasPrefix(line, task+" : ") {
				found = true
				if !strings.HasSuffix(line, suffix) {
					t.Errorf("audit line of %s: %q; want it to end with %q", task, line, suffix)
				}
			}
		}
		if !found {
			t.Errorf("no audit line of %s:\n%s", task, audit)
		}
	}
	js := f.mustRun("gnomon", "audit", "--json")
	if strings.Count(js, `"by": "alice"`) != 1 || strings.Count(js, `"by": "feed"`) != 1 || strings.Count(js, `"by"`) != 2 {
		t.Errorf("audit --json names who started the runs of x and load only:\n%s", js)
	}
	rs, err := f.client.Runs(t.Context(), "x", 1, "")
	if err != nil || len(rs.Runs) != 1 || rs.Runs[0].By != "alice" {
		t.Errorf("GET runs of x: %+v, %v", rs, err)
	}

	// audit.log holds the lines gnomon audit prints.
	f.stop()
	b, err := os.ReadFile(filepath.Join(f.dir, "data", scheduler.AuditFile))
	if err != nil || string(b) != audit {
		t.Errorf("audit.log:\n%s\nwant what gnomon audit printed:\n%s", b, audit)
	}
}

// Runs, audit records and audit.log name the identity whose abort ended a
// run, after the one whose start started it; a run that ended by itself
// names no one as having ended it. gnomon runs adds an Ended by column
// only to the listings where a run names someone.
func TestRunsAndAuditNameWhoEndedThem(t *testing.T) {
	t.Parallel()
	f := setup(t, simulateFrom("2026-06-01T09:00:00Z"))
	f.mustRun("gnomon", "def", "-f", f.file("who.def", `insert_task: long
type: callable
command: touch @DIR@/long.started; sleep 60
out_log_file: @DIR@/l.out
err_log_file: @DIR@/l.err

insert_task: short
type: callable
command: true
out_log_file: @DIR@/s.out
err_log_file: @DIR@/s.err
`))
	as := func(name string) map[string]string {
		return map[string]string{"GNOMON_TOKEN": f.token(name, auth.Operator)}
	}
	alice, bob := as("alice"), as("bob")
	mustRunAs := func(env map[string]string, args ...string) {
		t.Helper()
		if out, errs, code := f.runEnv(env, args...); code != 0 {
			t.Fatalf("%v: exit %d\n%s%s", args, code, out, errs)
		}
	}
	mustRunAs(bob, "gnomon", "event", "-j", "long", "-e", "start")
	mustRunAs(bob, "gnomon", "event", "-j", "short", "-e", "start")
	// On a cluster the task is running once its run is queued for a
	// worker: the abort waits for the command itself, so that it kills it
	// rather than cancel a run not started yet.
	f.waitFor("long's command to run", func() bool {
		_, err := os.Stat(filepath.Join(f.dir, "long.started"))
		return err == nil
	})
	mustRunAs(alice, "gnomon", "event", "-j", "long", "-e", "abort")
	f.waitStatus("short", "success")
	f.waitFor("the aborted run to end", func() bool {
		rs, err := f.client.Runs(t.Context(), "long", 1, "")
		return err == nil && len(rs.Runs) == 1 && rs.Runs[0].Done()
	})

	for task, want := range map[string][2]string{
		"long":  {" Status     By               Ended by", " aborted    bob              alice"},
		"short": {" Status     By", " success    bob"},
	} {
		out := f.mustRun("schd_runs", "-j", task)
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if header, row := lines[0], lines[len(lines)-1]; !strings.HasSuffix(header, want[0]) || !strings.HasSuffix(row, want[1]) {
			t.Errorf("runs of %s:\n%s\nwant the header to end with %q and the row with %q", task, out, want[0], want[1])
		}
	}
	if wide := squeeze(f.mustRun("gnomon", "runs", "long", "-o", "wide")); !strings.Contains(wide, " aborted 143 killed start bob alice killed by signal terminated") {
		t.Errorf("gnomon runs long -o wide:\n%s", wide)
	}
	rs, err := f.client.Runs(t.Context(), "long", 1, "")
	if err != nil || len(rs.Runs) != 1 || rs.Runs[0].By != "bob" || rs.Runs[0].EndedBy != "alice" {
		t.Errorf("GET runs of long: %+v, %v", rs, err)
	}

	audit := f.mustRun("gnomon", "audit")
	for task, suffix := range map[string]string{"long": " : abnormal : aborted: killed by signal terminated : by bob : ended by alice", "short": " : normal : success : by bob"} {
		found := false
		for _, line := range strings.Split(audit, "\n") {
			if strings.HasPrefix(line, task+" : ") {
				found = true
				if !strings.HasSuffix(line, suffix) {
					t.Errorf("audit line of %s: %q; want it to end with %q", task, line, suffix)
				}
			}
		}
		if !found {
			t.Errorf("no audit line of %s:\n%s", task, audit)
		}
	}
	if js := f.mustRun("gnomon", "audit", "--json"); strings.Count(js, `"ended_by": "alice"`) != 1 || strings.Count(js, `"ended_by"`) != 1 {
		t.Errorf("audit --json names who ended the run of long only:\n%s", js)
	}

	f.stop()
	b, err := os.ReadFile(filepath.Join(f.dir, "data", scheduler.AuditFile))
	if err != nil || string(b) != audit {
		t.Errorf("audit.log:\n%s\nwant what gnomon audit printed:\n%s", b, audit)
	}
}
