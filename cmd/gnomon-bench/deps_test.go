package main

import (
	"os/exec"
	"strings"
	"testing"
)

// peerModules are the scheduling libraries the fire-lateness benchmark
// measures gnomon against. They belong to the benchmark alone.
var peerModules = []string{"github.com/robfig/cron", "github.com/go-co-op/gocron"}

// TestPeersStayInTheBenchmark checks that neither the gnomon binary nor the
// library links a peer library, and, so that the check cannot pass by
// looking in the wrong place, that this benchmark does link both.
func TestPeersStayInTheBenchmark(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		pkg   string
		links bool
	}{
		{"github.com/gnomon-sched/gnomon/cmd/gnomon", false},
		{"github.com/gnomon-sched/gnomon", false},
		{"github.com/gnomon-sched/gnomon/cmd/gnomon-bench", true},
	} {
		t.Run(c.pkg, func(t *testing.T) {
			t.Parallel()
			out, err := exec.Command("go", "list", "-deps", c.pkg).CombinedOutput()
			if err != nil {
				t.Fatalf("go list -deps %s: %v\n%s", c.pkg, err, out)
			}
			deps := strings.Fields(string(out))
			for _, m := range peerModules {
				var found []string
				for _, d := range deps {
					if d == m || strings.HasPrefix(d, m+"/") {
						found = append(found, d)
					}
				}
				switch {
				case c.links && len(found) == 0:
					t.Errorf("%s does not link %s", c.pkg, m)
				case !c.links && len(found) > 0:
					t.Errorf("%s links %s, which only the benchmark may use", c.pkg, strings.Join(found, ", "))
				}
			}
		})
	}
}
