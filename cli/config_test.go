package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gnomon-sched/gnomon/auth"
)

// clientProcess runs the command line as a process of its own (this test
// binary as its main program) in dir, with an environment of its own: the
// variables that name a server, a token or a configuration are taken out
// of the test's, HOME is home, and env adds to it.
func clientProcess(t *testing.T, dir, home string, env map[string]string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, args...)
	cmd.Dir = dir
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "HOME", "XDG_CONFIG_HOME", "GNOMON_CONFIG", "GNOMON_CONTEXT", "GNOMON_SERVER", "GNOMON_TOKEN",
			"GNOMON_TOKEN_FILE", "GNOMON_DATA", "GNOMON_CA_CERT", "GNOMON_CLIENT_CERT", "GNOMON_CLIENT_KEY":
			continue
		}
		cmd.Env = append(cmd.Env, kv)
	}
	cmd.Env = append(cmd.Env, envServerProcess+"=1", "HOME="+home)
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// writeToken writes a token to a file readable by its owner only.
func writeToken(t *testing.T, dir, name, tok string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(tok+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestLoginFromAnyDirectory logs in to a server a test started, into a
// home of its own, and runs commands from a directory that holds no data
// directory: they reach the server through the current context.
func TestLoginFromAnyDirectory(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.mustRun("schd_def", "-f", f.file("one.def", "insert_task: nightly_backup\ntype: callable\ncommand: true\nout_log_file: @DIR@/a.out\nerr_log_file: @DIR@/a.err\n"))
	home, elsewhere, secrets := t.TempDir(), t.TempDir(), t.TempDir()
	tokFile := writeToken(t, secrets, "operator.token", f.token("ops", auth.Operator))
	config := filepath.Join(home, ".config", "gnomon", "config.json")

	// Before: no server named, no token found; the message says what was
	// tried and how to fix it.
	_, errs, code := clientProcess(t, elsewhere, home, map[string]string{"GNOMON_SERVER": f.client.Base}, "status", "-j", "nightly_backup")
	for _, want := range []string{"no token was found; tried:", config + " does not exist", filepath.Join(elsewhere, "gnomon-data", "admin.token"), "gnomon login --server URL --token-file FILE", "GNOMON_DATA"} {
		if code != ExitRejected || !strings.Contains(errs, want) {
			t.Errorf("status before login: exit %d, stderr %q; want exit %d and %q", code, errs, ExitRejected, want)
		}
	}

	// A token the server refuses: nothing is saved.
	gone := writeToken(t, secrets, "revoked.token", f.token("gone", auth.Viewer))
	if _, err := f.client.RevokeToken(context.Background(), "gone"); err != nil {
		t.Fatal(err)
	}
	if _, errs, code := clientProcess(t, elsewhere, home, nil, "login", "--server", f.client.Base, "--token-file", gone); code != ExitRejected || !strings.Contains(errs, "the server refused the token") || !strings.Contains(errs, "nothing was saved") {
		t.Errorf("login with a revoked token: exit %d, %q", code, errs)
	}
	if _, err := os.Stat(config); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("login with a revoked token wrote %s (%v)", config, err)
	}

	out, errs, code := clientProcess(t, elsewhere, home, nil, "login", "--server", f.client.Base, "--token-file", tokFile, "--name", "test")
	if code != 0 || !strings.Contains(out, "as ops (operator); context test is current") {
		t.Fatalf("login: exit %d\n%s%s", code, out, errs)
	}
	st, err := os.Stat(config)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("%s has mode %v, want 0600", config, st.Mode().Perm())
	}
	if out, errs, code := clientProcess(t, elsewhere, home, nil, "status", "-j", "nightly_backup"); code != 0 || !strings.Contains(out, "nightly_backup") {
		t.Errorf("status after login: exit %d\n%s%s", code, out, errs)
	}
	if out, errs, code := clientProcess(t, elsewhere, home, nil, "token", "whoami"); code != 0 || !strings.Contains(out, "ops") {
		t.Errorf("whoami after login: exit %d\n%s%s", code, out, errs)
	}
	if out, errs, code := clientProcess(t, elsewhere, home, nil, "context", "list"); code != 0 || !strings.Contains(out, "*        test  "+f.client.Base+"  "+tokFile) {
		t.Errorf("context list: exit %d\n%s%s", code, out, errs)
	}
	out, errs, code = clientProcess(t, elsewhere, home, nil, "context", "show")
	for _, want := range []string{"context        test", "server         " + f.client.Base + "  (context test)", "token          from context test (token_file " + tokFile + ")"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("context show: exit %d, want %q in\n%s%s", code, want, out, errs)
		}
	}
	// A flag comes before the context.
	if _, errs, code := clientProcess(t, elsewhere, home, nil, "status", "-j", "nightly_backup", "--server", "http://127.0.0.1:1"); code != ExitUnreachable || !strings.Contains(errs, "the server's URL came from --server") {
		t.Errorf("--server over the context: exit %d, %q", code, errs)
	}
	// The environment too.
	if out, _, code := clientProcess(t, elsewhere, home, map[string]string{"GNOMON_SERVER": "http://127.0.0.1:1"}, "context", "show"); code != 0 || !strings.Contains(out, "http://127.0.0.1:1  ($GNOMON_SERVER)") {
		t.Errorf("$GNOMON_SERVER over the context: exit %d, %q", code, out)
	}
	if _, errs, code := clientProcess(t, elsewhere, home, nil, "context", "use", "tset"); code != ExitUsage || !strings.Contains(errs, `no context "tset"; did you mean test?`) {
		t.Errorf("context use tset: exit %d, %q", code, errs)
	}
	if out, errs, code := clientProcess(t, elsewhere, home, nil, "context", "delete", "test"); code != 0 || !strings.Contains(out, "context test deleted") {
		t.Errorf("context delete: exit %d\n%s%s", code, out, errs)
	}
	if _, errs, code := clientProcess(t, elsewhere, home, map[string]string{"GNOMON_SERVER": f.client.Base}, "status", "-j", "nightly_backup"); code != ExitRejected || !strings.Contains(errs, "names no current context") {
		t.Errorf("status after the context was deleted: exit %d, %q", code, errs)
	}

	// A token command instead of a token file.
	command := "cat '" + tokFile + "'"
	if out, errs, code := clientProcess(t, elsewhere, home, nil, "login", "--server", f.client.Base, "--token-command", command); code != 0 || !strings.Contains(out, "as ops (operator)") {
		t.Fatalf("login --token-command: exit %d\n%s%s", code, out, errs)
	}
	if out, errs, code := clientProcess(t, elsewhere, home, nil, "task", "-j", "nightly_backup", "-o", "json"); code != 0 || !strings.Contains(out, `"name": "nightly_backup"`) {
		t.Errorf("task after login --token-command: exit %d\n%s%s", code, out, errs)
	}
	if out, _, _ := clientProcess(t, elsewhere, home, nil, "context", "show"); !strings.Contains(out, "(token_command)") {
		t.Errorf("context show after login --token-command:\n%s", out)
	}

	// A file broken by hand: the command says where and what.
	if err := os.WriteFile(config, []byte("{\"current\": \"x\",\n \"contexts\": {\"x\": {\"server\": \"http://h:1\", \"tokn_file\": \"t\"}}}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, errs, code := clientProcess(t, elsewhere, home, nil, "status", "-j", "nightly_backup"); code != ExitUsage || errs != "ERROR "+config+`:2: contexts.x: unknown field "tokn_file"; did you mean token_file?`+"\n" {
		t.Errorf("status with a broken configuration: exit %d, %q", code, errs)
	}
}

