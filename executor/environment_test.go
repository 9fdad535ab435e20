package executor

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gnomon-sched/gnomon/internal/ostest"
	"github.com/gnomon-sched/gnomon/job"
)

// A command gets its task's variables, each expanded against those before
// it, the parameters and GNOMON_*; starts in its working directory, reads
// its standard input file, and creates files under its umask.
func TestCommandEnvironment(t *testing.T) {
	t.Parallel()
	f := setup(t)
	work := filepath.Join(f.dir, "work")
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.dir, "in.txt"), []byte("from the input file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(f.dir, "token")
	if err := os.WriteFile(secret, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := f.spec(1, `echo "$BASE|$OUT|$REGION|$DAY|$WHO|$PRICE|$TOKEN|$(pwd)"; cat; touch made; stat -c %a made`)
	s.Env = &job.Environment{
		Vars: []job.Var{
			{Name: "BASE", Value: f.dir},
			{Name: "OUT", Value: "${BASE}/out/$REGION"},
			{Name: "WHO", Value: "$GNOMON_TASK-${GNOMON_RUN_ID}"},
			{Name: "PRICE", Value: "$$5 $ and ${UNSET}end"},
			{Name: "TOKEN", Value: job.SecretPrefix + secret},
		},
		WorkingDir: "${BASE}/work",
		StdIn:      "$BASE/in.txt",
		Umask:      "077",
		Params:     []job.Var{{Name: "REGION", Value: "eu"}, {Name: "DAY", Value: "2026-03-01"}},
	}
	f.x.Start(s)
	if e := f.wait(); e.Result != job.ResultNormal || e.Code != 0 {
		t.Fatalf("exit = %+v, err log %q", e, f.read("err.log"))
	}
	want := f.dir + "|" + f.dir + "/out/eu|eu|2026-03-01|t-1|$5 $ and end|s3cret|" + work + "\nfrom the input file\n600\n"
	if got := f.read("out.log"); got != want {
		t.Errorf("out.log = %q, want %q", got, want)
	}
	if _, err := os.Stat(filepath.Join(work, "made")); err != nil {
		t.Errorf("the command did not run in its working directory: %v", err)
	}
}

// What keeps a command from starting is reported as a failed launch that
// names the attribute, and never holds a secret's content.
func TestCommandEnvironmentRefused(t *testing.T) {
	t.Parallel()
	f := setup(t)
	open := filepath.Join(f.dir, "open")
	if err := os.WriteFile(open, []byte("s3cret"), 0o644); err != nil {
		t.Fatal(err)
	}
	for i, tt := range []struct {
		env  job.Environment
		want string
	}{
		{job.Environment{Vars: []job.Var{{Name: "T", Value: job.SecretPrefix + open}}}, "envvars T: " + open + " may be read or written by others (mode 0644): chmod 600 it"},
		{job.Environment{Vars: []job.Var{{Name: "T", Value: job.SecretPrefix + f.dir}}}, "envvars T: " + f.dir + " is a directory, not a regular file"},
		{job.Environment{Vars: []job.Var{{Name: "T", Value: job.SecretPrefix + "/nonexistent/secret"}}}, "envvars T: open /nonexistent/secret: no such file or directory"},
		{job.Environment{WorkingDir: "/nonexistent/dir"}, "working_dir: stat /nonexistent/dir: no such file or directory"},
		{job.Environment{WorkingDir: open}, "working_dir: " + open + " is not a directory"},
		{job.Environment{StdIn: "/nonexistent/in"}, "std_in_file: open /nonexistent/in: no such file or directory"},
	} {
		s := f.spec(int64(10+i), "echo ran")
		s.Env = &tt.env
		f.x.Start(s)
		e := f.wait()
		if e.Result != job.ResultLaunch || e.Message != tt.want {
			t.Errorf("%+v: exit %+v, want a failed launch saying %q", tt.env, e, tt.want)
		}
		if strings.Contains(e.Message, "s3cret") {
			t.Errorf("the message shows the secret: %q", e.Message)
		}
	}
	if out := f.read("out.log"); out != "" {
		t.Errorf("a refused command ran: %q", out)
	}
}

// The standard input of a command run as another user is opened as that
// user: the server's files are not its input.
func TestStdInAsOwner(t *testing.T) {
	t.Parallel()
	u := ostest.NewUser(t)
	f := setup(t)
	traversable(t, f.dir)
	private := filepath.Join(f.dir, "private")
	if err := os.WriteFile(private, []byte("server only\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	public := filepath.Join(f.dir, "public")
	if err := os.WriteFile(public, []byte("anyone\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := f.spec(1, "cat")
	s.Owner, s.Env = u.Name, &job.Environment{StdIn: public}
	f.x.Start(s)
	if e := f.wait(); e.Code != 0 || f.read("out.log") != "anyone\n" {
		t.Fatalf("exit %+v, out %q, err %q", e, f.read("out.log"), f.read("err.log"))
	}
	s = f.spec(2, "cat")
	s.OutLog, s.ErrLog = filepath.Join(f.dir, "out2.log"), filepath.Join(f.dir, "err2.log")
	s.Owner, s.Env = u.Name, &job.Environment{StdIn: private}
	f.x.Start(s)
	if e := f.wait(); e.Code != 126 || strings.Contains(f.read("out2.log"), "server only") ||
		!strings.Contains(f.read("err2.log"), "gnomon: std_in_file "+private+" cannot be read") {
		t.Errorf("exit %+v, out %q, err %q: want status 126 and the file unread", e, f.read("out2.log"), f.read("err2.log"))
	}
}

func TestExpand(t *testing.T) {
	t.Parallel()
	vals := map[string]string{"A": "1", "B_2": "two"}
	for in, want := range map[string]string{
		"": "", "plain": "plain", "$A": "1", "${A}x": "1x", "$Ax": "", "$B_2/$A": "two/1", "$$A": "$A",
		"$": "$", "a$": "a$", "$ A": "$ A", "${A": "${A", "$-": "$-", "${}": "", "$9": "$9",
	} {
		if got := expand(in, vals); got != want {
			t.Errorf("expand(%q) = %q, want %q", in, got, want)
		}
	}
}
