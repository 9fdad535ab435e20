package executor

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gnomon-sched/gnomon/job"
)

func TestResolve(t *testing.T) {
	t.Parallel()
	const tmp, data = "/tmp", "/tmp/gnomon-data"
	l := &LogFiles{Roots: []string{data + "/logs", tmp}, Private: []string{data, data + "/tls"},
		Own: []string{"/srv/db/gnomon.db", "/srv/db/gnomon.db-wal"}}
	for _, c := range []struct {
		path, want, err string
	}{
		{path: "a.out", want: data + "/logs/a.out"},
		{path: "nightly/a.out", want: data + "/logs/nightly/a.out"},
		{path: "./a/../b.out", want: data + "/logs/b.out"},
		{path: "../../x", err: "../../x leads out of the log root /tmp/gnomon-data/logs, which relative paths are taken from (log roots: /tmp/gnomon-data/logs, /tmp)"},
		{path: "../gnomon.db", err: "leads out of the log root"},
		{path: "/tmp/job.out", want: "/tmp/job.out"},
		{path: "/tmp/a/../job.out", want: "/tmp/job.out"},
		{path: "/tmp/../etc/passwd", err: "/tmp/../etc/passwd is outside the log roots (/tmp/gnomon-data/logs, /tmp)"},
		{path: "/var/log/x.out", err: "/var/log/x.out is outside the log roots (/tmp/gnomon-data/logs, /tmp)"},
		{path: "/tmp", err: "is outside the log roots"},
		{path: data + "/logs/site/2026112403.out", want: data + "/logs/site/2026112403.out"},
		{path: data + "/gnomon.db", err: "/tmp/gnomon-data/gnomon.db is in the gnomon server's directory /tmp/gnomon-data (log roots:"},
		{path: data + "/gnomon.db-wal", err: "in the gnomon server's directory"},
		{path: data + "/audit.log", err: "in the gnomon server's directory"},
		{path: data + "/runs/7.lock", err: "in the gnomon server's directory"},
		{path: data + "/tls/key.pem", err: "in the gnomon server's directory"},
		{path: data + "/logs/../admin.token", err: "in the gnomon server's directory"},
		{path: "/dev/null", want: "/dev/null"},
		{path: "", err: "no file named"},
	} {
		got, err := l.Resolve(c.path)
		switch {
		case c.err == "" && (err != nil || got != c.want):
			t.Errorf("Resolve(%q) = %q, %v; want %q", c.path, got, err, c.want)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("Resolve(%q) = %q, %v; want an error with %q", c.path, got, err, c.err)
		}
	}
	// A database outside the roots is refused as outside; inside one, as
	// the server's.
	l.Roots = append(l.Roots, "/srv")
	if _, err := l.Resolve("/srv/db/gnomon.db-wal"); err == nil || !strings.Contains(err.Error(), "is a file of the gnomon server") {
		t.Errorf("the database's WAL: %v", err)
	}
	// Unconfined, a path is taken as it is.
	var none *LogFiles
	if got, err := none.Resolve("rel/a.out"); err != nil || got != "rel/a.out" {
		t.Errorf("unconfined: %q, %v", got, err)
	}
}

// logFixture is a root inside the temporary directory, a data directory
// inside that root, and a directory outside the root.
type logFixture struct {
	root, data, outside string
	l                   *LogFiles
}

func logSetup(t *testing.T) *logFixture {
	t.Helper()
	base := t.TempDir()
	f := &logFixture{root: filepath.Join(base, "root"), outside: filepath.Join(base, "outside")}
	f.data = filepath.Join(f.root, "data")
	for _, d := range []string{filepath.Join(f.data, "logs"), f.outside} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	db := filepath.Join(f.data, "gnomon.db")
	if err := os.WriteFile(db, []byte("SQLite format 3\x00"), 0o600); err != nil {
		t.Fatal(err)
	}
	f.l = &LogFiles{Roots: []string{filepath.Join(f.data, "logs"), f.root}, Private: []string{f.data}, Own: []string{db}}
	return f
}

