package job

import "time"

// Watch is a file watcher (AutoSys's file watcher job, Control-M's File
// Watcher): the files that match File trigger the task, each version of
// each file once, when it has landed and stopped growing. See
// docs/definitions.md.
type Watch struct {
	// File is an absolute path whose last elements may hold glob
	// patterns (path/filepath.Match): /data/in/*.csv.
	File string
	// MinSize is the least size, in bytes, of a file that triggers; 0:
	// any size, an empty file included.
	MinSize int64
	// Steady is how long a file's size, modification time and inode must
	// stay unchanged before it triggers; zero: DefaultSteady.
	Steady Duration
	// Interval is how often the files are looked at; zero:
	// DefaultInterval.
	Interval Duration
}

// Defaults of a Watch, and the least interval.
const (
	DefaultSteady   = 30 * time.Second
	DefaultInterval = 10 * time.Second
	MinInterval     = time.Second
)

// WatchParam is the variable a run started by its task's file watcher
// finds the file's path in.
const WatchParam = "GNOMON_WATCH_FILE"

// IsZero reports whether w watches nothing.
func (w *Watch) IsZero() bool { return w == nil || *w == Watch{} }

// SteadyFor returns how long a file must stay unchanged, the default
// applied.
func (w *Watch) SteadyFor() time.Duration {
	if w.Steady == 0 {
		return DefaultSteady
	}
	return time.Duration(w.Steady)
}

// Every returns how often the files are looked at, the default applied.
func (w *Watch) Every() time.Duration {
	if w.Interval == 0 {
		return DefaultInterval
	}
	return time.Duration(w.Interval)
}

// Watching returns the task's file watcher, nil without one.
func (x *Extra) Watching() *Watch {
	if x.Watch.IsZero() {
		return nil
	}
	return x.Watch
}

// EditWatch returns the task's file watcher for setting it.
func (t *Task) EditWatch() *Watch {
	x := t.Edit()
	if x.Watch == nil {
		x.Watch = &Watch{}
	}
	return x.Watch
}
