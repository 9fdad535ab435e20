package engine

import (
	"slices"
	"testing"
)

// Reached follows a bundle to its members for a read;
// an action also goes up to a member's bundle and on to every task whose
// condition names one reached, transitively. Upstream is what a
// condition names, and theirs.
func TestReached(t *testing.T) {
	t.Parallel()
	defs := "insert_task: outer\ntype: bundle\n\n" +
		callable("leaf", "parent: outer") + callable("sibling", "parent: outer") +
		callable("after_leaf", "condition: su(leaf)") + callable("after_after", "condition: fa(after_leaf) | su(x)") +
		callable("x", "") + callable("alone", "")
	h := setup(t, 1, defs)
	for _, c := range []struct {
		names []string
		acted bool
		want  []string
	}{
		{[]string{"outer"}, false, []string{"leaf", "outer", "sibling"}},
		{[]string{"leaf"}, false, []string{"leaf"}},
		{[]string{"leaf"}, true, []string{"after_after", "after_leaf", "leaf", "outer", "sibling"}},
		{[]string{"x"}, true, []string{"after_after", "x"}},
		{[]string{"alone"}, true, []string{"alone"}},
		{[]string{"ghost"}, true, []string{"ghost"}},
	} {
		if got := h.e.Reached(c.names, c.acted); !slices.Equal(got, c.want) {
			t.Errorf("Reached(%v, %v) = %v, want %v", c.names, c.acted, got, c.want)
		}
	}
	if got := h.e.Upstream("after_after"); !slices.Equal(got, []string{"after_leaf", "leaf", "x"}) {
		t.Errorf("Upstream(after_after) = %v", got)
	}
}
