package defs

import (
	"os"
	"path/filepath"
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

// everyAttr is a definition file whose tasks set, between them, every
// attribute Attrs writes (the CLI's label test reads it too).
var everyAttr = func() string {
	b, err := os.ReadFile(filepath.Join("testdata", "every_attribute.def"))
	if err != nil {
		panic(err)
	}
	return string(b)
}()

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
