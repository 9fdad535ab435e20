package executor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/gnomon-sched/gnomon/job"
)

func TestMain(m *testing.M) {
	MaybeSupervise()
	if self := os.Getenv(envCanChange); self != "" {
		fmt.Println(CanChangeUser())
		fmt.Println("root:", CheckOwner("root"))
		fmt.Println("self:", CheckOwner(self))
		os.Exit(0)
	}
	// The usual umask, whatever the caller's: the tests check that what
	// the executor creates is its owner's only all the same.
	syscall.Umask(0o022)
	goleak.VerifyTestMain(m)
}

type fixture struct {
	t    *testing.T
	dir  string
	x    *Executor
	exit chan Exit
}

func setup(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{t: t, dir: t.TempDir(), exit: make(chan Exit, 16)}
	f.x = f.executor()
	return f
}

func (f *fixture) executor() *Executor {
	x, err := New(Config{Dir: filepath.Join(f.dir, "runs"), Grace: 300 * time.Millisecond, Report: func(e Exit) { f.exit <- e }})
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(x.Wait)
	return x
}

func (f *fixture) spec(id int64, command string) Spec {
	return Spec{RunID: id, Task: "t", Command: command, OutLog: filepath.Join(f.dir, "out.log"), ErrLog: filepath.Join(f.dir, "err.log"),
		Scheduled: time.Date(2026, 3, 1, 4, 0, 0, 0, time.UTC)}
}

func (f *fixture) wait() Exit {
	f.t.Helper()
	select {
	case e := <-f.exit:
		return e
	case <-time.After(20 * time.Second):
		f.t.Fatal("no exit reported")
		return Exit{}
	}
}

func (f *fixture) read(name string) string {
	b, _ := os.ReadFile(filepath.Join(f.dir, name))
	return string(b)
}

func TestRunCommand(t *testing.T) {
	t.Parallel()
	f := setup(t)
	os.WriteFile(filepath.Join(f.dir, "out.log"), []byte("before\n"), 0o644)
	s := f.spec(42, `echo "$GNOMON_TASK $GNOMON_RUN_ID $GNOMON_SCHEDULED_TIME $GNOMON_ATTEMPT" | tr a-z A-Z; echo oops >&2; exit 3`)
	s.Attempt = 2
	f.x.Start(s)
	e := f.wait()
	if e.RunID != 42 || e.Code != 3 || e.Result != job.ResultNormal || e.End.IsZero() {
		t.Errorf("exit = %+v", e)
	}
	if got := f.read("out.log"); got != "before\nT 42 2026-03-01T04:00:00Z 3\n" {
		t.Errorf("out.log = %q (output must be appended)", got)
	}
	if got := f.read("err.log"); got != "oops\n" {
		t.Errorf("err.log = %q", got)
	}
	if rec, err := ReadRecord(filepath.Join(f.dir, "runs", "42")); err != nil || rec.Exit == nil || rec.Exit.Code != 3 || rec.Pid == 0 || rec.Pgid == 0 {
		t.Errorf("run record %+v, %v", rec, err)
	}
	f.x.Forget(42)
	if ents, err := os.ReadDir(filepath.Join(f.dir, "runs")); err != nil || len(ents) != 0 {
		t.Errorf("Forget left %v, %v", ents, err)
	}
}

func TestProfile(t *testing.T) {
	t.Parallel()
	f := setup(t)
	good := filepath.Join(f.dir, "good.sh")
	os.WriteFile(good, []byte("export GREETING=hello\n"), 0o644)
	bad := filepath.Join(f.dir, "bad.sh")
	os.WriteFile(bad, []byte("false\n"), 0o644)

	s := f.spec(1, `echo "$GREETING"`)
	s.Profile = good
	f.x.Start(s)
	if e := f.wait(); e.Code != 0 || f.read("out.log") != "hello\n" {
		t.Errorf("profile not sourced: %+v, out %q", e, f.read("out.log"))
	}

	s = f.spec(2, `echo ran`)
	s.Profile = bad
	f.x.Start(s)
	if e := f.wait(); e.Code == 0 || strings.Contains(f.read("out.log"), "ran") {
		t.Errorf("command ran after a failing profile: %+v", e)
	}

	s = f.spec(3, `echo ran`)
	s.Profile = filepath.Join(f.dir, "missing.sh")
	f.x.Start(s)
	if e := f.wait(); e.Result != job.ResultLaunch || !strings.Contains(e.Message, "missing.sh") {
		t.Errorf("missing profile: %+v", e)
	}
}

