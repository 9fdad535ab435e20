package cli

import (
	"strings"
	"testing"
)

// TestDidYouMean misspells task names, events and flags: each message
// echoes what was given and names the closest known ones, and the exit
// codes stay those of the seed.
func TestDidYouMean(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.mustRun("schd_def", "-f", f.file("two.def", `insert_task: nightly_backup
type: callable
command: true
out_log_file: @DIR@/a.out
err_log_file: @DIR@/a.err

insert_task: nightly_report
type: callable
command: true
out_log_file: @DIR@/b.out
err_log_file: @DIR@/b.err
`))
	for _, c := range []struct {
		args []string
		code int
		want string // the whole of stderr
	}{
		{[]string{"schd_status", "-j", "nightly_bakup"}, 1, "ERROR task nightly_bakup not found; did you mean nightly_backup?\n"},
		{[]string{"gnomon", "task", "-j", "nightly_bakup"}, 1, "ERROR task nightly_bakup not found; did you mean nightly_backup?\n"},
		{[]string{"gnomon", "why", "-j", "nightly_reprot"}, 1, "ERROR task nightly_reprot not found; did you mean nightly_report?\n"},
		{[]string{"schd_runs", "-j", "Nightly_Backup"}, 1, "ERROR task Nightly_Backup not found; did you mean nightly_backup?\n"},
		{[]string{"schd_event", "-j", "nightly_bakup", "-e", "start"}, 1, "ERROR task nightly_bakup not found; did you mean nightly_backup?\n"},
		{[]string{"gnomon", "status", "-j", "nightly"}, 1, "ERROR task nightly not found; did you mean nightly_backup or nightly_report?\n"},
		{[]string{"gnomon", "status", "-j", "zz"}, 1, "ERROR task zz not found\n"},
		{[]string{"schd_event", "-j", "nightly_backup", "-e", "strat"}, 2, `ERROR invalid send event "strat"; did you mean start? (want start, abort, freeze, reset, green or red)` + "\n"},
		{[]string{"schd_event", "-j", "nightly_backup", "-e", "launch"}, 2, `ERROR invalid send event "launch" (want start, abort, freeze, reset, green or red)` + "\n"},
		{[]string{"schd_event", "-j", "nightly_backup"}, 2, "ERROR -e EVENT is required: start, abort, freeze, reset, green or red\n"},
		{[]string{"gnomon", "status", "--jbo", "nightly_backup"}, 2, "ERROR unknown flag: --jbo; did you mean --job?\n"},
		{[]string{"schd_runs", "-j", "nightly_backup", "--cuont", "2"}, 2, "ERROR unknown flag: --cuont; did you mean --count?\n"},
		{[]string{"gnomon", "status", "-j", "nightly_backup", "--servr", "http://x"}, 2, "ERROR unknown flag: --servr; did you mean --server?\n"},
		{[]string{"gnomon", "status", "--frobnicate"}, 2, "ERROR unknown flag: --frobnicate (gnomon status --help lists the flags)\n"},
		{[]string{"gnomon", "--frobnicate"}, 2, "ERROR unknown flag: --frobnicate (gnomon --help lists the flags)\n"},
		{[]string{"gnomon", "token", "lsit"}, 2, `ERROR unknown command "lsit" for "gnomon token": did you mean list?` + "\n"},
		{[]string{"gnomon", "token", "zzz"}, 2, `ERROR unknown command "zzz" for "gnomon token" (gnomon help token lists them)` + "\n"},
		{[]string{"gnomon", "clock", "advnce"}, 2, `ERROR unknown command "advnce" for "gnomon clock": did you mean advance?` + "\n"},
		{[]string{"gnomon", "context", "lsit"}, 2, `ERROR unknown command "lsit" for "gnomon context": did you mean list?` + "\n"},
		{[]string{"gnomon", "runs", "-job", "nightly_backup", "-x"}, 2, "ERROR unknown shorthand flag: 'x' in -x (gnomon runs --help lists the flags)\n"},
	} {
		_, errs, code := f.run(c.args...)
		if code != c.code || errs != c.want {
			t.Errorf("%s: exit %d, stderr %q; want exit %d, %q", strings.Join(c.args, " "), code, errs, c.code, c.want)
		}
	}
	// A command that only groups others, given none: its help on
	// stderr, and a usage error.
	out, errs, code := f.run("gnomon", "calendar")
	if code != ExitUsage || out != "" || !strings.HasSuffix(errs, "ERROR a command is needed: gnomon calendar COMMAND (gnomon help calendar lists them)\n") {
		t.Errorf("gnomon calendar: exit %d, stdout %q, stderr %q", code, out, errs)
	}
}
