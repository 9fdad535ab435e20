package watch

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/job"
)

// notified starts the fixture's notifications.
func (f *fixture) notified() <-chan struct{} {
	f.t.Helper()
	changed, stop := f.w.Notify()
	f.t.Cleanup(stop)
	return changed
}

// wake waits for the notifications to say a watcher is due: the test
// fails after a minute without it.
func wake(t *testing.T, changed <-chan struct{}) {
	t.Helper()
	select {
	case <-changed:
	case <-time.After(time.Minute):
		t.Fatal("no notification of the change within a minute")
	}
}

// settle polls a second of the fixture's clock at a time, up to limit,
// until a file is handed over, and returns the instant it was.
func (f *fixture) settle(limit time.Duration) time.Time {
	f.t.Helper()
	for end := f.now.Add(limit); f.now.Before(end); {
		f.now = f.now.Add(time.Second)
		if f.poll(); len(f.got) > 0 {
			return f.now
		}
	}
	f.t.Fatalf("nothing handed over within %s of the watcher's clock", limit)
	return time.Time{}
}

// A notification makes a watcher look at once: a file written, or
// renamed in, is handed over when it has been steady, not at the next
// watch_interval an hour later.
func TestNotifiedBeforeTheInterval(t *testing.T) {
	t.Parallel()
	f := setup(t, job.Watch{File: "*.csv", Steady: job.Duration(time.Second), Interval: job.Duration(time.Hour)})
	changed := f.notified()
	if f.poll(); len(f.got) != 0 {
		t.Fatalf("handed over from an empty directory: %v", f.got)
	}
	if err := os.WriteFile(filepath.Join(f.dir, "a.csv"), []byte("1,2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	wake(t, changed)
	if at := f.settle(10 * time.Second); f.got[0] != "a.csv" || at.Sub(t0) >= time.Hour {
		t.Fatalf("handed over %v at %s", f.got, at)
	}

	// Written under a name the pattern does not match, then renamed in.
	tmp := filepath.Join(f.dir, "b.tmp")
	if err := os.WriteFile(tmp, []byte("3,4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(f.dir, "b.csv")); err != nil {
		t.Fatal(err)
	}
	wake(t, changed)
	from := f.now
	if at := f.settle(10 * time.Second); !slices.Equal(f.got, []string{"b.csv"}) || at.Sub(from) >= time.Hour {
		t.Fatalf("handed over %v at %s", f.got, at)
	}
}

// The directories of a pattern with a glob before its last element are
// watched as they appear, from the poll after they do.
func TestNotifiedInNewDirectories(t *testing.T) {
	t.Parallel()
	f := setup(t, job.Watch{File: "*/in.csv", Steady: job.Duration(time.Second), Interval: job.Duration(time.Hour)})
	changed := f.notified()
	if f.poll(); len(f.got) != 0 {
		t.Fatalf("handed over %v", f.got)
	}
	sub := filepath.Join(f.dir, "day1")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	// The next poll, at the interval, sees the directory and has the
	// notifications cover it.
	f.now = f.now.Add(time.Hour)
	if f.poll(); len(f.got) != 0 {
		t.Fatalf("handed over %v", f.got)
	}
	from := f.now
	if err := os.WriteFile(filepath.Join(sub, "in.csv"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	wake(t, changed)
	if at := f.settle(10 * time.Second); f.got[0] != "in.csv" || at.Sub(from) >= time.Hour {
		t.Fatalf("handed over %v at %s", f.got, at)
	}
	if got := f.w.n.fs.WatchList(); !slices.Equal(got, []string{sub}) {
		t.Fatalf("watched %v, want %v", got, []string{sub})
	}
}

// Without notifications a watcher looks only when its interval says:
// what the tests above measure is the notifications' doing.
func TestUnnotifiedWaitsForTheInterval(t *testing.T) {
	t.Parallel()
	f := setup(t, job.Watch{File: "*.csv", Steady: job.Duration(time.Second), Interval: job.Duration(time.Hour)})
	f.poll()
	if err := os.WriteFile(filepath.Join(f.dir, "a.csv"), []byte("1,2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if at := f.settle(2 * time.Hour); at.Sub(t0) < time.Hour {
		t.Fatalf("handed over at %s, before the interval", at)
	}
}

// A Watcher without a pattern to follow holds no watcher of the system's
// (a user may have 128 on Linux); the first pattern makes one, and on
// Linux it must work.
func TestNotifyMadeWhenNeeded(t *testing.T) {
	t.Parallel()
	f := setup(t, job.Watch{File: "*.csv", Interval: job.Duration(time.Hour)})
	f.notified()
	if _, err := f.w.Poll(context.Background(), f.now, nil, nil); err != nil {
		t.Fatal(err)
	}
	if f.w.n.fs != nil {
		t.Fatal("a watcher of the system's made without a pattern to follow")
	}
	_, err := f.w.Poll(context.Background(), f.now, f.ts, func(context.Context, *job.Task, string) error { return nil })
	if runtime.GOOS == "linux" && (err != nil || f.w.n.fs == nil) {
		t.Fatalf("no watcher of the system's after a pattern: %v", err)
	}
}
