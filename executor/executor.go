// Package executor runs task commands. Each run is owned by a supervisor:
// a small process (the gnomon binary itself, entered through Supervise) that
// starts "/bin/sh -c" in its own process group, appends its output to the
// task's log files and records the exit status in the run's directory
// (atomically, not synced: it survives a crash of the server, and a crash
// of the machine makes the run lost, never wrong). A supervisor outlives
// the server, so a restarted server re-attaches to the runs in flight and
// records their real outcome.
//
// # Log files
//
// A run's log files are opened as its LogFiles say: inside the log roots,
// through an os.Root so that no symbolic link leads out of them, never one
// of the server's own files, and created readable by their owner only.
// A supervisor opens those of a command, the runner those of a function; a
// file refused makes the run fail to launch, its message naming the field.
//
// # Run files
//
// Each run has files named after its id in DIR:
//
//	<id>.lock       flock()ed for as long as the supervisor runs it; it also
//	                holds the run's record: at offset 0 a line with the
//	                supervisor's pid and the command's process group, at
//	                offset 64 a line with the outcome, each written in one
//	                pwrite when known
//	<id>.spec.json  what to run, when too large to travel with the run on
//	                the supervisor's socket
//
// A record counts only when its line is complete (it ends in a newline),
// so a supervisor killed while writing leaves no half outcome. Writing
// into the open lock takes one system call per record, where a file
// created and renamed into place took four: that was a quarter of a
// supervisor's CPU for a short command. A file per run instead of a
// directory spares the file system an inode to allocate and free. (The
// server also reads the run directories of earlier versions: DIR/<id>/lock,
// pid.json and exit.json.)
//
// The server opens and locks the lock before starting the supervisor and
// hands the locked descriptor to it, so there is no moment at which a live
// supervisor's lock is free: if the lock can be taken and no outcome is
// recorded, the supervisor is gone and the run is lost.
package executor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gnomon-sched/gnomon/clock"
	"github.com/gnomon-sched/gnomon/job"
)

// Spec is what a supervisor needs to run a command.
type Spec struct {
	RunID   int64  `json:"run_id"`
	Task    string `json:"task"`
	Command string `json:"command"`
	Profile string `json:"profile,omitempty"`
	// Owner is the OS user ("user" or "user:group") the command runs as;
	// empty: the supervisor's own user. Its log files are created for it.
	Owner     string    `json:"owner,omitempty"`
	OutLog    string    `json:"out_log_file"`
	ErrLog    string    `json:"err_log_file"`
	Scheduled time.Time `json:"scheduled"`
	// Attempt is the run's retry number, 0 for a first run: the command
	// gets GNOMON_ATTEMPT, Attempt+1.
	Attempt int `json:"attempt,omitempty"`
	// Start is when the run started by the server's clock: the command's
	// GNOMON_SCHEDULED_TIME when Scheduled is zero.
	Start time.Time     `json:"start,omitzero"`
	Grace time.Duration `json:"grace"` // between TERM and KILL on abort
	// Period is the timeperiod of a timeperiod process's run: the
	// command gets it in GNOMON_PROCESS, GNOMON_TIMEPERIOD,
	// GNOMON_PERIOD_START and GNOMON_PERIOD_END.
	Period *job.Period `json:"period,omitempty"`
	// Logs says where OutLog and ErrLog may be; nil confines nothing.
	Logs *LogFiles `json:"logs,omitempty"`
	// Env is the task's environment (variables, working directory,
	// standard input, umask) with its run's parameters; nil: none.
	Env *job.Environment `json:"env,omitempty"`
}

// Exit is the outcome a supervisor records.
type Exit = job.Exit

// Config configures an Executor.
type Config struct {
	// Dir holds the run directories. Required.
	Dir string
	// Command starts a supervisor; the run directory is appended as the
	// environment variable GNOMON_SUPERVISE. Zero means the running
	// executable.
	Command []string
	// Grace is the time between TERM and KILL on abort. Zero means 10s.
	Grace time.Duration
	// Spares is how many idle supervisors are kept started ahead of need;
	// zero means 1. Runs started at once beyond it wait for a supervisor
	// to start.
	Spares int
	// Keep is how many supervisors, busy and idle together, may be kept
	// for reuse when their runs end (a server passes its worker slots);
	// zero means Spares. Idle ones beyond Spares are stopped once idle for
	// spareLinger: a burst of runs on many slots reuses its supervisors
	// from one run to the next instead of starting a process for each,
	// and the burst's supervisors do not outlive it for long.
	Keep int
	// Report receives the outcome of every run started or attached. It is
	// called from the executor's goroutines.
	Report func(Exit)
	// Clock is the clock that stamps the outcomes the executor records
	// itself (a run that could not be launched, or was lost); nil means
	// clock.System. A supervisor stamps a command's end with the system
	// clock (clock.Wall).
	Clock  clock.Clock
	Logger *slog.Logger
}

