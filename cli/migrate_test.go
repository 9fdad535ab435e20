package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gnomon-sched/gnomon/internal/pgtest"
)

// TestMigrateToPostgres moves a stopped server's SQLite data directory to
// an empty PostgreSQL database: the copy is verified, a second migrate is
// refused, and a server started on PostgreSQL has the definitions, the
// run history (who started each run included) and the trees.
func TestMigrateToPostgres(t *testing.T) {
	t.Parallel()
	singleServer(t, "it moves one server's SQLite store")
	pg := pgtest.URL(t)
	f := setup(t, func(c *ServerConfig) { c.DB = "" }, simulateFrom("2026-03-08T06:00:00Z"))
	tasks := f.file("m.def", "insert_task: m\ntype: callable\ncommand: echo moved\nout_log_file: /dev/null\nerr_log_file: /dev/null\n")
	f.mustRun("gnomon", "def", "-f", tasks)
	f.mustRun("gnomon", "event", "-j", "m", "-e", "start")
	f.waitStatus("m", "success")
	trees := f.file("t.json", `{"settings": {"startTimeperiod": "2026030800", "lagMinutes": 0},
	  "trees": [{"name": "t", "levels": [{"process": "t_hourly", "qualifier": "hourly"}]}]}`)
	f.mustRun("gnomon", "def", "-f", trees)
	f.mustRun("gnomon", "def", "-f", f.file("c.def", "insert_calendar: month_end\nrule: last business day of month\n"+
		"insert_task: close\ntype: callable\ncommand: true\nout_log_file: /dev/null\nerr_log_file: /dev/null\nstart_times: 18:00\nrun_calendar: month_end\n"))
	f.stop()

	data := filepath.Join(f.dir, "data")
	out, errOut, code := f.run("gnomon", "migrate", "--from", "sqlite:"+data, "--to", pg)
	if code != 0 || !strings.Contains(out, "copied and verified: 2 tasks, 2 runs") || !strings.Contains(out, ", 1 calendars\n") {
		t.Fatalf("migrate: exit %d\n%s%s", code, out, errOut)
	}
	if _, errOut, code := f.run("gnomon", "migrate", "--from", "sqlite:"+data, "--to", pg); code != ExitRejected || !strings.Contains(errOut, "not empty") ||
		!strings.Contains(errOut, "DROP SCHEMA public CASCADE; CREATE SCHEMA public") || !strings.Contains(errOut, "createdb") {
		t.Fatalf("a second migrate into the same database: exit %d, %s", code, errOut)
	}

	f.start(func(c *ServerConfig) { c.DB = pg }, simulateFrom("2026-03-08T06:00:00Z"))
	if out := squeeze(f.mustRun("gnomon", "runs", "m", "-o", "wide")); !strings.Contains(out, "success 0 normal start admin") { // and who started it
		t.Fatalf("runs of m on PostgreSQL:\n%s", out)
	}
	if out := f.mustRun("gnomon", "status", "-j", "m"); !strings.Contains(out, "success") {
		t.Fatalf("status of m on PostgreSQL:\n%s", out)
	}
	if out := f.mustRun("gnomon", "node", "list", "-p", "t_hourly"); !strings.Contains(out, "2026030800") {
		t.Fatalf("nodes on PostgreSQL:\n%s", out)
	}
	if out := f.mustRun("gnomon", "forecast", "-j", "close", "--to", "2026-04-01 00:00"); out != "2026-03-31T18:00:00+02:00 close\n" {
		t.Fatalf("calendars on PostgreSQL: forecast\n%s", out)
	}
}

// TestMigrateRefusesALiveSource: the data directory of a running server is
// locked, and migrate takes the same lock: it refuses to copy a state the
// server is changing, naming the server's PID, and copies nothing.
func TestMigrateRefusesALiveSource(t *testing.T) {
	t.Parallel()
	singleServer(t, "it migrates one server's SQLite store")
	f := setup(t, func(c *ServerConfig) { c.DB = "" })
	data := filepath.Join(f.dir, "data")
	for _, from := range []string{"sqlite:" + data, "sqlite:" + filepath.Join(data, "gnomon.db")} {
		_, errOut, code := f.run("gnomon", "migrate", "--from", from, "--to", "postgres://nobody@127.0.0.1:1/none")
		want := fmt.Sprintf("--from: %s is in use by a running gnomon server (PID %d holds %s): stop it first", data, os.Getpid(), filepath.Join(data, LockFile))
		if code != ExitRejected || !strings.Contains(errOut, want) {
			t.Errorf("migrate --from %s of a running server: exit %d, %q; want %q", from, code, errOut, want)
		}
	}
}
