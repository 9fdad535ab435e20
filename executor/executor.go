// Package executor runs task commands. Each run is owned by a supervisor:
// a small process (the gnomon binary itself, entered through Supervise) that
// starts "/bin/sh -c" in its own process group, appends its output to the
// task's log files and records the exit status durably in the run's
// directory. A supervisor outlives the server, so a restarted server
// re-attaches to the runs in flight and records their real outcome.
//
// # Run directory
//
// Each run has a directory DIR/<run id> holding:
//
//	spec.json  what to run (written by the server before the supervisor starts)
//	lock       flock()ed for as long as the supervisor lives
//	pid.json   the supervisor's pid and the command's process group
//	exit.json  the outcome, written atomically when the command ends
//
// The server opens and locks "lock" before starting the supervisor and
// hands the locked descriptor to it, so there is no moment at which a live
// supervisor's lock is free: if the lock can be taken and exit.json is
// missing, the supervisor is gone and the run is lost.
package executor

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/gnomon-sched/gnomon/job"
)

// Spec is what a supervisor needs to run a command.
type Spec struct {
	RunID     int64         `json:"run_id"`
	Task      string        `json:"task"`
	Command   string        `json:"command"`
	Profile   string        `json:"profile,omitempty"`
	OutLog    string        `json:"out_log_file"`
	ErrLog    string        `json:"err_log_file"`
	Scheduled time.Time     `json:"scheduled"`
	Grace     time.Duration `json:"grace"` // between TERM and KILL on abort
}

// Exit is the outcome a supervisor records.
type Exit struct {
	RunID   int64      `json:"run_id"`
	Code    int        `json:"exit_code"`
	Result  job.Result `json:"result"`
	Message string     `json:"message,omitempty"`
	End     time.Time  `json:"end"`
}

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
	// Report receives the outcome of every run started or attached. It is
	// called from the executor's goroutines.
	Report func(Exit)
	Logger *slog.Logger
}

// Executor starts and watches supervisors. It is safe for concurrent use.
type Executor struct {
	cfg Config
	wg  sync.WaitGroup
	mu  sync.Mutex
	// pids holds the supervisor pid of each run being watched.
	pids map[int64]int
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
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("executor: %w", err)
	}
	return &Executor{cfg: cfg, pids: map[int64]int{}}, nil
}

func (x *Executor) dir(id int64) string { return filepath.Join(x.cfg.Dir, strconv.FormatInt(id, 10)) }

// Start launches a supervisor for spec and returns once it is running (or
// has failed to launch, which is reported as an Exit with ResultLaunch).
func (x *Executor) Start(spec Spec) {
	if spec.Grace == 0 {
		spec.Grace = x.cfg.Grace
	}
	fail := func(err error) {
		x.cfg.Report(Exit{RunID: spec.RunID, Code: -1, Result: job.ResultLaunch, Message: err.Error(), End: time.Now().UTC()})
	}
	dir := x.dir(spec.RunID)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fail(fmt.Errorf("run directory: %w", err))
		return
	}
	if err := writeJSON(filepath.Join(dir, "spec.json"), spec); err != nil {
		fail(fmt.Errorf("run directory: %w", err))
		return
	}
	lock, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		fail(fmt.Errorf("run lock: %w", err))
		return
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		fail(fmt.Errorf("run lock: %w", err))
		return
	}
	cmd := exec.Command(x.cfg.Command[0], x.cfg.Command[1:]...)
	cmd.Env = append(os.Environ(), EnvSupervise+"="+dir)
	cmd.ExtraFiles = []*os.File{lock}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		fail(fmt.Errorf("start supervisor: %w", err))
		return
	}
	x.mu.Lock()
	x.pids[spec.RunID] = cmd.Process.Pid
	x.mu.Unlock()
	x.wg.Add(1)
	go func() {
		defer x.wg.Done()
		cmd.Wait()
		x.finish(spec.RunID)
	}()
}

// Attach watches a run started before a restart, reporting its outcome when
// it ends (at once if it already has).
func (x *Executor) Attach(id int64) {
	dir := x.dir(id)
	if _, err := os.Stat(filepath.Join(dir, "exit.json")); err == nil {
		x.finish(id)
		return
	}
	lock, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_RDWR, 0)
	if err != nil {
		x.lost(id, "its supervisor never started (the server stopped while launching it)")
		return
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err == nil {
		lock.Close()
		x.finish(id)
		return
	}
	var p pidFile
	if readJSON(filepath.Join(dir, "pid.json"), &p) == nil {
		x.mu.Lock()
		x.pids[id] = p.Pid
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
	var e Exit
	if err := readJSON(filepath.Join(x.dir(id), "exit.json"), &e); err != nil {
		x.lost(id, "its supervisor died before recording the exit status")
		return
	}
	e.RunID = id
	x.cfg.Report(e)
}

func (x *Executor) lost(id int64, why string) {
	x.cfg.Report(Exit{RunID: id, Code: -1, Result: job.ResultLost, Message: "run lost: " + why, End: time.Now().UTC()})
}

// Kill asks a run's supervisor to stop the command: TERM to its process
// group, then KILL after the grace period.
func (x *Executor) Kill(id int64) {
	x.mu.Lock()
	pid, ok := x.pids[id]
	x.mu.Unlock()
	if !ok {
		return
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		x.cfg.Logger.Warn("kill run", "run", id, "pid", pid, "err", err)
	}
}

// Forget removes the directory of a run whose outcome is recorded.
func (x *Executor) Forget(id int64) { os.RemoveAll(x.dir(id)) }

// Sweep removes run directories of runs not in keep.
func (x *Executor) Sweep(keep map[int64]bool) {
	ents, _ := os.ReadDir(x.cfg.Dir)
	for _, e := range ents {
		id, err := strconv.ParseInt(e.Name(), 10, 64)
		if err == nil && !keep[id] {
			os.RemoveAll(filepath.Join(x.cfg.Dir, e.Name()))
		}
	}
}

// Running returns the number of runs being watched.
func (x *Executor) Running() int {
	x.mu.Lock()
	defer x.mu.Unlock()
	return len(x.pids)
}

// Wait waits until every watched run has been reported.
func (x *Executor) Wait() { x.wg.Wait() }

type pidFile struct {
	Pid  int `json:"pid"`
	Pgid int `json:"pgid"`
}

// writeJSON writes v durably: a temporary file, fsync, rename, fsync of the
// directory.
func writeJSON(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	d, err := os.Open(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}
