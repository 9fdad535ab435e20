package defs

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gnomon-sched/gnomon/job"
)

// TestLabel checks that every attribute Attrs can write has a label of
// its own, and that the labels schd_task showed stay.
func TestLabel(t *testing.T) {
	t.Parallel()
	owner := map[string]string{}
	for _, a := range attrTable {
		if a.formatFunc == nil {
			continue
		}
		l := Label(a.name)
		if l == "" {
			t.Errorf("%s: no label", a.name)
		}
		if o, dup := owner[l]; dup {
			t.Errorf("%s and %s have the same label %s", o, a.name, l)
		}
		owner[l] = a.name
	}
	for key, want := range map[string]string{
		"type": "Type", "parent": "Parent", "machine": "Machine", "command": "Command", "condition": "Condition",
		"out_log_file": "OutLogFile", "err_log_file": "ErrLogFile", "label": "Label", "profile": "Profile", "owner": "Owner",
		"run_days": "RunDays", "start_times": "StartTimes", "run_window": "RunWindow", "start_mins": "StartMins",
		"cron": "Cron", "start_date": "StartDate", "end_date": "EndDate", "interval": "Interval",
		"timezone": "Timezone", "start_delay": "StartDelay", "overlap": "Overlap", "priority": "Priority",
		"function": "Function", "alert_on": "AlertOn", "alert_to": "AlertTo", "alert_template": "AlertTemplate", "jobs": "Jobs",
		"keep_history": "KeepHistory", "run_calendar": "RunCalendar", "exclude_calendar": "ExcludeCalendar",
		"log_rotate_size": "LogRotateSize", "log_rotate_age": "LogRotateAge", "log_keep": "LogKeep",
		"description": "Description", "rule": "Rule", "holidays": "Holidays", "workdays": "Workdays",
		"n_retrys": "NRetrys", "std_in_file": "StdInFile", "watch_min_size": "WatchMinSize", "envvars": "Envvars",
	} {
		if got := Label(key); got != want {
			t.Errorf("Label(%q) = %q, want %q", key, got, want)
		}
	}
	if got := Label("comand"); got != "" {
		t.Errorf("Label of a key that is not an attribute = %q, want none", got)
	}
}

// everyAttr defines tasks that set, between them, every attribute Attrs
// writes.
const everyAttr = `insert_resource: slots
amount: 4
label: worker slots

insert_task: box
type: bundle
start_times: 01:00
run_days: mo,tu
timezone: Europe/Paris
run_calendar: work
exclude_calendar: off

insert_task: child
type: callable
parent: box
machine: m1
command: /bin/run
out_log_file: /tmp/out
err_log_file: /tmp/err
label: a child
profile: /etc/profile
owner: batch
condition: su(other)
start_delay: 5m
n_retrys: 2
retry_delay: 1m
retry_backoff: 2
retry_max_delay: 10m
term_run_time: 1h
max_run_alarm: 30m
min_run_alarm: 1m
resources: slots=2
envvars: A=1
working_dir: /tmp
std_in_file: /dev/null
umask: 022
params: P
alert_on: failure
alert_to: ops@example.com
alert_template: /t
notify: webhook:https://example.com/h
notify_template: {"x": 1}
keep_history: 7d
log_rotate_size: 10M
log_rotate_age: 7d
log_keep: 3
priority: 2

insert_task: other
type: callable
function: fn
run_window: 08:00-18:00
start_mins: 00,30
overlap: skip
must_start_by: +5m
must_complete_by: 07:00

insert_task: crony
type: callable
command: true
out_log_file: /tmp/o
err_log_file: /tmp/e
cron: 0 * * * *

insert_task: dated
type: callable
command: true
out_log_file: /tmp/o
err_log_file: /tmp/e
start_date: 2026-01-01 00:00
end_date: 2026-12-31 00:00
interval: 1h

insert_task: conf
type: configuration
dependencies: [{"type": "FILE", "resourceId": "/data/in", "lifeDuration": 3600}]
watch_file: /data/in/*.csv
watch_min_size: 10K
watch_steady: 30s
watch_interval: 10s

insert_group: team
jobs: child, other
`

// TestAttrsEvery checks that Attrs writes every attribute of the table
// that it can write, each in the canonical order, and that what it
// writes reads back as the same definitions.
func TestAttrsEvery(t *testing.T) {
	t.Parallel()
	cals := map[string]*job.Calendar{"work": {Name: "work"}, "off": {Name: "off"}}
	acts, err := Parse("every.def", everyAttr)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Apply("every.def", nil, acts, &Env{Calendars: cals})
	if err != nil {
		t.Fatal(err)
	}
	rank := map[string]int{}
	for i, a := range attrTable {
		rank[a.name] = i
	}
	seen := map[string]bool{}
	for name, task := range res.Tasks {
		last := -1
		for _, kv := range Attrs(task) {
			seen[kv[0]] = true
			if rank[kv[0]] <= last {
				t.Errorf("%s: %s out of the canonical order", name, kv[0])
			}
			last = rank[kv[0]]
		}
	}
	for _, a := range attrTable {
		if a.formatFunc != nil && !seen[a.name] {
			t.Errorf("%s: not written (the definitions of this test should set it)", a.name)
		}
	}
	var list []*job.Task
	for _, task := range res.Tasks {
		list = append(list, task)
	}
	var b strings.Builder
	if err := Format(&b, list); err != nil {
		t.Fatal(err)
	}
	acts, err = Parse("export.def", b.String())
	if err != nil {
		t.Fatal(err)
	}
	again, err := Apply("export.def", nil, acts, &Env{Calendars: cals})
	if err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	if diff := cmp.Diff(res.Tasks, again.Tasks); diff != "" {
		t.Errorf("the written definitions read back otherwise (-applied +read back):\n%s", diff)
	}
}
