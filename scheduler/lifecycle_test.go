package scheduler

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/gnomon-sched/gnomon/executor"
	"github.com/gnomon-sched/gnomon/store/sqlite"
)

// TestLifecycle checks the one lifecycle: Start once, Stop any number of
// times, started or not; a Start after a Stop, or a second one, is
// refused and changes nothing.
func TestLifecycle(t *testing.T) {
	ctx := context.Background()
	open := func() *Scheduler {
		dir := t.TempDir()
		st, err := sqlite.Open(ctx, filepath.Join(dir, "gnomon.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		r, err := executor.NewLocal(executor.LocalConfig{Dir: filepath.Join(dir, "runs")})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(r.Wait)
		s, err := New(ctx, Config{Store: st, Runner: r, DataDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}

	// Never started: Stop returns at once (with a context that never
	// ends), twice, and Start is refused after it.
	s := open()
	for range 2 {
		if err := s.Stop(ctx); err != nil {
			t.Fatalf("Stop of a scheduler never started: %v", err)
		}
	}
	if err := s.Start(ctx); err == nil {
		t.Fatal("Start after Stop accepted")
	}

	// A Start with a context already done starts nothing.
	s = open()
	done, cancel := context.WithCancel(ctx)
	cancel()
	if err := s.Start(done); err == nil {
		t.Fatal("Start with a done context accepted")
	}
	if err := s.Stop(ctx); err != nil {
		t.Fatal(err)
	}

	// Started: a second Start is refused and the first keeps working.
	s = open()
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); err == nil {
		t.Fatal("a second Start accepted")
	}
	if _, err := s.Define(ctx, DefineFile{File: "a.def", Text: "insert_task: a\ntype: callable\nfunction: log\n"}); err != nil {
		t.Fatalf("after a refused second Start: %v", err)
	}
	for range 2 {
		if err := s.Stop(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Start(ctx); err == nil {
		t.Fatal("Start after Stop accepted")
	}
}
