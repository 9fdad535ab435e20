// Package watch is gnomon's file watcher: it looks at the files a task's
// watch_file pattern matches, every watch_interval, and hands each
// version of each file to a Found function once the file has landed and settled:
// its size, modification time and inode unchanged for watch_steady, and
// its size at least watch_min_size.
//
// # Time
//
// Polling is the truth. A Watcher never reads a clock: Poll is given the
// instant, the scheduler's clock reading, and answers when it wants to be
// called again. A file settles when Poll has seen the same version of it
// for the steady window on that clock; the file's own timestamps only
// tell versions apart. On a simulated clock the steady windows pass in
// simulated time.
//
// # Once per version
//
// A version is a path with its size, modification time and inode. The
// versions handed over are remembered durably, one Memory entry per
// watcher and path (Key), which holds a hash of the version: a watcher
// started again (after a restart of the server) finds a settled file it
// already handed over in Memory and does not hand it over again, while a
// file that landed or changed meanwhile is new. A version is remembered
// after Found has taken it: a crash between the two hands it over
// again at the next start (at least once). A path whose file has gone is
// forgotten, and so are the paths of a watcher whose task is deleted (a
// changed definition keeps them). A Found that fails (its task is still running, say) leaves
// the version to the next poll.
package watch

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gnomon-sched/gnomon/job"
)

// Memory keeps what was handed over, durably: the store's named cursors.
// A value of 0 forgets a name.
type Memory interface {
	Cursor(ctx context.Context, name string) (int64, error)
	SetCursors(ctx context.Context, values map[string]int64) error
}

// Found takes a settled file version of a task's watcher: it posts a
// data event, or starts the task. An error leaves the version to be
// handed over at the next poll.
type Found = func(ctx context.Context, t *job.Task, path string) error

// target is one watcher: the task that defines it and what it watches.
type target struct {
	task  *job.Task
	watch job.Watch
}

// targets returns the file watchers of the tasks, sorted by task name.
func targets(tasks []*job.Task) []target {
	var out []target
	for _, t := range tasks {
		if w := t.Extras().Watching(); w != nil && w.File != "" {
			out = append(out, target{task: t, watch: *w})
		}
	}
	slices.SortFunc(out, func(a, b target) int { return strings.Compare(a.task.Name, b.task.Name) })
	return out
}

// By is the identity the events and starts of a task's watcher are sent
// by.
func By(task string) string { return "watch:" + task }

// Key is the Memory name of a watcher's path: text any store keeps (a
// path may hold bytes that are not UTF-8, which PostgreSQL's text
// refuses), so the path goes in as a digest. A task's name has no colon.
func Key(task, path string) string {
	sum := sha256.Sum256([]byte(path))
	return "watch:" + task + ":" + hex.EncodeToString(sum[:16])
}

// Version tells the versions of a file apart.
type Version struct {
	Size    int64
	ModTime int64 // Unix nanoseconds
	Inode   uint64
	Dev     uint64
}

// Hash returns the version's hash as Memory holds it, never 0.
func (v Version) Hash() int64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d/%d/%d/%d", v.Size, v.ModTime, v.Inode, v.Dev)
	if s := int64(h.Sum64()); s != 0 {
		return s
	}
	return 1
}

// FileState is what a watcher knows of one file.
type FileState string

// File states.
const (
	Growing FileState = "growing" // changed within the steady window
	Small   FileState = "small"   // below watch_min_size
	Settled FileState = "settled" // handed over, or about to be
	Waiting FileState = "waiting" // settled, but the sink refused it: tried again
)

// Seen is one file a watcher sees.
type Seen struct {
	Path  string    `json:"path"`
	State FileState `json:"state"`
	// Error is why the sink refused it last, for Waiting.
	Error string `json:"error,omitempty"`
}

// Status is what a watcher waits for and what it sees.
type Status struct {
	Pattern string `json:"pattern"`
	Seen    []Seen `json:"seen,omitempty"`
	// Error is why the last look at the files failed, if it did.
	Error string `json:"error,omitempty"`
}

