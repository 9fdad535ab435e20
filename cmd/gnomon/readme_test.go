package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestREADME follows README.md as a newcomer does, in a directory of its
// own with the repository's examples: it builds bin/gnomon, does what the
// set-up block's `make demo` does (the demo server in the background, the
// demo flow started and finished), writes the files the README shows
// (a fence named after a file), and runs every shell block after it, in
// order, in one shell, as one terminal would. A console block shows
// commands ("$ " lines) with what each prints: the test compares. The
// README's ports (8080, 8081, 8082, and 2525 of the tours' SMTP sink) are
// replaced by free ones. A block that fails, or prints other than the
// README shows, fails the test, and so does a file or directory the tours
// leave that make clean does not remove.
// Blocks fenced "sh postgres" are not run: they need a PostgreSQL
// database of the reader's (cli/migrate_test.go runs what they show).
func TestREADME(t *testing.T) {
	if testing.Short() {
		t.Skip("builds gnomon and runs the README's walkthroughs")
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(dir, "bin", "gnomon"), ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	if out, err := exec.Command("cp", "-r", "../../examples", dir).CombinedOutput(); err != nil {
		t.Fatalf("copying examples: %v\n%s", err, out)
	}
	ports := map[string]string{}
	for _, p := range []string{"8080", "8081", "8082", "2525"} {
		ports[p] = freePort(t)
	}
	localize := func(s string) string {
		return regexp.MustCompile(`(127\.0\.0\.1|localhost):(808[0-2]|2525)`).ReplaceAllStringFunc(s, func(m string) string {
			host, port, _ := strings.Cut(m, ":")
			return host + ":" + ports[port]
		})
	}

	var script strings.Builder
	script.WriteString("set -euo pipefail\n")
	blocks := fences(string(readme))
	setup := false
	var shown []console
	for i, b := range blocks {
		switch {
		case b.info == "sh setup":
			// What `make demo` does, in the background; `make test` is
			// this suite.
			setup = true
			fmt.Fprintf(&script, `./bin/gnomon server --data gnomon-data --definitions examples --listen 127.0.0.1:%s > server.log 2>&1 &
for i in $(seq 300); do ./bin/gnomon status -j demo_flow > /dev/null 2>&1 && break; sleep 0.2; done
./bin/gnomon event -j demo_flow -e start
for i in $(seq 300); do ./bin/gnomon status -j demo_report | grep -q success && break; sleep 0.2; done
./bin/gnomon status -j demo_report | grep -q success
`, ports["8080"])
		case !setup:
		case strings.HasSuffix(b.info, ".def") || strings.HasSuffix(b.info, ".json"):
			if err := os.WriteFile(filepath.Join(dir, b.info), []byte(b.body), 0o644); err != nil {
				t.Fatal(err)
			}
		case b.info == "sh":
			fmt.Fprintf(&script, "echo '@@ block %d (README.md line %d)'\n%s\n", i, b.line, localize(b.body))
		case b.info == "console":
			fmt.Fprintf(&script, "echo '@@ block %d (README.md line %d)'\n", i, b.line)
			for _, c := range commands(b) {
				fmt.Fprintf(&script, "%s > %s 2>&1\n", localize(c.cmd), filepath.Join(dir, fmt.Sprintf("console-%d", len(shown))))
				shown = append(shown, c)
			}
		}
	}
	if !setup {
		t.Fatal("README.md has no set-up block (a fence opened with ```sh setup)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	sh := exec.CommandContext(ctx, "bash", "-c", script.String())
	sh.Cancel = func() error { return syscall.Kill(-sh.Process.Pid, syscall.SIGKILL) }
	sh.WaitDelay = 5 * time.Second
	sh.Dir = dir
	sh.Env = append(os.Environ(), "HOME="+dir, "GNOMON_SERVER=http://127.0.0.1:"+ports["8080"], "GNOMON_DATA=")
	sh.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out bytes.Buffer
	sh.Stdout, sh.Stderr = &out, &out
	err = sh.Start()
	if err == nil {
		err = sh.Wait()
		// Servers the walkthroughs leave behind go with the shell's group.
		syscall.Kill(-sh.Process.Pid, syscall.SIGKILL)
	}
	if err != nil {
		log, _ := os.ReadFile(filepath.Join(dir, "server.log"))
		t.Fatalf("the README's shell blocks failed: %v\n%s\n--- the demo server's log:\n%s", err, out.String(), log)
	}
	// What the tours leave, make clean removes.
	cleaned := makeClean(t)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		name := e.Name()
		if name == "examples" || name == "server.log" || strings.HasPrefix(name, "console-") || cleaned[name] {
			continue // the repository's, or this test's own
		}
		t.Errorf("the README's tours leave %s, which make clean does not remove", name)
	}
	for i, c := range shown {
		got, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("console-%d", i)))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != c.output {
			t.Errorf("README.md line %d: %s printed\n%s\nthe README shows\n%s", c.line, c.cmd, got, c.output)
		}
	}
}

// makeClean returns the paths the Makefile's clean target removes: the
// words of its rm -rf line.
func makeClean(t *testing.T) map[string]bool {
	t.Helper()
	mk, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	_, recipe, ok := strings.Cut(string(mk), "\nclean:")
	if !ok {
		t.Fatal("the Makefile has no clean target")
	}
	_, rm, ok := strings.Cut(recipe, "rm -rf ")
	if !ok {
		t.Fatal("the clean target has no rm -rf line")
	}
	rm, _, _ = strings.Cut(rm, "\n")
	out := map[string]bool{}
	for _, w := range strings.Fields(rm) {
		out[w] = true
	}
	return out
}

// console is a command of a console block and the output shown after it.
type console struct {
	cmd, output string
	line        int
}

// commands returns the commands of a console block.
func commands(b block) []console {
	var out []console
	for i, l := range strings.Split(strings.TrimSuffix(b.body, "\n"), "\n") {
		if cmd, ok := strings.CutPrefix(l, "$ "); ok {
			out = append(out, console{cmd: cmd, line: b.line + 1 + i})
		} else if len(out) > 0 {
			out[len(out)-1].output += l + "\n"
		}
	}
	return out
}

// block is a fenced block of the README: its info string (after the
// backquotes), its body and the line it opens on.
type block struct {
	info, body string
	line       int
}

// fences returns the fenced blocks of a Markdown text, in order.
func fences(text string) []block {
	var out []block
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		info, ok := strings.CutPrefix(lines[i], "```")
		if !ok {
			continue
		}
		b := block{info: strings.TrimSpace(info), line: i + 1}
		var body []string
		for i++; i < len(lines) && lines[i] != "```"; i++ {
			body = append(body, lines[i])
		}
		b.body = strings.Join(body, "\n") + "\n"
		out = append(out, b)
	}
	return out
}

func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return port
}
