package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

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
		"started 2026-06-01T00:00:00+02:00 by start, asked by admin\n",
		"out log " + f.dir + "/backup.out:\n  line1\n  line2\n  line3\n  line4\n  line5\n",
		"err log " + f.dir + "/backup.err:\n  disk full\n",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("gnomon run lacks %q:\n%s", w, out)
		}
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

	out = f.mustRun("gnomon", "runs", "-j", "backup", "-o", "wide")
	if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 2 || !strings.HasPrefix(lines[0], "ID  Task Name") ||
		!regexp.MustCompile(`^`+id+` +backup +\d{8} \d\d:\d\d:\d\d +\d{8} \d\d:\d\d:\d\d +failure +3 +normal +exit status 3$`).MatchString(lines[1]) {
		t.Errorf("gnomon runs -o wide:\n%s", out)
	}
	var listed []api.RunView
	if err := json.Unmarshal([]byte(f.mustRun("gnomon", "runs", "-j", "backup", "-o", "json")), &listed); err != nil ||
		len(listed) != 1 || fmt.Sprint(listed[0].ID) != id || listed[0].ExitCode != 3 {
		t.Errorf("gnomon runs -o json: %+v, %v", listed, err)
	}

	out = f.mustRun("gnomon", "why", "-j", "backup")
	for _, w := range []string{"backup is failure", "\n  run " + id + " of backup: failure, exit code 3\n", "\n    disk full\n"} {
		if !strings.Contains(out, w) {
			t.Errorf("gnomon why lacks %q:\n%s", w, out)
		}
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"gnomon", "run", "-j", "backup", "999"}, "task backup has no run 999 (gnomon runs -j backup lists its runs)"},
		{[]string{"gnomon", "run", "-j", "backup", "x"}, `ID must be a run number (gnomon runs -j backup lists them), got "x"`},
		{[]string{"gnomon", "run", "-j", "nosuch", "1"}, "task nosuch not found"},
		{[]string{"gnomon", "runs", "-j", "backup", "-o", "yaml"}, `-o must be wide or json, got "yaml"`},
	} {
		if _, stderr, code := f.run(c.args...); code == 0 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, %q; want %q", c.args, code, stderr, c.want)
		}
	}
}