func mode(t *testing.T, path string) os.FileMode {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

// The test binary runs under umask 022 (TestMain): what Open creates is
// still its owner's only.
func TestOpenCreatesPrivateFiles(t *testing.T) {
	t.Parallel()
	f := logSetup(t)
	fh, err := f.l.Open("nightly/deep/a.out")
	if err != nil {
		t.Fatal(err)
	}
	fh.WriteString("hello\n")
	fh.Close()
	p := filepath.Join(f.data, "logs", "nightly", "deep", "a.out")
	if b, _ := os.ReadFile(p); string(b) != "hello\n" {
		t.Errorf("%s holds %q", p, b)
	}
	if m := mode(t, p); m != 0o600 {
		t.Errorf("log file mode %v, want 0600", m)
	}
	for _, d := range []string{filepath.Dir(p), filepath.Dir(filepath.Dir(p))} {
		if m := mode(t, d); m != 0o700 {
			t.Errorf("%s mode %v, want 0700", d, m)
		}
	}
	// Unconfined, a file is still created 0600.
	var none *LogFiles
	q := filepath.Join(f.outside, "plain.out")
	if fh, err := none.Open(q); err != nil {
		t.Fatal(err)
	} else {
		fh.Close()
	}
	if m := mode(t, q); m != 0o600 {
		t.Errorf("unconfined log file mode %v, want 0600", m)
	}
}

func TestOpenRefusesLinksOut(t *testing.T) {
	t.Parallel()
	f := logSetup(t)
	logs := filepath.Join(f.data, "logs")
	// A link to a file outside the root, and one to a directory outside
	// it, made after the path was checked.
	os.Symlink(filepath.Join(f.outside, "x.out"), filepath.Join(logs, "link.out"))
	os.Symlink(f.outside, filepath.Join(logs, "dir"))
	for _, p := range []string{"dir/y.out", "dir/sub/z.out"} {
		if _, err := f.l.Resolve(p); err != nil {
			t.Fatalf("Resolve(%s): %v", p, err)
		}
		fh, err := f.l.Open(p)
		if err == nil {
			fh.Close()
			t.Errorf("Open(%s) followed a link out of its root", p)
			continue
		}
		if want := filepath.Join(logs, p) + ", in the log root " + logs + ": "; !strings.HasPrefix(err.Error(), want) {
			t.Errorf("Open(%s): %v; want it to start with %q", p, err, want)
		}
	}
	// A link as the file itself is not followed, wherever it leads: out
	// of the root, or inside it.
	os.Symlink("real.out", filepath.Join(logs, "alias.out"))
	for _, p := range []string{"link.out", "alias.out"} {
		fh, err := f.l.Open(p)
		if err == nil {
			fh.Close()
			t.Errorf("Open(%s) followed a link", p)
			continue
		}
		if want := filepath.Join(logs, p) + " is a symbolic link: a log file is opened without following links"; !strings.HasPrefix(err.Error(), want) {
			t.Errorf("Open(%s): %v; want it to start with %q", p, err, want)
		}
	}
	if ents, _ := os.ReadDir(f.outside); len(ents) != 0 {
		t.Errorf("files written outside the root: %v", ents)
	}
	if _, err := os.Lstat(filepath.Join(logs, "real.out")); err == nil {
		t.Error("the link inside the root was followed")
	}
	// A link to a directory that stays inside the root is followed.
	os.Mkdir(filepath.Join(logs, "real"), 0o700)
	os.Symlink("real", filepath.Join(logs, "alias"))
	fh, err := f.l.Open("alias/x.out")
	if err != nil {
		t.Fatal(err)
	}
	fh.Close()
	if _, err := os.Stat(filepath.Join(logs, "real", "x.out")); err != nil {
		t.Error(err)
	}
}

func TestOpenRefusesServerFiles(t *testing.T) {
	t.Parallel()
	f := logSetup(t)
	db := filepath.Join(f.data, "gnomon.db")
	audit := filepath.Join(f.data, "audit.log")
	os.WriteFile(audit, nil, 0o600)
	// The data directory lies inside the root f.root: links to its files
	// from there stay inside the root, and are refused as the server's.
	// (os.Root follows no absolute link, nor one out of the root.)
	os.Symlink(filepath.Join("data", "gnomon.db"), filepath.Join(f.root, "db.out"))
	os.Symlink(db, filepath.Join(f.root, "abs.out"))
	os.Symlink(filepath.Join("..", "gnomon.db"), filepath.Join(f.data, "logs", "up.out"))
	os.Link(audit, filepath.Join(f.root, "hard.out"))
	for p, why := range map[string]string{
		filepath.Join(f.root, "db.out"):   " is a symbolic link",
		filepath.Join(f.root, "hard.out"): " has 2 names (hard links)",
		filepath.Join(f.root, "abs.out"):  " is a symbolic link",
		"up.out":                          " is a symbolic link",
	} {
		fh, err := f.l.Open(p)
		if err == nil {
			fh.Close()
			t.Errorf("Open(%s) opened the server's file", p)
			continue
		}
		if !strings.Contains(err.Error(), why) {
			t.Errorf("Open(%s): %v; want %q", p, err, why)
		}
	}
	if b, _ := os.ReadFile(db); string(b) != "SQLite format 3\x00" {
		t.Errorf("the database was written to: %q", b)
	}
}

func TestLaunchRefusesLinkOut(t *testing.T) {
	t.Parallel()
	f := setup(t)
	lf := logSetup(t)
	logs := filepath.Join(lf.data, "logs")
	os.Symlink(filepath.Join(lf.outside, "x.out"), filepath.Join(logs, "link.out"))
	spec := f.spec(5, "echo written")
	spec.OutLog, spec.ErrLog, spec.Logs = "ok.out", "link.out", lf.l
	f.x.Start(spec)
	e := f.wait()
	want := "err_log_file: " + filepath.Join(logs, "link.out") + " is a symbolic link: "
	if e.Result != job.ResultLaunch || !strings.HasPrefix(e.Message, want) {
		t.Errorf("exit = %+v; want a launch failure starting %q", e, want)
	}
	if ents, _ := os.ReadDir(lf.outside); len(ents) != 0 {
		t.Errorf("files written outside the root: %v", ents)
	}

	// The server's database, through a hard link inside the root.
	os.Link(filepath.Join(lf.data, "gnomon.db"), filepath.Join(lf.root, "db.out"))
	spec = f.spec(6, "echo written")
	spec.OutLog, spec.ErrLog, spec.Logs = filepath.Join(lf.root, "db.out"), "ok.out", lf.l
	f.x.Start(spec)
	e = f.wait()
	want = "out_log_file: " + filepath.Join(lf.root, "db.out") + " has 2 names (hard links): "
	if e.Result != job.ResultLaunch || !strings.HasPrefix(e.Message, want) {
		t.Errorf("exit = %+v; want a launch failure %q", e, want)
	}

	// A run whose files are allowed writes them, 0600.
	spec = f.spec(7, "echo written")
	spec.OutLog, spec.ErrLog, spec.Logs = "run/ok.out", "run/ok.err", lf.l
	f.x.Start(spec)
	if e = f.wait(); e.Result != job.ResultNormal || e.Code != 0 {
		t.Fatalf("exit = %+v", e)
	}
	p := filepath.Join(logs, "run", "ok.out")
	if b, _ := os.ReadFile(p); string(b) != "written\n" {
		t.Errorf("%s holds %q", p, b)
	}
	if m := mode(t, p); m != 0o600 {
		t.Errorf("log file mode %v, want 0600", m)
	}
}

func TestFunctionLogFiles(t *testing.T) {
	t.Parallel()
	lf := logSetup(t)
	exits := make(chan Exit, 2)
	fx := NewFuncs(func(e Exit) { exits <- e }, nil)
	fx.logs = lf.l
	os.Symlink(filepath.Join(lf.outside, "x.out"), filepath.Join(lf.data, "logs", "link.out"))
	fn := func(_ context.Context, c *Call) error {
		_, err := c.Stdout.Write([]byte("from the function\n"))
		return err
	}
	fx.Start(Spec{RunID: 1, Task: "f", OutLog: "fn.out"}, "fn", fn)
	fx.Start(Spec{RunID: 2, Task: "f", OutLog: "fn.out", ErrLog: "link.out"}, "fn", fn)
	fx.Wait()
	got := map[int64]Exit{}
	for range 2 {
		e := <-exits
		got[e.RunID] = e
	}
	if e := got[1]; e.Result != job.ResultNormal || e.Code != 0 {
		t.Errorf("run 1: %+v", e)
	}
	if e := got[2]; e.Result != job.ResultLaunch || !strings.HasPrefix(e.Message, "err_log_file: ") {
		t.Errorf("run 2: %+v", e)
	}
	p := filepath.Join(lf.data, "logs", "fn.out")
	if b, _ := os.ReadFile(p); string(b) != "from the function\n" {
		t.Errorf("%s holds %q", p, b)
	}
	if m := mode(t, p); m != 0o600 {
		t.Errorf("log file mode %v, want 0600", m)
	}
}

// Tail reads a log's end by the rules that choose a log file: never
// through a link out of its root, never a file of the server.
func TestTail(t *testing.T) {
	t.Parallel()
	f := logSetup(t)
	logs := filepath.Join(f.data, "logs")
	os.WriteFile(filepath.Join(logs, "a.out"), []byte("one\ntwo\nthree\n"), 0o600)
	if b, more, err := f.l.Tail("a.out", 6); err != nil || string(b) != "three\n" || !more {
		t.Errorf("Tail(a.out, 6) = %q, %v, %v", b, more, err)
	}
	if b, more, err := f.l.Tail("a.out", 1<<20); err != nil || string(b) != "one\ntwo\nthree\n" || more {
		t.Errorf("Tail(a.out) = %q, %v, %v", b, more, err)
	}
	if b, _, err := f.l.Tail("never.out", 10); err != nil || len(b) != 0 {
		t.Errorf("a log not written yet: %q, %v", b, err)
	}
	os.WriteFile(filepath.Join(f.outside, "secret"), []byte("secret"), 0o600)
	os.Symlink(filepath.Join(f.outside, "secret"), filepath.Join(logs, "link.out"))
	os.Symlink(filepath.Join("..", "gnomon.db"), filepath.Join(logs, "up.out"))
	for _, p := range []string{"link.out", "up.out", "../gnomon.db", filepath.Join(f.data, "gnomon.db")} {
		if b, _, err := f.l.Tail(p, 100); err == nil {
			t.Errorf("Tail(%s) read %q", p, b)
		}
	}
}
