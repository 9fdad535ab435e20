package web

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/gnomon-sched/gnomon/auth"
)

// TestGraphNeighbourhood: the graph draws the neighbourhood of a task or
// of the tasks a filter chooses, nearest first, and says how many tasks it
// left out; with no choice made among more tasks than it draws, it asks
// for one.
func TestGraphNeighbourhood(t *testing.T) {
	t.Parallel()
	var defs strings.Builder
	// A chain: c001 waits on c000, c002 on c001, ...; one in ten labelled.
	for i := range 500 {
		fmt.Fprintf(&defs, "insert_task: c%03d\ntype: callable\nfunction: log\n", i)
		if i > 0 {
			fmt.Fprintf(&defs, "condition: su(c%03d)\n", i-1)
		}
		if i%10 == 0 {
			defs.WriteString("label: tenth\n")
		}
		defs.WriteByte('\n')
	}
	_, u := startScheduler(t, defs.String())
	get := func(t *testing.T, query string) graphAnswer {
		t.Helper()
		w := httptest.NewRecorder()
		if err := u.graphJSON(w, asRole("/graph.json?"+query, auth.Viewer)); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		var ans graphAnswer
		if err := json.Unmarshal(w.Body.Bytes(), &ans); err != nil {
			t.Fatal(err)
		}
		return ans
	}
	nodes := func(a graphAnswer) (names []string, edges int) {
		for _, el := range a.Elements {
			if el.Group == "nodes" {
				names = append(names, el.Data.ID)
			} else {
				edges++
			}
		}
		return names, edges
	}
	for _, c := range []struct {
		query        string
		first, last  string
		drawn, edges int
		tasks        int
	}{
		{"task=c250", "c248", "c252", 5, 4, 5},
		{"task=c250&depth=10", "c240", "c260", 21, 20, 21},
		{"q=c1*", "c100", "c199", 100, 99, 100},
		{"q=c1*&depth=1", "c099", "c200", 102, 101, 102},
		{"label=tenth", "c000", "c490", 50, 0, 50},
		{"label=tenth&depth=1", "c000", "c491", 149, 99, 149},
		{"q=c*", "c000", "c399", 400, 399, 500},
	} {
		a := get(t, c.query)
		names, edges := nodes(a)
		if len(names) != c.drawn || a.Drawn != c.drawn || a.Tasks != c.tasks || a.Truncated != (c.tasks > c.drawn) || edges != c.edges || a.Choose {
			t.Errorf("%s: %d nodes (drawn %d of %d, truncated %v), %d edges; want %d of %d, %d edges", c.query, len(names), a.Drawn, a.Tasks, a.Truncated, edges, c.drawn, c.tasks, c.edges)
			continue
		}
		if !slices.IsSorted(names) || names[0] != c.first || names[len(names)-1] != c.last {
			t.Errorf("%s: nodes %s to %s, want %s to %s", c.query, names[0], names[len(names)-1], c.first, c.last)
		}
	}
	if a := get(t, ""); !a.Choose || a.Tasks != 500 || len(a.Elements) != 0 {
		t.Errorf("no choice among 500 tasks: %+v, want to be asked for one", a)
	}
	for query, want := range map[string]string{"depth=11": "depth must be a whole number from 0 to 10", "q=[": "is not a name pattern", "status=late": `unknown status "late"`} {
		if err := u.graphJSON(httptest.NewRecorder(), asRole("/graph.json?"+query, auth.Viewer)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", query, err, want)
		}
	}
	if err := u.graphJSON(httptest.NewRecorder(), asRole("/graph.json?task=nope", auth.Viewer)); err == nil || !strings.Contains(err.Error(), "task nope not found") {
		t.Errorf("an unknown task: %v", err)
	}
}
