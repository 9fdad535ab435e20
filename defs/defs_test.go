package defs

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/gnomon-sched/gnomon/internal/termsafe"
	"github.com/gnomon-sched/gnomon/job"
)

// base is a set of definitions that the rule tests start from.
const base = `
insert_task: a
type: callable
command: echo a
out_log_file: /tmp/a.out
err_log_file: /tmp/a.err

insert_task: b
type: callable
command: echo b
out_log_file: /tmp/b.out
err_log_file: /tmp/b.err
condition: su(a)

insert_task: box
type: bundle

insert_task: kid
type: callable
parent: box
command: true
out_log_file: /tmp/k.out
err_log_file: /tmp/k.err
`

func load(t *testing.T, text string) map[string]*job.Task {
	t.Helper()
	acts, err := Parse("base.def", text)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Apply("base.def", nil, acts, nil)
	if err != nil {
		t.Fatal(err)
	}
	return res.Tasks
}

func run(cur map[string]*job.Task, text string, active ...string) (*Result, error) {
	acts, err := Parse("f.def", text)
	if err != nil {
		return nil, err
	}
	return Apply("f.def", cur, acts, &Env{Active: func(n string) bool {
		for _, a := range active {
			if a == n {
				return true
			}
		}
		return false
	}, Function: func(n string) bool { return n == "log" || n == "report" }})
}

const callable = "type: callable\ncommand: x\nout_log_file: o\nerr_log_file: e\n"

const deps = `dependencies: [{"type":"TABLE","resourceId":"t","lifeDuration":60}]` + "\n"

