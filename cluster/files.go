package cluster

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"time"

	"github.com/gnomon-sched/gnomon/clock"
	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/watch"
)

// File watchers on workers. On a cluster, the file watcher of a task
// that names a machine runs on the workers that serve that machine, not
// on the director: a worker reads the definitions (Config.Schedules),
// watches the files of the tasks of its machines with a watch.Watcher,
// and records each settled version it finds in the registry (FileFound).
// The director takes those in (TakeFiles: at each NoticeFiles, and every
// filesPoll, which is the truth), hands each to its engine as its own
// watchers do (Config.Files: a start of the task, or a FILE data event),
// and marks it taken. A version is recorded once, whoever finds it (task,
// path and version are unique), and taken at least once: a director that
// stops between the engine's commit and the mark hands it over again.
//
// What a worker's watchers handed over is kept per node (the registry's
// watch memory, under the node's name), so that a worker that restarts
// under its name hands over no version again. Two workers that serve one
// machine each watch their own file system: a version both see alike
// (same size, modification time, inode and device: a shared disk) is
// recorded once.

// NoticeFiles is the channel of notices that a worker recorded file
// versions.
const NoticeFiles = "gnomon_files_found"

// filesPoll is how often a director looks for file versions the workers
// found, and how often a worker reads the definitions of its watchers
// again, when no notice came.
const filesPoll = time.Second

// filesBatch is how many file versions the director takes at once.
const filesBatch = 1000

// FoundFile is a settled file version a worker's watcher found.
type FoundFile struct {
	ID   int64
	Task string
	Path string
	// Version is the version's hash (watch.Version.Hash).
	Version int64
	// Node is the worker that found it.
	Node    string
	FoundAt time.Time
}

// Files is where workers record the file versions their watchers found,
// and the director takes them.
type Files interface {
	Listener
	// FileFound records f (its ID is ignored): false, having recorded
	// nothing, when the version was recorded already.
	FileFound(ctx context.Context, f FoundFile) (bool, error)
	// FilesFound returns up to limit versions not taken yet, oldest
	// first.
	FilesFound(ctx context.Context, limit int) ([]FoundFile, error)
	// FilesTaken marks those versions taken, at now, for director at
	// epoch (a *DeposedError, and nothing marked, when it no longer holds
	// the cluster at epoch), and deletes those taken more than a day ago.
	FilesTaken(ctx context.Context, director string, epoch int64, ids []int64, now time.Time) error
	// WatchMemory and SetWatchMemory are the watch.Memory of node's
	// watchers.
	WatchMemory(ctx context.Context, node, name string) (int64, error)
	SetWatchMemory(ctx context.Context, node string, values map[string]int64) error
}

// ErrNotWatching is returned by a director's Config.Files for a version
// whose task is gone or no longer watches files: the version is dropped.
var ErrNotWatching = errors.New("the task has no file watcher")

// FileSink hands a file version a worker found to the director's engine:
// it returns once the start or the event is durable, ErrNotWatching to
// drop the version, or another error to have it handed again at the next
// poll (the task is running, say).
type FileSink func(ctx context.Context, f FoundFile) error

// nodeMemory is the watch.Memory of one node's watchers.
type nodeMemory struct {
	reg  Files
	node string
}

func (m nodeMemory) Cursor(ctx context.Context, name string) (int64, error) {
	return m.reg.WatchMemory(ctx, m.node, name)
}

func (m nodeMemory) SetCursors(ctx context.Context, values map[string]int64) error {
	return m.reg.SetWatchMemory(ctx, m.node, values)
}

// Watches returns the tasks of recs whose file watchers run on a worker
// that serves machines: those that watch files and name one of them.
func Watches(recs []job.Record, machines []string) []*job.Task {
	var out []*job.Task
	for _, r := range recs {
		x := r.Def.Extras()
		if w := x.Watching(); w != nil && w.File != "" && x.Machine != "" && slices.Contains(machines, x.Machine) {
			out = append(out, r.Def)
		}
	}
	return out
}

// fileWatch runs a worker's file watchers until ctx is done.
type fileWatch struct {
	reg      Files
	defs     Schedules
	node     string
	machines []string
	clock    clock.Clock
	log      *slog.Logger
	w        *watch.Watcher

	version int64 // of the definitions read; -1 before the first read
	tasks   []*job.Task
}

