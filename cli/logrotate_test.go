package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gnomon-sched/gnomon/api"
)

func TestParseSize(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]int64{"0": 0, "500000": 500000, "64M": 64 << 20, "64MiB": 64 << 20, "64mb": 64 << 20, "1G": 1 << 30, "4k": 4096, " 2K ": 2048} {
		if got, err := parseSize(in); err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "M", "-1", "1.5M", "64T", "9999999999G", "64 M", "0x10"} {
		if got, err := parseSize(in); err == nil {
			t.Errorf("parseSize(%q) = %d, want an error", in, got)
		}
	}
}

func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"0", "64M", "64MiB", "1g", "500000", "-1", "9999999999G", "KB"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := parseSize(s)
		if err != nil {
			return
		}
		if n < 0 {
			t.Fatalf("parseSize(%q) = %d", s, n)
		}
		if back, err := parseSize(formatSize(n)); err != nil || back != n {
			t.Fatalf("%q -> %d -> %q -> %d, %v", s, n, formatSize(n), back, err)
		}
	})
}

// TestLogRotation runs a task with --log-rotate-size small enough that
// each run's output (40 lines, 1.3K) rotates the file at the next start:
// gnomon run shows the output of a run whose file was rotated, from the
// rotated file, until it is rotated away.
func TestLogRotation(t *testing.T) {
	t.Parallel()
	if onCluster() {
		t.Skip("a cluster's workers rotate the log files of their own runs, with their own settings")
	}
	f := setup(t, simulateFrom("2026-03-01 00:00"), func(c *ServerConfig) {
		for flag, v := range map[string]string{"log-rotate-size": "1K", "log-keep": "3"} {
			if err := c.setLogRotation(flag, v); err != nil {
				t.Fatal(err)
			}
		}
	})
	logs := filepath.Join(f.dir, "data", "logs")
	f.mustRun("gnomon", "def", "-f", f.file("r.def", `insert_task: chatty
type: callable
command: for i in $(seq 1 40); do echo "line $i of $GNOMON_SCHEDULED_TIME"; done
out_log_file: chatty.out
err_log_file: chatty.err
cron: 0 * * * *
`))
	f.mustRun("gnomon", "clock", "advance", "--to", "2026-03-01 06:00")
	rs, err := f.client.ListRuns(context.Background(), api.RunsQuery{Task: "chatty", Count: 10})
	if err != nil || len(rs.Runs) != 7 {
		t.Fatalf("%d runs, %v", len(rs.Runs), err)
	}
	for _, name := range []string{"chatty.out", "chatty.out.1", "chatty.out.2", "chatty.out.3"} {
		if _, err := os.Stat(filepath.Join(logs, name)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := os.Stat(filepath.Join(logs, "chatty.out.4")); err == nil {
		t.Error("a fourth rotated file is kept")
	}
	// The newest run is in chatty.out, the one before in chatty.out.1,
	// the oldest rotated away.
	for i, r := range rs.Runs {
		out, errs, code := f.run("gnomon", "run", "-j", "chatty", fmt.Sprint(r.ID), "--tail", "100")
		at := r.Scheduled.UTC().Format("2006-01-02T15:04:05Z")
		switch {
		case i < 4 && (code != 0 || strings.Count(out, "of "+at) != 40):
			t.Errorf("run %d (%d): exit %d, %d lines of its occurrence:\n%s%s", i, r.ID, code, strings.Count(out, "of "+at), out, errs)
		case i >= 4 && !strings.Contains(out+errs, "rotated away"):
			t.Errorf("run %d (%d), rotated away, shows:\n%s%s", i, r.ID, out, errs)
		}
	}
}

// TestLogRotationAge runs a task every 6 hours with --log-rotate-age 1d on
// the simulated clock: each day's runs share a file, rotated at the first
// run of the next day, three rotated files kept.
func TestLogRotationAge(t *testing.T) {
	t.Parallel()
	if onCluster() {
		t.Skip("a cluster's workers rotate the log files of their own runs, with their own settings")
	}
	f := setup(t, simulateFrom("2026-03-01 00:00"), func(c *ServerConfig) {
		for flag, v := range map[string]string{"log-rotate-age": "1d", "log-keep": "3"} {
			if err := c.setLogRotation(flag, v); err != nil {
				t.Fatal(err)
			}
		}
	})
	logs := filepath.Join(f.dir, "data", "logs")
	f.mustRun("gnomon", "def", "-f", f.file("r.def", `insert_task: daily
type: callable
command: echo "$GNOMON_SCHEDULED_TIME"
out_log_file: daily.out
err_log_file: daily.err
cron: 0 */6 * * *
`))
	f.mustRun("gnomon", "clock", "advance", "--to", "2026-03-04 00:00")
	// The server's zone is Europe/Paris: its days begin at 23:00 UTC.
	want := map[string]string{
		"daily.out":   "2026-03-03T23:00:00Z\n",
		"daily.out.1": "2026-03-02T23:00:00Z\n2026-03-03T05:00:00Z\n2026-03-03T11:00:00Z\n2026-03-03T17:00:00Z\n",
		"daily.out.2": "2026-03-01T23:00:00Z\n2026-03-02T05:00:00Z\n2026-03-02T11:00:00Z\n2026-03-02T17:00:00Z\n",
		"daily.out.3": "2026-02-28T23:00:00Z\n2026-03-01T05:00:00Z\n2026-03-01T11:00:00Z\n2026-03-01T17:00:00Z\n",
	}
	if _, err := os.Stat(filepath.Join(logs, "daily.out.4")); err == nil {
		t.Error("a fourth rotated file is kept")
	}
	for name, w := range want {
		if b, err := os.ReadFile(filepath.Join(logs, name)); err != nil || string(b) != w {
			t.Errorf("%s = %q, %v; want %q", name, b, err, w)
		}
	}
}

// TestLogRotationOwn: a task's own log_rotate_size and log_keep rotate its
// file on a server that rotates none, and export writes them back.
func TestLogRotationOwn(t *testing.T) {
	t.Parallel()
	if onCluster() {
		t.Skip("a cluster's workers rotate the log files of their own runs, with their own settings")
	}
	f := setup(t, simulateFrom("2026-03-01 00:00"))
	logs := filepath.Join(f.dir, "data", "logs")
	f.mustRun("gnomon", "def", "-f", f.file("r.def", `insert_task: chatty
type: callable
command: for i in $(seq 1 40); do echo "line $i of $GNOMON_SCHEDULED_TIME"; done
out_log_file: chatty.out
err_log_file: chatty.err
cron: 0 * * * *
log_rotate_size: 1K
log_keep: 2
`))
	f.mustRun("gnomon", "clock", "advance", "--to", "2026-03-01 06:00")
	for _, name := range []string{"chatty.out", "chatty.out.1", "chatty.out.2"} {
		if _, err := os.Stat(filepath.Join(logs, name)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := os.Stat(filepath.Join(logs, "chatty.out.3")); err == nil {
		t.Error("a third rotated file is kept")
	}
	if out := f.mustRun("gnomon", "export"); !strings.Contains(out, "log_rotate_size: 1K\nlog_keep: 2\n") {
		t.Errorf("export:\n%s", out)
	}
}
