package executor

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/job"
)

// rotateSetup is a Local runner whose log files, in dir/logs, rotate at
// 100 bytes, two rotated files kept.
func rotateSetup(t *testing.T) (*Local, string, chan Exit) {
	t.Helper()
	dir := t.TempDir()
	logs := filepath.Join(dir, "logs")
	if err := os.Mkdir(logs, 0o700); err != nil {
		t.Fatal(err)
	}
	l, err := NewLocal(LocalConfig{Dir: filepath.Join(dir, "runs"), Grace: 300 * time.Millisecond,
		Logs: &LogFiles{Roots: []string{logs}, Rotate: Rotation{Size: 100, Keep: 2}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Wait)
	return l, logs, make(chan Exit, 16)
}

func waitExit(t *testing.T, exits chan Exit) Exit {
	t.Helper()
	select {
	case e := <-exits:
		return e
	case <-time.After(20 * time.Second):
		t.Fatal("no exit reported")
		return Exit{}
	}
}

// TestRotation runs a task whose runs write 63 bytes each into a log that
// rotates at 100: every run's output opens whole from the file it is in
// now, the current one or a rotated one, until it is rotated away, and
// the files never hold more than the size and one run.
func TestRotation(t *testing.T) {
	t.Parallel()
	l, logs, exits := rotateSetup(t)
	def := &job.Task{Name: "t", OutLog: "t.out", ErrLog: "t.err"}
	var spans []*job.LogSpan
	for id := int64(1); id <= 7; id++ {
		l.Start(job.Launch{RunID: id, Task: "t", Command: fmt.Sprintf("printf 'run %%02d %%055d\\n' %d 0", id), OutLog: "t.out", ErrLog: "t.err"},
			func(e Exit) { exits <- e })
		e := waitExit(t, exits)
		if e.Code != 0 || e.Log == nil || e.Log.OutFile == 0 {
			t.Fatalf("run %d: %+v, span %+v", id, e, e.Log)
		}
		spans = append(spans, e.Log)
		// Every run still kept opens whole.
		for i, span := range spans {
			out := l.cfg.Logs.RunOutput(def, int64(i+1), span, 1<<20)[0]
			want := fmt.Sprintf("run %02d %055d\n", i+1, 0)
			// Two runs a file: the run that finds two in it rotates it,
			// and two rotated files are kept.
			kept := i+1 > 2*((int(id)-1)/2)-4
			switch {
			case kept && (out.Text != want || out.Problem != ""):
				t.Errorf("after run %d, run %d's output = %q (%s), want %q", id, i+1, out.Text, out.Problem, want)
			case !kept && !strings.Contains(out.Problem, "rotated away"):
				t.Errorf("after run %d, run %d's output = %q (%s), want it rotated away", id, i+1, out.Text, out.Problem)
			}
		}
	}
	for _, name := range []string{"t.out", "t.out.1", "t.out.2"} {
		if fi, err := os.Stat(filepath.Join(logs, name)); err != nil || fi.Size() > 100+63 {
			t.Errorf("%s: %v, %v", name, fi, err)
		}
	}
	if _, err := os.Stat(filepath.Join(logs, "t.out.3")); err == nil {
		t.Error("a third rotated file is kept")
	}
}

// TestRotationSparesWriters: a file another run writes to is not rotated
// under it, and a run whose file another tool renames (logrotate's
// create) goes on writing there, where its output is found.
func TestRotationSparesWriters(t *testing.T) {
	t.Parallel()
	l, logs, exits := rotateSetup(t)
	def := &job.Task{Name: "t", OutLog: "t.out", ErrLog: "t.err"}
	release := filepath.Join(t.TempDir(), "release")
	if err := os.WriteFile(filepath.Join(logs, "t.out"), []byte(strings.Repeat("x", 150)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// Run 1 finds the file over its size: it is rotated, then written
	// until release appears.
	l.Start(job.Launch{RunID: 1, Task: "t", Command: "echo first; while [ ! -f " + release + " ]; do sleep 0.02; done; echo last",
		OutLog: "t.out", ErrLog: "t.err"}, func(e Exit) { exits <- e })
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if b, _ := os.ReadFile(filepath.Join(logs, "t.out")); string(b) == "first\n" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("run 1 never wrote")
		}
	}
	// Another tool renames the file run 1 writes to.
	if err := os.Rename(filepath.Join(logs, "t.out"), filepath.Join(logs, "t.out.1")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(logs, "t.out"), []byte(strings.Repeat("y", 150)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// Run 2 shares the file with run 1 (the same path): it is not
	// rotated while run 1 writes, though over its size.
	l.Start(job.Launch{RunID: 2, Task: "t", Command: "echo second", OutLog: "t.out", ErrLog: "t.err"}, func(e Exit) { exits <- e })
	e2 := waitExit(t, exits)
	if out := l.cfg.Logs.RunOutput(def, 2, e2.Log, 1<<20)[0]; out.Text != "second\n" {
		t.Errorf("run 2's output = %q (%s)", out.Text, out.Problem)
	}
	if b, _ := os.ReadFile(filepath.Join(logs, "t.out")); !strings.HasPrefix(string(b), "yyy") {
		t.Error("the file was rotated while run 1 wrote to it")
	}
	if err := os.WriteFile(release, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	e1 := waitExit(t, exits)
	if out := l.cfg.Logs.RunOutput(def, 1, e1.Log, 1<<20)[0]; out.Text != "first\nlast\n" {
		t.Errorf("run 1's output = %q (%s), want both its lines from the renamed file", out.Text, out.Problem)
	}
}

// simClock is a clock tests move by hand.
type simClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *simClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *simClock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// ageSetup is a Local runner on a simulated clock whose log files, in
// dir/logs, rotate as rot says.
func ageSetup(t *testing.T, rot Rotation) (*Local, *simClock, string, chan Exit) {
	t.Helper()
	dir := t.TempDir()
	logs := filepath.Join(dir, "logs")
	if err := os.Mkdir(logs, 0o700); err != nil {
		t.Fatal(err)
	}
	clock := &simClock{now: time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)}
	l, err := NewLocal(LocalConfig{Dir: filepath.Join(dir, "runs"), Grace: 300 * time.Millisecond, Clock: clock,
		Logs: &LogFiles{Roots: []string{logs}, Rotate: rot}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Wait)
	return l, clock, logs, make(chan Exit, 16)
}

// runEcho runs a command that prints line into t.out, and waits for it.
func runEcho(t *testing.T, l *Local, exits chan Exit, id int64, line string, own *job.LogRotation) {
	t.Helper()
	l.Start(job.Launch{RunID: id, Task: "t", Command: "echo " + line, OutLog: "t.out", ErrLog: "t.err", LogRotate: own},
		func(e Exit) { exits <- e })
	if e := waitExit(t, exits); e.Code != 0 {
		t.Fatalf("run %d: %+v", id, e)
	}
}

func readLog(t *testing.T, logs, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(logs, name))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(b)
}

// TestRotationAge: a file whose oldest content reached the age, on the
// runner's simulated clock, is rotated at the next run's start, and the
// rotated files beyond the kept count go.
func TestRotationAge(t *testing.T) {
	t.Parallel()
	l, clock, logs, exits := ageSetup(t, Rotation{Age: 7 * 24 * time.Hour, Keep: 2})
	runEcho(t, l, exits, 1, "one", nil)
	clock.advance(6 * 24 * time.Hour)
	runEcho(t, l, exits, 2, "two", nil)
	if got := readLog(t, logs, "t.out"); got != "one\ntwo\n" {
		t.Fatalf("t.out after 6 days = %q, want both runs: not rotated before its age", got)
	}
	clock.advance(24 * time.Hour)
	runEcho(t, l, exits, 3, "three", nil)
	if got, old := readLog(t, logs, "t.out"), readLog(t, logs, "t.out.1"); got != "three\n" || old != "one\ntwo\n" {
		t.Fatalf("after 7 days: t.out = %q, t.out.1 = %q", got, old)
	}
	// The new file's age counts from run 3.
	clock.advance(6 * 24 * time.Hour)
	runEcho(t, l, exits, 4, "four", nil)
	if got := readLog(t, logs, "t.out"); got != "three\nfour\n" {
		t.Fatalf("t.out = %q, want runs 3 and 4", got)
	}
	for id, w := range []string{"five", "six", "seven"} {
		clock.advance(8 * 24 * time.Hour)
		runEcho(t, l, exits, int64(5+id), w, nil)
	}
	if got, old, older := readLog(t, logs, "t.out"), readLog(t, logs, "t.out.1"), readLog(t, logs, "t.out.2"); got != "seven\n" || old != "six\n" || older != "five\n" {
		t.Errorf("t.out = %q, .1 = %q, .2 = %q", got, old, older)
	}
	if _, err := os.Stat(filepath.Join(logs, "t.out.3")); err == nil {
		t.Error("a third rotated file is kept")
	}
}

// TestRotationOwn: a task's own rotation replaces the server's, a trigger
// at a time: its size where the server has none, Off where it has one,
// and its own count of files kept, rotated files beyond which go.
func TestRotationOwn(t *testing.T) {
	t.Parallel()
	t.Run("size", func(t *testing.T) {
		t.Parallel()
		l, _, logs, exits := ageSetup(t, Rotation{})
		runEcho(t, l, exits, 1, "one", nil)
		runEcho(t, l, exits, 2, "two", nil)
		if got := readLog(t, logs, "t.out"); got != "one\ntwo\n" {
			t.Fatalf("t.out = %q: rotated without a rotation", got)
		}
		runEcho(t, l, exits, 3, "three", &job.LogRotation{Size: 4})
		if got, old := readLog(t, logs, "t.out"), readLog(t, logs, "t.out.1"); got != "three\n" || old != "one\ntwo\n" {
			t.Fatalf("t.out = %q, t.out.1 = %q", got, old)
		}
	})
	t.Run("off", func(t *testing.T) {
		t.Parallel()
		l, clock, logs, exits := ageSetup(t, Rotation{Size: 4, Age: time.Hour})
		off := &job.LogRotation{Size: job.Off, Age: job.Off}
		runEcho(t, l, exits, 1, "one", off)
		clock.advance(2 * time.Hour)
		runEcho(t, l, exits, 2, "two", off)
		if got := readLog(t, logs, "t.out"); got != "one\ntwo\n" {
			t.Fatalf("t.out = %q: rotated though the task turned rotation off", got)
		}
		runEcho(t, l, exits, 3, "three", &job.LogRotation{Size: job.Off})
		if got := readLog(t, logs, "t.out"); got != "three\n" {
			t.Fatalf("t.out = %q: the server's age no longer rotates", got)
		}
	})
	t.Run("keep", func(t *testing.T) {
		t.Parallel()
		l, _, logs, exits := ageSetup(t, Rotation{Size: 1, Keep: 4})
		for id := int64(1); id <= 5; id++ {
			runEcho(t, l, exits, id, fmt.Sprint(id), nil)
		}
		for _, n := range []string{"t.out.1", "t.out.2", "t.out.3", "t.out.4"} {
			if _, err := os.Stat(filepath.Join(logs, n)); err != nil {
				t.Fatal(err)
			}
		}
		runEcho(t, l, exits, 6, "6", &job.LogRotation{Keep: 1})
		if got, old := readLog(t, logs, "t.out"), readLog(t, logs, "t.out.1"); got != "6\n" || old != "5\n" {
			t.Errorf("t.out = %q, t.out.1 = %q", got, old)
		}
		for _, n := range []string{"t.out.2", "t.out.3", "t.out.4"} {
			if _, err := os.Stat(filepath.Join(logs, n)); err == nil {
				t.Errorf("%s kept beyond log_keep 1", n)
			}
		}
	})
}

// TestRotationDue: a file the runner did not make is as old as its birth
// time says, else as the last write to PATH.1.
func TestRotationDue(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "t.out")
	if err := os.WriteFile(p, []byte("x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ls, err := statLog(p)
	if err != nil {
		t.Fatal(err)
	}
	r := Rotation{Age: 24 * time.Hour}
	if !ls.born.IsZero() {
		if r.due(p, ls, time.Time{}, ls.born.Add(23*time.Hour)) || !r.due(p, ls, time.Time{}, ls.born.Add(24*time.Hour)) {
			t.Errorf("by birth time %v: due before a day, or not after it", ls.born)
		}
	}
	ls.born = time.Time{}
	if r.due(p, ls, time.Time{}, time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)) {
		t.Error("due without a birth time nor a rotated file")
	}
	written := time.Date(2020, 5, 1, 0, 0, 0, 0, time.UTC)
	if err := os.WriteFile(p+".1", []byte("old\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p+".1", written, written); err != nil {
		t.Fatal(err)
	}
	if r.due(p, ls, time.Time{}, written.Add(time.Hour)) || !r.due(p, ls, time.Time{}, written.Add(25*time.Hour)) {
		t.Error("by the last write to t.out.1: due before a day, or not after it")
	}
	begun := written.Add(48 * time.Hour)
	if r.due(p, ls, begun, begun.Add(time.Hour)) {
		t.Error("due by t.out.1 though the runner made the file an hour ago")
	}
	ls.size = 0
	if r.due(p, ls, begun, begun.Add(48*time.Hour)) {
		t.Error("an empty file is due")
	}
}
