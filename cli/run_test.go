package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/api"
)

// TestRunShowsHowItFailed: gnomon run shows a failed run's exit code and
// message and the last lines of its output, as many as --tail asks; gnomon
// why names the failed run with the same.
func TestRunShowsHowItFailed(t *testing.T) {
	t.Parallel()
	f := setup(t, simulateFrom("2026-06-01 00:00"))
	f.mustRun("gnomon", "def", "-f", f.file("b.def", "insert_task: backup\ntype: callable\n"+
		"command: for i in 1 2 3 4 5; do echo line$i; done; echo disk full >&2; exit 3\n"+
		"out_log_file: @DIR@/backup.out\nerr_log_file: @DIR@/backup.err\n"))
	f.mustRun("gnomon", "event", "-j", "backup", "-e", "start")
	f.mustRun("gnomon", "clock", "advance", "--to", "2026-06-01 00:01")
	rs, err := f.client.ListRuns(context.Background(), api.RunsQuery{Task: "backup", Count: 1})
	if err != nil || len(rs.Runs) != 1 {
		t.Fatalf("runs: %+v, %v", rs, err)
	}
	id := fmt.Sprint(rs.Runs[0].ID)

	out := f.mustRun("gnomon", "run", "-j", "backup", id)
	for _, w := range []string{
		"run " + id + " of backup: failure, exit code 3\n",
		"started 2026-06-01 00:00:00 CEST by start, asked by admin\n",
		"out log " + f.dir + "/backup.out:\n  line1\n  line2\n  line3\n  line4\n  line5\n",
		"err log " + f.dir + "/backup.err:\n  disk full\n",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("gnomon run lacks %q:\n%s", w, out)
		}
	}
	if byID := f.mustRun("gnomon", "run", id); byID != out {
		t.Errorf("gnomon run %s (its number alone):\n%s\nwant what gnomon run -j backup %s prints:\n%s", id, byID, id, out)
	}
	if y := f.mustRun("gnomon", "run", "backup", id, "-o", "yaml"); !strings.Contains(y, "\n  exit_code: 3\n") || !strings.Contains(y, "\n  text: \"disk full\\n\"\n") {
		t.Errorf("gnomon run -o yaml:\n%s", y)
	}
	out = f.mustRun("gnomon", "run", "-j", "backup", id, "--tail", "2")
	if !strings.Contains(out, "backup.out, its last lines:\n  line4\n  line5\nerr log") {
		t.Errorf("gnomon run --tail 2:\n%s", out)
	}
	var v api.RunResponse
	if err := json.Unmarshal([]byte(f.mustRun("gnomon", "run", "-j", "backup", id, "--json")), &v); err != nil ||
		v.Run.ExitCode != 3 || len(v.Logs) != 2 || v.Logs[1].Text != "disk full\n" {
		t.Errorf("gnomon run --json: %+v, %v", v, err)
	}

	out = f.mustRun("gnomon", "runs", "backup")
	if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 2 || !regexp.MustCompile(`^ID +TASK +START +END +STATUS +EXIT +MESSAGE$`).MatchString(lines[0]) ||
		!regexp.MustCompile(`^`+id+` +backup +2026-06-01 00:00:00 CEST +2026-06-01 00:00:\d\d CEST +failure +3 +exit status 3$`).MatchString(lines[1]) {
		t.Errorf("gnomon runs:\n%s", out)
	}
	out = f.mustRun("gnomon", "runs", "-j", "backup", "-o", "wide", "--utc")
	if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 2 || !regexp.MustCompile(`^ID +TASK +START +END +STATUS +EXIT +RESULT +TRIGGER +BY +ENDED BY +MESSAGE$`).MatchString(lines[0]) ||
		!regexp.MustCompile(`^`+id+` +backup +2026-05-31 22:00:00 UTC +2026-05-31 22:00:\d\d UTC +failure +3 +normal +start +admin +- +exit status 3$`).MatchString(lines[1]) {
		t.Errorf("gnomon runs -o wide --utc:\n%s", out)
	}
	var listed []api.RunView
	if err := json.Unmarshal([]byte(f.mustRun("gnomon", "runs", "-j", "backup", "-o", "json")), &listed); err != nil ||
		len(listed) != 1 || fmt.Sprint(listed[0].ID) != id || listed[0].ExitCode != 3 {
		t.Errorf("gnomon runs -o json: %+v, %v", listed, err)
	}

	out = f.mustRun("gnomon", "why", "-j", "backup")
	for _, w := range []string{"backup failed", "\n  run " + id + " of backup: failure, exit code 3\n", "\n    disk full\n"} {
		if !strings.Contains(out, w) {
			t.Errorf("gnomon why lacks %q:\n%s", w, out)
		}
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"gnomon", "run", "-j", "backup", "999"}, "task backup has no run 999 (gnomon runs -j backup lists its runs)"},
		{[]string{"gnomon", "run", "-j", "backup", "x"}, `ID must be a run number (gnomon runs NAME lists them), got "x"`},
		{[]string{"gnomon", "run", "999"}, "no run 999 (gnomon runs NAME lists the runs of a task)"},
		{[]string{"gnomon", "run", "other", id}, "task other not found"},
		{[]string{"gnomon", "run", "-j", "nosuch", "1"}, "task nosuch not found"},
		{[]string{"gnomon", "runs", "-j", "backup", "-o", "xml"}, `invalid argument "xml" for "-o, --output" flag: want json, yaml or wide`},
	} {
		if _, stderr, code := f.run(c.args...); code == 0 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, %q; want %q", c.args, code, stderr, c.want)
		}
	}
}

