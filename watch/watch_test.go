package watch

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/gnomon-sched/gnomon/job"
)

var t0 = time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)

// memory is a Memory in a map.
type memory struct {
	mu sync.Mutex
	m  map[string]int64
}

func (m *memory) Cursor(_ context.Context, name string) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.m[name], nil
}

func (m *memory) SetCursors(_ context.Context, values map[string]int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k, v := range values {
		if v == 0 {
			delete(m.m, k)
		} else {
			m.m[k] = v
		}
	}
	return nil
}

// fixture is a directory, a watcher over it, and the files handed over.
type fixture struct {
	t    *testing.T
	dir  string
	mem  *memory
	w    *Watcher
	ts   []*job.Task
	now  time.Time
	got  []string
	fail error // the sink's answer, nil to take
}

func setup(t *testing.T, spec job.Watch) *fixture {
	t.Helper()
	dir := t.TempDir()
	spec.File = filepath.Join(dir, spec.File)
	f := &fixture{t: t, dir: dir, mem: &memory{m: map[string]int64{}}, now: t0}
	f.w = New(f.mem)
	task := &job.Task{Name: "w", Type: job.Callable}
	*task.EditWatch() = spec
	f.ts = []*job.Task{task}
	return f
}

// poll polls at the fixture's instant, and returns what was handed over.
func (f *fixture) poll() []string {
	f.t.Helper()
	f.got = nil
	_, err := f.w.Poll(context.Background(), f.now, f.ts, func(_ context.Context, tg *job.Task, p string) error {
		if f.fail != nil {
			return f.fail
		}
		f.got = append(f.got, filepath.Base(p))
		return nil
	})
	if err != nil && f.fail == nil {
		f.t.Fatal(err)
	}
	return f.got
}

// at moves the fixture's clock by d and polls.
func (f *fixture) at(d time.Duration) []string {
	f.now = f.now.Add(d)
	return f.poll()
}

func (f *fixture) write(name, data string, flag int) {
	f.t.Helper()
	fh, err := os.OpenFile(filepath.Join(f.dir, name), flag|os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		f.t.Fatal(err)
	}
	if _, err := fh.WriteString(data); err != nil {
		f.t.Fatal(err)
	}
	if err := fh.Close(); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) appendTo(name, data string) { f.write(name, data, os.O_APPEND) }

func TestSettlesOnceAfterSteadyWindow(t *testing.T) {
	t.Parallel()
	f := setup(t, job.Watch{File: "*.csv", Steady: job.Duration(30 * time.Second), Interval: job.Duration(10 * time.Second)})
	f.appendTo("a.csv", "1,2\n")
	if got := f.poll(); len(got) != 0 {
		t.Fatalf("first sight: %v", got)
	}
	// It grows in pieces: every change restarts the window.
	for i := range 4 {
		f.appendTo("a.csv", strings.Repeat("x", i+1)+"\n")
		if got := f.at(20 * time.Second); len(got) != 0 {
			t.Fatalf("growing, piece %d: %v", i, got)
		}
	}
	if st, _ := f.w.Status("w"); !strings.Contains(st.String(), "(seen: a.csv growing)") {
		t.Errorf("status %q", st)
	}
	if got := f.at(20 * time.Second); len(got) != 0 {
		t.Fatalf("20s unchanged, before the window: %v", got)
	}
	if got := f.at(10 * time.Second); !slices.Equal(got, []string{"a.csv"}) {
		t.Fatalf("30s unchanged: %v, want a.csv", got)
	}
	for range 3 {
		if got := f.at(time.Minute); len(got) != 0 {
			t.Fatalf("handed over again: %v", got)
		}
	}
	if f.w.Posted() != 1 {
		t.Errorf("posted %d", f.w.Posted())
	}
	// Grown again: a new version.
	f.appendTo("a.csv", "more\n")
	f.at(10 * time.Second)
	if got := f.at(30 * time.Second); !slices.Equal(got, []string{"a.csv"}) {
		t.Fatalf("grown again: %v, want a.csv", got)
	}
}

