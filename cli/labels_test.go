package cli

import (
	"strings"
	"testing"

	"github.com/gnomon-sched/gnomon/defs"
	"github.com/gnomon-sched/gnomon/job"
)

// labelDefs define tasks that set, between them, every attribute Attrs
// can return.
const labelDefs = `insert_resource: slots
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
must_complete_by: +1h

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

// TestTaskLabels checks that gnomon task shows every attribute under a
// label: none prints as ": value".
func TestTaskLabels(t *testing.T) {
	t.Parallel()
	acts, err := defs.Parse("labels.def", labelDefs)
	if err != nil {
		t.Fatal(err)
	}
	cals := map[string]*job.Calendar{"work": {Name: "work"}, "off": {Name: "off"}}
	res, err := defs.Apply("labels.def", nil, acts, &defs.Env{Calendars: cals})
	if err != nil {
		t.Fatal(err)
	}
	for name, task := range res.Tasks {
		var b strings.Builder
		taskLines(&b, task, "")
		for _, line := range strings.Split(strings.TrimSpace(b.String()), "\n") {
			if strings.HasPrefix(line, ": ") {
				t.Errorf("%s: line without a label: %q", name, line)
			}
		}
	}
}
