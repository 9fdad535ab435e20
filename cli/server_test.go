package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestServerFlags checks that the server refuses a bad setting before it
// opens anything.
func TestServerFlags(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--heap-floor", "-1"}, "--heap-floor: -1 MiB is not between 0 and 1048576"},
		{[]string{"--heap-floor", "2000000"}, "--heap-floor: 2000000 MiB is not between 0 and 1048576"},
		{[]string{"--smtp-from", "a@b"}, "--smtp-addr is required to send alerts"},
	} {
		dir := t.TempDir()
		var out, errb bytes.Buffer
		args := append([]string{"gnomon", "server", "--data", dir, "--listen", "127.0.0.1:0"}, tc.args...)
		code := Run(context.Background(), args, Env{Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }})
		if code != 2 || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("%v: exit %d %q, want 2 and %q", tc.args, code, errb.String(), tc.want)
		}
	}
}