// TestRunFollow follows a running run: what it wrote before is shown once,
// in its log's tail; what it writes after comes line by line, out| and
// err| before each; the command ends when the run ends, with how it ended.
func TestRunFollow(t *testing.T) {
	t.Parallel()
	singleServer(t, "a cluster's director knows where a worker's run writes once it has ended: its lines come then")
	f := setup(t)
	f.mustRun("gnomon", "def", "-f", f.file("w.def", "insert_task: waiter\ntype: callable\n"+
		"command: echo one; while [ ! -f @DIR@/go ]; do sleep 0.02; done; echo two; echo three; echo bad >&2; printf tail; exit 4\n"+
		"out_log_file: @DIR@/w.out\nerr_log_file: @DIR@/w.err\n"))
	f.mustRun("gnomon", "event", "waiter", "-e", "start")
	f.waitFor("the run to write its first line", func() bool {
		out, _ := readFile(f.dir, "w.out")
		return out == "one\n"
	})
	rs, err := f.client.ListRuns(context.Background(), api.RunsQuery{Task: "waiter", Count: 1})
	if err != nil || len(rs.Runs) != 1 || rs.Runs[0].Done() {
		t.Fatalf("runs: %+v, %v", rs, err)
	}
	id := fmt.Sprint(rs.Runs[0].ID)

	var out, errb lockedBuffer
	done := make(chan int)
	go func() {
		done <- Run(context.Background(), []string{"gnomon", "run", id, "--follow"}, Env{Stdout: &out, Stderr: &errb, Getenv: func(k string) string {
			switch k {
			case "GNOMON_SERVER":
				return f.client.Base
			case "GNOMON_TOKEN":
				return f.client.Token
			}
			return ""
		}})
	}()
	// The run as it stands is printed before the command follows it.
	f.waitFor("the run's first view", func() bool { return strings.Contains(out.String(), "out log "+f.dir+"/w.out:\n  one\n") })
	if err := os.WriteFile(filepath.Join(f.dir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var code int
	select {
	case code = <-done:
	case <-time.After(20 * time.Second):
		t.Fatalf("gnomon run --follow did not end with the run:\n%s", out.String())
	}
	got := out.String()
	if code != 0 || !strings.HasPrefix(got, "run "+id+" of waiter: running\n") ||
		!strings.Contains(got, "\nout| two\nout| three\n") || !strings.Contains(got, "err| bad\n") ||
		!strings.Contains(got, "out| tail\n") ||
		!regexp.MustCompile(`\nrun `+id+` of waiter: failure, exit code 4, ended \d{4}-\d\d-\d\d \d\d:\d\d:\d\d \S+ after \S+\n$`).MatchString(got) ||
		strings.Count(got, "one") != 1 {
		t.Errorf("gnomon run --follow: exit %d\n%s%s", code, got, errb.String())
	}
	if _, errs, code := f.run("gnomon", "run", id, "--follow", "-o", "json"); code != ExitUsage || !strings.Contains(errs, "--follow prints lines as they come: it takes no -o json") {
		t.Errorf("--follow -o json: exit %d, %q", code, errs)
	}
}
