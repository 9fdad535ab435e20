package gnomon_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon"
	"github.com/gnomon-sched/gnomon/auth"
	"github.com/gnomon-sched/gnomon/defs"
)

// These tests run under umask 022 (TestMain): what the scheduler creates
// is its owner's only all the same.

func perm(t *testing.T, path string) os.FileMode {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

// syncBuffer is a log destination safe for concurrent use.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

func TestFilesArePrivate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "data")
	// An existing data directory that others may read is tightened.
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if perm(t, dir) != 0o755 {
		t.Fatal("umask 022 expected")
	}
	var log syncBuffer
	s := startSQLite(t, gnomon.Config{DataDir: dir, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if !strings.Contains(log.String(), `msg="data directory made private to its owner" dir=`+dir+" was=-rwxr-xr-x now=-rwx------") {
		t.Errorf("no log line on tightening the data directory:\n%s", log.String())
	}
	rec := listen(s)
	s.Start(ctx)
	// A relative path is taken from DataDir/logs; directories are made.
	if err := s.Apply(ctx, "t.def", "insert_task: a\ntype: callable\ncommand: echo out; echo err >&2\nout_log_file: nightly/a.out\nerr_log_file: nightly/a.err\n"); err != nil {
		t.Fatal(err)
	}
	s.Send(ctx, "a", gnomon.ActStart)
	rec.await(t, gnomon.EventSucceeded, "a")
	out := filepath.Join(dir, "logs", "nightly", "a.out")
	if b, _ := os.ReadFile(out); string(b) != "out\n" {
		t.Errorf("%s holds %q", out, b)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "logs", "nightly", "a.err")); string(b) != "err\n" {
		t.Errorf("a.err holds %q", b)
	}
	want := map[string]os.FileMode{
		dir: 0o700, filepath.Join(dir, "logs"): 0o700, filepath.Join(dir, "logs", "nightly"): 0o700, filepath.Join(dir, "runs"): 0o700,
		out: 0o600, filepath.Join(dir, "logs", "nightly", "a.err"): 0o600,
		filepath.Join(dir, "gnomon.db"): 0o600, filepath.Join(dir, "gnomon.db-wal"): 0o600, filepath.Join(dir, "gnomon.db-shm"): 0o600,
		filepath.Join(dir, "audit.log"): 0o600,
	}
	for p, m := range want {
		if got := perm(t, p); got != m {
			t.Errorf("%s: mode %v, want %v", p, got, m)
		}
	}
	// Every file in the data directory, whatever made it.
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			t.Error(err)
			return nil
		}
		if m := perm(t, p); m&0o077 != 0 {
			t.Errorf("%s: mode %v, open to others", p, m)
		}
		return nil
	})
}

