package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"runtime"
	"strings"
	"testing"
)

// runAlone runs a command line that needs no server.
func runAlone(args ...string) (stdout, stderr string, code int) {
	var out, errb bytes.Buffer
	code = Run(context.Background(), args, Env{Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }})
	return out.String(), errb.String(), code
}

// TestVersionAndUsage: gnomon version and --version name the version and
// the Go that built the binary; bare gnomon and an unknown command are
// usage errors (exit 2) that say what to do, a near miss naming the
// command meant.
func TestVersionAndUsage(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"gnomon", "version"}, {"gnomon", "--version"}} {
		out, errs, code := runAlone(args...)
		if code != ExitOK || !strings.HasPrefix(out, "gnomon "+Version) || !strings.Contains(out, runtime.Version()) || errs != "" {
			t.Errorf("%v: exit %d, %q, %q", args, code, out, errs)
		}
	}
	out, _, code := runAlone("gnomon", "version", "--json")
	var b BuildInfo
	if err := json.Unmarshal([]byte(out), &b); err != nil || code != ExitOK || b.Version != Version || b.Go != runtime.Version() {
		t.Errorf("version --json: exit %d, %q (%v)", code, out, err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"gnomon"}, "ERROR a command is needed: gnomon COMMAND (gnomon help lists them)"},
		{[]string{"gnomon", "stauts"}, `ERROR unknown command "stauts" for "gnomon": did you mean status or start?`},
		{[]string{"gnomon", "frobnicate"}, `ERROR unknown command "frobnicate" for "gnomon" (gnomon help lists them)`},
	} {
		out, errs, code := runAlone(c.args...)
		if code != ExitUsage || out != "" || !strings.Contains(errs, c.want+"\n") || strings.Contains(errs, `\n`) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and %q", c.args, code, out, errs, c.want)
		}
	}
}
