package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/internal/ostest"
)

// TestScopedAdminCannotEscalate replays the escalation of a scoped admin
// through the real server: its command defined to read the data directory
// (or to make itself an admin token there with token create --direct) ran
// as the server's user. Now a token with a scope defines commands only for
// the owners it is given, and those cannot read the data directory.
func TestScopedAdminCannotEscalate(t *testing.T) {
	u := ostest.NewUser(t)
	f := setup(t)
	// Only the data directory's own mode keeps the owner out.
	for _, d := range []string{f.dir, filepath.Dir(f.dir)} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	data := filepath.Join(f.dir, "data")
	tok := strings.TrimSpace(f.mustRun("gnomon", "token", "create", "--name", "demo-admin", "--role", "admin", "--scope", "demo_*", "--owners", u.Name))
	if out := f.mustRun("gnomon", "token", "list"); !strings.Contains(out, "demo_* owners="+u.Name) {
		t.Errorf("token list does not show the owners:\n%s", out)
	}
	as := func(args ...string) (string, string, int) {
		t.Helper()
		return f.runEnv(map[string]string{"GNOMON_TOKEN": tok}, args...)
	}
	task := func(owner, command string) string {
		def := "insert_task: demo_pwn\ntype: callable\ncommand: " + command + "\nout_log_file: @DIR@/pwn.out\nerr_log_file: @DIR@/pwn.err\n"
		if owner != "" {
			def += "owner: " + owner + "\n"
		}
		return f.file("pwn.def", def)
	}
	mint := fmt.Sprintf("gnomon token create --direct --data %s --name pwned --role admin", data)
	for _, owner := range []string{"", "root"} {
		_, errs, code := as("gnomon", "def", "-f", task(owner, mint))
		if code != ExitRejected || !strings.Contains(errs, "definitions:write on task demo_pwn, whose command runs as ") ||
			!strings.Contains(errs, "demo-admin's owners are ["+u.Name+"]") {
			t.Errorf("owner %q: exit %d %s; want a refusal naming the owners", owner, code, errs)
		}
	}
	// As its owner, the command cannot read the data directory.
	if _, errs, code := as("gnomon", "def", "-f", task(u.Name, "cat "+filepath.Join(data, "admin.token"))); code != 0 {
		t.Fatalf("defining demo_pwn as %s: exit %d %s", u.Name, code, errs)
	}
	if _, errs, code := as("gnomon", "event", "-j", "demo_pwn", "-e", "start"); code != 0 {
		t.Fatalf("start: exit %d %s", code, errs)
	}
	f.waitStatus("demo_pwn", "failure")
	// A token without a scope but with owners: a tree level's command
	// without an owner runs as the default owner, which it does not cover.
	wide := strings.TrimSpace(f.mustRun("gnomon", "token", "create", "--name", "tree-admin", "--role", "admin", "--owners", u.Name))
	// Its first period is the current hour's: nothing is due yet.
	tree := `{"settings": {"startTimeperiod": "` + time.Now().UTC().Format("2006010215") + `"}, "trees": [{"name": "hits", "levels": [{"process": "hits_hourly", "qualifier": "hourly", "command": "` + mint + `"OWNER}]}]}`
	if _, errs, code := f.runEnv(map[string]string{"GNOMON_TOKEN": wide}, "gnomon", "def", "-f", f.file("t.json", strings.Replace(tree, "OWNER", "", 1))); code != ExitRejected ||
		!strings.Contains(errs, "timeperiod process hits_hourly, whose command runs as ") {
		t.Errorf("a tree level without an owner: exit %d %s", code, errs)
	}
	if _, errs, code := f.runEnv(map[string]string{"GNOMON_TOKEN": wide}, "gnomon", "def", "-f", f.file("t.json", strings.Replace(tree, "OWNER", `, "owner": "`+u.Name+`"`, 1))); code != 0 {
		t.Errorf("a tree level owned by %s: exit %d %s", u.Name, code, errs)
	}
	if b, _ := os.ReadFile(filepath.Join(f.dir, "pwn.err")); !strings.Contains(string(b), "Permission denied") {
		t.Errorf("pwn.err = %q, want a permission denied", b)
	}
	if b, _ := os.ReadFile(filepath.Join(f.dir, "pwn.out")); strings.Contains(string(b), "gnomon_") {
		t.Errorf("the owner read the admin token: %q", b)
	}
}
