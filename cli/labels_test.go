package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gnomon-sched/gnomon/defs"
	"github.com/gnomon-sched/gnomon/job"
)

// TestTaskLabels checks that gnomon task shows every attribute under a
// label: none prints as ": value".
func TestTaskLabels(t *testing.T) {
	t.Parallel()
	// The tasks of this file set, between them, every attribute Attrs
	// can return.
	text, err := os.ReadFile(filepath.Join("..", "defs", "testdata", "every_attribute.def"))
	if err != nil {
		t.Fatal(err)
	}
	acts, err := defs.Parse("labels.def", string(text))
	if err != nil {
		t.Fatal(err)
	}
	cals := map[string]*job.Calendar{"work": {Name: "work"}, "off": {Name: "off"}}
	res, err := defs.Apply("labels.def", nil, acts, &defs.Env{Calendars: cals})
	if err != nil {
		t.Fatal(err)
	}
	for name, task := range res.Tasks {
		var b strings.Builder
		taskLines(&b, task, "")
		for _, line := range strings.Split(strings.TrimSpace(b.String()), "\n") {
			if strings.HasPrefix(line, ": ") {
				t.Errorf("%s: line without a label: %q", name, line)
			}
		}
	}
}
