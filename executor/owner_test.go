package executor

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/gnomon-sched/gnomon/internal/ostest"
	"github.com/gnomon-sched/gnomon/job"
)

// traversable opens a test's temporary directory dir, and the one it
// is in, to every user.
func traversable(t *testing.T, dir string) {
	t.Helper()
	for _, d := range []string{dir, filepath.Dir(dir)} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// owned returns the uid that owns path.
func owned(t *testing.T, path string) int {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return int(fi.Sys().(*syscall.Stat_t).Uid)
}

func TestOwnerRunsAsUser(t *testing.T) {
	t.Parallel()
	u := ostest.NewUser(t)
	f := setup(t)
	s := f.spec(1, `id -u; id -g; echo "$USER $LOGNAME $HOME"`)
	s.Owner = u.Name
	f.x.Start(s)
	if e := f.wait(); e.Result != job.ResultNormal || e.Code != 0 {
		t.Fatalf("exit = %+v, err log %q", e, f.read("err.log"))
	}
	want := fmt.Sprintf("%d\n%d\n%s %s /nonexistent\n", u.UID, u.GID, u.Name, u.Name)
	if got := f.read("out.log"); got != want {
		t.Errorf("out.log = %q, want %q", got, want)
	}
	// The log files are the owner's, and its only.
	for _, name := range []string{"out.log", "err.log"} {
		p := filepath.Join(f.dir, name)
		if uid := owned(t, p); uid != u.UID {
			t.Errorf("%s belongs to uid %d, want %d", name, uid, u.UID)
		}
		if m := mode(t, p); m != 0o600 {
			t.Errorf("%s mode %v, want 0600", name, m)
		}
	}
	// With a group named, the command runs in it.
	grp := ostest.NewUser(t)
	s = f.spec(2, `id -g`)
	s.Owner = u.Name + ":" + grp.Name
	s.OutLog = filepath.Join(f.dir, "group.out")
	f.x.Start(s)
	if e := f.wait(); e.Result != job.ResultNormal || e.Code != 0 {
		t.Fatalf("exit = %+v, err log %q", e, f.read("err.log"))
	}
	if got := f.read("group.out"); got != strconv.Itoa(grp.GID)+"\n" {
		t.Errorf("group.out = %q, want gid %d", got, grp.GID)
	}
}

// A command defined with an owner cannot read the server's data
// directory: the escalation of a definer who runs `gnomon token create
// --direct --data DIR` (or reads the admin token) as the server's user.
func TestOwnerCannotReadDataDirectory(t *testing.T) {
	t.Parallel()
	u := ostest.NewUser(t)
	f := setup(t)
	// Only the data directory's own mode keeps the owner out.
	traversable(t, f.dir)
	data := filepath.Join(f.dir, "data")
	if err := os.Mkdir(data, 0o700); err != nil {
		t.Fatal(err)
	}
	token := filepath.Join(data, "admin.token")
	if err := os.WriteFile(token, []byte("gnomon_secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := f.spec(1, "cat "+token)
	s.Owner = u.Name
	f.x.Start(s)
	e := f.wait()
	if e.Code == 0 || strings.Contains(f.read("out.log"), "gnomon_secret") {
		t.Fatalf("the owner read the admin token: exit %+v, out %q", e, f.read("out.log"))
	}
	if got := f.read("err.log"); !strings.Contains(got, "Permission denied") {
		t.Errorf("err.log = %q, want a permission denied", got)
	}
}

func TestOwnerUnknown(t *testing.T) {
	t.Parallel()
	f := setup(t)
	s := f.spec(1, "echo ran")
	s.Owner = "no_such_user_here"
	f.x.Start(s)
	e := f.wait()
	if want := "owner no_such_user_here: no user no_such_user_here on this machine"; e.Result != job.ResultLaunch || !strings.HasPrefix(e.Message, want) {
		t.Errorf("exit = %+v, want a launch failure %q", e, want)
	}
	if strings.Contains(f.read("out.log"), "ran") {
		t.Error("the command ran")
	}
}

// envCanChange makes the test binary report CanChangeUser, CheckOwner
// of root and CheckOwner of the user the variable names, and exit (see
// TestMain): run as an unprivileged user, it must say it cannot change
// users, so an owner other than itself is refused, and its own is not.
const envCanChange = "EXECUTOR_TEST_CAN_CHANGE_USER"

func TestCanChangeUser(t *testing.T) {
	t.Parallel()
	if os.Geteuid() == 0 {
		if err := CanChangeUser(); err != nil {
			t.Errorf("as root: %v", err)
		}
	}
	u := ostest.NewUser(t)
	// A copy of the test binary the user may run.
	dir := t.TempDir()
	traversable(t, dir)
	bin := filepath.Join(dir, "executor.test")
	b, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), envCanChange+"="+u.Name)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(u.UID), Gid: uint32(u.GID)}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	want := fmt.Sprintf("this server runs as %s (uid %d) without CAP_SETUID and CAP_SETGID, so it cannot run commands as another user", u.Name, u.UID)
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], want) || !strings.HasPrefix(lines[1], "root: "+want) || lines[2] != "self: <nil>" {
		t.Errorf("as %s:\n%s\nwant CanChangeUser and CheckOwner(root) to say %q, and CheckOwner(%[1]s) nil", u.Name, out, want)
	}
}

