package cli

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/gnomon-sched/gnomon/api"
	"github.com/gnomon-sched/gnomon/scheduler"
)

// TestPrune runs five simulated days of a task every four hours with
// two-day horizons, then prunes through the command line: a dry run
// counts what would go and removes nothing, a pass removes as much, and
// the next finds nothing.
func TestPrune(t *testing.T) {
	t.Parallel()
	f := setup(t, simulateFrom("2026-03-01 00:00"), func(c *ServerConfig) {
		for _, s := range []string{"runs=2d", "fires=2d", "audit=2d", "alerts=2d"} {
			if err := c.Retention.Set(s); err != nil {
				t.Fatal(err)
			}
		}
	})
	f.mustRun("gnomon", "def", "-f", f.file("p.def", `insert_task: every4h
type: callable
command: true
out_log_file: @DIR@/p.out
err_log_file: @DIR@/p.err
cron: 0 */4 * * *
`))
	f.mustRun("gnomon", "clock", "advance", "--to", "2026-03-06 00:01")
	runs := func() int {
		t.Helper()
		rs, err := f.client.ListRuns(context.Background(), api.RunsQuery{Task: "every4h", Count: 1000})
		if err != nil {
			t.Fatal(err)
		}
		return len(rs.Runs)
	}
	before := runs()
	if before < 30 {
		t.Fatalf("%d runs in five days, want 30", before)
	}
	removed := regexp.MustCompile(`(?m)^ *(\d+)  runs$`)
	count := func(out string) int {
		t.Helper()
		m := removed.FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("no count of runs in:\n%s", out)
		}
		n, _ := strconv.Atoi(m[1])
		return n
	}
	// Audit records go only once audit.log holds them: wait for its
	// writer, which may trail the runs on a loaded machine.
	f.waitFor("audit.log to hold a line for each run", func() bool {
		b, _ := os.ReadFile(filepath.Join(f.dir, "data", scheduler.AuditFile))
		return strings.Count(string(b), "\n") >= before
	})
	dry := f.mustRun("gnomon", "prune", "--dry-run")
	if !strings.Contains(dry, "retention: journal=checkpoint data=7d runs=2d fires=2d audit=2d alerts=2d node-log=90d\n") ||
		!strings.Contains(dry, ", would remove:\n") {
		t.Errorf("dry run:\n%s", dry)
	}
	would := count(dry)
	if would < 17 || runs() != before {
		t.Errorf("a dry run would remove %d runs (of %d, leaving the last two days'), and left %d", would, before, runs())
	}
	out := f.mustRun("gnomon", "prune")
	if !strings.Contains(out, ", removed:\n") || count(out) != would {
		t.Errorf("prune removed %d runs, the dry run said %d:\n%s", count(out), would, out)
	}
	if runs() != before-would {
		t.Errorf("%d runs left, want %d", runs(), before-would)
	}
	var res api.PruneResponse
	if err := json.Unmarshal([]byte(f.mustRun("gnomon", "prune", "--dry-run", "--json")), &res); err != nil {
		t.Fatal(err)
	}
	if res.Removed != (api.PruneCounts{}) || !res.DryRun {
		t.Errorf("after a pass, a dry run would remove %+v", res)
	}
}

// TestRetentionFlag refuses a kind it does not know, and a server refuses
// a horizon below its floor, saying which and why.
func TestRetentionFlag(t *testing.T) {
	t.Parallel()
	var out, errb strings.Builder
	code := Run(context.Background(), []string{"gnomon", "server", "--retention", "logs=3d"}, Env{Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }})
	if code == 0 || !strings.Contains(errb.String(), `"logs=3d": give KIND=RETENTION, KIND one of journal, data, runs, fires, audit, alerts, node-log`) {
		t.Errorf("--retention logs=3d: exit %d\n%s", code, errb.String())
	}
	cfg := ServerConfig{Data: t.TempDir(), Listen: "127.0.0.1:0", Logger: slog.New(slog.DiscardHandler)}
	if err := cfg.Retention.Set("runs=12h"); err != nil {
		t.Fatal(err)
	}
	err := NewServer(cfg).Start(context.Background())
	if err == nil || !strings.Contains(err.Error(), "retention runs=12h0m0s is below its floor of 1d") {
		t.Errorf("a server with runs=12h: %v", err)
	}
}
