package defs

import (
	"strings"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/job"
)

// TestLogRotate sets a task's own log rotation, formats it back, unsets
// it, and refuses values that are not sizes, ages or counts.
func TestLogRotate(t *testing.T) {
	t.Parallel()
	res, err := applyText(nil, nil, `insert_task: chatty
type: callable
command: chatter
out_log_file: o
err_log_file: e
log_rotate_size: 64M
log_rotate_age: 7d
log_keep: 10

insert_task: quiet
type: callable
command: true
out_log_file: o2
err_log_file: e2
log_rotate_size: 0
log_rotate_age: 0
`)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := res.Tasks["chatty"].Extras().LogRotate, (&job.LogRotation{Size: 64 << 20, Age: job.Duration(7 * 24 * time.Hour), Keep: 10}); *got != *want {
		t.Errorf("chatty's rotation = %+v, want %+v", got, want)
	}
	if got, want := res.Tasks["quiet"].Extras().LogRotate, (&job.LogRotation{Size: job.Off, Age: job.Off}); *got != *want {
		t.Errorf("quiet's rotation = %+v, want %+v", got, want)
	}
	var b strings.Builder
	if err := Format(&b, []*job.Task{res.Tasks["chatty"], res.Tasks["quiet"]}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"log_rotate_size: 64M\nlog_rotate_age: 7d\nlog_keep: 10\n", "log_rotate_size: 0\nlog_rotate_age: 0\n"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("formatted:\n%s\nwant %q", b.String(), want)
		}
	}
	// What Format writes applies back to the same definitions.
	back, err := applyText(nil, nil, b.String())
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"chatty", "quiet"} {
		if got, want := back.Tasks[name].Extras().LogRotate, res.Tasks[name].Extras().LogRotate; *got != *want {
			t.Errorf("%s back = %+v, want %+v", name, got, want)
		}
	}
	// As in the JSON form the store and the API keep.
	for _, name := range []string{"chatty", "quiet"} {
		j := res.Tasks[name].JSON()
		var again job.Task
		j.Into(&again)
		if got, want := again.Extras().LogRotate, res.Tasks[name].Extras().LogRotate; *got != *want {
			t.Errorf("%s through JSON = %+v, want %+v", name, got, want)
		}
	}
	// Unset, they go, and with them the task's own rotation.
	upd, err := applyText(res.Tasks, nil, "update_task: chatty\nlog_rotate_size:\nlog_rotate_age:\nlog_keep:\n")
	if err != nil {
		t.Fatal(err)
	}
	if got := upd.Tasks["chatty"].Extras().LogRotate; got != nil {
		t.Errorf("rotation after unsetting = %+v", got)
	}
	for attr, want := range map[string]string{
		"log_rotate_size: 64T":    `log_rotate_size: "64T" is not a size`,
		"log_rotate_size: -1":     `log_rotate_size: "-1" is not a size`,
		"log_rotate_age: forever": `log_rotate_age: "forever" is not an age`,
		"log_rotate_age: soon":    `log_rotate_age: "soon" is not an age`,
		"log_keep: 0":             `log_keep: "0" should be a number of rotated files, 1 to 1000`,
		"log_keep: many":          `log_keep: "many" should be a number`,
	} {
		_, err := applyText(res.Tasks, nil, "update_task: chatty\n"+attr+"\n")
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "f.def:2") {
			t.Errorf("%s: error %v, want one at f.def:2 with %q", attr, err, want)
		}
	}
}

// A group gives its members a log rotation: set, formatted back and
// applied again, as a task's own.
func TestLogRotateOnGroup(t *testing.T) {
	t.Parallel()
	res, err := applyText(nil, nil, `insert_task: chatty
type: callable
command: chatter
out_log_file: o
err_log_file: e

insert_group: noisy
jobs: chatty
log_rotate_size: 1G
log_keep: 3
`)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := res.Tasks["noisy"].Extras().LogRotate, (&job.LogRotation{Size: 1 << 30, Keep: 3}); got == nil || *got != *want {
		t.Fatalf("the group's rotation = %+v, want %+v", got, want)
	}
	var b strings.Builder
	if err := Format(&b, []*job.Task{res.Tasks["chatty"], res.Tasks["noisy"]}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "insert_group: noisy\njobs: chatty\nlog_rotate_size: 1G\nlog_keep: 3\n") {
		t.Errorf("formatted:\n%s", b.String())
	}
	back, err := applyText(nil, nil, b.String())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := back.Tasks["noisy"].Extras().LogRotate, res.Tasks["noisy"].Extras().LogRotate; *got != *want {
		t.Errorf("back = %+v, want %+v", got, want)
	}
}
