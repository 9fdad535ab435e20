package cli

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// TestProgressOnlyOnATerminal: a command that waits 4.9 s shows its
// progress on a terminal from 2 s on, every half second, and erases it at
// the end; piped, it prints nothing.
func TestProgressOnlyOnATerminal(t *testing.T) {
	t.Parallel()
	for _, terminal := range []bool{true, false} {
		synctest.Test(t, func(t *testing.T) {
			var errb bytes.Buffer
			env := &Env{Stderr: &errb, IsTerminal: func(io.Writer) bool { return terminal }}
			asked := 0
			err := withProgress(context.Background(), env, "work", func(context.Context) string {
				asked++
				return "step " + strings.Repeat("I", asked)
			}, func() error {
				time.Sleep(4900 * time.Millisecond)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			got := errb.String()
			if !terminal {
				if got != "" || asked != 0 {
					t.Errorf("piped: %q, status asked %d times", got, asked)
				}
				return
			}
			want := "\r\x1b[Kwork: step I (2s)\r\x1b[Kwork: step II (3s)\r\x1b[Kwork: step III (3s)\r\x1b[Kwork: step IIII (4s)" +
				"\r\x1b[Kwork: step IIIII (4s)\r\x1b[Kwork: step IIIIII (5s)\r\x1b[K"
			if got != want || asked != 6 {
				t.Errorf("on a terminal:\n%q\nwant\n%q", got, want)
			}
		})
	}
}

// TestClockAdvanceProgress: clock advance on a terminal says where the
// virtual clock is while a run holds it, and ends with the clock's reading
// on stdout alone.
func TestClockAdvanceProgress(t *testing.T) {
	t.Parallel()
	f := setup(t, simulateFrom("2026-06-01T00:00:00Z"), func(c *ServerConfig) { c.Timezone = "UTC" })
	f.mustRun("gnomon", "def", "-f", f.file("slow.def", "insert_task: slow\ntype: callable\n"+
		"command: while [ ! -f @DIR@/go ]; do sleep 0.02; done\nout_log_file: @DIR@/slow.out\nerr_log_file: @DIR@/slow.err\ncron: 5 0 * * *\n"))
	var out, errb lockedBuffer
	done := make(chan int)
	go func() {
		done <- Run(context.Background(), []string{"gnomon", "clock", "advance", "--to", "2026-06-01T00:10:00Z"}, Env{Stdout: &out, Stderr: &errb,
			IsTerminal: func(w io.Writer) bool { return w == &errb },
			Getenv: func(k string) string {
				return map[string]string{"GNOMON_SERVER": f.client.Base, "GNOMON_TOKEN": f.client.Token, "TZ": "UTC"}[k]
			}})
	}()
	f.waitFor("the progress line", func() bool {
		return strings.Contains(errb.String(), "clock advance: the virtual clock reads 2026-06-01 00:05:")
	})
	if err := os.WriteFile(filepath.Join(f.dir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if code := <-done; code != 0 || !strings.HasPrefix(out.String(), "2026-06-01 00:10:00 UTC (simulated)\n") ||
		!strings.Contains(errb.String(), ", on its way to 2026-06-01T00:10:00Z (") || !strings.HasSuffix(errb.String(), "\r\x1b[K") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
}