// Executor starts and watches supervisors. It is safe for concurrent use.
//
// Starting a supervisor means starting a process of a large binary, which
// takes milliseconds of CPU; so the executor keeps spare supervisors
// started ahead of need, waiting on a socket, and hands each new run to one
// (the run lock travels with it as SCM_RIGHTS, so it stays locked
// throughout). A supervisor that has recorded its run's exit says "done"
// on its socket, closes the run lock and waits for another run: it is
// reused, so a stream of short commands does not pay a process start each.
// When the server's end of the socket closes, it exits after its run.
type Executor struct {
	cfg Config
	wg  sync.WaitGroup
	mu  sync.Mutex
	// pids holds the supervisor pid of each run being watched.
	pids map[int64]int
	// spares are idle supervisors; filling counts those being started,
	// busy those running a run.
	spares        []*spare
	filling, busy int
	closed        bool
	readyTimeout  time.Duration
	// trimmer is the armed trim of the idle supervisors beyond Spares,
	// nil when none is.
	trimmer *time.Timer
	linger  time.Duration // spareLinger (tests)
}

// refillDelay is how long after handing a spare over its replacement
// starts.
const refillDelay = 30 * time.Millisecond

// spareLinger is how long a supervisor beyond Spares stays idle before it
// is stopped.
const spareLinger = 30 * time.Second

// spare is a supervisor waiting for a run on its control socket, idle
// since an instant (of the wall clock: only its age counts).
type spare struct {
	cmd *exec.Cmd
	// ctl goes through the runtime's poller: a goroutine waiting on it
	// holds no thread, where one blocked in recvmsg would hold one each
	// and keep the runtime's monitor polling.
	ctl  *net.UnixConn
	idle time.Time
}

// EnvSupervise names the environment variable that turns the gnomon binary
// into a supervisor for the run directory it holds.
const EnvSupervise = "GNOMON_SUPERVISE"

// New returns an Executor.
func New(cfg Config) (*Executor, error) {
	if cfg.Dir == "" || cfg.Report == nil {
		return nil, errors.New("executor: Dir and Report are required")
	}
	if len(cfg.Command) == 0 {
		self, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("executor: %w", err)
		}
		cfg.Command = []string{self}
	}
	if cfg.Grace <= 0 {
		cfg.Grace = 10 * time.Second
	}
	if cfg.Spares <= 0 {
		cfg.Spares = 1
	}
	cfg.Keep = max(cfg.Keep, cfg.Spares)
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.System{}
	}
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("executor: %w", err)
	}
	// Spares start with the first run: a program that never runs a
	// command never starts a supervisor.
	return &Executor{cfg: cfg, pids: map[int64]int{}, readyTimeout: readyTimeout, linger: spareLinger}, nil
}

// startSpare starts a supervisor in spare mode.
func (x *Executor) startSpare() (*spare, error) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_SEQPACKET|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("supervisor socket: %w", err)
	}
	ours, theirs := os.NewFile(uintptr(fds[0]), "supervisor control"), os.NewFile(uintptr(fds[1]), "supervisor control")
	defer theirs.Close()
	ctl, err := unixConn(ours)
	if err != nil {
		return nil, fmt.Errorf("supervisor socket: %w", err)
	}
	cmd := exec.Command(x.cfg.Command[0], x.cfg.Command[1:]...)
	cmd.Env = append(os.Environ(), EnvSupervise+"="+spareMode)
	cmd.ExtraFiles = []*os.File{theirs}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		ctl.Close()
		return nil, fmt.Errorf("start supervisor: %w", err)
	}
	sp := &spare{cmd: cmd, ctl: ctl}
	// A program that never says ready (one that does not call
	// MaybeSupervise first) must not hold up the runs: wait a bounded time.
	ctl.SetReadDeadline(time.Now().Add(x.readyTimeout))
	ready, _ := sp.await(readyMsg)
	ctl.SetReadDeadline(time.Time{})
	if !ready {
		cmd.Process.Kill()
		sp.discard()
		return nil, fmt.Errorf("start supervisor: %s did not start as a supervisor within %s", x.cfg.Command[0], x.readyTimeout)
	}
	return sp, nil
}

