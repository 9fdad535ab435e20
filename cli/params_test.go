package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const environmentDefs = `insert_task: load
type: callable
command: echo "region=$REGION day=$DAY out=$OUT who=$WHO token=$TOKEN dir=$(pwd)"; cat; touch made; stat -c %a made
out_log_file: @DIR@/load.out
err_log_file: @DIR@/load.err
envvars: BASE=@DIR@
envvars: OUT=${BASE}/out/$REGION, WHO=$GNOMON_TASK
envvars: TOKEN=@file:@DIR@/token
working_dir: $BASE/work
std_in_file: @DIR@/in.txt
umask: 077
params: REGION=eu, DAY
`

// A task's environment and parameters, defined as an AutoSys user writes
// them, reach its command started from the command line; the run records
// the values given, export writes the definition back, and the secret's
// content appears nowhere but in the command's environment.
func TestEnvironmentAndParameters(t *testing.T) {
	t.Parallel()
	f := setup(t)
	if err := os.Mkdir(filepath.Join(f.dir, "work"), 0o755); err != nil {
		t.Fatal(err)
	}
	f.file("in.txt", "input line\n")
	if err := os.WriteFile(filepath.Join(f.dir, "token"), []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f.mustRun("gnomon", "def", "-f", f.file("env.def", environmentDefs))

	f.mustRun("gnomon", "start", "-j", "load", "-p", "REGION=us, west", "-p", "DAY=2026-06-01")
	f.waitStatus("load", "success")
	out, _ := readFile(f.dir, "load.out")
	want := "region=us, west day=2026-06-01 out=" + f.dir + "/out/us, west who=load token=s3cret dir=" + f.dir + "/work\ninput line\n600\n"
	if out != want {
		t.Errorf("load.out = %q, want %q", out, want)
	}
	// The defaults, with gnomon event.
	f.mustRun("gnomon", "event", "-j", "load", "-e", "start")
	f.waitFor("the second run", func() bool {
		out, _ := readFile(f.dir, "load.out")
		return strings.Count(out, "region=") == 2
	})
	f.waitStatus("load", "success")
	if out, _ := readFile(f.dir, "load.out"); !strings.Contains(out, "region=eu day= out="+f.dir+"/out/eu ") {
		t.Errorf("with the defaults, load.out = %q", out)
	}

	if run := f.mustRun("gnomon", "run", "-j", "load", "1", "--tail", "0"); !strings.Contains(run, `parameters: DAY=2026-06-01, REGION="us, west"`) {
		t.Errorf("run 1 does not show its parameters:\n%s", run)
	}
	wide := f.mustRun("gnomon", "runs", "-j", "load", "-c", "2", "-o", "wide")
	if !strings.Contains(wide, "PARAMETERS") || !strings.Contains(wide, `DAY=2026-06-01, REGION="us, west"`) {
		t.Errorf("runs -o wide:\n%s", wide)
	}

	export := f.mustRun("gnomon", "export", "-j", "load")
	for _, line := range []string{
		"envvars: BASE=" + f.dir + ", OUT=${BASE}/out/$REGION, WHO=$GNOMON_TASK, TOKEN=@file:" + f.dir + "/token\n",
		"working_dir: $BASE/work\n", "std_in_file: " + f.dir + "/in.txt\n", "umask: 077\n", "params: REGION=eu, DAY=\n",
	} {
		if !strings.Contains(export, line) {
			t.Errorf("export lacks %q:\n%s", line, export)
		}
	}
	for _, shown := range []string{export, f.mustRun("gnomon", "task", "-j", "load", "-o", "json"), f.mustRun("gnomon", "runs", "-j", "load", "-c", "2", "-o", "json")} {
		if strings.Contains(shown, "s3cret") {
			t.Errorf("the secret is shown:\n%s", shown)
		}
	}
	// What export wrote applies again, unchanged.
	f.mustRun("gnomon", "def", "--sync", "-f", f.file("again.def", export))
	if again := f.mustRun("gnomon", "export", "-j", "load"); again != export {
		t.Errorf("export after applying the export:\n%s\nwant\n%s", again, export)
	}

	// A parameter the task does not declare is refused, naming those it does.
	_, errs, code := f.run("gnomon", "start", "-j", "load", "-p", "ZONE=x")
	if code == 0 || !strings.Contains(errs, `load declares no parameter "ZONE" (it declares REGION, DAY)`) {
		t.Errorf("undeclared parameter: exit %d, %s", code, errs)
	}
	_, errs, code = f.run("gnomon", "start", "-j", "load", "-p", "REGION")
	if code == 0 || !strings.Contains(errs, `--param "REGION": write NAME=VALUE`) {
		t.Errorf("a parameter without a value: exit %d, %s", code, errs)
	}
}
