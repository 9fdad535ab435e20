package defs

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/job"
)

// TestParseDuration reads every spelling of the one duration syntax, and
// refuses the rest echoing the value.
func TestParseDuration(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in   string
		want time.Duration
	}{
		{"90s", 90 * time.Second}, {"5m", 5 * time.Minute}, {"1h30m", 90 * time.Minute}, {"1500ms", 1500 * time.Millisecond},
		{"5", 5 * time.Minute}, {"0", 0}, {" 10 ", 10 * time.Minute},
		{"5 minutes", 5 * time.Minute}, {"1 minute", time.Minute}, {"1 hour 30 minutes", 90 * time.Minute}, {"2 days", 48 * time.Hour},
		{"1 week", 7 * 24 * time.Hour}, {"30 sec", 30 * time.Second}, {"1.5 hours", 90 * time.Minute}, {"10 s", 10 * time.Second},
		{"3 Hours", 3 * time.Hour}, {"2 mins", 2 * time.Minute},
	} {
		got, err := ParseDuration("retry_delay", tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
	for _, tt := range []struct{ in, want string }{
		{"soon", `retry_delay: "soon" is not a duration; write it as 90s, 5m or 1h30m, as 5 minutes, or as a number of minutes`},
		{"5 fortnights", `retry_delay: "5 fortnights" is not a duration (unknown unit "fortnights" (want seconds, minutes, hours, days or weeks))`},
		{"5 minutes 3", `retry_delay: "5 minutes 3" is not a duration (want numbers each followed by its unit)`},
		{"x minutes", `retry_delay: "x minutes" is not a duration ("x" is not a number)`},
		{"", `retry_delay: "" is not a duration;`},
		{"99999999999999999", `"99999999999999999" is not a duration (99999999999999999 minutes is out of range)`},
		{"9999999999 weeks", `"9999999999 weeks" is not a duration (out of range)`},
	} {
		if _, err := ParseDuration("retry_delay", tt.in); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseDuration(%q): %v; want %q", tt.in, err, tt.want)
		}
	}
}

// FuzzParseDuration: any value is read or refused with an error that names
// the attribute and echoes it; what is read is never negative unless Go's
// syntax said so.
func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"90s", "5", "1h30m", "5 minutes", "1 hour 30 minutes", "-5m", "1e300 hours", "NaN minutes", "5 5", "0.5 w"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDuration("start_delay", s)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "start_delay: ") {
				t.Fatalf("%q: %v does not name the attribute", s, err)
			}
			return
		}
		if d < 0 && !strings.HasPrefix(strings.TrimSpace(s), "-") {
			t.Fatalf("%q read as %v", s, d)
		}
	})
}

// TestDurationAttributes: every duration attribute takes the one syntax,
// and the old spellings still read as they did.
func TestDurationAttributes(t *testing.T) {
	t.Parallel()
	cur := load(t, base)
	res, err := run(cur, "update_task: a\nstart_delay: 10\nretry_delay: 5 minutes\nretry_max_delay: 1h\nn_retrys: 2\n"+
		"term_run_time: 1 hour 30 minutes\nmax_run_alarm: 45\nmin_run_alarm: 30s\nmust_start_by: +5 minutes\nmust_complete_by: +90\ncron: 0 3 * * *\n\n"+
		"update_task: b\ninterval: 90m\nstart_date: 2026-01-01 00:00\n")
	if err != nil {
		t.Fatal(err)
	}
	a := res.Tasks["a"]
	p := a.Extras().Policy
	if a.Extras().StartDelay != job.Duration(10*time.Minute) || p.RetryDelay != job.Duration(5*time.Minute) || p.RetryMaxDelay != job.Duration(time.Hour) ||
		p.TermRunTime != job.Duration(90*time.Minute) || p.MaxRunAlarm != job.Duration(45*time.Minute) || p.MinRunAlarm != job.Duration(30*time.Second) ||
		p.MustStartBy.Offset != job.Duration(5*time.Minute) || p.MustCompleteBy.Offset != job.Duration(90*time.Minute) {
		t.Errorf("a: start_delay %v, policy %+v", a.Extras().StartDelay, p)
	}
	if got := res.Tasks["b"].Interval; got != "90 minutes" {
		t.Errorf("interval: 90m read as %q", got)
	}
	for in, want := range map[string]string{"1h": "1 hour", "90": "90 minutes", "45s": "45 seconds", "1 week": "1 week", "1 hour 30 minutes": "90 minutes"} {
		e, err := parseInterval(in)
		if err != nil || e.String() != want {
			t.Errorf("interval %q: %v, %v; want %s", in, e, err, want)
		}
	}
	for in, want := range map[string]string{
		"start_delay: -5m": `start_delay: "-5m" is negative`, "retry_delay: 0": `retry_delay: "0" is not positive`,
		"interval: 1500ms": `interval: "1500ms" should be a positive number of whole seconds`, "interval: soon": `interval: "soon" should be a number and a unit`,
		"must_start_by: +0\ncron: 0 3 * * *": `must_start_by: "+0" is not an offset after the occurrence`,
	} {
		_, err := run(cur, "update_task: a\n"+in+"\n")
		var errs Errors
		if !errors.As(err, &errs) || len(errs) != 1 || !strings.Contains(errs[0].Msg, want) || errs[0].Line != 2 {
			t.Errorf("%s: %v; want %q on line 2", in, err, want)
		}
	}
}

// TestMisspelledAttribute: an unknown attribute names the closest known
// ones, and the one it stands for is not also reported missing.
func TestMisspelledAttribute(t *testing.T) {
	t.Parallel()
	_, err := run(nil, "insert_task: x\ntype: callable\ncomand: echo x\nout_log_file: o\nerr_log_file: e\n\ninsert_task: y\ntype: callable\ncolour: red\n"+
		"command: y\nout_log_file: o\nerr_log_file: e\n")
	var errs Errors
	if !errors.As(err, &errs) {
		t.Fatalf("err = %v", err)
	}
	var got []string
	for _, e := range errs {
		got = append(got, e.Error())
	}
	want := []string{`f.def:3: insert_task x: invalid field "comand"; did you mean command?`, `f.def:9: insert_task y: invalid field "colour"`}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