// readyTimeout is how long a new supervisor has to say ready.
const readyTimeout = 10 * time.Second

// maxHandoff bounds the message that hands a run to a supervisor: its
// directory, a NUL and its spec.
const maxHandoff = 60 << 10

// hand gives a run to a spare supervisor: msg (the run's directory, then
// a NUL and its spec unless spec.json holds it) and its locked lock file.
// A spare that cannot take it is discarded.
func (sp *spare) hand(msg []byte, lock *os.File) error {
	if err := send(sp.ctl, msg, syscall.UnixRights(int(lock.Fd()))); err != nil {
		sp.discard()
		return fmt.Errorf("hand the run to its supervisor: %w", err)
	}
	return nil
}

// What a supervisor sends on its socket: readyMsg once it has started and
// ignores the signals an idle supervisor ignores, doneMsg once its run's
// exit is recorded, followed by the outcome line it recorded when that is
// shorter than maxDoneLine: the server then need not read it back from the
// run's lock.
const (
	readyMsg    = "ready"
	doneMsg     = "done"
	maxDoneLine = 4 << 10
)

// await blocks until the supervisor sends msg (true), or its socket closes
// because it died (false). What follows msg in the message is returned.
func (sp *spare) await(msg string) (bool, []byte) {
	buf := make([]byte, len(msg)+maxDoneLine)
	n, _, flags, _, err := sp.ctl.ReadMsgUnix(buf, nil)
	if err != nil || n < len(msg) || string(buf[:len(msg)]) != msg {
		return false, nil
	}
	if flags&syscall.MSG_TRUNC != 0 {
		return true, nil
	}
	return true, buf[len(msg):n]
}

// send writes one message, with the descriptors oob carries, on a control
// socket, without the SIGPIPE a write to a socket whose peer is gone
// raises (MSG_NOSIGNAL): a program that embeds gnomon may watch SIGPIPE.
func send(c *net.UnixConn, msg, oob []byte) error {
	rc, err := c.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Write(func(fd uintptr) bool {
		for {
			_, serr = syscall.SendmsgN(int(fd), msg, oob, nil, syscall.MSG_NOSIGNAL)
			if serr != syscall.EINTR {
				return serr != syscall.EAGAIN
			}
		}
	}); err != nil {
		return err
	}
	return serr
}

// unixConn returns a socket of the socket pair as a connection of the
// runtime's poller, and closes f, which it duplicates.
func unixConn(f *os.File) (*net.UnixConn, error) {
	defer f.Close()
	c, err := net.FileConn(f)
	if err != nil {
		return nil, err
	}
	uc, ok := c.(*net.UnixConn)
	if !ok {
		c.Close()
		return nil, fmt.Errorf("%s is a %T, not a Unix socket", f.Name(), c)
	}
	return uc, nil
}

// discard stops an idle spare: it exits when its socket closes.
func (sp *spare) discard() {
	sp.ctl.Close()
	sp.cmd.Wait()
}

// takeSpare counts a supervisor busy and returns an idle spare to be it,
// or nil when none is idle. Counting it at once keeps refill from starting
// a replacement for a supervisor that is between spare and busy.
func (x *Executor) takeSpare() *spare {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.busy++
	if len(x.spares) == 0 {
		return nil
	}
	sp := x.spares[len(x.spares)-1]
	x.spares = x.spares[:len(x.spares)-1]
	return sp
}

// refill starts spares in the background up to the number kept.
func (x *Executor) refill() {
	x.mu.Lock()
	defer x.mu.Unlock()
	for !x.closed && len(x.spares)+x.filling+x.busy < x.cfg.Spares {
		x.filling++
		x.wg.Add(1)
		go func() {
			defer x.wg.Done()
			sp, err := x.startSpare()
			x.mu.Lock()
			x.filling--
			keep := err == nil && !x.closed
			if keep {
				x.spares = append(x.spares, sp)
			}
			x.mu.Unlock()
			if err != nil {
				x.cfg.Logger.Warn("spare supervisor", "err", err)
			} else if !keep {
				sp.discard()
			}
		}()
	}
}

