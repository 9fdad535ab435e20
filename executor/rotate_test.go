package executor

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
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