// A log file another account made at the path is not written to: whoever
// made it could read what the run writes. Nor is a symbolic link followed,
// nor does a FIFO hold the launch.
func TestLaunchRefusesPlantedLogFiles(t *testing.T) {
	t.Parallel()
	other := ostest.NewUser(t)
	f := setup(t)
	planted := filepath.Join(f.dir, "planted.out")
	if err := os.WriteFile(planted, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	os.Chmod(planted, 0o666)
	if err := os.Chown(planted, other.UID, other.GID); err != nil {
		t.Fatal(err)
	}
	s := f.spec(1, "echo secret")
	s.OutLog = planted
	f.x.Start(s)
	e := f.wait()
	want := fmt.Sprintf("out_log_file: %s belongs to %s (uid %d), not to ", planted, other.Name, other.UID)
	if e.Result != job.ResultLaunch || !strings.HasPrefix(e.Message, want) {
		t.Errorf("exit = %+v, want a launch failure starting %q", e, want)
	}
	if got := f.read("planted.out"); got != "" {
		t.Errorf("the planted file was written: %q", got)
	}

	// A FIFO without a reader, and one with a reader.
	for i, reader := range []bool{false, true} {
		fifo := filepath.Join(f.dir, fmt.Sprintf("fifo%d.out", i))
		if err := syscall.Mkfifo(fifo, 0o666); err != nil {
			t.Fatal(err)
		}
		if reader {
			r, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
		}
		s := f.spec(int64(2+i), "echo secret")
		s.ErrLog = fifo
		f.x.Start(s)
		e := f.wait()
		if want := "err_log_file: " + fifo + " is a FIFO"; e.Result != job.ResultLaunch || !strings.HasPrefix(e.Message, want) {
			t.Errorf("reader %v: exit = %+v, want a launch failure starting %q", reader, e, want)
		}
	}

	// A FIFO where the log file's directory should be.
	dirFifo := filepath.Join(f.dir, "fifodir")
	if err := syscall.Mkfifo(dirFifo, 0o666); err != nil {
		t.Fatal(err)
	}
	s = f.spec(6, "echo secret")
	s.OutLog = filepath.Join(dirFifo, "x.out")
	f.x.Start(s)
	if e := f.wait(); e.Result != job.ResultLaunch || !strings.Contains(e.Message, "not a directory") {
		t.Errorf("exit = %+v, want a launch failure: not a directory", e)
	}

	// A FIFO as the profile.
	fifo := filepath.Join(f.dir, "profile.fifo")
	if err := syscall.Mkfifo(fifo, 0o666); err != nil {
		t.Fatal(err)
	}
	s = f.spec(4, "echo ran")
	s.Profile = fifo
	f.x.Start(s)
	if e := f.wait(); e.Result != job.ResultLaunch || e.Message != "profile: "+fifo+" is a FIFO, not a regular file" {
		t.Errorf("exit = %+v, want a launch failure naming the FIFO profile", e)
	}

	// A symbolic link, without log roots, to a file the server may write.
	target := filepath.Join(f.dir, "target")
	os.WriteFile(target, nil, 0o600)
	link := filepath.Join(f.dir, "link.out")
	os.Symlink(target, link)
	s = f.spec(5, "echo secret")
	s.OutLog = link
	f.x.Start(s)
	if e := f.wait(); e.Result != job.ResultLaunch || !strings.HasPrefix(e.Message, "out_log_file: "+link+" is a symbolic link") {
		t.Errorf("exit = %+v, want a launch failure naming the link", e)
	}
	if b, _ := os.ReadFile(target); len(b) != 0 {
		t.Errorf("the link's target was written: %q", b)
	}
}

// A run's owner owns the log files it writes: one the server's user made
// is refused for it, as a planted file is.
func TestOwnerRefusesServersLogFile(t *testing.T) {
	t.Parallel()
	u := ostest.NewUser(t)
	f := setup(t)
	os.WriteFile(filepath.Join(f.dir, "out.log"), []byte("root's\n"), 0o600)
	s := f.spec(1, "echo ran")
	s.Owner = u.Name
	f.x.Start(s)
	e := f.wait()
	if want := "out_log_file: " + filepath.Join(f.dir, "out.log") + " belongs to "; e.Result != job.ResultLaunch || !strings.HasPrefix(e.Message, want) ||
		!strings.Contains(e.Message, "not to "+u.Name) {
		t.Errorf("exit = %+v, want a launch failure starting %q", e, want)
	}
}
