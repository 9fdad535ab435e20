package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/api"
	"github.com/gnomon-sched/gnomon/job"
)

// floodDefs: gate waits for a file the test makes; each after_N runs when
// gate succeeds, so that the scheduler launches them (lock file, log
// files, a supervisor) while the flood holds its connections.
func floodDefs(dir string, n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "insert_task: gate\ntype: callable\ncommand: while [ ! -e %s ]; do sleep 0.05; done\nout_log_file: gate.out\nerr_log_file: gate.err\n\n", filepath.Join(dir, "go"))
	for i := range n {
		fmt.Fprintf(&b, "insert_task: after_%d\ntype: callable\ncondition: su(gate)\ncommand: echo launched\nout_log_file: after_%d.out\nerr_log_file: after_%d.err\n\n", i, i, i)
	}
	return b.String()
}

// TestConnectionFlood holds far more idle connections than a server's
// file descriptor limit allows (some kept alive after a request, others
// never sending one) against a server started with a limit of 512 open
// files: scheduled runs still launch, a new client's /healthz is answered
// at once, and the server serves normally once the clients leave.
func TestConnectionFlood(t *testing.T) {
	singleServer(t, killedProcess)
	const fdLimit, runs, idle, silent = 512, 6, 300, 500
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	defsFile := filepath.Join(dir, "flood.def")
	if err := os.WriteFile(defsFile, []byte(floodDefs(dir, runs)), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := freePort(t)
	self, _ := os.Executable()
	// The shell sets both the soft and the hard limit: the server cannot
	// raise it.
	cmd := exec.Command("/bin/sh", "-c", fmt.Sprintf(`ulimit -n %d && exec "$0" "$@"`, fdLimit), self, "server", "--data", data,
		"--db", testDB(t, data), "--listen", addr, "--timezone", "UTC", "--workers", "10", "--definitions", defsFile)
	cmd.Env = append(os.Environ(), envServerProcess+"=1")
	logPath := filepath.Join(dir, "server.log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait(); logf.Close() })
	serverLog := func() string { b, _ := os.ReadFile(logPath); return string(b) }
	base := "http://" + addr
	// Each check of the server comes on a connection of its own, as a new
	// client's would.
	fresh := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	client := &api.Client{Base: base, HTTP: fresh}
	deadline := time.Now().Add(30 * time.Second)
	for client.Health(context.Background()) != nil {
		if time.Now().After(deadline) {
			t.Fatalf("server did not become ready:\n%s", serverLog())
		}
		time.Sleep(20 * time.Millisecond)
	}
	client.Token = adminToken(t, data)
	if err := client.Event(context.Background(), "gate", "start"); err != nil {
		t.Fatal(err)
	}

	// The flood: connections kept alive after an authenticated request,
	// then connections that send nothing.
	var held []net.Conn
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	for range idle {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatalf("dial: %v", err)
		}
		held = append(held, c)
		c.SetDeadline(time.Now().Add(5 * time.Second))
		fmt.Fprintf(c, "GET /api/v1/info HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\n\r\n", addr, client.Token)
		// Beyond the server's limit the answer may never come: the
		// connection is held all the same.
		if resp, err := http.ReadResponse(bufio.NewReader(c), nil); err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		c.SetDeadline(time.Time{})
	}
	for range silent {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatalf("dial: %v", err)
		}
		held = append(held, c)
	}

	// Scheduled work goes on: gate ends, and the scheduler launches its
	// dependants, each opening its lock and log files.
	if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	logs := filepath.Join(data, "logs")
	for i := range runs {
		out := filepath.Join(logs, fmt.Sprintf("after_%d.out", i))
		deadline := time.Now().Add(30 * time.Second)
		for {
			if b, _ := os.ReadFile(out); strings.Contains(string(b), "launched") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("after_%d did not run under the flood:\n%s", i, serverLog())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	// A new client is answered while the flood holds on.
	start := time.Now()
	if err := client.Health(context.Background()); err != nil {
		t.Fatalf("/healthz under the flood: %v\n%s", err, serverLog())
	}
	t.Logf("/healthz answered in %s under a flood of %d connections", time.Since(start).Round(time.Millisecond), len(held))
	for i := range runs {
		task := fmt.Sprintf("after_%d", i)
		deadline := time.Now().Add(30 * time.Second)
		for {
			st, err := client.Status(context.Background(), task)
			if err != nil {
				t.Fatal(err)
			}
			got := st.Rows[0].Status
			if got == job.Success {
				break
			}
			if got != job.Running || time.Now().After(deadline) {
				t.Fatalf("%s is %s under the flood, want success\n%s", task, got, serverLog())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}

	// The clients leave: the server serves as before.
	for _, c := range held {
		c.Close()
	}
	held = nil
	if err := client.Event(context.Background(), "after_0", "start"); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(30 * time.Second)
	for {
		r, err := client.Runs(context.Background(), "after_0", 10, "")
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Runs) >= 2 && r.Runs[0].Status == job.Success && r.Runs[1].Status == job.Success {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after_0 did not run again after the flood: %+v", r.Runs)
		}
		time.Sleep(20 * time.Millisecond)
	}
	l := serverLog()
	if strings.Contains(l, "too many open files") {
		t.Errorf("the server ran out of file descriptors:\n%s", l)
	}
	if !strings.Contains(l, "connection cap reached") {
		t.Errorf("the server did not log that it reached its connection cap:\n%s", l)
	}
}

// A client that fails to authenticate is not kept alive: the server closes
// its connection after the 401.
func TestUnauthenticatedHangUp(t *testing.T) {
	f := setup(t)
	addr := strings.TrimPrefix(f.client.Base, "http://")
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	fmt.Fprintf(c, "GET /api/v1/info HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer gnomon_0123456789abcdef_%s\r\n\r\n", addr, strings.Repeat("A", 43))
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a bad token: %d, want 401", resp.StatusCode)
	}
	if _, err := br.ReadByte(); !errors.Is(err, io.EOF) {
		t.Errorf("after a 401 the connection stays open (read: %v), want it closed by the server", err)
	}
}
