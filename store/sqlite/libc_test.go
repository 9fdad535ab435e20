package sqlite

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLibcMatchesSQLite fails when the module graph selects another
// modernc.org/libc than the one modernc.org/sqlite requires: the SQLite
// driver is generated against that exact libc, and its documentation
// forbids any other ("Fragile modernc.org/libc dependency"). A module
// that requires a newer libc raises it silently (goose v3.29.0 does):
// pin that module lower, or move sqlite to a release generated for it.
func TestLibcMatchesSQLite(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-m", "modernc.org/sqlite", "modernc.org/libc").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -m: %v\n%s", err, out)
	}
	selected := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if f := strings.Fields(line); len(f) == 2 {
			selected[f[0]] = f[1]
		}
	}
	graph, err := exec.Command("go", "mod", "graph").CombinedOutput()
	if err != nil {
		t.Fatalf("go mod graph: %v\n%s", err, graph)
	}
	from := "modernc.org/sqlite@" + selected["modernc.org/sqlite"] + " modernc.org/libc@"
	for _, line := range strings.Split(string(graph), "\n") {
		if want, ok := strings.CutPrefix(line, from); ok {
			if got := selected["modernc.org/libc"]; got != want {
				t.Errorf("modernc.org/libc %s is selected; modernc.org/sqlite %s requires exactly %s", got, selected["modernc.org/sqlite"], want)
			}
			return
		}
	}
	t.Fatalf("the module graph has no libc requirement of modernc.org/sqlite %s", selected["modernc.org/sqlite"])
}
