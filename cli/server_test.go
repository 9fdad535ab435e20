package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/internal/pgtest"
)

// TestServerFlags checks that the server refuses a bad setting before it
// opens anything.
func TestServerFlags(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--heap-floor", "-1"}, "--heap-floor: -1 MiB is not between 0 and 1048576"},
		{[]string{"--heap-floor", "2000000"}, "--heap-floor: 2000000 MiB is not between 0 and 1048576"},
		{[]string{"--smtp-from", "a@b"}, "--smtp-addr is required to send alerts"},
		{[]string{"--scatter-steps"}, "--scatter-steps: only a node of a cluster (--roles) takes it"},
	} {
		dir := t.TempDir()
		var out, errb bytes.Buffer
		args := append([]string{"gnomon", "server", "--data", dir, "--listen", "127.0.0.1:0"}, tc.args...)
		code := Run(context.Background(), args, Env{Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }})
		if code != 2 || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("%v: exit %d %q, want 2 and %q", tc.args, code, errb.String(), tc.want)
		}
	}
}

// TestDrainAnswersReads stops a server while a command runs: until the
// command has ended, reads are answered, changes are refused with 503 and
// Retry-After, and /healthz says it is draining; then the server is gone.
func TestDrainAnswersReads(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.mustRun("gnomon", "def", "-f", f.file("a.def", "insert_task: a\ntype: callable\ncommand: sleep 2\nout_log_file: @DIR@/a.out\nerr_log_file: @DIR@/a.err\n"))
	f.mustRun("gnomon", "event", "-j", "a", "-e", "start")
	f.waitFor("a running", func() bool { return strings.Contains(f.mustRun("gnomon", "status", "-j", "a"), "running") })
	base := f.client.Base
	stopped := make(chan error, 1)
	if onCluster() {
		// The director drains on SIGTERM, the command running on a
		// worker.
		dir := f.cluster[0]
		dir.signal(syscall.SIGTERM)
		go func() {
			<-dir.done
			var err error
			if !dir.cmd.ProcessState.Success() {
				err = fmt.Errorf("the director exited: %s", dir.cmd.ProcessState)
			}
			stopped <- err
		}()
	} else {
		srv := f.srv
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			stopped <- srv.Stop(ctx)
		}()
	}
	f.waitFor("the drain", func() bool {
		resp, err := testHTTP.Get(base + "/healthz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusServiceUnavailable
	})
	resp, err := testHTTP.Get(base + "/api/v1/tasks/a/status")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("a read while draining: %v %v", resp, err)
	}
	resp.Body.Close()
	resp, err = testHTTP.Post(base+"/api/v1/tasks/a/events", "application/json", strings.NewReader(`{"event":"abort"}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || !strings.Contains(string(body), "stopping") {
		t.Errorf("a change while draining: %d %q %q", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
	f.srv = nil
	if _, err := testHTTP.Get(base + "/healthz"); err == nil {
		t.Error("the server still answers after the drain")
	}
}

// TestServerLogRoots starts servers whose --definitions name a log file
// outside the log roots, given by --log-root or $GNOMON_LOG_ROOT: each
// refuses to start, naming the file, line, task, field and roots.
func TestServerLogRoots(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	def := filepath.Join(dir, "jobs.def")
	os.WriteFile(def, []byte("insert_task: j\ntype: callable\ncommand: true\nout_log_file: j.out\nerr_log_file: "+filepath.Join(dir, "j.err")+"\n"), 0o600)
	for _, tc := range []struct {
		args []string
		env  string
		want string
	}{
		{[]string{"--log-root", a, "--log-root", b}, "", " is outside the log roots (" + a + ", " + b + ")"},
		{nil, a + ":" + b, " is outside the log roots (" + a + ", " + b + ")"},
		// The flag wins over the environment.
		{[]string{"--log-root", b}, a, " is outside the log roots (" + b + ")"},
	} {
		var out, errb bytes.Buffer
		args := append([]string{"gnomon", "server", "--data", filepath.Join(dir, "data"), "--listen", "127.0.0.1:0", "--definitions", def}, tc.args...)
		code := Run(context.Background(), args, Env{Stdout: &out, Stderr: &errb, Getenv: func(k string) string {
			if k == "GNOMON_LOG_ROOT" {
				return tc.env
			}
			return ""
		}})
		want := def + ":5: insert_task j: err_log_file: " + filepath.Join(dir, "j.err") + tc.want
		if code != 1 || !strings.Contains(errb.String(), want) {
			t.Errorf("%v, $GNOMON_LOG_ROOT=%q: exit %d %q, want 1 and %q", tc.args, tc.env, code, errb.String(), want)
		}
	}
	for _, d := range []string{a, b} {
		if fi, err := os.Stat(d); err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("log root %s: %v, %v; want it made 0700", d, fi, err)
		}
	}
}

// The SMTP password may come from a file that only its owner can read.
func TestSMTPPasswordFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	open := filepath.Join(dir, "open")
	closed := filepath.Join(dir, "closed")
	if err := os.WriteFile(open, []byte("s3cret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(closed, []byte("s3cret\r\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "empty"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"--smtp-addr", "127.0.0.1:25", "--smtp-password-file", open}, nil, "--smtp-password-file: " + open + " can be read by others (mode 0644): chmod 600 it"},
		{[]string{"--smtp-addr", "127.0.0.1:25"}, map[string]string{"GNOMON_SMTP_PASSWORD_FILE": filepath.Join(dir, "empty")}, "is empty"},
		{[]string{"--smtp-addr", "127.0.0.1:25", "--smtp-password-file", closed}, map[string]string{"GNOMON_SMTP_PASSWORD": "x"}, "the password is in $GNOMON_SMTP_PASSWORD already"},
		{[]string{"--smtp-addr", "127.0.0.1:25", "--smtp-password-file", filepath.Join(dir, "none")}, nil, "no such file"},
	} {
		var out, errb bytes.Buffer
		args := append([]string{"gnomon", "server", "--data", t.TempDir(), "--listen", "127.0.0.1:0"}, tc.args...)
		code := Run(context.Background(), args, Env{Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return tc.env[k] }})
		if code != 2 || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("%v %v: exit %d %q, want 2 and %q", tc.args, tc.env, code, errb.String(), tc.want)
		}
	}
}

// A node that is not a director refuses to serve its health beyond this
// machine without TLS, as a director does.
func TestNodeListenNeedsTLS(t *testing.T) {
	t.Parallel()
	var out, errb bytes.Buffer
	args := []string{"gnomon", "server", "--data", t.TempDir(), "--db", pgtest.URL(t), "--roles", "clock", "--listen", "0.0.0.0:0"}
	code := Run(context.Background(), args, Env{Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }})
	if code != 2 || !strings.Contains(errb.String(), "--listen 0.0.0.0:0 reaches beyond this machine") {
		t.Errorf("exit %d %q, want 2 and the listen refused", code, errb.String())
	}
}
