package defs

import (
	"strings"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/job"
)

// TestKeepHistory sets keep_history on a task and a group, formats them
// back, and refuses values below the floor or not retentions.
func TestKeepHistory(t *testing.T) {
	t.Parallel()
	res, err := applyText(nil, nil, `insert_task: ledger
type: callable
command: post-ledger
out_log_file: o
err_log_file: e
keep_history: 7y

insert_task: other
type: callable
command: true
out_log_file: o
err_log_file: e

insert_group: regulated
jobs: other
keep_history: forever
`)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Tasks["ledger"].Extras().KeepHistory; got != job.Duration(7*365*24*time.Hour) {
		t.Errorf("keep_history of ledger = %v, want 7y", got)
	}
	if got := res.Tasks["regulated"].Extras().KeepHistory; got != job.Forever {
		t.Errorf("keep_history of the group = %v, want forever", got)
	}
	var b strings.Builder
	if err := Format(&b, []*job.Task{res.Tasks["ledger"], res.Tasks["regulated"]}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "keep_history: 7y\n") || !strings.Contains(b.String(), "keep_history: forever\n") {
		t.Errorf("formatted:\n%s", b.String())
	}
	// Unset, it goes.
	upd, err := applyText(res.Tasks, nil, "update_task: ledger\nkeep_history:\n")
	if err != nil {
		t.Fatal(err)
	}
	if got := upd.Tasks["ledger"].Extras().KeepHistory; got != 0 {
		t.Errorf("keep_history after unsetting = %v", got)
	}
	for v, want := range map[string]string{
		"12h":  "keep_history: 12h is below the floor of 1d",
		"soon": `keep_history: "soon" is not a retention`,
		"0d":   `keep_history: "0d" is not a retention`,
	} {
		_, err := applyText(res.Tasks, nil, "update_task: ledger\nkeep_history: "+v+"\n")
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "f.def:2") {
			t.Errorf("keep_history: %s: error %v, want one at f.def:2 with %q", v, err, want)
		}
	}
}
