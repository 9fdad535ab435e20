package executor

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gnomon-sched/gnomon/clock"
	"github.com/gnomon-sched/gnomon/job"
	"golang.org/x/sys/unix"
)

// MaybeSupervise runs the supervisor and exits if the process was started
// as one (EnvSupervise is set). Programs that start an Executor with the
// default Command call it first thing in main (and tests in TestMain).
func MaybeSupervise() {
	switch dir := os.Getenv(EnvSupervise); dir {
	case "":
	case spareMode:
		// A supervisor waits on one run at a time: one processor keeps
		// its runtime's threads from waking each other (measured: a
		// storm's supervisors spent most of their time switching).
		runtime.GOMAXPROCS(1)
		os.Exit(awaitRun())
	default:
		os.Exit(Supervise(dir))
	}
}

// spareMode starts a spare supervisor: one that waits on fd 3, a socket, for
// the directory of the run to supervise and the locked run lock.
const spareMode = "-"

// awaitRun is a spare supervisor: it receives a run on the socket at fd 3,
// supervises it, closes its lock, says it is done and waits for the next.
// When the server closes the socket, it exits (after the run in hand).
func awaitRun() int {
	signal.Ignore(syscall.SIGHUP, syscall.SIGINT, syscall.SIGTERM) // while idle
	// Through the runtime's poller: waiting on it holds no thread, and
	// lets the runtime's monitor sleep (blocked in recvmsg, it would poll
	// tens of times a run).
	ctl, err := unixConn(os.NewFile(3, "supervisor control"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "gnomon supervise: control socket:", err)
		return 1
	}
	// Only now may the server hand over a run, and abort it: a SIGTERM
	// before this point would have ended the process.
	if err := send(ctl, []byte(readyMsg), nil); err != nil {
		return 0 // the server is gone
	}
	buf := make([]byte, maxHandoff)
	oob := make([]byte, syscall.CmsgSpace(4))
	var done []byte
	for {
		n, oobn, _, _, err := ctl.ReadMsgUnix(buf, oob)
		if err != nil || n == 0 {
			return 0
		}
		msgs, err := syscall.ParseSocketControlMessage(oob[:oobn])
		if err != nil || len(msgs) != 1 {
			fmt.Fprintln(os.Stderr, "gnomon supervise: no run lock received")
			return 1
		}
		fds, err := syscall.ParseUnixRights(&msgs[0])
		if err != nil || len(fds) != 1 {
			fmt.Fprintln(os.Stderr, "gnomon supervise: no run lock received")
			return 1
		}
		dir, spec, _ := bytes.Cut(buf[:n], []byte{0})
		code, line := supervise(string(dir), fds[0], spec)
		// Closing the lock releases it: the run is over.
		syscall.Close(fds[0])
		if code != 0 {
			return code // the exit could not be recorded: do not go on
		}
		done := append(done[:0], doneMsg...)
		if len(line) <= maxDoneLine {
			done = append(done, line...)
		}
		if err := send(ctl, done, nil); err != nil {
			return 0 // the server is gone
		}
	}
}

// script sources the profile, if any, in the shell that then runs the
// command; a profile that fails stops the run before the command.
const script = `if [ -n "$GNOMON_PROFILE" ]; then
  . "$GNOMON_PROFILE" || { echo "gnomon: profile $GNOMON_PROFILE failed with status $?" >&2; exit 126; }
fi
eval "$GNOMON_COMMAND"`

// stdinScript opens the standard input file as the command's owner
// would, before script: the supervisor, which may run as another user,
// does not open it for the owner. ("command" keeps a failed redirection
// from ending the shell before it says why.)
const stdinScript = `command exec <"$GNOMON_STD_IN_FILE" || { echo "gnomon: std_in_file $GNOMON_STD_IN_FILE cannot be read" >&2; exit 126; }
`