func TestNextPollIsTheEarliestDue(t *testing.T) {
	t.Parallel()
	f := setup(t, job.Watch{File: "*", Steady: job.Duration(5 * time.Second), Interval: job.Duration(time.Minute)})
	next, err := f.w.Poll(context.Background(), f.now, f.ts, func(context.Context, *job.Task, string) error { return nil })
	if err != nil || !next.Equal(t0.Add(time.Minute)) {
		t.Fatalf("nothing there: next %v, %v", next, err)
	}
	f.appendTo("a", "x")
	next, _ = f.w.Poll(context.Background(), next, f.ts, func(context.Context, *job.Task, string) error { return nil })
	if want := t0.Add(time.Minute + 5*time.Second); !next.Equal(want) {
		t.Fatalf("a file settling: next %v, want %v (its window's end)", next, want)
	}
}

func TestMinSize(t *testing.T) {
	t.Parallel()
	f := setup(t, job.Watch{File: "*.dat", MinSize: 10, Steady: job.Duration(time.Second), Interval: job.Duration(time.Second)})
	f.appendTo("a.dat", "12345")
	f.poll()
	if got := f.at(time.Minute); len(got) != 0 {
		t.Fatalf("5 bytes of 10: %v", got)
	}
	if st, _ := f.w.Status("w"); !strings.Contains(st.String(), "a.dat small") {
		t.Errorf("status %q", st)
	}
	f.appendTo("a.dat", "67890")
	f.at(time.Second)
	if got := f.at(time.Second); !slices.Equal(got, []string{"a.dat"}) {
		t.Fatalf("10 bytes: %v", got)
	}
}

func TestRenamedInAndReplaced(t *testing.T) {
	t.Parallel()
	f := setup(t, job.Watch{File: "in/*.csv", Steady: job.Duration(time.Second), Interval: job.Duration(time.Second)})
	if err := os.Mkdir(filepath.Join(f.dir, "in"), 0o755); err != nil {
		t.Fatal(err)
	}
	f.appendTo("tmp.part", "whole\n")
	f.poll()
	if err := os.Rename(filepath.Join(f.dir, "tmp.part"), filepath.Join(f.dir, "in", "a.csv")); err != nil {
		t.Fatal(err)
	}
	if got := f.at(time.Second); len(got) != 0 {
		t.Fatalf("renamed in, first sight: %v", got)
	}
	if got := f.at(time.Second); !slices.Equal(got, []string{"a.csv"}) {
		t.Fatalf("renamed in: %v", got)
	}
	// Replaced by another file of the same size: a new inode.
	f.appendTo("tmp.part", "whole\n")
	if err := os.Rename(filepath.Join(f.dir, "tmp.part"), filepath.Join(f.dir, "in", "a.csv")); err != nil {
		t.Fatal(err)
	}
	f.at(time.Second)
	if got := f.at(time.Second); !slices.Equal(got, []string{"a.csv"}) {
		t.Fatalf("replaced: %v", got)
	}
}

func TestGlobMatchingSeveral(t *testing.T) {
	t.Parallel()
	f := setup(t, job.Watch{File: "*.csv", Steady: job.Duration(10 * time.Second), Interval: job.Duration(5 * time.Second)})
	f.appendTo("a.csv", "a")
	f.appendTo("b.csv", "b")
	f.appendTo("c.txt", "c")
	if err := os.Mkdir(filepath.Join(f.dir, "d.csv"), 0o755); err != nil {
		t.Fatal(err)
	}
	f.poll()
	f.appendTo("b.csv", "b") // still growing
	if got := f.at(5 * time.Second); len(got) != 0 {
		t.Fatal(got)
	}
	if got := f.at(5 * time.Second); !slices.Equal(got, []string{"a.csv"}) {
		t.Fatalf("a settled, b growing: %v", got)
	}
	if got := f.at(5 * time.Second); !slices.Equal(got, []string{"b.csv"}) {
		t.Fatalf("b settled: %v", got)
	}
}