// armTrim arms a trim of the idle supervisors beyond Spares, unless one
// is armed or there are none. x.mu is held.
func (x *Executor) armTrim() {
	if x.trimmer != nil || x.closed || len(x.spares) <= x.cfg.Spares {
		return
	}
	x.trimmer = time.AfterFunc(x.linger, x.trim)
}

// trim stops the supervisors beyond Spares that have been idle for
// spareLinger, oldest first (runs take the newest), and arms the next
// trim for the others.
func (x *Executor) trim() {
	x.mu.Lock()
	x.trimmer = nil
	var stop []*spare
	for len(x.spares) > x.cfg.Spares && clock.Wall.Now().Sub(x.spares[0].idle) >= x.linger {
		stop = append(stop, x.spares[0])
		x.spares = x.spares[1:]
	}
	x.armTrim()
	x.mu.Unlock()
	for _, sp := range stop {
		sp.discard()
	}
}

// Stop stops the idle spare supervisors and starts no more. Runs being
// watched are not affected (Wait waits for them). It may be called more
// than once, and returns nil: there is nothing it can fail to finish.
func (x *Executor) Stop(context.Context) error {
	x.mu.Lock()
	x.closed = true
	idle := x.spares
	x.spares = nil
	if x.trimmer != nil {
		x.trimmer.Stop()
		x.trimmer = nil
	}
	x.mu.Unlock()
	for _, sp := range idle {
		sp.discard()
	}
	return nil
}

// base returns the path of a run's files without their extension.
func (x *Executor) base(id int64) string { return filepath.Join(x.cfg.Dir, strconv.FormatInt(id, 10)) }

// openLock opens the lock of the run whose files start with base, or the
// one in the run directory an earlier version made.
func openLock(base string) (*os.File, error) {
	f, err := os.OpenFile(base+".lock", os.O_RDWR, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return os.OpenFile(filepath.Join(base, "lock"), os.O_RDWR, 0)
	}
	return f, err
}

// Start launches a supervisor for spec and returns once it is running (or
// has failed to launch, which is reported as an Exit with ResultLaunch).
func (x *Executor) Start(spec Spec) {
	if spec.Grace == 0 {
		spec.Grace = x.cfg.Grace
	}
	fail := func(err error) {
		x.cfg.Report(Exit{RunID: spec.RunID, Code: -1, Result: job.ResultLaunch, Message: err.Error(), End: x.cfg.Clock.Now().UTC()})
	}
	base := x.base(spec.RunID)
	// The spec travels with the run on the supervisor's socket; one too
	// large for a message is written to <id>.spec.json instead.
	msg, err := json.Marshal(spec)
	if err != nil {
		fail(fmt.Errorf("run spec: %w", err))
		return
	}
	msg = append(append([]byte(base), 0), msg...)
	if len(msg) > maxHandoff {
		if err := os.WriteFile(base+".spec.json", msg[len(base)+1:], 0o600); err != nil {
			fail(fmt.Errorf("run spec: %w", err))
			return
		}
		msg = []byte(base)
	}
	lock, err := os.OpenFile(base+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		fail(fmt.Errorf("run lock: %w", err))
		return
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		fail(fmt.Errorf("run lock: %w", err))
		return
	}
	sp := x.takeSpare()
	if sp != nil {
		if err := sp.hand(msg, lock); err != nil {
			x.cfg.Logger.Warn("spare supervisor lost; starting another", "err", err)
			sp = nil
		}
	}
	if sp == nil {
		if sp, err = x.startSpare(); err == nil {
			err = sp.hand(msg, lock)
		}
		if err != nil {
			x.mu.Lock()
			x.busy--
			x.mu.Unlock()
			fail(err)
			return
		}
	}
	x.mu.Lock()
	x.pids[spec.RunID] = sp.cmd.Process.Pid
	x.mu.Unlock()
	// A replacement starts a little later, so that starting a process of
	// this large binary does not compete for the CPU with the command just
	// handed over.
	x.wg.Add(1)
	time.AfterFunc(refillDelay, func() { defer x.wg.Done(); x.refill() })
	x.wg.Add(1)
	go func() {
		defer x.wg.Done()
		reuse, line := sp.await(doneMsg)
		// The supervisor is idle again before the exit is reported: the
		// report may start the next run at once (a chain of tasks), which
		// then finds it instead of starting a process.
		x.mu.Lock()
		delete(x.pids, spec.RunID) // no signal for this run reaches it once it is a spare again
		x.busy--
		keep := reuse && !x.closed && (len(x.spares) < x.cfg.Spares || len(x.spares)+x.busy < x.cfg.Keep)
		if keep {
			sp.idle = clock.Wall.Now()
			x.spares = append(x.spares, sp)
			x.armTrim()
		}
		x.mu.Unlock()
		if !keep {
			sp.discard()
		}
		var e Exit
		if len(line) > 0 && json.Unmarshal(line, &e) == nil {
			x.report(spec.RunID, e)
			return
		}
		x.finish(spec.RunID)
	}()
}

