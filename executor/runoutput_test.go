package executor

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gnomon-sched/gnomon/job"
)

// TestRunOutputSize: the size of a stream is what the run wrote so far, up
// to the end of the text, so that a reader polling a running run prints
// only what is new; the text of a longer output is its end.
func TestRunOutputSize(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out, errLog := filepath.Join(dir, "t.out"), filepath.Join(dir, "t.err")
	// An earlier run wrote "before\n"; this one began at byte 7.
	if err := os.WriteFile(out, []byte("before\nline1\nline2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	def := &job.Task{Name: "t", OutLog: out, ErrLog: errLog}
	var l *LogFiles
	running := &job.LogSpan{OutFrom: 7, OutTo: -1, ErrFrom: 0, ErrTo: -1}
	got := l.RunOutput(def, 1, running, 1<<10)
	if got[0].Text != "line1\nline2\n" || got[0].Size != 12 || got[0].More || got[1].Size != 0 || got[1].Problem != "" {
		t.Fatalf("while it runs: %+v", got)
	}
	// It writes more: the size grows by what it wrote.
	f, err := os.OpenFile(out, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("line3\n")
	f.Close()
	got = l.RunOutput(def, 1, running, 8)
	if got[0].Text != "2\nline3\n" || got[0].Size != 18 || !got[0].More {
		t.Fatalf("after it wrote more, the last 8 bytes: %+v", got[0])
	}
	// Ended: the size stops at the end of its range, whatever follows.
	ended := &job.LogSpan{OutFrom: 7, OutTo: 19, ErrFrom: 0, ErrTo: 0}
	if got = l.RunOutput(def, 1, ended, 1<<10); got[0].Text != "line1\nline2\n" || got[0].Size != 12 {
		t.Fatalf("ended: %+v", got[0])
	}
}
