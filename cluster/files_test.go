package cluster

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/clock"
	"github.com/gnomon-sched/gnomon/executor"
	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/watch"
)

// schedulesFunc is a Schedules of fixed definitions.
type schedulesFunc struct {
	DefinitionsFunc func() []job.Record
}

func (s schedulesFunc) Definitions(context.Context) ([]job.Record, error) {
	return s.DefinitionsFunc(), nil
}

func (s schedulesFunc) DefinitionsVersion(context.Context) (int64, error) { return 1, nil }

// watching returns a task that watches pattern on machine.
func watching(name, machine, pattern string) job.Record {
	t := &job.Task{Name: name, Type: job.Callable, Command: "true"}
	t.Edit().Machine = machine
	*t.EditWatch() = job.Watch{File: pattern, Steady: job.Duration(time.Millisecond), Interval: job.Duration(10 * time.Millisecond)}
	return job.Record{Def: t}
}

// handed gathers the versions a director's TakeFiles hands over.
type handed struct {
	mu  sync.Mutex
	got map[string]int // task + " " + path → times handed
}

func (h *handed) sink(_ context.Context, f FoundFile) error {
	if f.Task == "gone" {
		return ErrNotWatching
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.got[f.Task+" "+f.Path]++
	return nil
}

func (h *handed) count(key string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.got[key]
}

// writeFile drops a file whole, as a producer should: written under
// another name, then renamed in. The watchers here are steady after a
// millisecond (below what a definition may give), so a file written in
// place could be seen empty and settled before its bytes land, and
// handed over twice.
func writeFile(t *testing.T, path string) {
	t.Helper()
	if err := os.WriteFile(path+".part", []byte("a,b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".part", path); err != nil {
		t.Fatal(err)
	}
}

// TestWorkerWatchesFiles runs a worker that serves machine m1 and the
// director's intake of files: a file dropped in the directory the task
// of m1 watches reaches the director once, found by the worker; the
// tasks of another machine, or of none, are not watched there; a worker
// restarted under its name does not hand the file over again.
func TestWorkerWatchesFiles(t *testing.T) {
	r := registry(t, Space{Size: 60, Partitions: 4})
	dir := t.TempDir()
	pattern := filepath.Join(dir, "*.csv")
	defs := schedulesFunc{DefinitionsFunc: func() []job.Record {
		return []job.Record{watching("load", "m1", pattern), watching("elsewhere", "m2", pattern), watching("director", "", pattern)}
	}}
	worker := func(ctx context.Context) chan error {
		x, err := executor.NewLocal(executor.LocalConfig{Dir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() {
			done <- runNode(ctx, Config{Registry: r, Node: Node{ID: "w1", Roles: []string{RoleWorker}, Machines: []string{"m1"}},
				Executor: x, Schedules: defs})
		}()
		return done
	}
	h := &handed{got: map[string]int{}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	epoch := directorEpoch(t, r, "dir", time.Now())
	taking := make(chan struct{})
	go func() {
		defer close(taking)
		TakeFiles(ctx, r, "dir", epoch, h.sink, clock.Wall, nil)
	}()

	wctx, stop := context.WithCancel(ctx)
	done := worker(wctx)
	a := filepath.Join(dir, "a.csv")
	writeFile(t, a)
	waitFor(t, func() bool { return h.count("load "+a) > 0 })
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	// Restarted: it remembers a.csv, and finds b.csv.
	wctx, stop = context.WithCancel(ctx)
	done = worker(wctx)
	b := filepath.Join(dir, "b.csv")
	writeFile(t, b)
	waitFor(t, func() bool { return h.count("load "+b) > 0 })
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// The taker marks what it handed over after handing it: every
	// version found is taken in the end.
	var left []FoundFile
	for range 500 {
		fs, err := r.FilesFound(context.Background(), 10)
		if err != nil {
			t.Fatal(err)
		}
		if left = fs; len(left) == 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(left) > 0 {
		t.Fatalf("files not taken: %+v", left)
	}
	cancel()
	<-taking

	if n := h.count("load " + a); n != 1 {
		t.Errorf("a.csv handed %d times, want once", n)
	}
	h.mu.Lock()
	if len(h.got) != 2 {
		t.Errorf("handed %v, want a.csv and b.csv of load only", h.got)
	}
	h.mu.Unlock()
	v, err := r.WatchMemory(context.Background(), "w1", watch.Key("load", a))
	if err != nil || v == 0 {
		t.Errorf("w1's memory of a.csv: %d %v", v, err)
	}
}

// TestFilesFoundOnce records a version twice (two workers on a shared
// disk, or a worker that stopped before it remembered it): it is taken
// once. A version whose task no longer watches is dropped; one its task
// refuses stays for the next poll; a deposed director marks nothing.
func TestFilesFoundOnce(t *testing.T) {
	r := registry(t, Space{Size: 60, Partitions: 4})
	ctx := context.Background()
	f := FoundFile{Task: "load", Path: "/in/a.csv", Version: 42, Node: "w1", FoundAt: t0}
	for i, want := range []bool{true, false} {
		f.Node = []string{"w1", "w2"}[i]
		fresh, err := r.FileFound(ctx, f)
		if err != nil || fresh != want {
			t.Fatalf("record %d: %v %v, want %v", i, fresh, err, want)
		}
	}
	if _, err := r.FileFound(ctx, FoundFile{Task: "gone", Path: "/in/a.csv", Version: 42, Node: "w1", FoundAt: t0}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.FileFound(ctx, FoundFile{Task: "busy", Path: "/in/a.csv", Version: 42, Node: "w1", FoundAt: t0}); err != nil {
		t.Fatal(err)
	}
	epoch := directorEpoch(t, r, "dir", t0)
	if err := r.FilesTaken(ctx, "dir", epoch+1, []int64{1}, t0); !errors.Is(err, ErrDeposed) {
		t.Fatalf("taken at another epoch: %v, want ErrDeposed", err)
	}
	h := &handed{got: map[string]int{}}
	sink := func(ctx context.Context, f FoundFile) error {
		if f.Task == "busy" {
			return errors.New("the task is running")
		}
		return h.sink(ctx, f)
	}
	for range 2 {
		if err := takeFiles(ctx, r, "dir", epoch, sink, clock.Func(func() time.Time { return t0 }), slog.New(slog.DiscardHandler), map[int64]string{}); err != nil {
			t.Fatal(err)
		}
	}
	if n := h.count("load /in/a.csv"); n != 1 {
		t.Errorf("handed %d times, want once", n)
	}
	fs, err := r.FilesFound(ctx, 10)
	if err != nil || len(fs) != 1 || fs[0].Task != "busy" {
		t.Errorf("left %+v %v, want busy's version only", fs, err)
	}
	// A day later, the versions taken are pruned.
	if err := r.FilesTaken(ctx, "dir", epoch, []int64{fs[0].ID}, t0.Add(25*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if fresh, err := r.FileFound(ctx, FoundFile{Task: "load", Path: "/in/a.csv", Version: 42, Node: "w1", FoundAt: t0}); err != nil || !fresh {
		t.Errorf("recorded again after the prune: %v %v", fresh, err)
	}
}