func TestRules(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, text string
		active     []string
		want       string // message fragment
		line       int
	}{
		{"syntax/no colon", "insert_task: x\ntype callable\n", nil, "key value pair separated by colon is expected", 2},
		{"syntax/field before action", "type: callable\n", nil, "invalid action", 1},
		{"syntax/unknown action", "update: a\nlabel: x\n", nil, `invalid action "update"`, 1},
		{"syntax/unknown field", "update_task: a\ncolour: red\n", nil, `invalid field "colour"`, 2},
		{"syntax/empty target", "insert_task:\n" + callable, nil, "target name is empty", 1},
		{"syntax/repeated attribute", "update_task: a\nlabel: x\nlabel: y\n", nil, "attribute label given more than once", 3},
		{"syntax/no actions", "# nothing\n\n", nil, "no task actions found", 0},
		{"group without jobs", "insert_group: g\nlabel: x\n", nil, "jobs: a group should contain at least one job", 1},
		{"group unknown job", "insert_group: g\njobs: a,ghost\n", nil, "jobs: task ghost does not exist", 2},
		{"group duplicate", "insert_group: g\njobs: a\n\ninsert_group: g\njobs: b\n", nil, "group already exist", 4},
		{"group named like a task", "insert_group: a\njobs: b\n", nil, "name a is already taken by a task", 1},
		{"task named like a group", "insert_group: g\njobs: b\n\ninsert_task: g\n" + callable, nil, "name g is already taken by a group", 4},
		{"group task field", "insert_group: g\njobs: a\ncommand: x\n", nil, "command: field is not allowed for a group", 3},
		{"group type field", "insert_group: g\njobs: a\ntype: callable\n", nil, "type: field is not allowed for a group", 3},
		{"jobs on a task", "update_task: a\njobs: b\n", nil, "jobs: field is only allowed for a group", 2},
		{"group repeated job", "insert_group: g\njobs: a,b,a\n", nil, "jobs: a given more than once", 2},
		{"group nested", "insert_group: g\njobs: a\n\ninsert_group: h\njobs: g\n", nil, "jobs: g is a group (groups do not nest)", 5},
		{"update_group of a task", "update_group: a\nlabel: x\n", nil, "a is a task, not a group (use update_task)", 1},
		{"update_task of a group", "insert_group: g\njobs: a\n\nupdate_task: g\nlabel: x\n", nil, "g is a group, not a task (use update_group)", 4},
		{"delete_group missing", "delete_group: g\n", nil, "group not exist", 1},
		{"delete a grouped task", "insert_group: g\njobs: kid\n\ndelete_task: kid\n", nil, "task kid belongs to group g", 4},
		{"condition names a group", "insert_group: g\njobs: a\n\nupdate_task: kid\ncondition: su(g)\n", nil, "condition refers to g, which is a group, not a task", 5},
		{"alert_on value", "update_task: a\nalert_on: failed\nalert_to: ops@example.com\n", nil, `alert_on: "failed" should be a comma list of success, failure, not_started, retry, alarm`, 2},
		{"alert_to address", "update_task: a\nalert_on: failure\nalert_to: ops at example\n", nil, `alert_to: "ops at example" is not an email address`, 3},
		{"alert_to display name", "update_task: a\nalert_on: failure\nalert_to: Ops <ops@example.com>\n", nil, "is not an email address", 3},
		{"n_retrys range", "update_task: a\nn_retrys: 101\n", nil, `n_retrys: "101" is not a number of retries from 0 to 100`, 2},
		{"retries alias", "update_task: a\nretries: -1\n", nil, `retries: "-1" is not a number of retries`, 2},
		{"retry_delay alone", "update_task: a\nretry_delay: 5m\n", nil, "retry_delay, retry_backoff and retry_max_delay need n_retrys", 2},
		{"retry_backoff range", "update_task: a\nn_retrys: 2\nretry_backoff: 0.5\n", nil, `retry_backoff: "0.5" is not a factor from 1 to 10`, 3},
		{"retry_max_delay short", "update_task: a\nn_retrys: 2\nretry_delay: 1h\nretry_max_delay: 10m\n", nil, "retry_max_delay 10m0s is shorter than retry_delay 1h0m0s", 4},
		{"term_run_time value", "update_task: a\nterm_run_time: soon\n", nil, `term_run_time: "soon" is not a duration; write it as 90s, 5m or 1h30m, as 5 minutes, or as a number of minutes`, 2},
		{"term_run_time zero", "update_task: a\nterm_run_time: 0\n", nil, `term_run_time: "0" is not positive; write a duration such as 90s, 5m, 1h30m or 5 minutes`, 2},
		{"alarms crossed", "update_task: a\nmin_run_alarm: 30\nmax_run_alarm: 10m\n", nil, "min_run_alarm 30m0s should be shorter than max_run_alarm 10m0s", 2},
		{"must_start_by value", "update_task: a\nstart_times: 05:00\nmust_start_by: 25:00\n", nil, `must_start_by: "25:00" is not an offset such as +30m`, 3},
		{"must_start_by without trigger", "update_task: a\nmust_start_by: +30m\n", nil, "must_start_by and must_complete_by need a time trigger", 2},
		{"retries on a bundle", "update_task: box\nn_retrys: 1\n", nil, "n_retrys: field is not allowed for bundle", 2},
		{"alert_on alone", "update_task: a\nalert_on: failure\n", nil, "alerts need both alert_on and alert_to", 2},
		{"alert_template alone", "update_task: a\nalert_template: /t.tmpl\n", nil, "alert_template needs alert_on and alert_to", 2},
		{"function and command", "update_task: a\nfunction: log\n", nil, "a task runs either a command or a function, not both", 2},
		{"function unknown", "insert_task: f\ntype: callable\nfunction: nope\n", nil, "function: nope is not registered with this scheduler", 3},
		{"function name", "insert_task: f\ntype: callable\nfunction: a.b\n", nil, `function: "a.b" is not a function name`, 3},
		{"function on a bundle", "update_task: box\nfunction: log\n", nil, "function: field is not allowed for bundle", 2},
		{"overlap in a bundle", "update_task: kid\noverlap: queue\n", nil, "overlap: queue is not allowed for a bundle or a task inside one", 2},
		{"overlap of a bundle", "update_task: box\noverlap: allow\n", nil, "overlap: allow is not allowed for a bundle", 2},
		{"overlap value", "update_task: a\noverlap: parallel\n", nil, `overlap: "parallel" should be one of skip, allow, queue`, 2},
		{"A1 characters", "insert_task: a-b\n" + callable, nil, "task name can only contain alpha numeric and underscore chars", 1},
		{"A1 length", "insert_task: " + strings.Repeat("x", 65) + "\n" + callable, nil, "task name can only have 64 characters", 1},
		{"A2", "insert_task: a\n" + callable, nil, "task already exist", 1},
		{"A3 update", "update_task: zz\nlabel: x\n", nil, "task not exist", 1},
		{"A3 delete", "delete_task: zz\n", nil, "task not exist", 1},
		{"A4 missing", "insert_task: x\ncommand: y\nout_log_file: o\nerr_log_file: e\n", nil, "type: field is required", 1},
		{"A4 value", "insert_task: x\ntype: Callable\n", nil, "type attribute should be either bundle/callable", 2},
		{"A5", "update_task: a\ntype: bundle\n", nil, "type attribute cannot be changed", 2},
		{"A6 insert", "insert_task: x\ntype: callable\ncommand: y\nout_log_file: o\n", nil, "err_log_file: field is required", 1},
		{"A6 insert empty", "insert_task: x\ntype: callable\ncommand:\nout_log_file: o\nerr_log_file: e\n", nil, "command: field is required", 1},
		{"A6 update clears", "update_task: a\nout_log_file:\n", nil, "out_log_file: value is empty", 2},
		{"A7 insert", "insert_task: x\ntype: bundle\ncommand: y\n", nil, "command: field is not allowed for bundle", 3},
		{"A7 parent", "insert_task: x\ntype: bundle\nparent: box\n", nil, "parent: field is not allowed for bundle", 3},
		{"A7 update", "update_task: box\nprofile: /p\n", nil, "profile: field is not allowed for bundle", 2},
		{"A8", "update_task: a\npriority: high\n", nil, "priority should be either (low=0, normal=1, important=2, critical=3)", 2},
		{"A8 case", "update_task: a\npriority: Low\n", nil, "priority should be either", 2},
		{"A9 token", "update_task: a\nrun_days: mo,xx\n", nil, "run_days attribute should be comma separated", 2},
		{"A9 empty item", "update_task: a\nrun_days: mo,,tu\n", nil, "run_days attribute should be comma separated", 2},
		{"A9 all mixed", "update_task: a\nrun_days: all,mo\n", nil, "run_days attribute should be comma separated", 2},
		{"A10", "update_task: a\nrun_days: mo, MO\n", nil, "run_days attribute contains repeated days", 2},
		{"A11 format", "update_task: a\nstart_times: 24:00\n", nil, "start_times attribute should be comma separated values of time in format hh:mm", 2},
		{"A11 seconds", "update_task: a\nstart_times: 10:00:00\n", nil, "format hh:mm", 2},
		{"A11 minute digits", "update_task: a\nstart_times: 10:5\n", nil, "format hh:mm", 2},
		{"A12", "update_task: a\nstart_times: 9:00,09:00\n", nil, "start_times attribute contains repeated times", 2},
		{"A13 format", "update_task: a\nrun_window: 04:00\nstart_mins: 10\n", nil, "run_window attribute should only have start and end time separated by '-'", 2},
		{"A13 equal", "update_task: a\nrun_window: 04:00-4:00\nstart_mins: 10\n", nil, "run_window attribute should only have start and end time separated by '-'", 2},
		{"A14", "update_task: a\nrun_window: 04:00-05:00\nstart_mins: 60\n", nil, "start_min attribute should be comma separated values of minutes", 3},
		{"A14 digits", "update_task: a\nrun_window: 04:00-05:00\nstart_mins: 005\n", nil, "start_min attribute should be comma separated values of minutes", 3},
		{"A15", "update_task: a\nrun_window: 04:00-05:00\nstart_mins: 5,05\n", nil, "start_mins attribute contains repeated minutes", 3},
		{"A16", "update_task: a\nstart_times: 10:00\nrun_window: 04:00-05:00\nstart_mins: 5\n", nil, "task should not have both batch run and window run", 2},
		{"A16 merged", "update_task: a\nstart_times: 10:00\n\nupdate_task: a\nrun_window: 04:00-05:00\nstart_mins: 5\n", nil, "task should not have both batch run and window run", 5},
		{"A17", "update_task: a\nrun_window: 04:00-05:00\n", nil, "window run should have both 'run_window' and 'start_mins' attributes", 2},
		{"A17 mins only", "update_task: a\nstart_mins: 5\n", nil, "window run should have both", 2},
		{"A18", "delete_task: a\nlabel: x\n", nil, "delete task should not have other attributes", 2},
		{"A19", "update_task: a\ncondition: su(b) &\n", nil, "invalid condition: expected a clause such as su(name) but the condition ended at position 8", 2},
		{"A20", "update_task: kid\nstart_times: 10:00\n", nil, "scheduling attributes are not allowed on a task inside a bundle", 2},
		{"A20 run_days", "update_task: kid\nrun_days: mo\n", nil, "scheduling attributes are not allowed on a task inside a bundle", 2},
		{"G1", "update_task: a\nparent: nobox\n", nil, "parent task nobox not exist", 2},
		{"G2", "update_task: a\nparent: b\n", nil, "parent task should be bundle type", 2},
		{"G4", "update_task: a\ncondition: su(ghost)\n", nil, "condition refers to task ghost which does not exist", 2},
		{"G5", "update_task: a\ncondition: su(a)\n", nil, "self reference is not allowed", 2},
		{"G6", "update_task: a\ncondition: fa(b)\n", nil, "cyclic dependency: a -> b -> a", 2},
		{"G6 via bundle", "update_task: a\ncondition: su(box)\n\nupdate_task: kid\ncondition: su(a)\n", nil, "cyclic dependency: a -> box -> kid -> a", 2},
		{"G6b", "update_task: kid\ncondition: nr(box)\n", nil, "condition of a task inside a bundle cannot reference its own bundle", 2},
		{"G7", "delete_task: a\n", nil, "task a is referenced in condition of b", 1},
		{"G8", "delete_task: box\n", nil, "bundle box still has child tasks: kid", 1},
		{"G9", "delete_task: a\n", []string{"a"}, "task a is active and cannot be deleted", 1},
		{"G9 bundle child", "delete_task: kid\n\ndelete_task: box\n", []string{"kid"}, "task kid is active and cannot be deleted", 1},
		{"timezone", "update_task: a\ntimezone: Mars/Olympus\n", nil, `timezone: unknown time zone "Mars/Olympus"`, 2},
		{"start_delay", "update_task: a\nstart_delay: soon\n", nil, `start_delay: "soon" is not a duration`, 2},
		{"cron field", "update_task: a\ncron: 0 25 * * *\n", nil, `cron: hour field "25": value 25 out of range 0-23`, 2},
		{"cron fields", "update_task: a\ncron: 0 1 * *\n", nil, `cron: "0 1 * *" has 4 fields`, 2},
		{"cron never", "update_task: a\ncron: 0 0 31 2 *\n", nil, "never fires", 2},
		{"two triggers", "update_task: a\nstart_times: 10:00\ncron: 0 * * * *\n", nil, "task should have only one time trigger", 3},
		{"two triggers merged", "update_task: a\ncron: 0 * * * *\n\nupdate_task: a\nstart_date: 2026-03-01 01:00\n", nil, "only one time trigger", 5},
		{"interval alone", "update_task: a\ninterval: 1 hour\n", nil, "start_date: field is required with interval and end_date", 2},
		{"interval zero", "update_task: a\nstart_date: 2026-03-01\ninterval: 0 hours\n", nil, "interval: 0 should be a positive number", 3},
		{"interval unit", "update_task: a\nstart_date: 2026-03-01\ninterval: 2 fortnights\n", nil, `interval: unknown unit "fortnights"`, 3},
		{"start after end", "update_task: a\nstart_date: 2026-03-02 00:00\nend_date: 2026-03-01 23:59\ninterval: 1 hour\n", nil, "end_date: 2026-03-01 23:59 is before start_date 2026-03-02 00:00", 3},
		{"bad date", "update_task: a\nstart_date: 2026-02-30 10:00\n", nil, `start_date: "2026-02-30 10:00" is not a date`, 2},
		{"run_days with cron", "update_task: a\ncron: 0 * * * *\nrun_days: mo\n", nil, "run_days applies to start_times and run_window only", 3},
		{"cron in bundle", "update_task: kid\ncron: 0 * * * *\n", nil, "scheduling attributes are not allowed on a task inside a bundle", 2},
		{"configuration without dependencies", "insert_task: c\ntype: configuration\n", nil, "dependencies: field is required", 1},
		{"configuration bad dependencies", "insert_task: c\ntype: configuration\ndependencies: [{\"type\":\"FILE\",\"resourceId\":\"\",\"lifeDuration\":1}]\n", nil, "dependencies: dependencies[0].resourceId: must not be empty", 3},
		{"configuration with a condition", "insert_task: c\ntype: configuration\n" + deps + "condition: su(a)\n", nil, "condition: field is not allowed for configuration", 4},
		{"configuration with a cron", "insert_task: c\ntype: configuration\n" + deps + "cron: * * * * *\n", nil, "cron: field is not allowed for configuration", 4},
		{"configuration command without logs", "insert_task: c\ntype: configuration\n" + deps + "command: x\n", nil, "out_log_file: field is required with a command", 4},
		{"configuration logs without command", "insert_task: c\ntype: configuration\n" + deps + "out_log_file: /o\n", nil, "out_log_file and err_log_file need a command", 4},
		{"dependencies on a callable", "update_task: a\n" + deps, nil, "dependencies: field is only allowed for type configuration", 2},
		{"json duplicate", `[{"name":"c","dependencies":[{"type":"TABLE","resourceId":"t","lifeDuration":0}]},` + "\n" + `{"name":"c","dependencies":[{"type":"TABLE","resourceId":"t","lifeDuration":0}]}]`, nil, "configuration c: defined more than once (first on line 1)", 2},
		{"json name", `{"name":"a-b","dependencies":[{"type":"TABLE","resourceId":"t","lifeDuration":0}]}`, nil, "task name can only contain alpha numeric", 1},
		{"json replaces a callable", `{"name":"a","dependencies":[{"type":"TABLE","resourceId":"t","lifeDuration":0}]}`, nil, "task already exist", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cur := load(t, base)
			before := fmt.Sprint(cur)
			_, err := run(cur, tt.text, tt.active...)
			var errs Errors
			if !errors.As(err, &errs) {
				t.Fatalf("err = %v, want Errors", err)
			}
			found := false
			for _, e := range errs {
				if strings.Contains(strings.ToLower(e.Msg), strings.ToLower(tt.want)) && e.Line == tt.line && e.File == "f.def" {
					found = true
				}
			}
			if !found {
				t.Errorf("errors:\n%v\nwant %q on line %d", err, tt.want, tt.line)
			}
			if fmt.Sprint(cur) != before {
				t.Error("a rejected file changed the current definitions")
			}
		})
	}
}

