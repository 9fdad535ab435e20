package defs

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gnomon-sched/gnomon/job"
)

func TestEnvironment(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, text string
		want       *job.Environment
	}{
		{"one line of several", "envvars: ORACLE_SID=PROD, ORA_HOME=/opt/oracle, TNS=${ORA_HOME}/network\n",
			&job.Environment{Vars: []job.Var{{Name: "ORACLE_SID", Value: "PROD"}, {Name: "ORA_HOME", Value: "/opt/oracle"}, {Name: "TNS", Value: "${ORA_HOME}/network"}}}},
		{"lines add up, as in AutoSys", "envvars: A=1\nenvvars: B=$A$A\nenvvars: EMPTY=\n",
			&job.Environment{Vars: []job.Var{{Name: "A", Value: "1"}, {Name: "B", Value: "$A$A"}, {Name: "EMPTY"}}}},
		{"a comma inside a value", "envvars: LIST=a,b, c, NEXT=2\n",
			&job.Environment{Vars: []job.Var{{Name: "LIST", Value: "a,b, c"}, {Name: "NEXT", Value: "2"}}}},
		{"a quoted value", `envvars: Q="x, Y=z \"q\" \\", R=1` + "\n",
			&job.Environment{Vars: []job.Var{{Name: "Q", Value: `x, Y=z "q" \`}, {Name: "R", Value: "1"}}}},
		{"a secret", "envvars: TOKEN=@file:/etc/gnomon/secret\n",
			&job.Environment{Vars: []job.Var{{Name: "TOKEN", Value: "@file:/etc/gnomon/secret"}}}},
		{"the rest", "working_dir: $HOME/work\nstd_in_file: /data/in.txt\numask: 27\nparams: region=eu, day, note=\"a, b\"\n",
			&job.Environment{WorkingDir: "$HOME/work", StdIn: "/data/in.txt", Umask: "027",
				Params: []job.Var{{Name: "region", Value: "eu"}, {Name: "day"}, {Name: "note", Value: "a, b"}}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cur := load(t, "insert_task: x\n"+callable+tt.text)
			if diff := cmp.Diff(tt.want, cur["x"].Extras().Environment); diff != "" {
				t.Fatalf("environment (-want +got):\n%s", diff)
			}
			var b strings.Builder
			if err := Format(&b, []*job.Task{cur["x"]}); err != nil {
				t.Fatal(err)
			}
			again := load(t, b.String())
			if diff := cmp.Diff(cur["x"], again["x"]); diff != "" {
				t.Fatalf("round trip through\n%s\nchanged the task (-want +got):\n%s", b.String(), diff)
			}
			// The JSON form the store and the API hold keeps it too.
			var back job.Task
			j := cur["x"].JSON()
			j.Into(&back)
			if diff := cmp.Diff(cur["x"], &back); diff != "" {
				t.Fatalf("JSON round trip (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEnvironmentUpdate(t *testing.T) {
	t.Parallel()
	cur := load(t, "insert_task: x\n"+callable+"envvars: A=1\nenvvars: B=2\numask: 022\n")
	res, err := run(cur, "update_task: x\nenvvars: C=3\nenvvars: D=4\n")
	if err != nil {
		t.Fatal(err)
	}
	want := []job.Var{{Name: "C", Value: "3"}, {Name: "D", Value: "4"}}
	if diff := cmp.Diff(want, res.Tasks["x"].Extras().Env().Vars); diff != "" {
		t.Errorf("an update's lines replace the variables (-want +got):\n%s", diff)
	}
	if u := res.Tasks["x"].Extras().Env().Umask; u != "022" {
		t.Errorf("umask %q, want it kept", u)
	}
	res, err = run(res.Tasks, "update_task: x\nenvvars:\numask:\n")
	if err != nil {
		t.Fatal(err)
	}
	if e := res.Tasks["x"].Extra; e != nil && e.Environment != nil {
		t.Errorf("emptied environment kept as %+v", e.Environment)
	}
}

func TestEnvironmentErrors(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ text, want string }{
		{"insert_task: x\n" + callable + "envvars: 1A=x\n", `f.def:6: insert_task x: envvars: expected NAME=value at "1A=x"`},
		{"insert_task: x\n" + callable + "envvars: A\n", "f.def:6: insert_task x: envvars: A: expected = after the name, as in A=value"},
		{"insert_task: x\n" + callable + "envvars: A=1, A=2\n", "envvars: A given more than once"},
		{"insert_task: x\n" + callable + "envvars: A=1\nenvvars: A=2\n", "f.def:7: insert_task x: envvars: A given more than once"},
		{"insert_task: x\n" + callable + "envvars: GNOMON_TASK=x\n", "envvars: GNOMON_TASK: names starting with GNOMON_ are set by gnomon"},
		{"insert_task: x\n" + callable + "envvars: A=${B\n", "envvars: A: ${ at \"${B\" is not closed by }"},
		{"insert_task: x\n" + callable + "envvars: A=${1x}\n", "envvars: A: ${1x} does not name a variable"},
		{"insert_task: x\n" + callable + `envvars: A="open` + "\n", `envvars: A: the quote that opens "\"open" is not closed`},
		{"insert_task: x\n" + callable + `envvars: A="q" B=1` + "\n", `envvars: A: unexpected "B=1" after the closing quote`},
		{"insert_task: x\n" + callable + "envvars: T=@file:secret\n", `envvars: T: "secret" is not a clean absolute path`},
		{"insert_task: x\n" + callable + "working_dir: work\n", `working_dir: "work" is not an absolute path`},
		{"insert_task: x\n" + callable + "std_in_file: ${IN\n", "std_in_file: ${ at"},
		{"insert_task: x\n" + callable + "umask: 0999\n", `umask: "0999" is not a umask`},
		{"insert_task: x\n" + callable + "umask: 01777\n", `umask: "01777" is not a umask`},
		{"insert_task: x\n" + callable + "params: a=1\nenvvars: a=2\n", "envvars: a is also a parameter"},
		{"insert_task: x\n" + callable + "params: a=1, a=2\n", "params: a given more than once"},
		{"insert_task: f\ntype: callable\nfunction: log\nenvvars: A=1\n", "need a task that runs a command"},
		{"insert_task: f\ntype: callable\nfunction: log\nparams: a=1\numask: 022\n", "need a task that runs a command"},
		{"insert_task: b\ntype: bundle\nenvvars: A=1\n", "envvars: field is not allowed for bundle"},
	} {
		_, err := run(nil, tt.text)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: got %v, want %q", tt.text, err, tt.want)
		}
	}
}

// FuzzVars checks that a list ParseVars accepts is written back by
// FormatVars to one that reads the same.
func FuzzVars(f *testing.F) {
	for _, s := range []string{"A=1", "A=1, B=2", `Q="x, \"y\"", R=`, "L=a,b, C=3", "A=${B}$$", "p, q=1", `A=\`, `A=" x "`, "A=1,"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, bare := range []bool{false, true} {
			vars, err := ParseVars("envvars", s, bare)
			if err != nil {
				continue
			}
			text := FormatVars(vars)
			again, err := ParseVars("envvars", text, bare)
			if err != nil {
				t.Fatalf("%q read as %q, written as %q, which does not read: %v", s, vars, text, err)
			}
			if !cmp.Equal(vars, again) {
				t.Fatalf("%q read as %q, written as %q, read back as %q", s, vars, text, again)
			}
		}
	})
}

// TestFunctionParams: a task that runs a function takes params, which
// the function reads, and none of the rest of an environment.
func TestFunctionParams(t *testing.T) {
	t.Parallel()
	res, err := applyText(nil, nil, "insert_task: backup\ntype: callable\nfunction: log\nparams: dir=/srv/b, keep=3\n")
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Tasks["backup"].Extras().Env().Params; len(got) != 2 || got[0].Name != "dir" || got[1].Value != "3" {
		t.Errorf("params = %+v", got)
	}
	_, err = applyText(nil, nil, "insert_task: backup\ntype: callable\nfunction: log\nenvvars: A=1\n")
	if err == nil || !strings.Contains(err.Error(), "envvars, working_dir, std_in_file and umask need a task that runs a command") {
		t.Errorf("envvars on a function: %v", err)
	}
}
