package watch

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Notifications
//
// Polling is the truth, but a poll every watch_interval is late by up to
// the interval. Notify has the operating system (inotify on Linux,
// kqueue on the BSDs and macOS, ReadDirectoryChangesW on Windows) tell
// the Watcher of changes in the directories its patterns name: a file
// created, written, renamed in or out, or removed whose path matches a
// watcher's pattern makes that watcher due at once, and the channel
// Notify returns is signalled so that its caller polls. A file then
// settles watch_steady after it last changed, not up to watch_interval
// later. Notifications only make a poll come sooner: what a poll finds
// decides, as without them. Directories that appear later (a pattern
// /data/*/in/*.csv gains a directory) are watched from the next poll on;
// a directory that cannot be watched (the system's limit of watches is
// reached, say) is polled only, and Poll says so once.

// notifyGap is the least time between two signals of Notify's channel: a
// file written in many small pieces is looked at a few times a second,
// not at every write.
const notifyGap = 100 * time.Millisecond

// notifier is a Watcher's link to the operating system's notifications.
// The system's watcher is made when a pattern first names a directory:
// a server without file watchers holds none (Linux allows a user 128).
type notifier struct {
	wake   chan struct{}
	failed map[string]bool // directories that could not be watched, said once

	mu      sync.Mutex        // guards the fields below, between follow and stop
	fs      *fsnotify.Watcher // nil until a directory is to be watched
	done    chan struct{}     // closed when listen has returned
	stopped bool
	broken  bool // the system refused notifications: said once, polling only
}

// Notify has the Watcher ask the operating system for notifications of
// changes in the directories of the watchers' patterns, from the next
// Poll on. It returns a channel signalled when a watcher is due because
// a file it watches changed, and a function that stops the
// notifications and waits until they have stopped. Where the system has
// no notifications (or refuses more of them), Poll says so once and
// polling alone finds the files.
func (w *Watcher) Notify() (<-chan struct{}, func()) {
	n := &notifier{wake: make(chan struct{}, 1), failed: map[string]bool{}}
	w.mu.Lock()
	w.n = n
	w.mu.Unlock()
	stop := func() {
		w.mu.Lock()
		w.n = nil
		w.mu.Unlock()
		n.mu.Lock()
		n.stopped = true
		fs, done := n.fs, n.done
		n.mu.Unlock()
		if fs != nil {
			fs.Close()
			<-done
		}
	}
	return n.wake, stop
}

// osWatcher returns the system's watcher, made at the first call; nil
// after stop, or when the system refuses one (said once, as the error).
func (w *Watcher) osWatcher(n *notifier) (*fsnotify.Watcher, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.fs != nil || n.stopped || n.broken {
		return n.fs, nil
	}
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		n.broken = true
		return nil, fmt.Errorf("watch: the system's notifications of file changes: %w (files are looked at every watch_interval only)", err)
	}
	n.fs, n.done = fw, make(chan struct{})
	go func(done chan struct{}) {
		defer close(done)
		w.listen(fw, n.wake)
	}(n.done)
	return fw, nil
}

// listen takes the notifications until they are closed: it makes the
// watchers of each changed path due, and signals at most every
// notifyGap.
func (w *Watcher) listen(fs *fsnotify.Watcher, wake chan struct{}) {
	gap := time.NewTimer(0)
	defer gap.Stop()
	var pending, waiting bool
	for {
		select {
		case ev, ok := <-fs.Events:
			if !ok {
				return
			}
			if w.changed(ev.Name) {
				pending = true
			}
		case _, ok := <-fs.Errors:
			if !ok {
				return
			}
			// The queue overflowed (events were lost): every watcher
			// looks again.
			if w.changed("") {
				pending = true
			}
		case <-gap.C:
			waiting = false
		}
		if pending && !waiting {
			select {
			case wake <- struct{}{}:
			default:
			}
			pending, waiting = false, true
			gap.Reset(notifyGap)
		}
	}
}

// changed makes the watchers whose pattern matches path due at once (all
// of them for an empty path), and reports whether there were any.
func (w *Watcher) changed(path string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	var any bool
	for _, x := range w.ws {
		if ok, _ := filepath.Match(x.t.watch.File, path); ok || path == "" {
			x.poked = true
			any = true
		}
	}
	return any
}

// follow has the notifications cover the directories the watchers'
// patterns name as they are now, and stop covering the others. It
// returns the directories that could not be watched, once each.
func (w *Watcher) follow(ts []target) error {
	w.mu.Lock()
	n := w.n
	w.mu.Unlock()
	if n == nil {
		return nil
	}
	want := map[string]bool{}
	for _, t := range ts {
		for _, d := range dirsOf(t.watch.File) {
			want[d] = true
		}
	}
	if len(want) == 0 {
		n.mu.Lock()
		made := n.fs != nil
		n.mu.Unlock()
		if !made {
			return nil // nothing to watch yet: no watcher of the system's
		}
	}
	fs, err := w.osWatcher(n)
	if fs == nil {
		return err
	}
	have := fs.WatchList()
	var errs []error
	for d := range want {
		if slices.Contains(have, d) {
			continue
		}
		if err := fs.Add(d); err != nil {
			if errors.Is(err, fsnotify.ErrClosed) {
				return nil // stopped meanwhile
			}
			if !n.failed[d] {
				n.failed[d] = true
				errs = append(errs, fmt.Errorf("watch: %s is polled only, without notifications of its changes: %w", d, err))
			}
			continue
		}
		delete(n.failed, d)
	}
	for _, d := range have {
		if !want[d] {
			// Gone already (a removed directory is no longer watched) is
			// as good as removed.
			_ = fs.Remove(d)
		}
	}
	return errors.Join(errs...)
}

// dirsOf returns the directories that exist now whose files a pattern
// can match.
func dirsOf(pattern string) []string {
	dir := filepath.Dir(pattern)
	if !strings.ContainsAny(dir, `*?[\`) {
		if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
			return []string{dir}
		}
		return nil
	}
	ms, _ := filepath.Glob(dir)
	var out []string
	for _, m := range ms {
		if fi, err := os.Stat(m); err == nil && fi.IsDir() {
			out = append(out, m)
		}
	}
	return out
}
