package scheduler

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gnomon-sched/gnomon/executor"
)

// TestMain lets the test binary serve as the run supervisor the executor
// starts (it starts this executable).
func TestMain(m *testing.M) {
	executor.MaybeSupervise()
	os.Exit(m.Run())
}

// localRunner returns a runner of commands and functions on this machine,
// with its files in dir/runs.
func localRunner(t testing.TB, dir string) *executor.Local {
	t.Helper()
	r, err := executor.NewLocal(executor.LocalConfig{Dir: filepath.Join(dir, "runs")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Wait) // every run watched has been reported
	return r
}
