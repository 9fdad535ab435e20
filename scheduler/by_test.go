package scheduler

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/engine"
	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/periods"
)

// A start that waits for a worker keeps who sent it across a restart: its
// run, and the run's audit record and audit.log line, name that identity.
//
// a's run lasts until the test lets it go (the file a.go appears), not for
// a set time: a run that ended while the scheduler was down is attached
// and reported at once, and b would start before it was looked at.
func TestStartIdentitySurvivesRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	release := filepath.Join(dir, "a.go")
	oneWorker := func(c *Config) { c.Workers = 1 }
	m := openSimWith(t, dir, t0, oneWorker)
	m.define(DefineFile{File: "a.def", Text: "insert_task: a\ntype: callable\ncommand: while [ ! -e " + release + " ]; do sleep 0.05; done\n" +
		"out_log_file: /dev/null\nerr_log_file: /dev/null\n\n" +
		"insert_task: b\ntype: callable\ncommand: true\nout_log_file: /dev/null\nerr_log_file: /dev/null\n"})
	m.submit(engine.Act{Task: "a", Action: job.ActStart, By: "alice"})
	m.submit(engine.Act{Task: "b", Action: job.ActStart, By: "bob"}) // waits for a's worker
	m.stop()

	m = openSimWith(t, dir, t0, oneWorker)
	if st := statesOf(t, m.s)["b"]; st.Status != job.Ready || st.By != "bob" {
		t.Fatalf("b after a restart: %+v; want ready, started by bob", st)
	}
	if err := os.WriteFile(release, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	m.advance(m.s.Now()) // a ends, b runs
	for task, want := range map[string]string{"a": "alice", "b": "bob"} {
		if rs := m.runs(task); len(rs) != 1 || rs[0].Status != job.Success || rs[0].By != want {
			t.Errorf("runs of %s: %+v; want one success by %s", task, rs, want)
		}
	}
	recs, err := m.st.Audit(context.Background(), 0, 10)
	if err != nil || len(recs) != 2 || recs[0].By != "alice" || recs[1].By != "bob" {
		t.Errorf("audit records %+v, %v", recs, err)
	}
	m.stop() // writes audit.log
	b, err := os.ReadFile(filepath.Join(dir, AuditFile))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) != 2 || !strings.HasSuffix(lines[0], " : normal : success : by alice") || !strings.HasSuffix(lines[1], " : normal : success : by bob") {
		t.Errorf("audit.log:\n%s", b)
	}
}

// An abort names who sent it on the run it kills, started by someone
// else, and on the run's audit record and audit.log line; a run that
// ends by itself names no one. The names are read back from the store
// after a restart.
func TestAbortNamesWhoEndedTheRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	m := openSimWith(t, dir, t0, func(*Config) {})
	m.define(DefineFile{File: "a.def", Text: "insert_task: long\ntype: callable\ncommand: sleep 60\nout_log_file: /dev/null\nerr_log_file: /dev/null\n\n" +
		"insert_task: short\ntype: callable\ncommand: true\nout_log_file: /dev/null\nerr_log_file: /dev/null\n"})
	m.submit(engine.Act{Task: "long", Action: job.ActStart, By: "bob"})
	m.submit(engine.Act{Task: "short", Action: job.ActStart, By: "bob"})
	m.submit(engine.Act{Task: "long", Action: job.ActAbort, By: "alice"})
	m.advance(m.s.Now()) // the killed run ends
	m.stop()

	m = openSimWith(t, dir, t0, func(*Config) {})
	for task, want := range map[string]job.Run{"long": {Status: job.Aborted, By: "bob", EndedBy: "alice"}, "short": {Status: job.Success, By: "bob"}} {
		if rs := m.runs(task); len(rs) != 1 || rs[0].Status != want.Status || rs[0].By != want.By || rs[0].EndedBy != want.EndedBy {
			t.Errorf("runs of %s: %+v; want one %s by %q, ended by %q", task, rs, want.Status, want.By, want.EndedBy)
		}
	}
	recs, err := m.st.Audit(context.Background(), 0, 10)
	if err != nil || len(recs) != 2 {
		t.Fatalf("audit records %+v, %v", recs, err)
	}
	for _, r := range recs {
		if r.Task == "long" && (r.By != "bob" || r.EndedBy != "alice") || r.Task == "short" && (r.By != "bob" || r.EndedBy != "") {
			t.Errorf("audit record %+v", r)
		}
	}
	m.stop()
	b, err := os.ReadFile(filepath.Join(dir, AuditFile))
	if err != nil {
		t.Fatal(err)
	}
	if s := string(b); !strings.Contains(s, " : abnormal : aborted: killed by signal terminated : by bob : ended by alice\n") || !strings.Contains(s, " : normal : success : by bob\n") {
		t.Errorf("audit.log:\n%s", b)
	}
}

// A node's run that an operator's reprocess starts names the operator,
// and one their skip cancels names them as who ended it, in the run
// history and the audit records, after a restart too. Runs the tree's
// clock starts name no one.
func TestNodeRunsNameTheOperator(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	m := openSim(t, dir, t0, nil)
	m.define(DefineFile{File: "site.json", Text: siteTrees(dir)})
	// The runs the definition starts take virtual time as they take real
	// time: the clock may already be past t0.
	m.advance(m.s.Now())
	if _, err := m.s.Trees(ctx, periods.Reprocess{Process: "site_hourly", Timeperiod: "2026030801", By: "alice"}); err != nil {
		t.Fatal(err)
	}
	m.advance(m.s.Now()) // the run ends
	m.advance(time.Date(2026, 3, 9, 0, 6, 0, 0, time.UTC))
	day := m.nodes("site_daily")["2026030800"]
	if day.RunStatus != periods.RunRequested {
		t.Fatalf("day: %+v, want its run requested", day)
	}
	if _, err := m.s.Trees(ctx, periods.Skip{Process: "site_daily", Timeperiods: []string{"2026030800"}, By: "carol"}); err != nil {
		t.Fatal(err)
	}
	m.stop()

	m = openSim(t, dir, t0, nil)
	defer m.stop()
	var hour []job.Run
	for _, r := range m.runs("site_hourly") {
		if r.Timeperiod == "2026030801" {
			hour = append(hour, r)
		} else if r.By != "" || r.EndedBy != "" {
			t.Errorf("a run the clock started: %+v", r)
		}
	}
	if len(hour) != 2 || hour[0].By != "alice" || hour[0].Status != job.Success || hour[0].EndedBy != "" || hour[1].By != "" {
		t.Errorf("runs of hour 01, newest first: %+v; want the reprocessed one by alice, the first by no one", hour)
	}
	if rs := m.runs("site_daily"); len(rs) != 1 || rs[0].Status != job.Aborted || rs[0].By != "" || rs[0].EndedBy != "carol" {
		t.Errorf("runs of the day: %+v; want one canceled by carol", rs)
	}
	recs, err := m.st.Audit(ctx, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	var named []string
	for _, r := range recs {
		if r.By != "" || r.EndedBy != "" {
			named = append(named, r.Task+" "+r.By+" "+r.EndedBy)
		}
	}
	if !slices.Equal(named, []string{"site_hourly alice ", "site_daily  carol"}) {
		t.Errorf("audit records naming someone: %q", named)
	}
}
