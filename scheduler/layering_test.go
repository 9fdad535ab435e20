package scheduler

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestLoopConstructsNoAdapter keeps the loop to the interfaces it owns:
// none of the package's files imports a runner, a mailer, a store
// implementation or the API. Package clock is vocabulary, not an adapter:
// the loop's Clock is clock.Clock. Nor is package defs, the definition
// language: the loop plans each definition file against the definitions
// as they are at its turn; nor internal/startstop, the lifecycle rule.
func TestLoopConstructsNoAdapter(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	const mod = "github.com/gnomon-sched/gnomon/"
	allowed := map[string]bool{mod + "engine": true, mod + "job": true, mod + "store": true, mod + "internal/jsonenc": true, mod + "internal/startstop": true,
		mod + "periods": true, mod + "calendar": true, mod + "clock": true, mod + "defs": true}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range af.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(path, mod) && !allowed[path] {
				t.Errorf("%s imports %s: the loop talks to adapters through the interfaces in ports.go", f, path)
			}
		}
	}
}
