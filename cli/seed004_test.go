package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/internal/smtptest"
)

// The seed-004 demo (examples/seed004.def) through the command line on a
// simulated clock, with alerts to a real SMTP server: jobA at 01:00, jobB
// 10 s after its success, jobC after jobB; the group mails each success,
// jobC's own alert its failure; every ended run is in audit.log.
func TestSeed004Demo(t *testing.T) {
	t.Parallel()
	mb := smtptest.Start(t, "127.0.0.1:0")
	f := setup(t, simulateFrom("2026-03-10 00:00"), func(c *ServerConfig) {
		c.SMTP.Addr, c.SMTP.From = mb.Addr, "gnomon@example.com"
	})
	text, err := os.ReadFile("../examples/seed004.def")
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(f.dir, "logs"), 0o755)
	def := strings.ReplaceAll(string(text), "gnomon-data/", f.dir+"/")
	f.mustRun("gnomon", "def", "-f", f.file("seed004.def", def))
	if out := f.mustRun("gnomon", "task", "-j", "group_1"); !strings.Contains(out, "Group Name: group_1\nJobs: jobA,jobB,jobC\n") {
		t.Errorf("task -j group_1:\n%s", out)
	}
	f.mustRun("gnomon", "clock", "advance", "--to", "2026-03-10 01:01")
	runs := map[string]string{}
	for _, j := range []string{"jobA", "jobB", "jobC"} {
		runs[j] = f.mustRun("schd_runs", "-j", j)
	}
	for _, j := range []string{"jobA", "jobB", "jobC"} {
		if !strings.Contains(runs[j], "success") {
			t.Errorf("runs of %s:\n%s\nwant a success", j, runs[j])
		}
	}
	// jobA fires at 01:00 (Paris, UTC+1 in March), jobB 10 s after jobA
	// ended, jobC when jobB ended. A run takes the virtual time it takes
	// for real, which a loaded machine stretches past a second: the starts
	// are checked against the ends before them, not against set seconds.
	runA, runB, runC := lastRun(t, f.client, "jobA"), lastRun(t, f.client, "jobB"), lastRun(t, f.client, "jobC")
	if want := time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC); !runA.Start.Equal(want) {
		t.Errorf("jobA started at %s, want %s", runA.Start, want)
	}
	if !runB.Start.Equal(runA.End.Add(10 * time.Second)) {
		t.Errorf("jobB started at %s, want 10 s after jobA ended, at %s", runB.Start, runA.End)
	}
	if !runC.Start.Equal(runB.End) {
		t.Errorf("jobC started at %s, want as jobB ended, at %s", runC.Start, runB.End)
	}
	msgs := mb.Wait(t, 3)
	var subjects []string
	for _, m := range msgs {
		subjects = append(subjects, m.Subject)
		if to := slices.Sorted(slices.Values(m.To)); !slices.Equal(to, []string{"name2@example.com", "name3@example.com"}) {
			t.Errorf("%s went to %v", m.Subject, m.To)
		}
	}
	slices.Sort(subjects)
	if !slices.Equal(subjects, []string{"gnomon: jobA success", "gnomon: jobB success", "gnomon: jobC success"}) {
		t.Errorf("subjects %q", subjects)
	}
	// jobC fails next time: its own alert goes to name1 only.
	f.mustRun("gnomon", "def", "-f", f.file("fail.def", "update_task: jobC\ncommand: ls /no/such/dir\n"))
	f.mustRun("schd_event", "-j", "jobA", "-e", "start")
	f.mustRun("gnomon", "clock", "advance", "--to", "2026-03-10 01:02")
	msgs = mb.Wait(t, 6)
	var failure *smtptest.Message
	for i := range msgs {
		if msgs[i].Subject == "gnomon: jobC failure" {
			failure = &msgs[i]
		}
	}
	if failure == nil || !slices.Equal(failure.To, []string{"name1@example.com"}) || !strings.Contains(failure.Body, "Exit code: 2") {
		t.Fatalf("no failure mail to name1 with the exit code: %+v", msgs)
	}
	out := f.mustRun("gnomon", "alerts", "-j", "jobC")
	if !strings.Contains(out, "failure") || !strings.Contains(out, "sent") {
		t.Errorf("alerts -j jobC:\n%s", out)
	}
	audit := f.mustRun("gnomon", "audit")
	lines := strings.Split(strings.TrimSpace(audit), "\n")
	if len(lines) != 6 || !strings.HasPrefix(lines[0], "jobA : 2026-03-10T01:00:00+01:00 : ") ||
		!strings.HasSuffix(lines[5], " : normal : failure: exit status 2") || !strings.HasPrefix(lines[5], "jobC : ") {
		t.Errorf("audit:\n%s", audit)
	}
	f.stop()
	b, err := os.ReadFile(filepath.Join(f.dir, "data", "audit.log"))
	if err != nil || string(b) != audit {
		t.Errorf("audit.log = %q, %v; want what the API listed:\n%s", b, err, audit)
	}
}
