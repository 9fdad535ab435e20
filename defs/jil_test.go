package defs

import (
	"errors"
	"strings"
	"testing"
)

// A definition written as an AutoSys user writes JIL gets, for each
// word gnomon writes otherwise, the word it writes.
func TestJILWords(t *testing.T) {
	t.Parallel()
	_, err := run(nil, "insert_job: fw\nstd_err_file: /tmp/e\n\ninsert_task: fw_orders\njob_type: FW\ntype: callable\ncommand: true\nstd_out_file: /tmp/o\nerr_log_file: /tmp/e\n"+
		"watch_file: /data/in/orders*.csv\nwatch_file_min_size: 1024\nwatch_interval: 60\nenvvar: A=1\n")
	var errs Errors
	if !errors.As(err, &errs) {
		t.Fatalf("err = %v", err)
	}
	var got []string
	for _, e := range errs {
		got = append(got, e.Error())
	}
	want := []string{
		`f.def:1: insert_task fw: invalid action "insert_job"; gnomon writes insert_task (AutoSys's insert_job)`,
		`f.def:2: insert_task fw: invalid field "std_err_file": that is AutoSys's word; gnomon writes err_log_file`,
		`f.def:5: insert_task fw_orders: invalid field "job_type": that is AutoSys's word; gnomon writes type: callable (a CMD or FW job; an FW job is a callable task with watch_file, whose command may be true), bundle (a BOX job) or configuration`,
		`f.def:8: insert_task fw_orders: invalid field "std_out_file": that is AutoSys's word; gnomon writes out_log_file`,
		`f.def:11: insert_task fw_orders: invalid field "watch_file_min_size": that is AutoSys's word; gnomon writes watch_min_size (in bytes, or 10K, 5M)`,
		`f.def:13: insert_task fw_orders: invalid field "envvar"; did you mean envvars?`,
	}
	for _, g := range got {
		if strings.Contains(g, "fw_orders: type: field is required") || strings.Contains(g, "fw_orders: out_log_file: field is required") {
			t.Errorf("reported missing, though its JIL word was given: %s", g)
		}
	}
	for _, w := range want {
		found := false
		for _, g := range got {
			found = found || g == w
		}
		if !found {
			t.Errorf("missing error:\n%s\ngot:\n%s", w, strings.Join(got, "\n"))
		}
	}
	if !strings.Contains(err.Error(), `watch_interval: "60" has no unit`) {
		t.Errorf("a bare watch_interval: %v", err)
	}
}

// Every JIL word this package explains is one gnomon does not take, and
// every action it points to is one gnomon does.
func TestJILWordsAreNotAttributes(t *testing.T) {
	t.Parallel()
	for k := range jilFields {
		if isAttribute(k) {
			t.Errorf("%s is an attribute of gnomon's language, and is explained as AutoSys's", k)
		}
	}
	for k, g := range jilActions {
		if !Kind(g).valid() || Kind(k).valid() || !actionLike(k) {
			t.Errorf("%s -> %s", k, g)
		}
	}
}