func TestRestartRemembers(t *testing.T) {
	t.Parallel()
	f := setup(t, job.Watch{File: "*", Steady: job.Duration(time.Second), Interval: job.Duration(time.Second)})
	f.appendTo("a", "a")
	f.poll()
	if got := f.at(time.Second); !slices.Equal(got, []string{"a"}) {
		t.Fatal(got)
	}
	// Restarted: a new Watcher on the same memory. b landed meanwhile.
	f.w = New(f.mem)
	f.appendTo("b", "b")
	f.at(time.Hour)
	if got := f.at(time.Second); !slices.Equal(got, []string{"b"}) {
		t.Fatalf("after a restart: %v, want b alone", got)
	}
	// A file gone is forgotten; one back with the same content and a
	// new inode is new.
	if err := os.Remove(filepath.Join(f.dir, "a")); err != nil {
		t.Fatal(err)
	}
	f.at(time.Second)
	if v, _ := f.mem.Cursor(context.Background(), Key("w", filepath.Join(f.dir, "a"))); v != 0 {
		t.Errorf("a gone, still remembered: %d", v)
	}
}

func TestSinkRefusesThenTakes(t *testing.T) {
	t.Parallel()
	f := setup(t, job.Watch{File: "*", Steady: job.Duration(time.Second), Interval: job.Duration(time.Second)})
	f.appendTo("a", "a")
	f.poll()
	f.fail = errors.New("event start is not effective on active task")
	f.at(time.Second)
	if st, _ := f.w.Status("w"); !strings.Contains(st.String(), "a waiting: event start is not effective") {
		t.Errorf("status %q", st)
	}
	f.fail = nil
	if got := f.at(10 * time.Second); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("taken at the next poll: %v", got)
	}
}

func TestTargetsDropped(t *testing.T) {
	t.Parallel()
	f := setup(t, job.Watch{File: "*", Steady: job.Duration(time.Second), Interval: job.Duration(time.Second)})
	f.appendTo("a", "a")
	f.poll()
	f.at(time.Second)
	// Changed: what was handed over stays so.
	changed := *f.ts[0]
	changed.Extra = &job.Extra{Watch: &job.Watch{File: f.ts[0].Extras().Watch.File, Steady: job.Duration(time.Second), Interval: job.Duration(time.Minute)}}
	f.ts = []*job.Task{&changed}
	if got := f.at(time.Second); len(got) != 0 {
		t.Fatalf("changed definition: %v", got)
	}
	f.ts = nil
	if next := f.at(time.Second); next != nil {
		t.Fatal(next)
	}
	if _, ok := f.w.Status("w"); ok {
		t.Error("a dropped target has a status")
	}
	if len(f.mem.m) != 0 {
		t.Errorf("memory of a dropped target: %v", f.mem.m)
	}
}

func TestTargets(t *testing.T) {
	t.Parallel()
	a := &job.Task{Name: "b", Type: job.Callable}
	a.EditWatch().File = "/x/*"
	c := &job.Task{Name: "a", Type: job.Configuration}
	c.EditWatch().File = "/y/*"
	ts := targets([]*job.Task{a, c, {Name: "n", Type: job.Callable}})
	if len(ts) != 2 || ts[0].task.Name != "a" || ts[1].task.Name != "b" || By("b") != "watch:b" {
		t.Fatalf("%+v", ts)
	}
}

// poller is the scheduler's port, as scheduler.FileWatcher declares it.
type poller interface {
	Poll(ctx context.Context, now time.Time, tasks []*job.Task, found func(ctx context.Context, t *job.Task, path string) error) (time.Time, error)
	Waiting(task string) (string, bool)
	Posted() int64
}

var _ poller = (*Watcher)(nil)

// A Memory name is UTF-8 text without NUL whatever the path holds, and
// tells tasks and paths apart.
func TestKeyIsText(t *testing.T) {
	a, b := Key("load", "/in/\xff\xfe.csv"), Key("load", "/in/b.csv")
	for _, k := range []string{a, b} {
		if !utf8.ValidString(k) || strings.ContainsRune(k, 0) || !strings.HasPrefix(k, "watch:load:") {
			t.Errorf("Key = %q", k)
		}
	}
	if a == b || Key("loa", "d:/in/b.csv") == b {
		t.Errorf("keys collide: %q, %q", a, b)
	}
}