// String says what the watcher waits for: "waits for a file matching
// /data/in/*.csv (seen: a.csv growing)".
func (s Status) String() string {
	b := "waits for a file matching " + s.Pattern
	var parts []string
	for _, f := range s.Seen {
		if f.State == Settled {
			continue
		}
		p := filepath.Base(f.Path) + " " + string(f.State)
		if f.Error != "" {
			p += ": " + f.Error
		}
		parts = append(parts, p)
	}
	if len(parts) > 0 {
		b += " (seen: " + strings.Join(parts, ", ") + ")"
	}
	if s.Error != "" {
		b += " (" + s.Error + ")"
	}
	return b
}

// file is one file a watcher has seen.
type file struct {
	v     Version
	since time.Time // when Poll first saw this version
	done  bool      // handed over (or found in Memory as handed over)
	err   string    // why the sink refused it last
}

// watcher is the state of one target.
type watcher struct {
	t     target
	next  time.Time // when the next poll is due; zero: at once
	poked bool      // a notification said a file it watches changed
	files map[string]*file
	err   string
}

// Watcher runs the file watchers of a scheduler's tasks. Its zero value is
// not usable: make one with New. Poll is called from one goroutine at a
// time; Status may be called from any.
type Watcher struct {
	mem Memory

	mu sync.Mutex // guards the fields below
	ws map[string]*watcher
	// Posted counts the file versions handed over.
	posted int64
	n      *notifier // nil without notifications
}

// New returns a Watcher that remembers what it handed over in mem.
func New(mem Memory) *Watcher { return &Watcher{mem: mem, ws: map[string]*watcher{}} }

// Posted returns how many file versions the watcher has handed over
// since it was made.
func (w *Watcher) Posted() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.posted
}

// Status returns what the watcher of a task waits for, and whether the
// task has one.
func (w *Watcher) Status(task string) (Status, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	x, ok := w.ws[task]
	if !ok {
		return Status{}, false
	}
	st := Status{Pattern: x.t.watch.File, Error: x.err}
	for _, p := range slices.Sorted(maps.Keys(x.files)) {
		f := x.files[p]
		s := Seen{Path: p, State: Growing, Error: f.err}
		switch {
		case f.err != "":
			s.State = Waiting
		case f.done:
			s.State = Settled
		case f.v.Size < x.t.watch.MinSize:
			s.State = Small
		}
		st.Seen = append(st.Seen, s)
	}
	return st, true
}

// Waiting says what the watcher of a task waits for, and whether the
// task has one (see Status.String).
func (w *Watcher) Waiting(task string) (string, bool) {
	st, ok := w.Status(task)
	if !ok {
		return "", false
	}
	return st.String(), true
}

// Version returns the version of a task's file the watcher last saw:
// the one being handed over, when called from Found.
func (w *Watcher) Version(task, path string) (Version, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	x, ok := w.ws[task]
	if !ok {
		return Version{}, false
	}
	f, ok := x.files[path]
	if !ok {
		return Version{}, false
	}
	return f.v, true
}

// Poll looks at the files of the watchers of tasks (those that define
// one) due at now (a watcher whose definition changed, or is new, is due
// at once), hands the file versions that have settled to found, and
// returns when it wants to be called again (zero without watchers). The
// tasks are the definitions as they are now: a watcher whose task is gone
// is dropped, and what it remembered forgotten.
func (w *Watcher) Poll(ctx context.Context, now time.Time, tasks []*job.Task, found Found) (time.Time, error) {
	ts := targets(tasks)
	w.mu.Lock()
	live := map[string]bool{}
	var forget []string
	for _, t := range ts {
		live[t.task.Name] = true
		if x, ok := w.ws[t.task.Name]; ok {
			if x.t.watch != t.watch {
				// Changed: looked at again at once; what it handed over
				// stays handed over.
				x.next = time.Time{}
			}
			x.t = t
			continue
		}
		w.ws[t.task.Name] = &watcher{t: t, files: map[string]*file{}}
	}
	for name, x := range w.ws {
		if !live[name] {
			for p := range x.files {
				forget = append(forget, Key(name, p))
			}
			delete(w.ws, name)
		}
	}
	w.mu.Unlock()
	var errs []error
	if err := w.forget(ctx, forget); err != nil {
		errs = append(errs, err)
	}
	if err := w.follow(ts); err != nil {
		errs = append(errs, err)
	}
	var next time.Time
	for _, t := range ts {
		w.mu.Lock()
		x := w.ws[t.task.Name]
		due := x.poked || x.next.IsZero() || !now.Before(x.next)
		w.mu.Unlock()
		if due {
			if err := w.poll(ctx, now, x, found); err != nil {
				errs = append(errs, err)
			}
		}
		w.mu.Lock()
		at := x.next
		if x.poked {
			// Changed again while it was looked at.
			at = now
		}
		w.mu.Unlock()
		if next.IsZero() || at.Before(next) {
			next = at
		}
	}
	return next, errors.Join(errs...)
}

