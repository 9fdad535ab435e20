package gnomon_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon"
	"github.com/gnomon-sched/gnomon/internal/ostest"
)

// openTo opens a test's temporary directory dir, and the one it is in, to
// every user: only the modes of what the scheduler makes inside keep other
// users out.
func openTo(t *testing.T, dir string) {
	t.Helper()
	for _, d := range []string{dir, filepath.Dir(dir)} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// A task's owner is whom its command runs as, and the data directory is
// closed to it: a definer who may name only that owner cannot read the
// scheduler's files (its database, the admin token of a server) through a
// command.
func TestOwner(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	u := ostest.NewUser(t)
	dflt := ostest.NewUser(t)
	root := t.TempDir()
	openTo(t, root)
	dir := filepath.Join(root, "data")
	s := startSQLite(t, gnomon.Config{DataDir: dir, LogRoots: []string{root}, DefaultOwner: dflt.Name})
	rec := listen(s)
	s.Start(ctx)
	def := fmt.Sprintf(`insert_task: who
type: callable
command: id -u
out_log_file: who.out
err_log_file: who.err
owner: %[1]s

insert_task: steal
type: callable
command: cat %[2]s
out_log_file: steal.out
err_log_file: steal.err
owner: %[1]s

insert_task: plain
type: callable
command: id -u
out_log_file: plain.out
err_log_file: plain.err
`, u.Name, filepath.Join(dir, "gnomon.db"))
	if err := s.Apply(ctx, "t.def", def); err != nil {
		t.Fatal(err)
	}
	s.Send(ctx, "who", gnomon.ActStart)
	rec.await(t, gnomon.EventSucceeded, "who")
	if b, _ := os.ReadFile(filepath.Join(root, "who.out")); string(b) != fmt.Sprint(u.UID, "\n") {
		t.Errorf("who.out = %q, want uid %d", b, u.UID)
	}
	s.Send(ctx, "steal", gnomon.ActStart)
	rec.await(t, gnomon.EventFailed, "steal")
	if b, _ := os.ReadFile(filepath.Join(root, "steal.err")); !strings.Contains(string(b), "Permission denied") {
		t.Errorf("steal.err = %q, want a permission denied", b)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "steal.out")); len(b) > 0 {
		t.Errorf("the owner read the database: steal.out holds %d bytes", len(b))
	}
	// Without an owner, the default owner.
	s.Send(ctx, "plain", gnomon.ActStart)
	rec.await(t, gnomon.EventSucceeded, "plain")
	if b, _ := os.ReadFile(filepath.Join(root, "plain.out")); string(b) != fmt.Sprint(dflt.UID, "\n") {
		t.Errorf("plain.out = %q, want the default owner's uid %d", b, dflt.UID)
	}

	// An owner this machine does not know is refused at definition.
	err := s.Apply(ctx, "u.def", "insert_task: ghost\ntype: callable\ncommand: true\nout_log_file: g.out\nerr_log_file: g.err\nowner: no_such_user_here\n")
	if want := "u.def:6: insert_task ghost: owner: no user no_such_user_here on this machine"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Apply = %v, want %q", err, want)
	}
}

// A default owner the scheduler cannot run as keeps it from starting.
func TestDefaultOwnerUnknown(t *testing.T) {
	t.Parallel()
	_, err := gnomon.New(gnomon.Config{DataDir: t.TempDir(), DefaultOwner: "no_such_user_here"})
	if want := "default owner no_such_user_here: no user no_such_user_here on this machine"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("New = %v, want %q", err, want)
	}
}

// A timeperiod level's owner is whom its command runs as, and its node
// logs are created for it.
func TestTreeLevelOwner(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	u := ostest.NewUser(t)
	from := time.Date(2026, 3, 8, 1, 0, 0, 0, time.UTC)
	dir := t.TempDir()
	s := start(t, gnomon.Config{DataDir: filepath.Join(dir, "data"), SimulateFrom: from})
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	tree := `{"settings": {"startTimeperiod": "2026030800", "lagMinutes": 0},
	  "trees": [{"name": "hits", "levels": [{"process": "hits_hourly", "qualifier": "hourly", "command": "id -u", "owner": "` + u.Name + `"}]}]}`
	if err := s.Declare(ctx, "hits.json", tree); err != nil {
		t.Fatal(err)
	}
	if err := s.Advance(ctx, from.Add(30*time.Minute)); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "data", "logs", "hits_hourly", "2026030800.out")
	if b, err := os.ReadFile(p); err != nil || string(b) != fmt.Sprint(u.UID, "\n") {
		t.Errorf("%s: %q, %v; want uid %d", p, b, err, u.UID)
	}
	if fi, err := os.Stat(p); err != nil || int(fi.Sys().(*syscall.Stat_t).Uid) != u.UID {
		t.Errorf("%s is not the owner's: %v", p, err)
	}
	// An owner this machine does not know is refused when the file is
	// declared.
	bad := strings.Replace(strings.Replace(tree, u.Name, "no_such_user_here", 1), `"hits"`, `"other"`, 1)
	bad = strings.Replace(bad, "hits_hourly", "other_hourly", 1)
	if err := s.Declare(ctx, "other.json", bad); err == nil || !strings.Contains(err.Error(), "owner: no user no_such_user_here on this machine") {
		t.Errorf("Declare = %v, want the owner refused", err)
	}
}