// plainCommand returns the words of a command that the shell would run as
// one program with those arguments, its first word found on PATH, and nil
// for any other: a command with quotes, expansions, globs, redirections,
// operators, comments, a variable assignment, or a builtin or keyword of
// the shell. Such a command is started directly, without a shell in
// between (a process less per run); the others go through /bin/sh.
func plainCommand(command string) []string {
	for _, r := range command {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == ' ', r == '\t':
		case strings.ContainsRune("_-./:,+@%=", r):
		default:
			return nil
		}
	}
	argv := strings.Fields(command)
	if len(argv) == 0 || strings.Contains(argv[0], "=") || shellBuiltins[argv[0]] {
		return nil
	}
	if _, err := exec.LookPath(argv[0]); err != nil {
		return nil // a keyword or a missing program: the shell says which
	}
	return argv
}

// shellBuiltins are the builtins of POSIX shells: a program of the same
// name (echo, kill, true, ...) may behave differently.
var shellBuiltins = map[string]bool{}

func init() {
	for _, b := range strings.Fields(`. : [ alias bg break cd chdir command continue echo eval exec exit export false fc fg
		getopts hash jobs kill local printf pwd read readonly return set shift test times trap true type ulimit umask
		unalias unset wait`) {
		shellBuiltins[b] = true
	}
}

// Supervise runs the command described in base.spec.json and records its
// outcome in the locked run lock at fd 3. It returns the process exit
// status.
func Supervise(base string) int {
	signal.Ignore(syscall.SIGHUP, syscall.SIGINT)
	code, _ := supervise(base, 3, nil)
	return code
}

// supervise runs one run, holding its lock at fd lock, from its spec (nil:
// read base.spec.json), and returns the process exit status and the
// outcome line it recorded. SIGTERM aborts the run while it lasts.
func supervise(base string, lock int, specJSON []byte) (code int, line []byte) {
	// The command must not inherit the lock.
	syscall.CloseOnExec(lock)
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	// Ignoring (not Stop, which would restore the default action for a
	// moment) ends the notification: an idle supervisor outlives a stray
	// SIGTERM.
	defer signal.Ignore(syscall.SIGTERM)

	var spec Spec
	var err error
	if specJSON != nil {
		err = json.Unmarshal(specJSON, &spec)
	} else {
		err = readJSON(base+".spec.json", &spec)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gnomon supervise:", err)
		return 1, nil
	}
	record := func(e Exit) (int, []byte) {
		e.RunID, e.End = spec.RunID, clock.Wall.Now().UTC()
		// Not synced: a crash of the server or of this process leaves it
		// in the page cache, where the restarted server reads it. Only a
		// crash of the machine can lose it, and then the run is recorded
		// as lost: its outcome is unknown, never wrong. (Syncing it cost
		// 10 % of the rate of short commands.)
		line, err := recordExit(lock, e)
		if err != nil {
			fmt.Fprintln(os.Stderr, "gnomon supervise:", err)
			return 1, nil
		}
		return 0, line
	}
	launchFailed := func(err error) (int, []byte) {
		return record(Exit{Code: -1, Result: job.ResultLaunch, Message: err.Error()})
	}

	l, err := prepare(spec)
	defer l.close()
	if err != nil {
		return launchFailed(err)
	}
	// An abort that came while the run was being prepared ends it before
	// its command starts.
	select {
	case <-term:
		return record(Exit{Code: -1, Result: job.ResultKilled, Message: "aborted before its command started"})
	default:
	}
	if l.umask >= 0 {
		// The supervisor runs one command at a time: its own mask
		// matters only while the command's process is created.
		old := syscall.Umask(l.umask)
		err = l.cmd.Start()
		syscall.Umask(old)
	} else {
		err = l.cmd.Start()
	}
	if err != nil {
		return launchFailed(fmt.Errorf("start %s: %w", l.cmd.Path, err))
	}
	pgid := l.cmd.Process.Pid
	if err := recordPid(lock, Record{Pid: os.Getpid(), Pgid: pgid}); err != nil {
		fmt.Fprintln(os.Stderr, "gnomon supervise:", err)
	}
	return record(await(l.cmd, pgid, term, spec.Grace))
}

// launch is a command ready to start: its process, the mask it starts
// under (-1: the supervisor's), and the files the supervisor opened for
// it, closed once it has started or failed to.
type launch struct {
	cmd   *exec.Cmd
	umask int
	files []*os.File
}