func TestLogFileCannotOpen(t *testing.T) {
	t.Parallel()
	f := setup(t)
	s := f.spec(1, "true")
	s.ErrLog = filepath.Join(f.dir, "no", "such", "dir", "err.log")
	f.x.Start(s)
	if e := f.wait(); e.Result != job.ResultLaunch || !strings.Contains(e.Message, "err_log_file") {
		t.Errorf("exit = %+v", e)
	}
}

func TestKill(t *testing.T) {
	t.Parallel()
	f := setup(t)
	pidFile := filepath.Join(f.dir, "child.pid")
	// The command ignores TERM and leaves a grandchild behind: both must go.
	f.x.Start(f.spec(5, `trap '' TERM; sleep 60 & echo $! > `+pidFile+`; echo started; wait`))
	waitFor(t, func() bool { return strings.Contains(f.read("out.log"), "started") })
	f.x.Kill(5)
	e := f.wait()
	if e.Result != job.ResultKilled {
		t.Errorf("exit = %+v", e)
	}
	b, _ := os.ReadFile(pidFile)
	var pid int
	for _, c := range strings.TrimSpace(string(b)) {
		pid = pid*10 + int(c-'0')
	}
	waitFor(t, func() bool { return syscall.Kill(pid, 0) != nil })
}

