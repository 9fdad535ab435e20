package executor

import (
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// TestAwaitExit: awaitExit returns once the process has exited and before
// it is reaped (a zombie), and Wait then gets its status.
func TestAwaitExit(t *testing.T) {
	t.Parallel()
	// Several times: an awaitExit that returned early would most often be
	// seen with the process still reading.
	for range 10 {
		cmd := exec.Command("sh", "-c", "read line; exit 3")
		in, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		begun, state := make(chan struct{}), make(chan string, 1)
		go func() {
			close(begun)
			awaitExit(cmd.Process.Pid)
			state <- procState(cmd.Process.Pid)
		}()
		<-begun
		in.Write([]byte("go\n"))
		in.Close()
		if s := <-state; s != "Z" {
			t.Errorf("awaitExit returned with the process in state %q, want Z (exited, not reaped)", s)
		}
		var ee *exec.ExitError
		if err := cmd.Wait(); !errors.As(err, &ee) || ee.ExitCode() != 3 {
			t.Errorf("Wait after awaitExit: %v, want exit status 3", err)
		}
	}
}

// procState returns the state letter of a process (/proc/PID/stat).
func procState(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return err.Error()
	}
	// pid (comm) state ...: comm may hold spaces, not a ')'.
	_, rest, _ := strings.Cut(string(b), ") ")
	state, _, _ := strings.Cut(rest, " ")
	return state
}
