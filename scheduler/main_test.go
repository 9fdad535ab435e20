package scheduler

import (
	"os"
	"testing"

	"github.com/gnomon-sched/gnomon/executor"
)

// TestMain lets the test binary serve as the run supervisor the executor
// starts (it starts this executable).
func TestMain(m *testing.M) {
	executor.MaybeSupervise()
	os.Exit(m.Run())
}