func TestAttach(t *testing.T) {
	t.Parallel()
	f := setup(t)
	release := filepath.Join(f.dir, "release")
	f.x.Start(f.spec(9, `while [ ! -e `+release+` ]; do sleep 0.05; done; exit 4`))
	waitFor(t, func() bool { rec, _ := ReadRecord(filepath.Join(f.dir, "runs", "9")); return rec.Pid != 0 })

	// A second executor on the same directory plays the restarted server.
	other := make(chan Exit, 1)
	y, err := New(Config{Dir: filepath.Join(f.dir, "runs"), Report: func(e Exit) { other <- e }})
	if err != nil {
		t.Fatal(err)
	}
	y.Attach(9)
	if y.Running() != 1 {
		t.Fatalf("attached executor watches %d runs", y.Running())
	}
	os.WriteFile(release, nil, 0o644)
	if e := f.wait(); e.Code != 4 {
		t.Errorf("first executor: %+v", e)
	}
	select {
	case e := <-other:
		if e.Code != 4 || e.Result != job.ResultNormal {
			t.Errorf("attached executor: %+v", e)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("attached executor reported nothing")
	}
	y.Wait()

	// An ended run is reported at once on attach.
	y.Attach(9)
	if e := <-other; e.Code != 4 {
		t.Errorf("attach after the end: %+v", e)
	}
}

func TestAttachLost(t *testing.T) {
	t.Parallel()
	f := setup(t)
	// No directory at all: the server stopped before launching.
	f.x.Attach(77)
	if e := f.wait(); e.Result != job.ResultLost || !strings.Contains(e.Message, "never started") {
		t.Errorf("exit = %+v", e)
	}
	// A lock that is free, with a pid but no outcome: the supervisor died.
	os.WriteFile(filepath.Join(f.dir, "runs", "78.lock"), []byte(`{"pid":1,"pgid":2}`+"\n"), 0o644)
	f.x.Attach(78)
	if e := f.wait(); e.Result != job.ResultLost || !strings.Contains(e.Message, "died") || !strings.Contains(e.Message, "while the command ran") {
		t.Errorf("exit = %+v", e)
	}
	// A free lock without a pid, in an earlier version's run directory:
	// the server stopped while handing the run over, or the supervisor
	// died before starting the command.
	dir := filepath.Join(f.dir, "runs", "79")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "lock"), nil, 0o644)
	f.x.Attach(79)
	if e := f.wait(); e.Result != job.ResultLost || !strings.Contains(e.Message, "while handing the run to a supervisor") || !strings.Contains(e.Message, "before starting the command") {
		t.Errorf("exit = %+v", e)
	}
	// An earlier version's run that ended while the server was down.
	dir = filepath.Join(f.dir, "runs", "80")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "lock"), nil, 0o644)
	os.WriteFile(filepath.Join(dir, "exit.json"), []byte(`{"run_id":80,"exit_code":6,"result":"normal"}`), 0o644)
	f.x.Attach(80)
	if e := f.wait(); e.RunID != 80 || e.Code != 6 || e.Result != job.ResultNormal {
		t.Errorf("exit = %+v", e)
	}
	// The runs with files: 78's lock, 79's and 80's directories.
	if got := f.x.Runs(); !slices.Equal(got, []int64{78, 79, 80}) {
		t.Errorf("Runs() = %v, want [78 79 80]", got)
	}
	f.x.Forget(80)
	f.x.Sweep(map[int64]bool{79: true})
	if got := f.x.Runs(); !slices.Equal(got, []int64{79}) {
		t.Errorf("after Forget(80) and a Sweep keeping 79: Runs() = %v", got)
	}
	f.x.Sweep(map[int64]bool{})
	if ents, err := os.ReadDir(filepath.Join(f.dir, "runs")); err != nil || len(ents) != 0 {
		t.Errorf("Forget and Sweep left %v, %v", ents, err)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A supervisor that has recorded its run takes the next one: the runs of a
// sequence share one process, a stray SIGTERM to it between runs is
// ignored, and an abort still reaches the run in hand.
func TestSupervisorsAreReused(t *testing.T) {
	t.Parallel()
	f := setup(t)
	defer f.x.Stop(context.Background())
	for id := int64(1); id <= 5; id++ {
		f.x.Start(f.spec(id, `echo "sup $PPID"`))
		if e := f.wait(); e.Code != 0 || e.Result != job.ResultNormal {
			t.Fatalf("run %d: %+v", id, e)
		}
		f.x.Forget(id)
	}
	lines := strings.Split(strings.TrimSpace(f.read("out.log")), "\n")
	distinct := map[string]bool{}
	for _, l := range lines {
		distinct[l] = true
	}
	if len(lines) != 5 || len(distinct) > 2 {
		t.Errorf("5 sequential runs had %d supervisors:\n%s", len(distinct), f.read("out.log"))
	}
	// A SIGTERM to the idle supervisor is ignored: it runs the next run.
	// (A supervisor is back among the spares before its run's exit is
	// reported, so that a run the exit triggers finds it.)
	var sup int
	f.x.mu.Lock()
	if len(f.x.spares) > 0 {
		sup = f.x.spares[len(f.x.spares)-1].cmd.Process.Pid
	}
	f.x.mu.Unlock()
	if sup == 0 {
		t.Fatal("no idle supervisor kept once the exit was reported")
	}
	// The supervisor ignores SIGTERM (the kernel discards it as it is
	// sent) rather than handle it some time later.
	if ign, err := sigIgnored(sup); err != nil || ign&(1<<(syscall.SIGTERM-1)) == 0 {
		t.Fatalf("the idle supervisor's ignored signals: %#x, %v; want SIGTERM among them", ign, err)
	}
	syscall.Kill(sup, syscall.SIGTERM)
	f.x.Start(f.spec(6, `sleep 30`))
	f.x.mu.Lock()
	took := f.x.pids[6]
	f.x.mu.Unlock()
	if took != sup {
		t.Fatalf("run 6 went to supervisor %d, want the idle one, %d", took, sup)
	}
	// An abort right after the start is repeated until the run ends.
	f.x.Kill(6)
	if e := f.wait(); e.Result != job.ResultKilled {
		t.Errorf("aborted run ended %+v, want killed", e)
	}
}

// sigIgnored returns the mask of the signals process pid ignores, as
// /proc/PID/status has it (SigIgn): bit n-1 is signal n.
func sigIgnored(pid int) (uint64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "SigIgn:"); ok {
			return strconv.ParseUint(strings.TrimSpace(v), 16, 64)
		}
	}
	return 0, errors.New("no SigIgn in /proc/" + strconv.Itoa(pid) + "/status")
}

// A run whose spec is too large to travel on the supervisor's socket gets
// it through spec.json.
func TestLargeSpec(t *testing.T) {
	t.Parallel()
	f := setup(t)
	defer f.x.Stop(context.Background())
	command := ": '" + strings.Repeat("x", maxHandoff) + "'; echo large"
	f.x.Start(f.spec(7, command))
	if e := f.wait(); e.Code != 0 || e.Result != job.ResultNormal {
		t.Fatalf("exit %+v", e)
	}
	if got := f.read("out.log"); got != "large\n" {
		t.Errorf("out.log %q", got)
	}
}