// Attach watches a run started before a restart, reporting its outcome when
// it ends (at once if it already has).
func (x *Executor) Attach(id int64) {
	base := x.base(id)
	if rec, _ := ReadRecord(base); rec.Exit != nil {
		x.finish(id)
		return
	}
	lock, err := openLock(base)
	if err != nil {
		x.lost(id, "its supervisor never started, or its files are gone (the server stopped while launching it, or the data was restored from a backup)")
		return
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err == nil {
		lock.Close()
		x.finish(id)
		return
	}
	if rec, _ := ReadRecord(base); rec.Pid != 0 {
		x.mu.Lock()
		x.pids[id] = rec.Pid
		x.mu.Unlock()
	}
	x.wg.Add(1)
	go func() {
		defer x.wg.Done()
		defer lock.Close()
		// Blocks until the supervisor exits and the kernel drops its lock.
		for {
			err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX)
			if err != syscall.EINTR {
				break
			}
		}
		x.finish(id)
	}()
}

// finish reports a run whose supervisor has exited.
func (x *Executor) finish(id int64) {
	x.mu.Lock()
	delete(x.pids, id)
	x.mu.Unlock()
	rec, _ := ReadRecord(x.base(id))
	switch {
	case rec.Exit == nil && rec.Pgid == 0:
		// Nothing tells the two apart: a supervisor records nothing
		// before the command starts. The first is the hand-off window
		// (docs/architecture.md, "The hand-off window").
		x.lost(id, "no supervisor started the command: the server stopped while handing the run to a supervisor, or the supervisor died before starting the command")
		return
	case rec.Exit == nil:
		x.lost(id, fmt.Sprintf("its supervisor died while the command ran (process group %d), before recording its exit status", rec.Pgid))
		return
	}
	x.report(id, *rec.Exit)
}

// report reports the outcome a run's supervisor recorded.
func (x *Executor) report(id int64, e Exit) {
	x.mu.Lock()
	delete(x.pids, id)
	x.mu.Unlock()
	e.RunID = id
	x.cfg.Report(e)
}

func (x *Executor) lost(id int64, why string) {
	x.cfg.Report(Exit{RunID: id, Code: -1, Result: job.ResultLost, Message: "run lost: " + why, End: x.cfg.Clock.Now().UTC()})
}

// killRetry is how often Kill repeats its signal while the run lasts.
const killRetry = 500 * time.Millisecond

// Kill asks a run's supervisor to stop the command: TERM to its process
// group, then KILL after the grace period. A supervisor handed the run a
// moment ago may not listen for the signal yet (an idle one ignores it),
// so the signal is sent again every killRetry until the run ends; the
// supervisor acts on the first it receives.
func (x *Executor) Kill(id int64) {
	if !x.terminate(id) {
		return
	}
	x.wg.Add(1)
	go func() {
		defer x.wg.Done()
		t := time.NewTicker(killRetry)
		defer t.Stop()
		for range t.C {
			if !x.terminate(id) {
				return
			}
		}
	}()
}

// terminate sends SIGTERM to the supervisor of run id if it still runs it,
// and reports whether it does. The lock keeps the supervisor from becoming
// a spare, and taking another run, in between.
func (x *Executor) terminate(id int64) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	pid, ok := x.pids[id]
	if !ok {
		return false
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		x.cfg.Logger.Warn("kill run", "run", id, "pid", pid, "err", err)
		return false
	}
	return true
}

// Forget removes the files of a run whose outcome is recorded.
func (x *Executor) Forget(id int64) {
	base := x.base(id)
	if err := os.Remove(base + ".lock"); errors.Is(err, fs.ErrNotExist) {
		os.RemoveAll(base) // an earlier version's run directory
	}
	os.Remove(base + ".spec.json")
}