func (l *launch) close() {
	for _, f := range l.files {
		f.Close()
	}
}

// prepare checks what a run's spec names (its owner, profile, log files,
// working directory and standard input) and builds its command. An error
// is the message of a run that could not be launched, naming the field.
func prepare(spec Spec) (*launch, error) {
	l := &launch{umask: -1}
	var owner *Owner
	if spec.Owner != "" {
		var err error
		if owner, err = LookupOwner(spec.Owner); err != nil {
			return l, fmt.Errorf("owner %s: %v", spec.Owner, err)
		}
		if !owner.Self() {
			if err := CanChangeUser(); err != nil {
				return l, fmt.Errorf("owner %s: %v", spec.Owner, err)
			}
		}
	}
	if spec.Profile != "" {
		// Without waiting: a FIFO must not hold the launch.
		f, err := os.OpenFile(spec.Profile, os.O_RDONLY|syscall.O_NONBLOCK, 0)
		if err != nil {
			return l, fmt.Errorf("profile: %v", err)
		}
		fi, err := f.Stat()
		f.Close()
		if err == nil && !fi.Mode().IsRegular() {
			return l, fmt.Errorf("profile: %s is a %s, not a regular file", spec.Profile, kind(fi.Mode()))
		}
	}
	openLog := spec.Logs.OpenerAs(owner)
	out, err := openLog(spec.OutLog)
	if err != nil {
		return l, fmt.Errorf("out_log_file: %v", err)
	}
	l.files = append(l.files, out)
	errf, err := openLog(spec.ErrLog)
	if err != nil {
		return l, fmt.Errorf("err_log_file: %v", err)
	}
	l.files = append(l.files, errf)

	cmd := exec.Command("/bin/sh", "-c", script)
	if spec.Profile == "" {
		if argv := plainCommand(spec.Command); argv != nil {
			cmd = exec.Command(argv[0], argv[1:]...)
		}
	}
	cmd.Stdout, cmd.Stderr = out, errf
	if null, err := devNull(); err == nil {
		cmd.Stdin = null
	}
	env := commandEnv(spec)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if owner != nil {
		env = owner.env(env)
		if !owner.Self() {
			cmd.SysProcAttr.Credential = owner.credential()
		}
	}
	re, err := resolveEnv(env, spec.Env)
	if err != nil {
		return l, err
	}
	cmd.Env, cmd.Dir, l.umask = re.env, re.dir, re.umask
	if re.dir != "" {
		if fi, err := os.Stat(re.dir); err != nil || !fi.IsDir() {
			if err == nil {
				err = fmt.Errorf("%s is not a directory", re.dir)
			}
			return l, fmt.Errorf("working_dir: %v", err)
		}
	}
	if re.stdin != "" {
		if owner == nil || owner.Self() {
			// Without waiting: a FIFO must not hold the launch.
			in, err := os.OpenFile(re.stdin, os.O_RDONLY|syscall.O_NONBLOCK, 0)
			if err != nil {
				return l, fmt.Errorf("std_in_file: %v", err)
			}
			l.files = append(l.files, in)
			if err := syscall.SetNonblock(int(in.Fd()), false); err != nil {
				return l, fmt.Errorf("std_in_file: %v", err)
			}
			cmd.Stdin = in
		} else {
			cmd = exec.Command("/bin/sh", "-c", stdinScript+script)
			cmd.Stdout, cmd.Stderr, cmd.Dir, cmd.SysProcAttr = out, errf, re.dir, &syscall.SysProcAttr{Setpgid: true, Credential: owner.credential()}
			cmd.Env = append(re.env, "GNOMON_STD_IN_FILE="+re.stdin)
		}
	}
	l.cmd = cmd
	return l, nil
}

