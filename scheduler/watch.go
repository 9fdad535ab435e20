package scheduler

import (
	"context"
	"errors"
	"time"

	"github.com/gnomon-sched/gnomon/engine"
	"github.com/gnomon-sched/gnomon/job"
)

// File watchers (Config.Files, see package watch): one goroutine polls the watchers of
// the tasks that define one, at the instants they are due on the
// scheduler's clock, and at once when the operating system tells of a
// change to a file a watcher's pattern matches (Notify). On a virtual
// clock, Advance stops at those instants and has it poll there, as it
// has the alert deliverer retry; notifications are not asked for.
//
// A settled file version goes to its task as the scheduler's own inputs
// do: a configuration's watcher posts a FILE data event for the file's
// path (Post), stamped with the clock's reading; a callable task's
// watcher starts it (a start, as an operator's, by "watch:TASK"), its
// run given the file's path in GNOMON_WATCH_FILE. A start the engine
// refuses (the task is running, or frozen) leaves the file to the next
// poll.
//
// On a cluster (ExternalClock), the watcher of a task that names a
// machine runs on the workers that serve it (package cluster), which
// record the versions they find; the director hands each to its task
// with HandFile, as its own watchers hand theirs.
//
// The watching tasks are read from the View (which keeps them apart, so a
// poll costs nothing per task without a watcher) at every poll: after
// each commit that defines, changes or deletes a watcher, and at least
// every watchRescan.
const watchRescan = job.DefaultInterval

// watchFiles runs the file watchers until the scheduler stops.
func (s *Scheduler) watchFiles() {
	defer s.wg.Done()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-s.quit
		cancel()
	}()
	timer := time.NewTimer(0)
	defer timer.Stop()
	var changed <-chan struct{}
	if s.cfg.Files != nil && !s.sim.on() {
		// Simulating, the virtual clock alone says when to look.
		c, stop := s.cfg.Files.Notify()
		defer stop()
		changed = c
	}
	for {
		select {
		case <-s.quit:
			return
		case <-timer.C:
		case <-changed:
		case <-s.watchWake:
		case reply := <-s.sim.watchKick:
			// Simulating: Advance asks, at each instant it stops at.
			reply <- s.pollWatchers(ctx)
			continue
		}
		if s.sim.on() {
			continue
		}
		next := s.pollWatchers(ctx)
		now := s.cfg.Clock.Now()
		wait := watchRescan
		if !next.IsZero() {
			wait = min(max(next.Sub(now), 0), watchRescan)
		}
		timer.Reset(wait)
	}
}

// pollWatchers polls the watchers due now and returns when the next one
// is due (zero if none).
func (s *Scheduler) pollWatchers(ctx context.Context) time.Time {
	var tasks []*job.Task
	s.View().Watching(func(it *TaskItem) bool {
		if !s.watchesElsewhere(it.Def) {
			tasks = append(tasks, it.Def)
		}
		return true
	})
	for _, t := range tasks {
		if _, warned := s.watchWarned.Load(t.Name); warned {
			continue
		}
		if s.cfg.Files == nil {
			s.watchWarned.Store(t.Name, true)
			s.log.Warn("file watcher idle: this scheduler has none", "task", t.Name, "watch_file", t.Extras().Watch.File)
		}
	}
	if s.cfg.Files == nil {
		return time.Time{}
	}
	next, err := s.cfg.Files.Poll(ctx, s.cfg.Clock.Now(), tasks, s.fileFound)
	if err != nil && ctx.Err() == nil {
		s.log.Warn("file watcher", "err", err)
	}
	return next
}

// watchesElsewhere reports whether the watcher of t runs on a cluster's
// workers: those that serve the machine it names.
func (s *Scheduler) watchesElsewhere(t *job.Task) bool {
	return s.cfg.ExternalClock && t.Extras().Machine != ""
}

// ErrNotWatching is returned by HandFile for a task that is gone or has
// no file watcher (any more).
var ErrNotWatching = errors.New("the task has no file watcher")

// HandFile hands a settled file version that a cluster's worker found
// to the watcher's task, as the scheduler's own watchers do: it posts a
// FILE data event for a configuration, or starts the task. It returns
// ErrNotWatching when the task is gone or no longer watches files, and
// another error when the task refuses it for now (it is running, or
// frozen).
func (s *Scheduler) HandFile(ctx context.Context, task, path string) error {
	t, _, ok := s.View().Task(task)
	if !ok || t.Extras().Watching() == nil {
		return ErrNotWatching
	}
	return s.fileFound(ctx, &t, path)
}

// fileFound hands a settled file to its watcher's task.
func (s *Scheduler) fileFound(ctx context.Context, t *job.Task, path string) error {
	by := "watch:" + t.Name
	if t.Type == job.Configuration {
		_, err := s.Post(ctx, engine.Data{Type: job.File, Resource: path, At: s.cfg.Clock.Now(), By: by})
		if err == nil {
			s.log.Info("file settled", "task", t.Name, "file", path, "posted", "FILE")
		}
		return err
	}
	if _, st, ok := s.View().Task(t.Name); ok && st.Status == job.Frozen {
		return errors.New("the task is frozen")
	}
	err := s.Submit(ctx, engine.Act{Task: t.Name, Action: job.ActStart, By: by, Params: []job.Var{{Name: job.WatchParam, Value: path}}})
	if err == nil {
		s.log.Info("file settled", "task", t.Name, "file", path, "started", t.Name)
	}
	return err
}

// Watching says what a task's file watcher waits for, and whether the
// task has one that has looked at its files.
func (s *Scheduler) Watching(task string) (string, bool) {
	if t, _, ok := s.View().Task(task); ok && t.Extras().Watching() != nil && s.watchesElsewhere(&t) {
		return "waits for a file matching " + t.Extras().Watch.File + " on the workers that serve machine " + t.Extras().Machine, true
	}
	if s.cfg.Files == nil {
		return "", false
	}
	return s.cfg.Files.Waiting(task)
}

// FilesPosted returns how many settled file versions the file watchers
// have handed to their tasks since the scheduler started.
func (s *Scheduler) FilesPosted() int64 {
	if s.cfg.Files == nil {
		return 0
	}
	return s.cfg.Files.Posted()
}

// kickWatchers has the file watchers poll what is due now, and returns
// when the next poll is due.
func (s *Scheduler) kickWatchers(ctx context.Context) (time.Time, error) {
	return s.kick(ctx, s.sim.watchKick)
}