// Sweep removes the files of runs not in keep.
func (x *Executor) Sweep(keep map[int64]bool) {
	for id, names := range x.files() {
		if !keep[id] {
			for _, name := range names {
				os.RemoveAll(filepath.Join(x.cfg.Dir, name))
			}
		}
	}
}

// Runs returns, in order, the runs whose files are in the directory:
// those started and not forgotten, by this process or an earlier one.
func (x *Executor) Runs() []int64 {
	return slices.Sorted(maps.Keys(x.files()))
}

// files returns the names of the files in the directory by the run they
// belong to.
func (x *Executor) files() map[int64][]string {
	out := map[int64][]string{}
	ents, _ := os.ReadDir(x.cfg.Dir)
	for _, e := range ents {
		num, _, _ := strings.Cut(e.Name(), ".")
		if id, err := strconv.ParseInt(num, 10, 64); err == nil {
			out[id] = append(out[id], e.Name())
		}
	}
	return out
}

// Running returns the number of runs being watched.
func (x *Executor) Running() int {
	x.mu.Lock()
	defer x.mu.Unlock()
	return len(x.pids)
}

// Supervisors returns the number of supervisor processes the executor
// watches running a run (those a previous server started included, once
// attached), and of the spares waiting for one.
func (x *Executor) Supervisors() (running, spare int) {
	x.mu.Lock()
	defer x.mu.Unlock()
	return len(x.pids), len(x.spares)
}

// Wait waits until every watched run has been reported.
func (x *Executor) Wait() { x.wg.Wait() }

// Record is what a supervisor records of its run.
type Record struct {
	Pid  int   `json:"pid"`  // the supervisor's, 0 if not yet recorded
	Pgid int   `json:"pgid"` // the command's process group
	Exit *Exit `json:"-"`    // nil until the outcome is recorded
}

// exitOffset is where the outcome line starts in the lock file, after the
// pid line.
const exitOffset = 64

// recordPid writes the pid line into the lock file at fd.
func recordPid(fd int, r Record) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	if len(b) >= exitOffset {
		return fmt.Errorf("pid record of %d bytes", len(b))
	}
	_, err = syscall.Pwrite(fd, append(b, '\n'), 0)
	return err
}

// recordExit writes the outcome line into the lock file at fd, and returns
// it without its newline.
func recordExit(fd int, e Exit) ([]byte, error) {
	b, err := json.Marshal(e)
	if err != nil {
		return nil, err
	}
	n, err := syscall.Pwrite(fd, append(b, '\n'), exitOffset)
	if err == nil && n != len(b)+1 {
		err = fmt.Errorf("outcome record: wrote %d of %d bytes", n, len(b)+1)
	}
	return b, err
}

// ReadRecord reads the record of the run whose files start with base
// (DIR/<id>): the complete lines of its lock, or, for a run directory of
// an earlier version, its pid.json and exit.json.
func ReadRecord(base string) (Record, error) {
	var r Record
	b, err := os.ReadFile(base + ".lock")
	if errors.Is(err, fs.ErrNotExist) {
		return readRunDir(base)
	}
	if err != nil {
		return r, err
	}
	if line, ok := recordLine(b, 0); ok {
		if err := json.Unmarshal(line, &r); err != nil {
			return r, fmt.Errorf("%s.lock: pid record: %w", base, err)
		}
	}
	if line, ok := recordLine(b, exitOffset); ok {
		var e Exit
		if err := json.Unmarshal(line, &e); err != nil {
			return r, fmt.Errorf("%s.lock: outcome record: %w", base, err)
		}
		r.Exit = &e
	}
	return r, nil
}

// readRunDir reads the record of a run in the directory an earlier
// version made: its pid.json and exit.json, if there.
func readRunDir(dir string) (Record, error) {
	var r Record
	if _, err := os.Stat(filepath.Join(dir, "lock")); err != nil {
		return r, err
	}
	if readJSON(filepath.Join(dir, "pid.json"), &r) != nil {
		r.Pid, r.Pgid = 0, 0
	}
	var e Exit
	if readJSON(filepath.Join(dir, "exit.json"), &e) == nil {
		r.Exit = &e
	}
	return r, nil
}

// recordLine returns the line at offset off of b, if it is complete.
func recordLine(b []byte, off int) ([]byte, bool) {
	if len(b) <= off || b[off] != '{' {
		return nil, false
	}
	i := bytes.IndexByte(b[off:], '\n')
	if i < 0 {
		return nil, false
	}
	return b[off : off+i], true
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}
