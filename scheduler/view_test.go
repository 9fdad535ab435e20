package scheduler

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/engine"
	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/store/sqlite"
)

// TestViewIsTheCommittedState changes tasks every way a View shows them
// (status events, definitions that move children between bundles and
// members between groups, deletions, data events) and checks after each
// commit that the View published reads exactly as the engine does.
func TestViewIsTheCommittedState(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(dir, "gnomon.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s, err := New(ctx, Config{Store: st, Runner: localRunner(t, dir), DataDir: dir, Clock: NewVirtualClock(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC))})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer s.Stop(ctx)
	task := func(name, parent string) string {
		text := fmt.Sprintf("insert_task: %s\ntype: callable\ncommand: true\nout_log_file: o\nerr_log_file: e\n", name)
		if parent != "" {
			text += "parent: " + parent + "\n"
		} else {
			text += "cron: 0 * * * *\n"
		}
		return text
	}
	var text string
	for _, b := range []string{"b1", "b2"} {
		text += fmt.Sprintf("insert_task: %s\ntype: bundle\n\n", b)
	}
	names := []string{"t0", "t1", "t2", "t3", "t4", "t5"}
	for i, n := range names {
		text += task(n, []string{"", "b1", "b2"}[i%3]) + "\n"
	}
	text += "insert_group: g\njobs: t0, t1\n"
	define := func(f DefineFile) {
		t.Helper()
		if _, err := s.Define(ctx, f); err != nil && !errors.Is(err, engine.ErrRefused) && !errors.Is(err, engine.ErrNotFound) {
			t.Fatalf("%#v: %v", f, err)
		}
	}
	define(DefineFile{File: "t.def", Text: text})
	define(DefineFile{File: "c.json", Text: `[{"name":"cfg","dependencies":[{"type":"TABLE","resourceId":"t","lifeDuration":600},{"type":"FILE","resourceId":"/in/","lifeDuration":600}]}]`})
	check := func(step int) {
		t.Helper()
		v := s.View()
		if err := s.Read(ctx, func(e *engine.Engine) {
			if !slices.Equal(v.Names(), e.Names()) {
				t.Fatalf("step %d: names %v, engine %v", step, v.Names(), e.Names())
			}
			for _, n := range e.Names() {
				d1, s1, _ := e.Task(n)
				d2, s2, ok := v.Task(n)
				if !ok || !reflect.DeepEqual(d1, d2) || !reflect.DeepEqual(s1, s2) {
					t.Fatalf("step %d: %s in the view %+v %+v, engine %+v %+v", step, n, d2, s2, d1, s1)
				}
				if !slices.Equal(v.Children(n), e.Children(n)) || !slices.Equal(v.Groups(n), e.Groups(n)) {
					t.Fatalf("step %d: %s children %v groups %v, engine %v %v", step, n, v.Children(n), v.Groups(n), e.Children(n), e.Groups(n))
				}
				if !reflect.DeepEqual(v.StoredEvents(n), e.StoredEvents(n)) {
					t.Fatalf("step %d: %s stored %+v, engine %+v", step, n, v.StoredEvents(n), e.StoredEvents(n))
				}
				if (v.Schedule(n) == nil) != (e.Schedule(n) == nil) {
					t.Fatalf("step %d: %s schedule in the view %v, engine %v", step, n, v.Schedule(n), e.Schedule(n))
				}
			}
			if v.Summary().Counts != e.Summarize(SummaryRows, v.At().Add(-24*time.Hour)).Counts {
				t.Fatalf("step %d: counts %v, engine %v", step, v.Summary().Counts, e.Summarize(SummaryRows, v.At()).Counts)
			}
		}); err != nil {
			t.Fatal(err)
		}
	}
	check(0)
	// A change refused changes nothing: the steps try things blindly.
	submit := func(ev engine.Event) { s.Submit(ctx, ev) }
	define = func(f DefineFile) { s.Define(ctx, f) }
	rng := rand.New(rand.NewPCG(1, 2))
	actions := []job.Action{job.ActFreeze, job.ActGreen, job.ActRed, job.ActReset}
	for step := 1; step <= 200; step++ {
		n := names[rng.IntN(len(names))]
		switch rng.IntN(6) {
		case 0:
			if p := []string{"", "b1", "b2"}[rng.IntN(3)]; p == "" {
				define(DefineFile{File: "m.def", Text: fmt.Sprintf("update_task: %s\nparent:\ncron: 0 * * * *\n", n)})
			} else {
				define(DefineFile{File: "m.def", Text: fmt.Sprintf("update_task: %s\ncron:\nparent: %s\n", n, p)})
			}
		case 1:
			define(DefineFile{File: "g.def", Text: fmt.Sprintf("update_group: g\njobs: %s, %s\n", n, names[rng.IntN(len(names))])})
		case 2:
			if _, _, ok := s.View().Task(n); ok {
				define(DefineFile{File: "d.def", Text: "delete_task: " + n + "\n"})
			} else {
				define(DefineFile{File: "i.def", Text: task(n, "b1")})
			}
		case 3:
			d := engine.Data{Type: job.Table, Resource: "t", At: time.Date(2026, 3, 1, 0, 0, step, 0, time.UTC)}
			if rng.IntN(4) == 0 {
				d.Type, d.Resource = job.File, "/in/f"
			}
			if _, err := s.Post(ctx, d); err != nil {
				t.Fatal(err)
			}
		default:
			submit(engine.Act{Task: n, Action: actions[rng.IntN(len(actions))]})
		}
		check(step)
	}
}

// Idle tells whether a Read would be served at once: false while the loop
// is held, true once it waits for work again.
func TestIdle(t *testing.T) {
	m := openSim(t, t.TempDir(), time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), nil)
	defer m.stop()
	waitIdle := func() {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); !m.s.Idle(); time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the loop never waits for work")
			}
		}
	}
	waitIdle()
	held, gate := make(chan struct{}), make(chan struct{})
	go m.s.Read(context.Background(), func(*engine.Engine) { close(held); <-gate })
	<-held
	if m.s.Idle() {
		t.Error("Idle while a read holds the loop")
	}
	close(gate)
	waitIdle()
}