// TestConfigErrors reads bad configuration files: each error names the
// file, the line and the field, and says what to do.
func TestConfigErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, c := range []struct {
		name, text, want string
	}{
		{"syntax", "{\n  \"current\": \"a\",\n  \"contexts\": {\"a\": {\"server\": \"http://h:1\"},}\n}\n", `:3: contexts: not valid JSON: invalid character '}' looking for beginning of object key string (a comma after the last member?)`},
		{"unknown", "{\"contexts\": {\n  \"a\": {\n    \"sever\": \"http://h:1\"}}}", `:3: contexts.a: unknown field "sever"; did you mean server?`},
		{"unknown top", "{\"curent\": \"a\"}", `:1: unknown field "curent"; did you mean current?`},
		{"type", "{\"contexts\": {\"a\": {\n\"server\": 8080}}}", `:2: contexts.a.server: want a string in double quotes, got the number 8080`},
		{"no server", "{\"contexts\": {\n\"a\": {\"data\": \"/d\"}}}", `:2: contexts.a.server: is required`},
		{"bad server", "{\"contexts\": {\n\"a\": {\"server\": \"127.0.0.1:8080\"}}}", `:2: contexts.a.server: "127.0.0.1:8080" is not a server URL: write http://HOST:PORT or https://HOST:PORT`},
		{"both tokens", "{\"contexts\": {\"a\": {\"server\": \"http://h:1\", \"token_file\": \"t\", \"token_command\": \"c\"}}}", `contexts.a.token_command: token_file and token_command exclude each other`},
		{"current", "{\"contexts\": {\"prod\": {\"server\": \"http://h:1\"}},\n\"current\": \"prd\"}", `:2: current: no context "prd"; did you mean prod?`},
		{"twice", "{\"current\": \"a\",\n\"current\": \"a\"}", `:2: current: given twice`},
		{"not object", "[1]", `:1: want an object { ... }, got a list`},
		{"trailing", "{}\n{}", `:2: an object after the closing } of the configuration`},
		{"short", "{\"contexts\": {", `: the file ends too soon`},
	} {
		path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_")+".json")
		if err := os.WriteFile(path, []byte(c.text), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := parseConfig(path, []byte(c.text))
		if err == nil || !strings.HasPrefix(err.Error(), path) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want %s...%s", c.name, err, path, c.want)
		}
		// Through the command line: a usage error, on one line.
		var out, errb bytes.Buffer
		code := Run(context.Background(), []string{"gnomon", "status", "-j", "x"}, Env{Stdout: &out, Stderr: &errb, Getenv: func(k string) string {
			if k == "GNOMON_CONFIG" {
				return path
			}
			return ""
		}})
		if code != ExitUsage || !strings.Contains(errb.String(), "ERROR "+path) || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%s: gnomon status: exit %d, %q", c.name, code, errb.String())
		}
	}
	// A flag and a variable that name the server and the token: the file
	// is not read.
	path := filepath.Join(dir, "unknown.json")
	var out, errb bytes.Buffer
	code := Run(context.Background(), []string{"gnomon", "status", "-j", "x", "--server", "http://127.0.0.1:1"}, Env{Stdout: &out, Stderr: &errb, Getenv: func(k string) string {
		switch k {
		case "GNOMON_CONFIG":
			return path
		case "GNOMON_TOKEN":
			return "gnomon_0123456789abcdef_" + strings.Repeat("A", 43)
		}
		return ""
	}})
	if strings.Contains(errb.String(), path) {
		t.Errorf("a broken configuration stopped a command that does not need it: exit %d, %q", code, errb.String())
	}
}

