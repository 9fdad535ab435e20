package metrics

import (
	"os/exec"
	"strings"
	"testing"
)

// TestPrometheusStaysOut checks that the engine, the scheduler, the API
// and the executor do not link Prometheus's client: they tell an Observer,
// and this package alone (with the root package, which assembles it)
// imports it. So that the check cannot pass by looking in the wrong
// place, this package must link it.
func TestPrometheusStaysOut(t *testing.T) {
	t.Parallel()
	const mod = "github.com/gnomon-sched/gnomon/"
	for _, c := range []struct {
		pkg   string
		links bool
	}{
		{"engine", false}, {"scheduler", false}, {"api", false}, {"executor", false}, {"metrics", true},
	} {
		t.Run(c.pkg, func(t *testing.T) {
			t.Parallel()
			out, err := exec.Command("go", "list", "-deps", mod+c.pkg).CombinedOutput()
			if err != nil {
				t.Fatalf("go list -deps %s: %v\n%s", c.pkg, err, out)
			}
			links := strings.Contains(string(out), "github.com/prometheus/")
			if links != c.links {
				t.Errorf("%s links github.com/prometheus/...: %v, want %v", c.pkg, links, c.links)
			}
		})
	}
}