func TestValid(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, text string }{
		{"comments and blank lines anywhere", "\n\n# c\ninsert_task: x\n# inside\n" + callable + "\n\n\n"},
		{"crlf", strings.ReplaceAll("insert_task: x\n"+callable, "\n", "\r\n")},
		{"insert then update", "insert_task: x\n" + callable + "update_task: x\nlabel: l\n"},
		{"delete then insert", "delete_task: b\ninsert_task: b\n" + callable},
		{"forward references", "insert_task: y\n" + callable + "condition: su(z)\ninsert_task: z\n" + callable},
		{"nr mutual exclusion", "update_task: a\ncondition: nr(b)\n\nupdate_task: b\ncondition: nr(a)\n"},
		{"delete referenced with referrer", "delete_task: b\ndelete_task: a\n"},
		{"delete bundle with children", "delete_task: kid\ndelete_task: box\n"},
		{"reparent then delete bundle", "update_task: kid\nparent:\n\ndelete_task: box\n"},
		{"overnight window", "update_task: a\nrun_window: 23:00-01:00\nstart_mins: 0,30\nrun_days: fr\n"},
		{"start_mins one digit", "update_task: a\nrun_window: 04:00-08:00\nstart_mins: 5,7,09\n"},
		{"update clears schedule", "update_task: a\nstart_times: 10:00\n\nupdate_task: a\nstart_times:\nrun_window: 1:00-2:00\nstart_mins: 0\n"},
		{"hash inside value", "update_task: a\ncommand: echo '#1'\n"},
		{"value with colons", "update_task: a\ncommand: date +%H:%M\n"},
		{"cron shortcut", "update_task: a\ncron: @daily\ntimezone: Europe/Paris\n"},
		{"six-field cron", "update_task: a\ncron: */10 * * * * *\n"},
		{"start_date alone", "update_task: a\nstart_date: 2026-03-01 12:00\n"},
		{"switch trigger", "update_task: a\nstart_times: 10:00\n\nupdate_task: a\nstart_times:\ncron: 0 10 * * *\n"},
		{"bundle on cron", "update_task: box\ncron: 0 2 * * *\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if _, err := run(load(t, base), tt.text); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestNormalisation(t *testing.T) {
	t.Parallel()
	res, err := run(load(t, base), `update_task: a
condition: SU(kid) & ( nr(b) )
run_days: Sa, mo,su
start_times: 9:05,08:00
priority: critical
command: date +%H:%M
`)
	if err != nil {
		t.Fatal(err)
	}
	a := res.Tasks["a"]
	got := fmt.Sprintf("%s|%s|%s|%d|%s", a.Condition, a.RunDays, JoinClocks(a.StartTimes), a.Priority, a.Command)
	if want := "su(kid)&(nr(b))|su,mo,sa|08:00,09:05|3|date +%H:%M"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	if diff := cmp.Diff([]string{"a"}, res.Changed); diff != "" {
		t.Error(diff)
	}
}

func TestAllErrorsReported(t *testing.T) {
	t.Parallel()
	_, err := run(load(t, base), "update_task: a\npriority: 9\n\ninsert_task: a-\n"+callable+"\nupdate_task: zz\n")
	var errs Errors
	if !errors.As(err, &errs) || len(errs) != 3 {
		t.Fatalf("want 3 errors, got %v", err)
	}
	for i, l := range []int{2, 4, 10} {
		if errs[i].Line != l {
			t.Errorf("error %d on line %d, want %d", i, errs[i].Line, l)
		}
	}
	if s := errs[0].Error(); s != "f.def:2: update_task a: priority should be either (low=0, normal=1, important=2, critical=3), got \"9\"" {
		t.Errorf("Error() = %q", s)
	}
}

func TestFormatRoundTrip(t *testing.T) {
	t.Parallel()
	cur := load(t, base+`
insert_task: full
type: callable
command: echo "a: b" | tr a b
condition: su(a)|(fa(b)&nr(kid))
out_log_file: /tmp/f.out
err_log_file: /tmp/f.err
label: every attribute
machine: host1
priority: important
profile: /etc/profile.d/x.sh
run_days: mo,fr
run_window: 23:00-01:30
start_mins: 0,15
timezone: Asia/Kolkata
start_delay: 1500ms
overlap: skip
alert_on: failure,not_started,retry,alarm
alert_to: ops@example.com,dev@example.org
alert_template: /etc/gnomon/failure.tmpl
n_retrys: 3
retry_delay: 90s
retry_backoff: 1.5
retry_max_delay: 1h
term_run_time: 45
max_run_alarm: 30m
min_run_alarm: 10s
must_start_by: +20m
must_complete_by: 06:30

insert_task: fn
type: callable
function: log
overlap: allow
condition: su(a)
start_delay: 10s

insert_group: nightly
jobs: fn, a,full
label: the night shift
alert_on: success
alert_to: boss@example.com

insert_task: cronned
type: callable
command: true
out_log_file: /tmp/c.out
err_log_file: /tmp/c.err
cron:   */15  9-17 * *   mon-fri
timezone: America/New_York

insert_task: ticking
type: callable
command: true
out_log_file: /tmp/t.out
err_log_file: /tmp/t.err
start_date: 2026-03-01T01:00
end_date: 2026-12-31 23:59:30
interval: 90 Minutes

insert_task: nightly_box
type: bundle
start_date: 2026-01-31
interval: 1 month
`)
	if c := cur["cronned"].Cron; c != "*/15 9-17 * * mon-fri" {
		t.Errorf("cron kept as %q", c)
	}
	if iv := cur["ticking"]; iv.StartDate != "2026-03-01 01:00" || iv.EndDate != "2026-12-31 23:59:30" || iv.Interval != "90 minutes" {
		t.Errorf("interval kept as %q %q %q", iv.StartDate, iv.EndDate, iv.Interval)
	}
	var list []*job.Task
	for _, t := range cur {
		list = append(list, t)
	}
	var b strings.Builder
	if err := Format(&b, list); err != nil {
		t.Fatal(err)
	}
	again, err := run(nil, b.String())
	if err != nil {
		t.Fatalf("formatted output does not apply: %v\n%s", err, b.String())
	}
	if diff := cmp.Diff(cur, again.Tasks); diff != "" {
		t.Errorf("round trip changed the definitions (-want +got):\n%s", diff)
	}
}

// FuzzParse checks that Parse and Apply never panic, that every error names
// a line inside the file, and that whatever applies survives Format.
func FuzzParse(f *testing.F) {
	f.Add(base)
	f.Add("insert_task: x\n" + callable + "condition: su(x)\n")
	f.Add("update_task: a\nrun_window: 23:00-01:00\nstart_mins: 0,30\n")
	f.Add("delete_task: a\n\ninsert_task:\nfoo\n:\n")
	f.Add("insert_task: x\n" + callable + "cron: */5 1-3 * jan mon\n")
	f.Add("insert_task: x\n" + callable + "start_date: 2026-01-31 10:00\nend_date: 2027-01-01\ninterval: 1 month\n")
	f.Add(`[{"name":"C","dependencies":[{"type":"FILE","resourceId":"/in/","lifeDuration":"3600"}],"command":"x","out_log_file":"/o","err_log_file":"/e"}]`)
	f.Add("insert_task: c\ntype: configuration\ndependencies: [{\"type\":\"TABLE\",\"resourceId\":\"t\",\"lifeDuration\":0}]\n")
	f.Add("insert_task: f\ntype: callable\nfunction: log\noverlap: queue\nalert_on: failure,not_started\nalert_to: a@example.com\n\ninsert_group: g\njobs: f\nalert_on: success\nalert_to: b@example.com\nalert_template: /t\n\nupdate_group: g\nlabel: x\n\ndelete_group: g\n")
	for _, tt := range manyErrors {
		f.Add(tt.text)
	}
	f.Add("insert_task b4\ntype callable\ncommand: x\nfoo: bar\ninsert_task\nupdate x\n: y\n")
	f.Add("insert_task: t1\n" + callable + "\ninsert_task: c1\nparent: t1\n" + callable + "\ndelete_task: t1\ndelete_task: t1\n")
	f.Add("insert_task: p\ntype: bundel\ninsert_task: q\nparent: p\ntype: callable\ncondition: su(p)\ninsert_group: g\njobs: p,q\ndelete_task: p\n")
	f.Add("insert_task: x\x1b\n" + callable + "label: caf\xe9\n")
	f.Add("insert_task: x\ntype: callable\ncommand: echo\ta\x00\x7f\u0085\u202e\nout_log_file: o\nerr_log_file: e\n")
	f.Add("insert_task: c\ntype: configuration\ndependencies: [{\"type\":\"FILE\",\"resourceId\":\"/\\u001b\\u0085\\u2066\",\"lifeDuration\":0}]\n")
	f.Add("insert_task: r\n" + callable + "start_times: 05:00\nretries: 2\nretry_delay: 5\nretry_backoff: 2\nretry_max_delay: 1h\nterm_run_time: 1h\nmax_run_alarm: 30m\nmin_run_alarm: 1m\nmust_start_by: +1h\nmust_complete_by: 07:00\n")
	f.Add(`[{"name":"C\u0000","dependencies":[{"type":"FILE","resourceId":"/in/\ud800","lifeDuration":1}],"command":"x\u001b","label":"\u202e"}]`)
	f.Add(calendars)
	f.Add("insert_calendar: c\ndates: 2026-01-01,2026-02-30\nrule: every 2nd tuesday\nrule: last business day of quarter\nholidays: d, 2026-12-25\n" +
		"workdays: su,mo,tu,we,th\ninsert_calendar: d\nholidays: c\nics_file: x.ics\nupdate_calendar: c\ndescription: x\ndelete_calendar: d\n")
	f.Add("insert_task: x\n" + callable + "cron: 0 9 * * *\nrun_calendar: c\nexclude_calendar: c\ninsert_calendar c\nrule: 5th friday of jan,jul\n")
	f.Add("insert_task: x\n" + callable + "envvars: A=1, B=\"x, y\"\nenvvars: C=${A}$$\nworking_dir: $HOME/w\nstd_in_file: /in\numask: 027\nparams: p=1, q\n")
	f.Add("insert_task: x\n" + callable + "envvars: T=@file:/etc/s, 9=1\nupdate_task: x\nenvvars: A=${\numask: 8\n")
	f.Add(resourceDefs)
	f.Add("insert_task: x\n" + callable + "alert_on: failure\nnotify: slack:https://h/T/B, webhook:http://x:1/a?b=1,2, pagerduty:@file:/k\nnotify_template: {\"t\": {{json .Task}}, \"d\": {{json .Data.x}}}\ninsert_group: g\njobs: x\nalert_on: retry\nnotify: teams:https://t/w\n")
	f.Add("insert_resource: r\namount: 3\ninsert_task: x\n" + callable + "resources: r=2, s\nupdate_resource: r\namount: 1\ndelete_resource: r\nupdate_task: r\n")
	f.Add("insert_task: w\n" + callable + "watch_file: /data/in/*.csv\nwatch_min_size: 10K\nwatch_steady: 1m\nwatch_interval: 5s\n" +
		"insert_task: v\n" + callable + "watch_file: data/[x\nwatch_min_size: -1\nwatch_steady: 0\nwatch_interval: 10ms\nupdate_task: w\nwatch_file:\n")
	f.Add(`[{"name":"C","dependencies":[{"type":"FILE","resourceId":"/in","lifeDuration":60}],"watch_file":"/in/*.csv","watch_min_size":512,"watch_steady":"2m"}]`)
	f.Add("insert_job: fw\njob_type: FW\nstd_out_file: /o\nwatch_file_min_size: 10\ncondition: success(a) & done(b)\ndelete_box: x\n")
	f.Add("insert_task: x\n" + callable + "log_rotate_size: 64M\nlog_rotate_age: 7d\nlog_keep: 3\nupdate_task: x\nlog_rotate_size: 0\nlog_rotate_age: 0\nlog_keep:\n")
	f.Add("insert_task: x\n" + callable + "log_rotate_size: 1.5G\nlog_rotate_age: forever\nlog_keep: -2\ninsert_group: g\njobs: x\nlog_keep: 2\n")
	f.Fuzz(func(t *testing.T, text string) {
		acts, err := Parse("f", text)
		nlines := strings.Count(text, "\n") + 1
		// checkLines checks that every error names a line of the file,
		// that they come in line order, and that none is said twice (in
		// the JSON shape, two elements on one line may have the same
		// problem: its errors do not name the element).
		checkLines := func(err error) {
			var errs Errors
			if !errors.As(err, &errs) || len(errs) == 0 {
				t.Fatalf("error %v is not Errors", err)
			}
			said := map[string]bool{}
			for i, e := range errs {
				if e.Line < 0 || e.Line > nlines {
					t.Fatalf("error on line %d of a %d-line file: %v", e.Line, nlines, e)
				}
				if i > 0 && e.Line < errs[i-1].Line {
					t.Fatalf("errors out of line order:\n%v", err)
				}
				if said[e.Error()] && SyntaxOf(text) == Language {
					t.Fatalf("error reported twice: %v\n%v", e, err)
				}
				said[e.Error()] = true
			}
		}
		if err != nil {
			checkLines(err)
			return
		}
		res, err := Apply("f", nil, acts, nil)
		if err != nil {
			checkLines(err)
			return
		}
		var list []*job.Task
		for _, t := range res.Tasks {
			list = append(list, t)
		}
		var cals []*job.Calendar
		for _, c := range res.Calendars {
			cals = append(cals, c)
		}
		var b strings.Builder
		if err := FormatCalendars(&b, cals); err != nil {
			t.Fatal(err)
		}
		if len(cals) > 0 {
			b.WriteString("\n")
		}
		if err := Format(&b, list); err != nil {
			t.Fatal(err)
		}
		// What applies is printable text: Format writes no character a
		// terminal would act on, but tabs and the newlines it writes.
		for _, r := range b.String() {
			if r != '\t' && r != '\n' && termsafe.Unsafe(r) {
				t.Fatalf("accepted definitions hold %U:\n%q", r, b.String())
			}
		}
		acts2, err := Parse("g", b.String())
		var res2 *Result
		if err == nil {
			res2, err = Apply("g", nil, acts2, nil)
		}
		if err != nil && len(list)+len(cals) > 0 {
			t.Fatalf("formatted definitions do not apply: %v\n%s", err, b.String())
		}
		if err == nil {
			for name, t1 := range res.Tasks {
				if t2 := res2.Tasks[name]; t2 != nil && !cmp.Equal(t1.Extras().Environment, t2.Extras().Environment) {
					t.Fatalf("environment of %s changed by the round trip: %s", name, cmp.Diff(t1.Extras().Environment, t2.Extras().Environment))
				}
			}
		}
		if err == nil && !cmp.Equal(res.Calendars, res2.Calendars, cmpopts.EquateEmpty()) {
			t.Fatalf("calendars changed by the round trip: %s", cmp.Diff(res.Calendars, res2.Calendars))
		}
	})
}

func TestDeclarative(t *testing.T) {
	t.Parallel()
	cur := load(t, base)
	text := callable2("a", "label: new") + callable2("fresh", "")
	acts, err := Parse("f.def", text)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Apply("f.def", cur, Declarative("f.def", cur, acts), nil)
	if err != nil {
		t.Fatal(err)
	}
	if a := res.Tasks["a"]; a.Extras().Label != "new" || a.Command != "x" {
		t.Errorf("a = %+v", a)
	}
	if diff := cmp.Diff([]string{"a", "fresh"}, res.Changed); diff != "" {
		t.Error(diff)
	}
	// The same file again changes nothing.
	acts2, _ := Parse("f.def", text)
	if got := Declarative("f.def", res.Tasks, acts2); len(got) != 0 {
		t.Errorf("re-applying the same file gives %d actions", len(got))
	}
}

func callable2(name, extra string) string {
	return "insert_task: " + name + "\n" + callable + extra + "\n"
}

// manyErrors are files with several errors each, and every error each one
// must report: once, on its own line, naming its action.
var manyErrors = []struct {
	name, text string
	active     []string
	want       []string
}{
	{"the errors of one action", `insert_task: x
type: callable
command: c
out_log_file: o
err_log_file: e
condition: su(ghost)
run_days: mo,mo
start_times: 25:00
`, nil, []string{
		"f.def:6: insert_task x: condition refers to task ghost which does not exist",
		"f.def:7: insert_task x: run_days attribute contains repeated days: \"mo\" in \"mo,mo\"",
		"f.def:8: insert_task x: start_times attribute should be comma separated values of time in format hh:mm, got \"25:00\" in \"25:00\"",
	}},
	{"an action line without its colon", `update_task: ghost
label: x

insert_task b4
type: callable
command: c
out_log_file: o
err_log_file: e
foo: bar
`, nil, []string{
		"f.def:1: update_task ghost: task not exist",
		`f.def:4: insert_task b4: key value pair separated by colon is expected (write "insert_task: b4")`,
		`f.def:9: insert_task b4: invalid field "foo"`,
	}},
	{"a child of a callable deleted in the same file", `insert_task: t1
type: callable
command: c
out_log_file: o
err_log_file: e

insert_task: c1
type: callable
parent: t1
command: c
out_log_file: o
err_log_file: e

delete_task: t1
`, nil, []string{
		"f.def:9: insert_task c1: parent task t1 not exist (deleted on line 14)",
	}},
	{"a child of a bundle deleted in the same file", `update_task: kid
label: still here

delete_task: box
`, nil, []string{
		"f.def:4: delete_task box: bundle box still has child tasks: kid",
	}},
	{"an insert with errors still defines its task", `insert_task: x
type: callable
command: c
out_log_file: o
priority: urgent

update_task: x
label: later
condition: su(nobody)

update_task: a
condition: su(x)
`, nil, []string{
		"f.def:1: insert_task x: err_log_file: field is required",
		"f.def:5: insert_task x: priority should be either (low=0, normal=1, important=2, critical=3), got \"urgent\"",
		"f.def:9: update_task x: condition refers to task nobody which does not exist",
	}},
	{"a parent of unknown type", `insert_task: nb
type: bundel

insert_task: c2
type: callable
parent: nb
command: c
out_log_file: o
err_log_file: e
start_times: 10:00
`, nil, []string{
		"f.def:2: insert_task nb: type attribute should be either bundle/callable/configuration, got \"bundel\"",
		"f.def:10: insert_task c2: scheduling attributes are not allowed on a task inside a bundle",
	}},
	{"unusable targets still have their values checked", `insert_task:
type: callable
command: c
out_log_file: o
err_log_file: e
priority: 7

update_task: zz
run_days: xx

delete_task: yy
label: x
`, nil, []string{
		"f.def:1: insert_task: target name is empty",
		"f.def:6: insert_task: priority should be either (low=0, normal=1, important=2, critical=3), got \"7\"",
		"f.def:8: update_task zz: task not exist",
		"f.def:9: update_task zz: run_days attribute should be comma separated any values of su,mo,tu,we,th,fr,sa, got \"xx\" in \"xx\"",
		"f.def:11: delete_task yy: task not exist",
		"f.def:12: delete_task yy: delete task should not have other attributes",
	}},
	{"a wrong value hides no rule and causes none", `update_task: a
priority: 9
start_times: 10:00
run_window: 1:00-2:00
start_mins: 5

update_task: b
run_window: 25:00-26:00
start_mins: 10
`, nil, []string{
		"f.def:2: update_task a: priority should be either (low=0, normal=1, important=2, critical=3), got \"9\"",
		"f.def:3: update_task a: task should not have both batch run and window run",
		"f.def:8: update_task b: run_window attribute should only have start and end time separated by '-' (hh:mm-hh:mm), got \"25:00-26:00\"",
	}},
	{"grammar and meaning together", `type: callable
command: x

insert_task: a
type callable
command: c
out_log_file: o
err_log_file: e
priority: 9
label: one
label: two

update: b
label: x

delete_task: box
`, nil, []string{
		`f.def:1: invalid action: attribute "type" before the first action`,
		"f.def:4: insert_task a: task already exist",
		`f.def:5: insert_task a: key value pair separated by colon is expected (write "type: callable")`,
		"f.def:9: insert_task a: priority should be either (low=0, normal=1, important=2, critical=3), got \"9\"",
		"f.def:11: insert_task a: attribute label given more than once (first on line 10)",
		`f.def:13: invalid action "update"`,
		"f.def:16: delete_task box: bundle box still has child tasks: kid",
	}},
	{"what a delete leaves dangling is said once", `insert_group: g
jobs: a

delete_task: a
`, nil, []string{
		"f.def:4: delete_task a: task a is referenced in condition of b",
		"f.def:4: delete_task a: task a belongs to group g (remove it from the group's jobs first)",
	}},
	{"errors on the result name the action that set the attribute", `insert_task: x
type: callable
command: c
out_log_file: o
err_log_file: e

update_task: x
condition: su(ghost)

update_task: x
label: l

update_task: a
condition: fa(b)
`, nil, []string{
		"f.def:8: update_task x: condition refers to task ghost which does not exist",
		"f.def:14: update_task a: cyclic dependency: a -> b -> a",
	}},
	{"a delete refused still deletes in the file", `delete_task: a

insert_task: a
type: callable
command: c
out_log_file: o
err_log_file: e
priority: 5
`, []string{"a"}, []string{
		"f.def:1: delete_task a: task a is active and cannot be deleted",
		"f.def:8: insert_task a: priority should be either (low=0, normal=1, important=2, critical=3), got \"5\"",
	}},
}

func TestErrorLists(t *testing.T) {
	t.Parallel()
	for _, tt := range manyErrors {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cur := load(t, base)
			_, err := run(cur, tt.text, tt.active...)
			var errs Errors
			if !errors.As(err, &errs) {
				t.Fatalf("err = %v, want Errors", err)
			}
			got := make([]string, len(errs))
			for i, e := range errs {
				got[i] = e.Error()
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSyntaxErrors(t *testing.T) {
	t.Parallel()
	acts, err := Parse("f.def", "insert_task: x\ntype callable\n\nupdate: y\n")
	if err != nil {
		t.Fatalf("Parse failed on a file with actions: %v", err)
	}
	err = SyntaxErrors(acts)
	want := "f.def:2: insert_task x: key value pair separated by colon is expected (write \"type: callable\")\nf.def:4: invalid action \"update\""
	if err == nil || err.Error() != want {
		t.Errorf("SyntaxErrors = %v, want\n%s", err, want)
	}
	if acts, _ := Parse("f.def", callable2("x", "")); SyntaxErrors(acts) != nil {
		t.Errorf("SyntaxErrors of a good file = %v", SyntaxErrors(acts))
	}
	if _, err := Parse("f.def", "update: y\nlabel: x\n"); err == nil || err.Error() != `f.def:1: invalid action "update"` {
		t.Errorf("a file without an action: %v", err)
	}
}