func TestPlainCommand(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		command string
		direct  bool
	}{
		{"ls -l /tmp", true},
		{"date +%s", true},
		{"  env\tFOO=bar  ", true},
		{"true", false},            // a builtin: the shell's own
		{"echo -e x", false},       // the builtin and the program differ
		{"ls /tmp/*", false},       // a glob
		{"ls ~", false},            // tilde expansion
		{"echo $HOME", false},      // an expansion
		{"ls 'a b'", false},        // quotes
		{"ls; ls", false},          // an operator
		{"ls > out", false},        // a redirection
		{"ls # comment", false},    // a comment
		{"FOO=1 env", false},       // an assignment
		{"if", false},              // a keyword
		{"no-such-program", false}, // the shell reports it
		{"", false},
	} {
		if got := plainCommand(c.command) != nil; got != c.direct {
			t.Errorf("plainCommand(%q) direct = %v, want %v", c.command, got, c.direct)
		}
	}
}

// A plain command runs without a shell and reports like one that has one:
// its exit status, its output, its environment.
func TestPlainCommandRuns(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.x.Start(f.spec(7, "env"))
	if e := f.wait(); e.Code != 0 || e.Result != job.ResultNormal {
		t.Errorf("exit = %+v", e)
	}
	if out := f.read("out.log"); !strings.Contains(out, "GNOMON_RUN_ID=7\n") || !strings.Contains(out, "GNOMON_TASK=t\n") {
		t.Errorf("out.log lacks the run's environment:\n%s", out)
	}
	f.x.Start(f.spec(8, "ls /no/such/dir"))
	if e := f.wait(); e.Code == 0 || e.Result != job.ResultNormal {
		t.Errorf("exit of a failing plain command = %+v", e)
	}
	if !strings.Contains(f.read("err.log"), "/no/such/dir") {
		t.Errorf("err.log = %q", f.read("err.log"))
	}
}

// TestReadRecord reads the lines a supervisor writes into its lock: an
// incomplete line does not count, and the files of earlier versions do.
func TestReadRecord(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "5")
	lock, err := os.OpenFile(dir+".lock", os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	fd := int(lock.Fd())
	if rec, err := ReadRecord(dir); err != nil || rec.Pid != 0 || rec.Exit != nil {
		t.Fatalf("empty lock: %+v, %v", rec, err)
	}
	if err := recordPid(fd, Record{Pid: 12, Pgid: 34}); err != nil {
		t.Fatal(err)
	}
	// A supervisor killed in the middle of its outcome line.
	if _, err := syscall.Pwrite(fd, []byte(`{"run_id":5,"exit_code":`), exitOffset); err != nil {
		t.Fatal(err)
	}
	if rec, err := ReadRecord(dir); err != nil || rec.Pid != 12 || rec.Pgid != 34 || rec.Exit != nil {
		t.Fatalf("pid and half an outcome: %+v, %v", rec, err)
	}
	if _, err := recordExit(fd, Exit{RunID: 5, Code: 2, Result: job.ResultNormal, Message: "exit status 2\nand more"}); err != nil {
		t.Fatal(err)
	}
	rec, err := ReadRecord(dir)
	if err != nil || rec.Exit == nil || rec.Exit.Code != 2 || rec.Exit.Message != "exit status 2\nand more" {
		t.Fatalf("outcome: %+v, %v", rec, err)
	}

	// A run directory written by an earlier version.
	old := t.TempDir()
	os.WriteFile(filepath.Join(old, "lock"), nil, 0o644)
	os.WriteFile(filepath.Join(old, "pid.json"), []byte(`{"pid":7,"pgid":8}`), 0o644)
	if rec, err := ReadRecord(old); err != nil || rec.Pid != 7 || rec.Pgid != 8 || rec.Exit != nil {
		t.Fatalf("pid.json: %+v, %v", rec, err)
	}
	os.WriteFile(filepath.Join(old, "exit.json"), []byte(`{"run_id":3,"exit_code":1,"result":"normal"}`), 0o644)
	if rec, err := ReadRecord(old); err != nil || rec.Exit == nil || rec.Exit.Code != 1 {
		t.Fatalf("exit.json: %+v, %v", rec, err)
	}
}

// TestKillAtOnce aborts runs the moment they are handed over, before their
// supervisor listens for the signal: the abort must not be lost.
func TestKillAtOnce(t *testing.T) {
	t.Parallel()
	f := setup(t)
	defer f.x.Stop(context.Background())
	for id := int64(1); id <= 5; id++ {
		f.x.Start(f.spec(id, `sleep 30`))
		f.x.Kill(id)
		if e := f.wait(); e.RunID != id || e.Result != job.ResultKilled {
			t.Fatalf("run %d aborted at once ended %+v, want killed", id, e)
		}
		f.x.Forget(id)
	}
}

