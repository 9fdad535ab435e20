package cli

import (
	"strings"
	"testing"
)

const flow = `# a flow with a bundle
insert_task: extract
type: callable
command: echo "extract $GNOMON_TASK"
out_log_file: @DIR@/extract.out
err_log_file: @DIR@/extract.err
priority: important
label: pull the data

insert_task: load
type: callable
command: echo loaded; exit 0
condition: su(extract)
out_log_file: @DIR@/load.out
err_log_file: @DIR@/load.err

insert_task: nightly
type: bundle
label: the nightly bundle
run_days: mo,tu,we,th,fr
start_times: 22:00

insert_task: n1
type: callable
parent: nightly
command: echo n1
out_log_file: @DIR@/n1.out
err_log_file: @DIR@/n1.err

insert_task: n2
type: callable
parent: nightly
condition: SU(n1) & ( nr(load) )
command: echo n2 >&2; exit 4
out_log_file: @DIR@/n2.out
err_log_file: @DIR@/n2.err
priority: critical
`

func TestTour(t *testing.T) {
	t.Parallel()
	f := setup(t, simulateFrom("2026-06-01T09:00:00Z")) // the clock stays put: the 22:00 bundle never fires by itself
	defs := f.file("flow.def", flow)

	if out := f.mustRun("schd_def", "-c", "-f", defs); out != "Successfully validated\n" {
		t.Errorf("check: %q", out)
	}
	if _, _, code := f.run("schd_status", "-j", "extract"); code != 1 {
		t.Errorf("validate-only created a task (status exit %d)", code)
	}
	if out := f.mustRun("schd_def", "-f", defs); out != "Successfully processed\n" {
		t.Errorf("apply: %q", out)
	}
	_, errs, code := f.run("schd_def", "-f", defs)
	if code != 1 || !strings.Contains(errs, "ERROR "+defs+":2: insert_task extract: task already exist") {
		t.Errorf("re-insert: exit %d, %q", code, errs)
	}

	f.mustRun("gnomon", "event", "-j", "extract", "-e", "start")
	f.waitStatus("extract", "success")
	f.waitStatus("load", "success") // condition-triggered by su(extract)
	f.mustRun("schd_event", "-j", "nightly", "-e", "start")
	f.waitStatus("nightly", "failure")

	f.golden("task_nightly", f.mustRun("schd_task", "-j", "nightly"))
	f.golden("task_extract", f.mustRun("schd_task", "-j", "extract"))
	f.golden("status_nightly", f.mustRun("schd_status", "-j", "nightly"))
	f.golden("status_load", f.mustRun("gnomon", "status", "load"))
	f.golden("status_nightly_gnomon", f.mustRun("gnomon", "status", "nightly"))
	f.golden("runs_nightly_gnomon", f.mustRun("gnomon", "runs", "nightly", "-n", "5"))
	f.golden("runs_nightly", f.mustRun("schd_runs", "-j", "nightly", "-c", "5"))

	if got, _ := readFile(f.dir, "extract.out"); got != "extract extract\n" {
		t.Errorf("extract.out = %q", got)
	}
	if got, _ := readFile(f.dir, "n2.err"); got != "n2\n" {
		t.Errorf("n2.err = %q", got)
	}

	f.mustRun("schd_event", "-j", "extract", "-e", "start")
	f.waitStatus("extract", "success")
	out := f.mustRun("schd_runs", "-j", "extract", "-c", "10")
	if n := strings.Count(out, "\nextract "); n != 2 {
		t.Errorf("runs of extract: %d rows\n%s", n, out)
	}
	if out := f.mustRun("schd_runs", "-j", "extract", "-d", "01/01/2001"); !strings.HasSuffix(out, "\nno runs of extract started on 01/01/2001\n") {
		t.Errorf("runs on a day without runs: %q", out)
	}

	// Export round-trips through def on another server.
	exported := f.mustRun("gnomon", "export")
	g := setup(t)
	if out := g.mustRun("schd_def", "-f", g.file("exported.def", exported)); out != "Successfully processed\n" {
		t.Errorf("exported definitions do not apply: %q", out)
	}
	if a, b := f.mustRun("gnomon", "export"), g.mustRun("gnomon", "export"); a != b {
		t.Errorf("export after round trip differs:\n%s\n---\n%s", a, b)
	}
}