func TestLogFilesRefusedAtDefinition(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir() // inside the system's temporary directory, a log root
	s := startSQLite(t, gnomon.Config{DataDir: dir})
	s.Start(ctx)
	roots := filepath.Join(dir, "logs") + ", " + os.TempDir()
	for _, c := range []struct {
		name, out, err string
	}{
		{"up", "../../x", "t.def:5: insert_task up: out_log_file: ../../x leads out of the log root " + filepath.Join(dir, "logs") +
			", which relative paths are taken from (log roots: " + roots + ")"},
		{"abs", "/etc/gnomon.out", "t.def:5: insert_task abs: out_log_file: /etc/gnomon.out is outside the log roots (" + roots + ")"},
		{"db", filepath.Join(dir, "gnomon.db"), "t.def:5: insert_task db: out_log_file: " + filepath.Join(dir, "gnomon.db") +
			" is a file of the gnomon server"},
		{"wal", filepath.Join(dir, "logs", "..", "gnomon.db-wal"), "gnomon.db-wal is a file of the gnomon server"},
		{"runs", filepath.Join(dir, "runs", "1.lock"), "t.def:5: insert_task runs: out_log_file: " + filepath.Join(dir, "runs", "1.lock") +
			" is in the gnomon server's directory " + dir + " (log roots: " + roots + ")"},
		{"audit", filepath.Join(dir, "audit.log"), "is in the gnomon server's directory"},
	} {
		text := "insert_task: " + c.name + "\ntype: callable\ncommand: true\nerr_log_file: e\nout_log_file: " + c.out + "\n"
		for _, apply := range []func(context.Context, string, string) error{s.Apply, s.Check, s.Declare} {
			err := apply(ctx, "t.def", text)
			var errs defs.Errors
			if !errors.As(err, &errs) || len(errs) != 1 || !strings.Contains(errs[0].Error(), c.err) {
				t.Errorf("%s: %v; want a definition error with %q", c.name, err, c.err)
			}
		}
	}
	// The same for a job defined in Go, and on update.
	if err := s.AddJob(ctx, gnomon.Job{Name: "g", Command: "true", OutLog: "/etc/g.out", ErrLog: "g.err"}); err == nil ||
		err.Error() != "gnomon: job g: out_log_file: /etc/g.out is outside the log roots ("+roots+")" {
		t.Errorf("AddJob: %v", err)
	}
	if err := s.Apply(ctx, "ok.def", "insert_task: ok\ntype: callable\ncommand: true\nout_log_file: ok.out\nerr_log_file: /tmp/ok.err\n"); err != nil {
		t.Fatal(err)
	}
	if err := s.Apply(ctx, "u.def", "update_task: ok\nerr_log_file: ../ok.err\n"); err == nil || !strings.Contains(err.Error(), "u.def:2: update_task ok: err_log_file: ../ok.err leads out") {
		t.Errorf("update: %v", err)
	}

	// Through the API: 422, with the file, line, task and field.
	tok, err := s.NewToken(ctx, auth.Request{Name: "deployer", Role: auth.Admin})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler(gnomon.HandlerConfig{}))
	defer srv.Close()
	for _, mode := range []string{"", "apply"} {
		body, _ := json.Marshal(map[string]any{"file": "api.def", "mode": mode,
			"text": "# a comment\ninsert_task: viaapi\ntype: callable\ncommand: true\nout_log_file: ../../x\nerr_log_file: e\n"})
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/api/v1/definitions", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			Error  string   `json:"error"`
			Errors []string `json:"errors"`
		}
		json.NewDecoder(resp.Body).Decode(&got)
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnprocessableEntity || len(got.Errors) != 1 ||
			!strings.HasPrefix(got.Errors[0], "api.def:5: insert_task viaapi: out_log_file: ../../x leads out of the log root") {
			t.Errorf("mode %q: %d %+v", mode, resp.StatusCode, got)
		}
	}
}

// With roots of its own, the data directory inside one of them: the
// roots replace the defaults, and the server's files are refused still.
func TestLogRoots(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	root := t.TempDir()
	other := t.TempDir()
	dir := filepath.Join(root, "data")
	s := startSQLite(t, gnomon.Config{DataDir: dir, LogRoots: []string{filepath.Join(root, "jobs"), root}})
	rec := listen(s)
	s.Start(ctx)
	roots := filepath.Join(root, "jobs") + ", " + root
	for out, want := range map[string]string{
		filepath.Join(dir, "gnomon.db"):                          " is a file of the gnomon server",
		filepath.Join(dir, "logs", "x.out"):                      " is in the gnomon server's directory " + dir,
		filepath.Join(other, "x.out"):                            " is outside the log roots (" + roots + ")",
		filepath.Join(root, "jobs", "..", "data", "admin.token"): " is in the gnomon server's directory " + dir,
	} {
		err := s.Apply(ctx, "t.def", "insert_task: a\ntype: callable\ncommand: true\nerr_log_file: e\nout_log_file: "+out+"\n")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v; want %q", out, err, want)
		}
	}
	if err := s.Apply(ctx, "t.def", "insert_task: a\ntype: callable\ncommand: echo hi\nout_log_file: a.out\nerr_log_file: "+filepath.Join(root, "a.err")+"\n"); err != nil {
		t.Fatal(err)
	}
	s.Send(ctx, "a", gnomon.ActStart)
	rec.await(t, gnomon.EventSucceeded, "a")
	if b, _ := os.ReadFile(filepath.Join(root, "jobs", "a.out")); string(b) != "hi\n" {
		t.Errorf("jobs/a.out holds %q", b)
	}
}