func newFileWatch(n *node) *fileWatch {
	return &fileWatch{reg: n.cfg.Registry, defs: n.cfg.Schedules, node: n.cfg.Node.ID, machines: n.cfg.Node.Machines,
		clock: n.cfg.Clock, log: n.log, w: watch.New(nodeMemory{reg: n.cfg.Registry, node: n.cfg.Node.ID}), version: -1}
}

func (f *fileWatch) run(ctx context.Context) {
	t := time.NewTimer(0)
	defer t.Stop()
	changed, stop := f.w.Notify()
	defer stop()
	var failing bool
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-changed:
		}
		wait := filesPoll
		next, err := f.poll(ctx)
		if now := f.clock.Now(); !next.IsZero() {
			wait = min(max(next.Sub(now), 0), filesPoll)
		}
		switch {
		case err != nil && ctx.Err() == nil && !failing:
			f.log.Warn("file watcher", "err", err)
			failing = true
		case err == nil && failing:
			f.log.Info("file watchers work again")
			failing = false
		}
		t.Reset(wait)
	}
}

// poll reads the definitions if they changed and polls the watchers due.
func (f *fileWatch) poll(ctx context.Context) (time.Time, error) {
	v, err := f.defs.DefinitionsVersion(ctx)
	if err != nil {
		return time.Time{}, err
	}
	if v != f.version {
		recs, err := f.defs.Definitions(ctx)
		if err != nil {
			return time.Time{}, err
		}
		f.tasks, f.version = Watches(recs, f.machines), v
	}
	return f.w.Poll(ctx, f.clock.Now(), f.tasks, f.found)
}

// found records a settled version.
func (f *fileWatch) found(ctx context.Context, t *job.Task, path string) error {
	v, ok := f.w.Version(t.Name, path)
	if !ok {
		return errors.New("no version of the file") // cannot be: Poll hands what it holds
	}
	fresh, err := f.reg.FileFound(ctx, FoundFile{Task: t.Name, Path: path, Version: v.Hash(), Node: f.node, FoundAt: f.clock.Now()})
	if err != nil {
		return err
	}
	f.log.Info("file settled", "task", t.Name, "file", path, "recorded", fresh)
	return nil
}

// Watching returns what the watcher of a task on this worker waits for.
func (f *fileWatch) Watching(task string) (string, bool) { return f.w.Waiting(task) }

// TakeFiles takes, until ctx is done, the file versions the workers
// found, and hands them to sink, for director at epoch: at each notice,
// and every filesPoll. c stamps when they were taken.
func TakeFiles(ctx context.Context, reg Files, director string, epoch int64, sink FileSink, c clock.Clock, log *slog.Logger) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	wake := make(chan struct{}, 1)
	done := make(chan struct{})
	lctx, cancel := context.WithCancel(ctx)
	defer func() { cancel(); <-done }()
	go func() {
		defer close(done)
		reg.Listen(lctx, wake, NoticeFiles)
	}()
	refused := map[int64]string{} // why sink last refused each version
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-wake:
		case <-t.C:
		}
		if err := takeFiles(ctx, reg, director, epoch, sink, c, log, refused); err != nil && ctx.Err() == nil {
			log.Warn("could not take in the files the workers found", "err", err)
		}
		t.Reset(filesPoll)
	}
}

// takeFiles hands the versions not taken to sink and marks those it took.
func takeFiles(ctx context.Context, reg Files, director string, epoch int64, sink FileSink, c clock.Clock, log *slog.Logger, refused map[int64]string) error {
	fs, err := reg.FilesFound(ctx, filesBatch)
	if err != nil || len(fs) == 0 {
		return err
	}
	var taken []int64
	listed := map[int64]bool{}
	for _, f := range fs {
		listed[f.ID] = true
		err := sink(ctx, f)
		switch {
		case err == nil:
			delete(refused, f.ID)
			taken = append(taken, f.ID)
		case errors.Is(err, ErrNotWatching):
			log.Warn("file dropped: its task no longer watches files", "task", f.Task, "file", f.Path, "node", f.Node)
			delete(refused, f.ID)
			taken = append(taken, f.ID)
		case ctx.Err() != nil:
			return ctx.Err()
		default:
			if refused[f.ID] != err.Error() {
				refused[f.ID] = err.Error()
				log.Info("file waits: its task refused it", "task", f.Task, "file", f.Path, "node", f.Node, "err", err)
			}
		}
	}
	for id := range refused {
		if !listed[id] {
			delete(refused, id)
		}
	}
	if len(taken) == 0 {
		return nil
	}
	return reg.FilesTaken(ctx, director, epoch, taken, c.Now())
}