// TestNotASupervisor: a supervisor command that never says ready fails
// the run's launch in bounded time instead of holding it up.
func TestNotASupervisor(t *testing.T) {
	t.Parallel()
	exits := make(chan Exit, 1)
	x, err := New(Config{Dir: t.TempDir(), Command: []string{"/bin/sleep", "60"}, Report: func(e Exit) { exits <- e }})
	if err != nil {
		t.Fatal(err)
	}
	x.readyTimeout = 200 * time.Millisecond
	defer x.Stop(context.Background())
	x.Start(Spec{RunID: 1, Task: "t", Command: "true", OutLog: os.DevNull, ErrLog: os.DevNull})
	select {
	case e := <-exits:
		if e.Result != job.ResultLaunch || !strings.Contains(e.Message, "did not start as a supervisor") {
			t.Errorf("exit %+v", e)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the launch was not given up")
	}
}

// TestTaskEnvironment: a command gets the server's environment but not its
// own settings, whose secrets (an SMTP password, a token, a database URL
// with its password) a command printing its environment would show.
func TestTaskEnvironment(t *testing.T) {
	t.Setenv("GNOMON_SMTP_PASSWORD", "hunter2")
	t.Setenv("GNOMON_DB", "postgres://u:s3cret@db/x")
	t.Setenv("GNOMON_TASK", "inherited")
	t.Setenv("TASK_SEES_THIS", "yes")
	f := setup(t)
	f.x.Start(f.spec(9, "env"))
	if e := f.wait(); e.Code != 0 {
		t.Fatalf("exit = %+v", e)
	}
	out := f.read("out.log")
	for _, secret := range []string{"hunter2", "s3cret", "inherited"} {
		if strings.Contains(out, secret) {
			t.Errorf("the command's environment holds %q:\n%s", secret, out)
		}
	}
	for _, want := range []string{"TASK_SEES_THIS=yes\n", "GNOMON_TASK=t\n", "GNOMON_RUN_ID=9\n", "PATH="} {
		if !strings.Contains(out, want) {
			t.Errorf("the command's environment lacks %q:\n%s", want, out)
		}
	}
}

// Runs on more slots than there are spares keep their supervisors when
// they end, up to Keep, so that the next runs on those slots reuse them
// rather than start a process each; those beyond Spares are stopped once
// idle for the linger.
func TestSupervisorsKeptForTheSlots(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	exits := make(chan Exit, 16)
	x, err := New(Config{Dir: filepath.Join(dir, "runs"), Spares: 2, Keep: 6, Report: func(e Exit) { exits <- e }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(x.Wait)
	defer x.Stop(context.Background())
	x.linger = time.Hour // trimmed by hand below
	gate := filepath.Join(dir, "go")
	wave := func(first int64, command string) {
		t.Helper()
		for id := first; id < first+6; id++ {
			x.Start(Spec{RunID: id, Task: "t", Command: command, OutLog: filepath.Join(dir, "out.log"), ErrLog: filepath.Join(dir, "err.log")})
		}
	}
	wait := func(n int) {
		t.Helper()
		for range n {
			select {
			case e := <-exits:
				if e.Code != 0 {
					t.Fatalf("run %d: %+v", e.RunID, e)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("no exit reported")
			}
		}
	}
	wave(1, fmt.Sprintf("while [ ! -e %s ]; do sleep 0.01; done", gate))
	waitFor(t, func() bool { running, _ := x.Supervisors(); return running == 6 })
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	wait(6)
	waitFor(t, func() bool { running, spare := x.Supervisors(); return running == 0 && spare == 6 })
	kept := map[string]bool{}
	x.mu.Lock()
	for _, sp := range x.spares {
		kept[strconv.Itoa(sp.cmd.Process.Pid)] = true
	}
	x.mu.Unlock()
	wave(7, `echo "$PPID"`)
	wait(6)
	b, err := os.ReadFile(filepath.Join(dir, "out.log"))
	if err != nil {
		t.Fatal(err)
	}
	for _, pid := range strings.Fields(string(b)) {
		if !kept[pid] {
			t.Errorf("a run of the second wave had supervisor %s, not one of those kept %v", pid, kept)
		}
	}
	waitFor(t, func() bool { _, spare := x.Supervisors(); return spare == 6 })
	x.mu.Lock()
	x.linger = 0
	x.mu.Unlock()
	x.trim()
	if _, spare := x.Supervisors(); spare != 2 {
		t.Errorf("%d idle supervisors after the linger, want the 2 spares", spare)
	}
}