// A link made after the definition was accepted: the run fails to launch
// and nothing is written where the link leads.
func TestLinkMadeLaterFailsLaunch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	root := t.TempDir()
	outside := t.TempDir()
	dir := filepath.Join(root, "data")
	s := startSQLite(t, gnomon.Config{DataDir: dir, LogRoots: []string{root}})
	rec := listen(s)
	s.Start(ctx)
	for _, name := range []string{"escape", "db"} {
		def := fmt.Sprintf("insert_task: %s\ntype: callable\ncommand: echo leaked\nout_log_file: %[1]s.out\nerr_log_file: e.err\n", name)
		if err := s.Apply(ctx, "t.def", def); err != nil {
			t.Fatal(err)
		}
	}
	os.Symlink(filepath.Join(outside, "x.out"), filepath.Join(root, "escape.out"))
	os.Symlink(filepath.Join("data", "gnomon.db"), filepath.Join(root, "db.out"))
	db, err := os.ReadFile(filepath.Join(dir, "gnomon.db"))
	if err != nil {
		t.Fatal(err)
	}
	for name, why := range map[string]string{
		"escape": "out_log_file: " + filepath.Join(root, "escape.out") + " is a symbolic link: ",
		"db":     "out_log_file: " + filepath.Join(root, "db.out") + " is a symbolic link: ",
	} {
		s.Send(ctx, name, gnomon.ActStart)
		e := rec.await(t, gnomon.EventFailed, name)
		if !strings.HasPrefix(e.Run.Message, why) {
			t.Errorf("%s: run message %q; want it to start with %q", name, e.Run.Message, why)
		}
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Errorf("files written outside the root: %v", ents)
	}
	after, _ := os.ReadFile(filepath.Join(dir, "gnomon.db"))
	if bytes.Contains(after, []byte("leaked")) || len(after) < len(db) {
		t.Error("the database was written to")
	}
	// The scheduler goes on.
	if _, err := s.Runs(ctx, "db", 0); err != nil {
		t.Fatal(err)
	}
}

// A data directory given relative to the working directory: the log files
// of tasks and of timeperiod nodes land under its logs directory all the
// same.
func TestRelativeDataDir(t *testing.T) {
	cwd := t.TempDir()
	t.Chdir(cwd)
	ctx := context.Background()
	from := time.Date(2026, 3, 8, 1, 0, 0, 0, time.UTC)
	s := start(t, gnomon.Config{DataDir: "data", SimulateFrom: from})
	rec := listen(s)
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Apply(ctx, "t.def", "insert_task: a\ntype: callable\ncommand: echo task\nout_log_file: a.out\nerr_log_file: a.err\n"); err != nil {
		t.Fatal(err)
	}
	s.Send(ctx, "a", gnomon.ActStart)
	rec.await(t, gnomon.EventSucceeded, "a")
	tree := `{"settings": {"startTimeperiod": "2026030800", "lagMinutes": 0},
	  "trees": [{"name": "hits", "levels": [{"process": "hits_hourly", "qualifier": "hourly", "command": "echo node $GNOMON_TIMEPERIOD"}]}]}`
	if err := s.Declare(ctx, "hits.json", tree); err != nil {
		t.Fatal(err)
	}
	if err := s.Advance(ctx, from.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]string{
		filepath.Join(cwd, "data", "logs", "a.out"):                         "task\n",
		filepath.Join(cwd, "data", "logs", "hits_hourly", "2026030800.out"): "node 2026030800\n",
	} {
		if b, err := os.ReadFile(p); err != nil || string(b) != want {
			t.Errorf("%s: %q, %v; want %q", p, b, err, want)
		}
	}
}
