package gnomon_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/gnomon-sched/gnomon"
	"github.com/gnomon-sched/gnomon/internal/ostest"
)

// Files another local account put at log paths in a shared root: a FIFO
// (which held the launch, and the worker slot, until someone read it, so
// that an abort was recorded while the run stayed running), a file it made
// 0666 to read the task's output, a link. Each fails its run at launch,
// naming the field and the reason, and the one worker slot is free again
// for the next run.
func TestPlantedLogFilesFailTheLaunch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	other := ostest.NewUser(t)
	root := t.TempDir()
	s := startSQLite(t, gnomon.Config{DataDir: filepath.Join(root, "data"), LogRoots: []string{root}, Workers: 1})
	rec := listen(s)
	s.Start(ctx)
	fifo := filepath.Join(root, "fifo.out")
	if err := syscall.Mkfifo(fifo, 0o666); err != nil {
		t.Fatal(err)
	}
	planted := filepath.Join(root, "planted.out")
	os.WriteFile(planted, nil, 0o666)
	os.Chmod(planted, 0o666)
	if err := os.Chown(planted, other.UID, other.GID); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(root, "link.out")
	os.Symlink(filepath.Join(root, "elsewhere"), link)
	def := ""
	for _, name := range []string{"fifo", "planted", "link", "fine"} {
		def += fmt.Sprintf("insert_task: %[1]s\ntype: callable\ncommand: echo secret\nout_log_file: %[1]s.out\nerr_log_file: %[1]s.err\n\n", name)
	}
	if err := s.Apply(ctx, "t.def", def); err != nil {
		t.Fatal(err)
	}
	for name, why := range map[string]string{
		"fifo":    "out_log_file: " + fifo + " is a FIFO",
		"planted": fmt.Sprintf("out_log_file: %s belongs to %s (uid %d), not to ", planted, other.Name, other.UID),
		"link":    "out_log_file: " + link + " is a symbolic link",
	} {
		s.Send(ctx, name, gnomon.ActStart)
		e := rec.await(t, gnomon.EventFailed, name)
		if !strings.HasPrefix(e.Run.Message, why) {
			t.Errorf("%s: run message %q, want it to start with %q", name, e.Run.Message, why)
		}
	}
	if b, _ := os.ReadFile(planted); len(b) > 0 {
		t.Errorf("the planted file was written: %q", b)
	}
	if _, err := os.Lstat(filepath.Join(root, "elsewhere")); err == nil {
		t.Error("the link was followed")
	}
	s.Send(ctx, "fine", gnomon.ActStart)
	rec.await(t, gnomon.EventSucceeded, "fine")
}