func TestExitCodes(t *testing.T) {
	t.Parallel()
	f := setup(t)
	defs := f.file("one.def", "insert_task: a\ntype: callable\ncommand: sleep 30\nout_log_file: @DIR@/a.out\nerr_log_file: @DIR@/a.err\n")
	f.mustRun("schd_def", "-f", defs)
	bad := f.file("bad.def", "insert_task: b\ntype: callable\ncommand: true\npriority: urgent\n")
	bad2 := f.file("bad2.def", "insert_task: b\ntype: callable\ncommand: true\n")
	tests := []struct {
		args []string
		code int
		err  string
	}{
		{[]string{"schd_def", "-f", bad}, 1, bad + ":4: insert_task b: priority should be either"},
		{[]string{"schd_def", "-f", bad2}, 1, bad2 + ":1: insert_task b: out_log_file: field is required"},
		{[]string{"schd_def"}, 2, "-f FILE is required"},
		{[]string{"schd_def", "-f", f.dir + "/missing.def"}, 2, "cannot read"},
		{[]string{"schd_def", "-f", f.dir}, 2, "not a regular file"},
		{[]string{"schd_event", "-j", "a", "-e", "begin"}, 2, `invalid send event "begin"`},
		{[]string{"schd_event", "-j", "zz", "-e", "start"}, 1, "task zz not found"},
		{[]string{"schd_event", "-j", "a", "-e", "abort"}, 1, "event abort is not effective on inactive task"},
		{[]string{"schd_task", "-j", "zz"}, 1, "task zz not found"},
		{[]string{"schd_status", "-j", "zz"}, 1, "task zz not found"},
		{[]string{"schd_runs", "-j", "zz"}, 1, "task zz not found"},
		{[]string{"schd_runs", "-j", "a", "-c", "0"}, 2, "-c must be at least 1"},
		{[]string{"schd_runs", "-j", "a", "-d", "31/02/2026"}, 2, "DD/MM/YYYY"},
		{[]string{"gnomon", "runs", "a", "-d", "2026-02-31"}, 2, `-d must be a date as YYYY-MM-DD (or the seed's DD/MM/YYYY), got "2026-02-31"`},
		{[]string{"gnomon", "runs", "a", "-n", "0"}, 2, "-n must be at least 1, got 0"},
		{[]string{"gnomon", "events", "-c", "3"}, 2, "unknown shorthand flag: 'c' in -c; did you mean -n (--count)?"},
		{[]string{"gnomon", "status", "a", "-o", "xml"}, 2, `invalid argument "xml" for "-o, --output" flag: want json, yaml or wide`},
		{[]string{"gnomon", "status", "a", "b"}, 2, "one task at most: gnomon status NAME (or -j NAME), got a b"},
		{[]string{"gnomon", "status", "a", "-j", "b"}, 2, "two tasks given, -j b and a: give one"},
		{[]string{"gnomon", "status"}, 2, "a task is needed: gnomon status NAME (or -j NAME)"},
		{[]string{"gnomon", "status", "zz"}, 1, "task zz not found"},
		{[]string{"schd_task"}, 2, "-j TASK is required"},
		{[]string{"schd_task", "-j", "a", "--bogus"}, 2, "unknown flag"},
		{[]string{"gnomon", "frobnicate"}, 2, "unknown command"},
		{[]string{"gnomon", "status", "-j", "a", "--server", "http://127.0.0.1:1"}, 3, "server unreachable"},
	}
	for _, tt := range tests {
		_, errs, code := f.run(tt.args...)
		if code != tt.code || !strings.Contains(errs, tt.err) || !strings.HasPrefix(errs, "ERROR ") {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and ERROR ... %q", tt.args, code, errs, tt.code, tt.err)
		}
	}
	// Refused while active.
	f.mustRun("schd_event", "-j", "a", "-e", "start")
	f.waitStatus("a", "running")
	for _, ev := range []string{"start", "freeze", "reset", "green", "red"} {
		if _, errs, code := f.run("schd_event", "-j", "a", "-e", ev); code != 1 || !strings.Contains(errs, "event "+ev+" is not effective on active task") {
			t.Errorf("%s on a running task: exit %d, %q", ev, code, errs)
		}
	}
	if _, errs, code := f.run("schd_def", "-f", f.file("del.def", "delete_task: a\n")); code != 1 || !strings.Contains(errs, "task a is active and cannot be deleted") {
		t.Errorf("delete while running: exit %d, %q", code, errs)
	}
	f.mustRun("schd_event", "-j", "a", "-e", "abort")
	f.waitStatus("a", "aborted")
	// The run row is completed when the killed process has gone.
	f.waitFor("the aborted run", func() bool { return strings.Contains(f.mustRun("schd_runs", "-j", "a"), "aborted") })
}