// forget drops the Memory entries of paths no longer watched.
func (w *Watcher) forget(ctx context.Context, keys []string) error {
	if len(keys) == 0 {
		return nil
	}
	m := make(map[string]int64, len(keys))
	for _, k := range keys {
		m[k] = 0
	}
	if err := w.mem.SetCursors(ctx, m); err != nil {
		return fmt.Errorf("watch: forget: %w", err)
	}
	return nil
}

// poll looks at one target's files.
func (w *Watcher) poll(ctx context.Context, now time.Time, x *watcher, found Found) error {
	w.mu.Lock()
	spec := x.t.watch
	steady := spec.SteadyFor()
	x.next = now.Add(spec.Every())
	x.poked = false
	w.mu.Unlock()
	paths, err := filepath.Glob(spec.File)
	if err != nil {
		// CheckWatchFile refuses a bad pattern: this is the only error.
		return fmt.Errorf("watch %s: %w", x.t.task.Name, err)
	}
	seen := map[string]Version{}
	var lookErr string
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				lookErr = err.Error()
			}
			continue
		}
		if !fi.Mode().IsRegular() {
			continue
		}
		ino, dev := inode(fi)
		seen[p] = Version{Size: fi.Size(), ModTime: fi.ModTime().UnixNano(), Inode: ino, Dev: dev}
	}
	var (
		errs   []error
		forget []string
	)
	w.mu.Lock()
	x.err = lookErr
	for p := range x.files {
		if _, ok := seen[p]; !ok {
			// Forgotten only when it is gone for sure, not when its
			// directory could not be read.
			if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) || err == nil {
				forget = append(forget, Key(x.t.task.Name, p))
				delete(x.files, p)
			}
		}
	}
	var due []string
	for _, p := range slices.Sorted(maps.Keys(seen)) {
		v := seen[p]
		f, ok := x.files[p]
		if !ok || f.v != v {
			f = &file{v: v, since: now}
			x.files[p] = f
		}
		if f.done || v.Size < spec.MinSize {
			continue
		}
		if settle := f.since.Add(steady); now.Before(settle) {
			if settle.Before(x.next) {
				x.next = settle
			}
			continue
		}
		due = append(due, p)
	}
	w.mu.Unlock()
	if err := w.forget(ctx, forget); err != nil {
		errs = append(errs, err)
	}
	for _, p := range due {
		if err := w.hand(ctx, x, p, seen[p], found); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// hand hands a settled version over, unless Memory says it was.
func (w *Watcher) hand(ctx context.Context, x *watcher, p string, v Version, found Found) error {
	name := x.t.task.Name
	key := Key(name, p)
	h := v.Hash()
	had, err := w.mem.Cursor(ctx, key)
	if err != nil {
		return fmt.Errorf("watch %s: %s: %w", name, p, err)
	}
	if had != h {
		if err := found(ctx, x.t.task, p); err != nil {
			w.mu.Lock()
			x.files[p].err = err.Error()
			w.mu.Unlock()
			return fmt.Errorf("watch %s: %s: %w", name, p, err)
		}
		w.mu.Lock()
		w.posted++
		w.mu.Unlock()
		if err := w.mem.SetCursors(ctx, map[string]int64{key: h}); err != nil {
			// Handed over: done for this run of the server, handed over
			// again after a restart.
			w.mu.Lock()
			x.files[p].done = true
			x.files[p].err = ""
			w.mu.Unlock()
			return fmt.Errorf("watch %s: %s: remember: %w", name, p, err)
		}
	}
	w.mu.Lock()
	x.files[p].done = true
	x.files[p].err = ""
	w.mu.Unlock()
	return nil
}
