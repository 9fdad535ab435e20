package cli

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/api"
	"github.com/gnomon-sched/gnomon/executor"
	"github.com/gnomon-sched/gnomon/job"
)

// process is a gnomon server running as a separate process (this test
// binary, see TestMain), so that it can be killed with SIGKILL.
type process struct {
	t      *testing.T
	cmd    *exec.Cmd
	client *api.Client
}

// freePort returns a loopback address nobody listens on. The kernel may
// hand a port it just gave back out again, so an address this binary has
// already returned (a director's, say, not started yet) is never
// returned twice.
func freePort(t *testing.T) string {
	t.Helper()
	portsMu.Lock()
	defer portsMu.Unlock()
	for range 100 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		if !portsGiven[addr] {
			portsGiven[addr] = true
			return addr
		}
	}
	t.Fatal("no loopback port this test binary has not handed out already")
	return ""
}

var (
	portsMu    sync.Mutex
	portsGiven = map[string]bool{}
)

func startProcess(t *testing.T, data, addr string) *process {
	t.Helper()
	self, _ := os.Executable()
	cmd := exec.Command(self, "server", "--data", data, "--db", testDB(t, data), "--listen", addr, "--timezone", "UTC", "--workers", "4")
	cmd.Env = append(os.Environ(), envServerProcess+"=1")
	logf, _ := os.OpenFile(filepath.Join(data+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &process{t: t, cmd: cmd, client: &api.Client{Base: "http://" + addr}}
	t.Cleanup(func() { p.cmd.Process.Kill(); p.cmd.Wait(); logf.Close() })
	deadline := time.Now().Add(30 * time.Second)
	for p.client.Health(context.Background()) != nil {
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(data + ".log")
			t.Fatalf("server did not become ready:\n%s", b)
		}
		time.Sleep(20 * time.Millisecond)
	}
	p.client.Token = adminToken(t, data)
	testTokens.Store(p.client.Base, p.client.Token)
	return p
}

func (p *process) kill() {
	p.cmd.Process.Signal(syscall.SIGKILL)
	p.cmd.Wait()
}

func (p *process) status(task string) job.Status {
	p.t.Helper()
	s, err := p.client.Status(context.Background(), task)
	if err != nil {
		p.t.Fatalf("status %s: %v", task, err)
	}
	return s.Rows[0].Status
}

func (p *process) waitStatus(task string, want job.Status) {
	p.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for p.status(task) != want {
		if time.Now().After(deadline) {
			p.t.Fatalf("%s is %s, want %s", task, p.status(task), want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func waitFile(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never appeared", path)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestCrashRecovery kills the server with SIGKILL while runs and definition
// changes are in flight, and checks after restart that everything
// acknowledged is there, that a run whose supervisor survived is recorded
// with its real outcome, that a run whose supervisor died too is recorded as
// lost, and that nothing ran twice.
func TestCrashRecovery(t *testing.T) {
	t.Parallel()
	singleServer(t, killedProcess)
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	addr := freePort(t)
	p := startProcess(t, data, addr)
	ctx := context.Background()

	task := func(name, command, extra string) string {
		return fmt.Sprintf("insert_task: %s\ntype: callable\ncommand: %s\nout_log_file: %s/%s.out\nerr_log_file: %s/%s.err\n%s\n",
			name, command, dir, name, dir, name, extra)
	}
	// survivor waits for a file, then exits 7; next is condition-triggered on its failure.
	text := task("survivor", fmt.Sprintf("echo started; touch %s/survivor.up; while [ ! -e %s/go ]; do sleep 0.05; done; exit 7", dir, dir), "") +
		task("next", "echo next", "condition: fa(survivor)") +
		task("victim", fmt.Sprintf("touch %s/victim.up; sleep 60", dir), "")
	if _, err := p.client.Define(ctx, "crash.def", text, false); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"survivor", "victim"} {
		if err := p.client.Event(ctx, n, "start"); err != nil {
			t.Fatal(err)
		}
	}
	waitFile(t, filepath.Join(dir, "survivor.up"))
	waitFile(t, filepath.Join(dir, "victim.up"))
	runDir := map[string]string{}
	for _, n := range []string{"survivor", "victim"} {
		v, err := p.client.Task(ctx, n)
		if err != nil || v.State.RunID == 0 {
			t.Fatalf("%s: %+v, %v", n, v, err)
		}
		runDir[n] = filepath.Join(data, "runs", strconv.FormatInt(v.State.RunID, 10))
	}

	// Definition changes acknowledged just before the crash.
	var acked []string
	for i := range 20 {
		name := fmt.Sprintf("late%02d", i)
		if _, err := p.client.Define(ctx, "late.def", task(name, "true", ""), false); err != nil {
			t.Fatal(err)
		}
		acked = append(acked, name)
	}
	p.kill()

	// The victim's supervisor dies too; the survivor's finishes while the
	// server is down.
	victimRun := runDir["victim"]
	rec, err := executor.ReadRecord(victimRun)
	if err != nil || rec.Pid == 0 {
		t.Fatalf("no supervisor pid in %s: %v", victimRun, err)
	}
	syscall.Kill(rec.Pid, syscall.SIGKILL)
	syscall.Kill(-rec.Pgid, syscall.SIGKILL)
	os.WriteFile(filepath.Join(dir, "go"), nil, 0o644)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if rec, _ := executor.ReadRecord(runDir["survivor"]); rec.Exit != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the survivor's outcome was not recorded in %s", runDir["survivor"])
		}
	}

	p = startProcess(t, data, addr)
	for _, name := range acked {
		if _, err := p.client.Task(ctx, name); err != nil {
			t.Errorf("acknowledged definition %s lost: %v", name, err)
		}
	}
	p.waitStatus("survivor", job.Failure)
	p.waitStatus("victim", job.Failure)
	p.waitStatus("next", job.Success) // fa(survivor) after the restart

	runs, err := p.client.Runs(ctx, "survivor", 10, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(runs.Runs) != 1 || runs.Runs[0].ExitCode != 7 || runs.Runs[0].Result != job.ResultNormal {
		t.Errorf("survivor runs = %+v, want one run with exit 7", runs.Runs)
	}
	runs, _ = p.client.Runs(ctx, "victim", 10, "")
	if len(runs.Runs) != 1 || runs.Runs[0].Result != job.ResultLost || !strings.Contains(runs.Runs[0].Message, "lost") {
		t.Errorf("victim runs = %+v, want one lost run", runs.Runs)
	}
	if out, _ := os.ReadFile(filepath.Join(dir, "survivor.out")); string(out) != "started\n" {
		t.Errorf("survivor ran %q (more than once?)", out)
	}
}
