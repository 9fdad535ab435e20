package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/job"
)

// TestClusterWorkerWatchesFiles defines a task that watches files on
// machine m1, which worker w1 serves: a file dropped in its directory
// starts the task once, on w1, with the file's path; w1 restarted does
// not start it again for that file, and starts it for the next.
func TestClusterWorkerWatchesFiles(t *testing.T) {
	_, c, nodes := startNodes(t,
		nodeSpec{name: "dir", roles: "director"},
		nodeSpec{name: "w1", roles: "worker", machines: "m1"})
	ctx := context.Background()
	in, out := t.TempDir(), t.TempDir()
	defs := fmt.Sprintf(`insert_task: load
type: callable
machine: m1
watch_file: %[1]s/*.csv
watch_steady: 1s
watch_interval: 1h
command: echo "$TEST_NODE_NAME $GNOMON_WATCH_FILE" >> %[2]s/load.ran
out_log_file: /dev/null
err_log_file: /dev/null
`, in, out)
	if _, err := c.Define(ctx, "load.def", defs, false); err != nil {
		t.Fatal(err)
	}
	lines := func() []string {
		b, _ := os.ReadFile(filepath.Join(out, "load.ran"))
		return strings.Split(strings.TrimSpace(string(b)), "\n")
	}
	a, b := filepath.Join(in, "a.csv"), filepath.Join(in, "b.csv")
	if err := os.WriteFile(a, []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "load ran for a.csv on w1, and succeeded", func() bool {
		return slices.Contains(lines(), "w1 "+a) && lastRun(t, c, "load").Status == job.Success
	})
	nodes["w1"].stop(10 * time.Second)
	nodes["w1"].start()
	if err := os.WriteFile(b, []byte("y\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "load ran for b.csv on w1, and succeeded", func() bool {
		return slices.Contains(lines(), "w1 "+b) && lastRun(t, c, "load").Status == job.Success
	})
	if got, want := lines(), []string{"w1 " + a, "w1 " + b}; !slices.Equal(got, want) {
		t.Errorf("load ran for %q, want %q: once per file, on w1", got, want)
	}
}