// commandEnv is the environment a run's command starts from: the
// server's, less its own settings, and the run's GNOMON_* variables.
func commandEnv(spec Spec) []string {
	scheduled := spec.Scheduled
	if scheduled.IsZero() {
		scheduled = spec.Start
	}
	if scheduled.IsZero() {
		scheduled = clock.Wall.Now() // a supervisor has no other clock
	}
	env := append(taskEnv(os.Environ()),
		"GNOMON_TASK="+spec.Task,
		"GNOMON_RUN_ID="+strconv.FormatInt(spec.RunID, 10),
		"GNOMON_SCHEDULED_TIME="+scheduled.UTC().Format(time.RFC3339),
		"GNOMON_ATTEMPT="+strconv.Itoa(spec.Attempt+1),
		"GNOMON_COMMAND="+spec.Command,
		"GNOMON_PROFILE="+spec.Profile,
	)
	if p := spec.Period; p != nil {
		env = append(env,
			"GNOMON_PROCESS="+spec.Task,
			"GNOMON_TIMEPERIOD="+p.Key,
			"GNOMON_PERIOD_START="+p.Start.UTC().Format(time.RFC3339),
			"GNOMON_PERIOD_END="+p.End.UTC().Format(time.RFC3339),
		)
	}
	return env
}

// await waits for a started command to end, and returns its outcome. A
// SIGTERM (term) aborts it: TERM to its process group, then KILL after
// grace. Whatever it left behind in its group is killed at its end.
func await(cmd *exec.Cmd, pgid int, term <-chan os.Signal, grace time.Duration) Exit {
	done := make(chan error, 1)
	go func() {
		awaitExit(cmd.Process.Pid)
		done <- cmd.Wait()
	}()
	killed := false
	var kill <-chan time.Time
	for {
		select {
		case <-term:
			if !killed {
				killed = true
				syscall.Kill(-pgid, syscall.SIGTERM)
				kill = time.After(grace)
			}
		case <-kill:
			syscall.Kill(-pgid, syscall.SIGKILL)
		case err := <-done:
			e := Exit{Result: job.ResultNormal}
			if killed {
				e.Result = job.ResultKilled
			}
			var ee *exec.ExitError
			switch {
			case err == nil:
			case asExit(err, &ee):
				ws := ee.Sys().(syscall.WaitStatus)
				if ws.Signaled() {
					e.Code = 128 + int(ws.Signal())
					e.Message = "killed by signal " + ws.Signal().String()
				} else {
					e.Code = ws.ExitStatus()
					e.Message = fmt.Sprintf("exit status %d", e.Code)
				}
			default:
				e.Code, e.Result, e.Message = -1, job.ResultInternal, err.Error()
			}
			// Whatever the shell left behind in its group goes too.
			syscall.Kill(-pgid, syscall.SIGKILL)
			return e
		}
	}
}

// awaitExit waits until the child process pid has exited, through the
// runtime's poller: a goroutine blocked in waitid would hold a thread and
// keep the runtime's monitor polling, tens of times a run. The process is
// not reaped (Wait does that), so pid names it until then. Where the
// kernel gives no pidfd of its own to poll (before Linux 5.10), it
// returns at once, leaving the wait to Wait.
func awaitExit(pid int) {
	// A pidfd of our own: the one os keeps for Wait stays blocking.
	pidfd, err := unix.PidfdOpen(pid, unix.PIDFD_NONBLOCK)
	if err != nil {
		return
	}
	f := os.NewFile(uintptr(pidfd), "pidfd")
	defer f.Close()
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	rc.Read(func(fd uintptr) bool {
		// The fd is readable once the process has exited; asked anew
		// each time, since the poller's readiness may predate the wait.
		n, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, 0)
		return n > 0 || err != nil && err != syscall.EINTR
	})
}

// devNull is the standard input of commands that have none, opened once
// for all the runs of a supervisor (os/exec would open it for each).
var devNull = sync.OnceValues(func() (*os.File, error) { return os.Open(os.DevNull) })

func asExit(err error, target **exec.ExitError) bool {
	ee, ok := err.(*exec.ExitError)
	if ok {
		*target = ee
	}
	return ok
}

// taskEnv is the environment a task's command starts from: the server's,
// less the server's own settings (GNOMON_*: its database URL, its SMTP
// password, its API token, ...), which are none of a task's business: a
// command that prints its environment into its log would show them to
// every reader of the log. The task's own GNOMON_* variables are added
// after.
func taskEnv(env []string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, "GNOMON_") {
			out = append(out, kv)
		}
	}
	return out
}
