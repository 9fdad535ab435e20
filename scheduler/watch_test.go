package scheduler

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/engine"
	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/watch"
)

// TestFileWatcherOnVirtualTime drops a file in pieces into a directory a
// task and a configuration watch: nothing happens until the file has
// stayed unchanged for the steady window on the virtual clock; then the
// task runs once with the file in GNOMON_WATCH_FILE and the configuration
// is triggered once by the FILE event posted for it. After a restart, the
// file is not handed over again, and one that landed while the scheduler
// was down is.
func TestFileWatcherOnVirtualTime(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	if err := os.Mkdir(in, 0o755); err != nil {
		t.Fatal(err)
	}
	open := func(from time.Time) *sim {
		return openSimWith(t, dir, from, func(c *Config) { c.Files = watch.New(c.Store) })
	}
	m := open(t0)
	out := filepath.Join(dir, "load.out")
	m.define(DefineFile{File: "load.def", Text: "insert_task: load\ntype: callable\ncommand: echo \"$GNOMON_WATCH_FILE\"\nout_log_file: " + out +
		"\nerr_log_file: " + filepath.Join(dir, "load.err") + "\nwatch_file: " + in + "/*.csv\nwatch_steady: 30s\nwatch_interval: 10s\n"})
	m.define(DefineFile{File: "arrivals.json", Text: `[{"name": "arrivals", "dependencies": [{"type": "FILE", "resourceId": "` + in +
		`", "lifeDuration": 3600}], "watch_file": "` + in + `/*.csv", "watch_steady": "30s"}]`})
	write := func(name, data string) {
		t.Helper()
		f, err := os.OpenFile(filepath.Join(in, name), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteString(data); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	write("a.csv", "1,2\n")
	m.advance(t0.Add(20 * time.Second))
	if rs := m.runs("load"); len(rs) != 0 {
		t.Fatalf("runs after 20s: %+v", rs)
	}
	if why, ok := m.s.Watching("load"); !ok || !strings.Contains(why, "waits for a file matching "+in+"/*.csv (seen: a.csv growing)") {
		t.Errorf("watching: %q, %v", why, ok)
	}
	write("a.csv", "3,4\n") // grows: seen at the poll of t0+30s
	m.advance(t0.Add(55 * time.Second))
	if rs := m.runs("load"); len(rs) != 0 {
		t.Fatalf("runs 25s after it grew: %+v", rs)
	}
	m.advance(t0.Add(2 * time.Minute))
	rs := m.runs("load")
	if len(rs) != 1 || rs[0].By != "watch:load" || len(rs[0].Params) != 1 || rs[0].Params[0] != (job.Var{Name: job.WatchParam, Value: filepath.Join(in, "a.csv")}) {
		t.Fatalf("runs once settled: %+v", rs)
	}
	if got, _ := os.ReadFile(out); strings.TrimSpace(string(got)) != filepath.Join(in, "a.csv") {
		t.Errorf("the run's output: %q", got)
	}
	if rs := m.runs("arrivals"); len(rs) != 1 {
		t.Fatalf("configuration runs: %+v", rs)
	}
	m.advance(t0.Add(10 * time.Minute))
	if rs := m.runs("load"); len(rs) != 1 {
		t.Fatalf("runs 10 min later: %+v", rs)
	}
	if n := m.s.FilesPosted(); n != 2 {
		t.Errorf("files posted: %d, want 2 (one a watcher)", n)
	}
	m.stop()

	write("b.csv", "5,6\n") // lands while the scheduler is down
	m = open(t0)
	defer m.stop()
	m.advance(m.clock.Now().Add(5 * time.Minute))
	rs = m.runs("load")
	if len(rs) != 2 || rs[0].Params[0].Value != filepath.Join(in, "b.csv") {
		t.Fatalf("runs after the restart: %+v; want b.csv's added", rs)
	}
	if rs := m.runs("arrivals"); len(rs) != 2 {
		t.Fatalf("configuration runs after the restart: %+v", rs)
	}
}

// TestFileWatcherOneRunAtATime has two files settle at the same poll of a
// task's watcher: the first starts the task, the start for the second is
// refused while that run is under way, and the second starts at a later
// poll. A frozen task takes no file until it is reset.
func TestFileWatcherOneRunAtATime(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	m := openSimWith(t, dir, t0, func(c *Config) { c.Files = watch.New(c.Store) })
	defer m.stop()
	m.define(DefineFile{File: "w.def", Text: "insert_task: w\ntype: callable\ncommand: true\nout_log_file: " + filepath.Join(dir, "w.out") +
		"\nerr_log_file: " + filepath.Join(dir, "w.err") + "\nwatch_file: " + dir + "/*.dat\nwatch_steady: 5s\nwatch_interval: 5s\n"})
	for _, n := range []string{"c.dat", "d.dat"} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	m.advance(t0.Add(time.Minute))
	rs := m.runs("w")
	if len(rs) != 2 || rs[1].Params[0].Value != filepath.Join(dir, "c.dat") || rs[0].Params[0].Value != filepath.Join(dir, "d.dat") {
		t.Fatalf("runs %+v; want c.dat's then d.dat's", rs)
	}
	m.submit(engine.Act{Task: "w", Action: job.ActFreeze})
	if err := os.WriteFile(filepath.Join(dir, "e.dat"), []byte("e"), 0o644); err != nil {
		t.Fatal(err)
	}
	m.advance(m.clock.Now().Add(time.Minute))
	if rs := m.runs("w"); len(rs) != 2 {
		t.Fatalf("a frozen task started: %+v", rs)
	}
	if why, _ := m.s.Watching("w"); !strings.Contains(why, "e.dat waiting: the task is frozen") {
		t.Errorf("watching: %q", why)
	}
	m.submit(engine.Act{Task: "w", Action: job.ActReset})
	m.advance(m.clock.Now().Add(time.Minute))
	if rs := m.runs("w"); len(rs) != 3 || rs[0].Params[0].Value != filepath.Join(dir, "e.dat") {
		t.Fatalf("after the reset: %+v", rs)
	}
}

// TestHandFile hands the scheduler a file version found elsewhere (a
// cluster's worker): a watching task starts with the file's path; a task
// without a watcher, or none, refuses it with ErrNotWatching.
func TestHandFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	m := openSimWith(t, dir, t0, func(c *Config) { c.Files = watch.New(c.Store) })
	defer m.stop()
	m.define(DefineFile{File: "load.def", Text: "insert_task: load\ntype: callable\ncommand: true\nout_log_file: /dev/null\nerr_log_file: /dev/null\nwatch_file: " +
		filepath.Join(dir, "elsewhere") + "/*.csv\n\ninsert_task: plain\ntype: callable\ncommand: true\nout_log_file: /dev/null\nerr_log_file: /dev/null\n"})
	ctx := context.Background()
	for _, task := range []string{"plain", "nosuch"} {
		if err := m.s.HandFile(ctx, task, "/in/a.csv"); !errors.Is(err, ErrNotWatching) {
			t.Errorf("%s: %v, want ErrNotWatching", task, err)
		}
	}
	if err := m.s.HandFile(ctx, "load", "/in/a.csv"); err != nil {
		t.Fatal(err)
	}
	m.advance(t0.Add(time.Minute))
	rs := m.runs("load")
	if len(rs) != 1 || rs[0].By != "watch:load" || len(rs[0].Params) != 1 || rs[0].Params[0] != (job.Var{Name: job.WatchParam, Value: "/in/a.csv"}) {
		t.Fatalf("runs: %+v", rs)
	}
}