// TestConfigRelativePaths reads paths relative to the file's directory.
func TestConfigRelativePaths(t *testing.T) {
	t.Parallel()
	cfg, err := parseConfig("/etc/gnomon/config.json", []byte(`{"current":"a","contexts":{"a":{"server":"https://h:1","ca_cert":"ca.pem","token_file":"/abs/t","data":"../d"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := &clientContext{Server: "https://h:1", CACert: "/etc/gnomon/ca.pem", TokenFile: "/abs/t", Data: "/etc/d"}
	if got := cfg.Contexts["a"]; !reflect.DeepEqual(got, want) || cfg.Current != "a" {
		t.Errorf("got %+v, current %q; want %+v", got, cfg.Current, want)
	}
}

// FuzzParseConfig reads any text as a configuration file: it never
// panics, an error names the file, and what it accepts is written and read
// back the same.
func FuzzParseConfig(f *testing.F) {
	f.Add([]byte(`{"current":"a","contexts":{"a":{"server":"http://h:1","token_file":"/t","data":"/d"}}}`))
	f.Add([]byte(`{"contexts":{"a":{"server":"https://h:1","token_command":"pass show x","ca_cert":"ca.pem"}}}`))
	f.Add([]byte("{\n \"contexts\": {\"a\": {\"sever\": 1}},\n}"))
	f.Add([]byte(`{"current":"b","contexts":{}}`))
	f.Add([]byte(""))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		const file = "/cfg/config.json"
		cfg, err := parseConfig(file, b)
		if err != nil {
			if !strings.HasPrefix(err.Error(), file) {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		out, err := json.Marshal(cfg)
		if err != nil {
			t.Fatal(err)
		}
		again, err := parseConfig(file, out)
		if err != nil {
			t.Fatalf("written %s, read back: %v", out, err)
		}
		if !reflect.DeepEqual(cfg, again) {
			t.Fatalf("read back differs:\n%+v\n%+v", cfg, again)
		}
	})
}

// TestContextWithoutToken: the admin token of ./gnomon-data goes to the
// default server, never to a context's.
func TestContextWithoutToken(t *testing.T) {
	t.Parallel()
	home, dir := t.TempDir(), t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "gnomon-data"), 0o700); err != nil {
		t.Fatal(err)
	}
	admin := writeToken(t, filepath.Join(dir, "gnomon-data"), auth.AdminTokenFile, "gnomon_0123456789abcdef_"+strings.Repeat("A", 43))
	out, errs, code := clientProcess(t, dir, home, nil, "context", "show")
	if code != 0 || !strings.Contains(out, "token          from "+admin+" (the data directory, the default)") {
		t.Errorf("no context: exit %d\n%s%s", code, out, errs)
	}
	config := filepath.Join(home, "gnomon.json")
	if err := os.WriteFile(config, []byte(`{"current": "remote", "contexts": {"remote": {"server": "https://remote.example:8443"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errs, code = clientProcess(t, dir, home, map[string]string{"GNOMON_CONFIG": config}, "context", "show")
	if code != 0 || !strings.Contains(out, "server         https://remote.example:8443  (context remote)") || !strings.Contains(out, "token          none") {
		t.Errorf("a context without a token: exit %d\n%s%s", code, out, errs)
	}
}
