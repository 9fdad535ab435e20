package scheduler

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/engine"
	"github.com/gnomon-sched/gnomon/store"
	"github.com/gnomon-sched/gnomon/store/sqlite"
)

// outage is a store whose commits fail as unavailable while it is down,
// as a database's do while it restarts: nothing of the batch is written.
type outage struct {
	store.Store
	mu      sync.Mutex
	down    bool
	refused int
}

func (o *outage) Commit(ctx context.Context, b *store.Batch) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.down {
		o.refused++
		return fmt.Errorf("commit: connection refused: %w", store.ErrUnavailable)
	}
	return o.Store.Commit(ctx, b)
}

func (o *outage) set(down bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.down = down
}

func (o *outage) refusals() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.refused
}

// TestStoreOutage takes the store down under a definition: its caller
// gets an error, later requests are refused at once, and when the store
// is back the retried commit lands without a restart: the definition the
// caller was told failed is stored, and the scheduler takes changes again.
func TestStoreOutage(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(dir, "gnomon.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	o := &outage{Store: st}
	s, err := New(ctx, Config{Store: o, Runner: localRunner(t, dir), DataDir: dir, Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer s.Stop(ctx)
	def := func(name string) error {
		_, err := s.Define(ctx, DefineFile{File: "t.def",
			Text: "insert_task: " + name + "\ntype: callable\ncommand: true\nout_log_file: /dev/null\nerr_log_file: /dev/null\n"})
		return err
	}
	if err := s.Read(ctx, func(*engine.Engine) {}); err != nil { // the start's dispatch is committed
		t.Fatal(err)
	}
	o.set(true)
	if err := def("a"); !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("a definition while the store is down: %v", err)
	}
	for o.refusals() < 3 { // the loop retries
		time.Sleep(10 * time.Millisecond)
	}
	if err := def("b"); !errors.Is(err, store.ErrUnavailable) || s.Unavailable() == nil {
		t.Fatalf("a request during the retries: %v (unavailable: %v)", err, s.Unavailable())
	}
	// A request that reached the loop before it began retrying is
	// answered, not kept waiting for the store.
	late := &request{ev: engine.Tick{}, reply: make(chan error, 1)}
	s.in <- late
	if err := <-late.reply; !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("a request queued before the retries: %v", err)
	}
	o.set(false)
	deadline := time.Now().Add(10 * time.Second)
	for s.Unavailable() != nil {
		if time.Now().After(deadline) {
			t.Fatal("the scheduler did not recover")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := def("c"); err != nil {
		t.Fatalf("a definition after the store is back: %v", err)
	}
	snap, err := st.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range snap.Tasks {
		names = append(names, r.Def.Name)
	}
	if len(names) != 2 || !(names[0] == "a" && names[1] == "c" || names[0] == "c" && names[1] == "a") {
		t.Fatalf("stored tasks %v, want a (retried) and c; b was refused", names)
	}
}

// fencedStore is a store whose commits are refused as fenced once set,
// as a deposed director's are.
type fencedStore struct {
	store.Store
	mu      sync.Mutex
	fenced  bool
	commits int
}

func (f *fencedStore) Commit(ctx context.Context, b *store.Batch) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.commits++
	if f.fenced {
		return fmt.Errorf("commit: %w: another director holds the cluster", store.ErrFenced)
	}
	return f.Store.Commit(ctx, b)
}

// TestStopsWhenFenced: a commit refused as fenced is not retried, as an
// unavailable store's is: the scheduler stops, its caller and later ones
// are told why, and Stop returns it. Halt stops it the same way.
func TestStopsWhenFenced(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	def := func(s *Scheduler, name string) error {
		_, err := s.Define(ctx, DefineFile{File: "t.def",
			Text: "insert_task: " + name + "\ntype: callable\ncommand: true\nout_log_file: /dev/null\nerr_log_file: /dev/null\n"})
		return err
	}
	open := func(t *testing.T) (*Scheduler, *fencedStore) {
		dir := t.TempDir()
		st, err := sqlite.Open(ctx, filepath.Join(dir, "gnomon.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		f := &fencedStore{Store: st}
		s, err := New(ctx, Config{Store: f, Runner: localRunner(t, dir), DataDir: dir, Location: time.UTC})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Stop(ctx) })
		if err := def(s, "a"); err != nil {
			t.Fatal(err)
		}
		return s, f
	}
	t.Run("fenced commit", func(t *testing.T) {
		s, f := open(t)
		f.mu.Lock()
		f.fenced = true
		before := f.commits
		f.mu.Unlock()
		if err := def(s, "b"); !errors.Is(err, store.ErrFenced) || !errors.Is(err, ErrStopped) || errors.Is(err, store.ErrUnavailable) {
			t.Fatalf("a definition once fenced: %v", err)
		}
		<-s.Done()
		if err := def(s, "c"); !errors.Is(err, store.ErrFenced) {
			t.Fatalf("a definition after the stop: %v", err)
		}
		if err := s.Stop(ctx); !errors.Is(err, store.ErrFenced) {
			t.Fatalf("Stop: %v", err)
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.commits != before+1 {
			t.Fatalf("%d commits tried once fenced, want 1: a fenced commit is not retried", f.commits-before)
		}
	})
	t.Run("halt", func(t *testing.T) {
		s, _ := open(t)
		why := errors.New("deposed: another director took the cluster over")
		s.Halt(why)
		s.Halt(errors.New("a second call does nothing"))
		<-s.Done()
		if err := def(s, "b"); !errors.Is(err, why) || !errors.Is(err, ErrStopped) {
			t.Fatalf("a definition after Halt: %v", err)
		}
		if err := s.Stop(ctx); !errors.Is(err, why) {
			t.Fatalf("Stop: %v", err)
		}
	})
}
