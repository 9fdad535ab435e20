package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gnomon-sched/gnomon/api"
	"github.com/gnomon-sched/gnomon/job"
)

// A group's log rotation is its members': a member's log file rotates at
// the group's size, when the member sets none of its own.
func TestLogRotationFromGroup(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.mustRun("gnomon", "def", "-f", f.file("g.def", `insert_task: chatty
type: callable
command: echo hello
out_log_file: @DIR@/chatty.out
err_log_file: @DIR@/chatty.err

insert_group: noisy
jobs: chatty
log_rotate_size: 1
log_keep: 2
`))
	ended := func(n int) func() bool {
		return func() bool {
			rs, err := f.client.ListRuns(context.Background(), api.RunsQuery{Task: "chatty", Count: 10})
			if err != nil || len(rs.Runs) != n {
				return false
			}
			for _, r := range rs.Runs {
				if r.Status != job.Success {
					return false
				}
			}
			return true
		}
	}
	f.mustRun("gnomon", "start", "-j", "chatty")
	f.waitFor("the first run to succeed", ended(1))
	f.mustRun("gnomon", "start", "-j", "chatty")
	f.waitFor("the second run to succeed", ended(2))
	// The second run found the file over the group's size: the first
	// run's output went to chatty.out.1.
	old, err := os.ReadFile(filepath.Join(f.dir, "chatty.out.1"))
	if err != nil || strings.TrimSpace(string(old)) != "hello" {
		t.Errorf("chatty.out.1: %q, %v; want the first run's hello", old, err)
	}
	if export := f.mustRun("gnomon", "export"); !strings.Contains(export, "insert_group: noisy\njobs: chatty\nlog_rotate_size: 1\nlog_keep: 2\n") {
		t.Errorf("export:\n%s", export)
	}
}
