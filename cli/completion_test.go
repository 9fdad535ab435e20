package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCompletionScripts checks that the scripts register gnomon and the
// five seed names, and, where bash is installed, that sourcing the bash
// script registers all six.
func TestCompletionScripts(t *testing.T) {
	t.Parallel()
	f := &fixture{t: t, dir: t.TempDir()}
	names := []string{"gnomon", "schd_def", "schd_event", "schd_runs", "schd_status", "schd_task"}

	bash := f.mustRun("gnomon", "completion", "bash")
	if !strings.Contains(bash, "complete -o default -F __start_gnomon gnomon\n") ||
		!strings.Contains(bash, "complete -o default -F __start_gnomon schd_def schd_event schd_runs schd_status schd_task\n") {
		t.Errorf("the bash script does not register the six commands:\n%s", bash)
	}
	if zsh := f.mustRun("gnomon", "completion", "zsh"); !strings.HasPrefix(zsh, "#compdef gnomon schd_def schd_event schd_runs schd_status schd_task\n") ||
		!strings.Contains(zsh, "\ncompdef _gnomon schd_def schd_event schd_runs schd_status schd_task\n") {
		t.Errorf("the zsh script does not register the six commands:\n%s", zsh)
	}
	fish := f.mustRun("gnomon", "completion", "fish")
	ps := f.mustRun("gnomon", "completion", "powershell")
	for _, n := range names {
		if !strings.Contains(fish, "complete -c "+n+" -n 'not __gnomon_requires_order_preservation && __gnomon_prepare_completions'") {
			t.Errorf("the fish script does not register %s", n)
		}
		if !strings.Contains(ps, "Register-ArgumentCompleter -CommandName '"+n+"' -ScriptBlock ${__gnomonCompleterBlock}") {
			t.Errorf("the powershell script does not register %s", n)
		}
	}
	if _, errs, code := f.run("gnomon", "completion", "tcsh"); code != 2 || !strings.Contains(errs, `unknown shell "tcsh"`) {
		t.Errorf("unknown shell: exit %d, %q", code, errs)
	}

	sh, err := exec.LookPath("bash")
	if err != nil {
		t.Log("bash is not installed: the bash script was checked as text only")
		return
	}
	script := filepath.Join(f.dir, "gnomon.bash")
	if err := os.WriteFile(script, []byte(bash), 0o644); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"--norc", "--noprofile", "-c", `source "$0" && complete -p "$@"`, script}, names...)
	out, err := exec.Command(sh, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("bash: %v\n%s", err, out)
	}
	for _, n := range names {
		if !strings.Contains(string(out), "complete -o default -F __start_gnomon "+n+"\n") {
			t.Errorf("bash does not complete %s after sourcing the script:\n%s", n, out)
		}
	}
}

// TestCompleteTaskNames checks that -j completes with the names of the
// server's tasks, through gnomon and the seed names, and completes nothing,
// quietly, when the server does not answer.
func TestCompleteTaskNames(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.mustRun("schd_def", "-f", f.file("names.def", `insert_task: alpha
type: callable
command: true
out_log_file: @DIR@/a.out
err_log_file: @DIR@/a.err

insert_task: alpine
type: bundle

insert_task: beta
type: callable
command: true
out_log_file: @DIR@/b.out
err_log_file: @DIR@/b.err
`))
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"gnomon", "__complete", "status", "-j", ""}, "alpha\nalpine\nbeta\n:4\n"},
		{[]string{"gnomon", "__complete", "runs", "--job", "al"}, "alpha\nalpine\n:4\n"},
		{[]string{"schd_event", "__complete", "-j", "b"}, "beta\n:4\n"},
		{[]string{"schd_event", "__complete", "-j", "beta", "-e", "fr"}, "freeze\n:4\n"},
		{[]string{"schd_task", "__complete", "-j", ""}, "alpha\nalpine\nbeta\n:4\n"},
		{[]string{"schd_status", "__complete", "-j", "alp"}, "alpha\nalpine\n:4\n"},
		{[]string{"schd_runs", "__complete", "-c", "3", "-j", "be"}, "beta\n:4\n"},
		{[]string{"gnomon", "__complete", "export", "-j", ""}, "alpha\nalpine\nbeta\n:4\n"},
		{[]string{"gnomon", "__complete", "--server", "http://127.0.0.1:1", "status", "-j", ""}, ":4\n"},
		{[]string{"gnomon", "__complete", "sta"}, "start\tstart a task now, with parameter values (gnomon event NAME -e start -p ...)\n" +
			"status\tprint the latest status of a task (a bundle with its children)\n:4\n"},
		{[]string{"gnomon", "__complete", "start", "-j", "al"}, "alpha\nalpine\n:4\n"},
	}
	for _, tt := range tests {
		out, errs, code := f.run(tt.args...)
		if code != 0 || out != tt.want || strings.Contains(errs, "ERROR") {
			t.Errorf("%q: exit %d, stdout\n%s\nwant\n%s(stderr %q)", tt.args, code, out, tt.want, errs)
		}
	}
}
