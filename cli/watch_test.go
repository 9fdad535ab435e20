package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A task that watches files, on a server on the real clock: gnomon why
// says what it waits for, a file dropped in the directory starts it once
// settled, with the file in GNOMON_WATCH_FILE, and export writes the
// watcher back.
func TestFileWatcherFromTheCommandLine(t *testing.T) {
	t.Parallel()
	f := setup(t)
	in := filepath.Join(f.dir, "in")
	if err := os.Mkdir(in, 0o755); err != nil {
		t.Fatal(err)
	}
	f.mustRun("gnomon", "def", "-f", f.file("w.def", "insert_task: load\ntype: callable\ncommand: echo \"got $GNOMON_WATCH_FILE\"\n"+
		"out_log_file: @DIR@/load.out\nerr_log_file: @DIR@/load.err\nwatch_file: @DIR@/in/*.csv\nwatch_min_size: 1K\nwatch_steady: 1s\nwatch_interval: 1h\n"))
	f.waitFor("why to tell the watcher", func() bool {
		return strings.Contains(f.mustRun("gnomon", "why", "-j", "load"), "waits for a file matching "+in+"/*.csv")
	})
	if err := os.WriteFile(filepath.Join(in, "small.csv"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	f.waitFor("why to tell the small file", func() bool {
		return strings.Contains(f.mustRun("gnomon", "why", "-j", "load"), "small.csv small")
	})
	if err := os.WriteFile(filepath.Join(in, "a.csv"), []byte(strings.Repeat("x", 2048)), 0o644); err != nil {
		t.Fatal(err)
	}
	f.waitStatus("load", "success")
	out, err := os.ReadFile(filepath.Join(f.dir, "load.out"))
	if err != nil || strings.TrimSpace(string(out)) != "got "+filepath.Join(in, "a.csv") {
		t.Errorf("the run's output %q, %v", out, err)
	}
	if runs := f.mustRun("gnomon", "runs", "-j", "load", "-o", "json"); !strings.Contains(runs, `"by": "watch:load"`) || !strings.Contains(runs, "GNOMON_WATCH_FILE") {
		t.Errorf("runs:\n%s", runs)
	}
	if export := f.mustRun("gnomon", "export"); !strings.Contains(export, "watch_file: "+in+"/*.csv\nwatch_min_size: 1K\nwatch_steady: 1s\nwatch_interval: 1h\n") {
		t.Errorf("export:\n%s", export)
	}
	_, errs, code := f.run("gnomon", "def", "-f", f.file("bad.def", "insert_task: bad\ntype: callable\ncommand: x\nout_log_file: /o\nerr_log_file: /e\nwatch_file: in/*.csv\n"))
	if code == 0 || !strings.Contains(errs, `bad.def:6: insert_task bad: watch_file: "in/*.csv" is not an absolute path`) {
		t.Errorf("a relative watch_file: %d %s", code, errs)
	}
}