// The View keeps the tasks with a file watcher apart: defining, changing
// and deleting a task moves it in and out of them.
func TestViewWatching(t *testing.T) {
	dir := t.TempDir()
	m := openSim(t, dir, time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), nil)
	defer m.stop()
	watching := func() []string {
		var out []string
		m.s.View().Watching(func(it *TaskItem) bool {
			out = append(out, it.Def.Name)
			return true
		})
		return out
	}
	task := func(name, extra string) string {
		return fmt.Sprintf("insert_task: %s\ntype: callable\ncommand: true\nout_log_file: %s/o\nerr_log_file: %s/e\n%s\n", name, dir, dir, extra)
	}
	m.define(DefineFile{File: "t.def", Text: task("plain", "") + task("lands", "watch_file: "+dir+"/in/*.csv") + task("arrives", "watch_file: "+dir+"/in/*.dat")})
	if got := watching(); !slices.Equal(got, []string{"arrives", "lands"}) {
		t.Fatalf("watching %v, want arrives, lands", got)
	}
	m.define(DefineFile{File: "t.def", Text: "update_task: lands\nwatch_file:\n\ndelete_task: arrives\n\nupdate_task: plain\nwatch_file: " + dir + "/x\n"})
	if got := watching(); !slices.Equal(got, []string{"plain"}) {
		t.Fatalf("after the changes, watching %v, want plain", got)
	}
}

// A commit wakes the file watchers when a watcher came, went or changed,
// not for other definitions.
func TestSameWatch(t *testing.T) {
	t.Parallel()
	watching := func(file string, steady time.Duration) *job.Task {
		t := &job.Task{Name: "w", Type: job.Callable}
		if file != "" {
			*t.EditWatch() = job.Watch{File: file, Steady: job.Duration(steady)}
		}
		return t
	}
	for _, c := range []struct {
		a, b *job.Task
		same bool
	}{
		{nil, nil, true},
		{nil, watching("", 0), true},
		{watching("/in/*", 0), watching("/in/*", 0), true},
		{nil, watching("/in/*", 0), false},
		{watching("/in/*", 0), nil, false},
		{watching("/in/*", 0), watching("", 0), false},
		{watching("/in/*", 0), watching("/in/*", time.Minute), false},
		{watching("/in/*", 0), watching("/out/*", 0), false},
	} {
		if got := sameWatch(c.a, c.b); got != c.same {
			t.Errorf("sameWatch(%v, %v) = %v", c.a, c.b, got)
		}
	}
}
