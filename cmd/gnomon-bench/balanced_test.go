package main

import (
	"testing"

	"github.com/gnomon-sched/gnomon/cluster"
)

func TestBalanced(t *testing.T) {
	space := cluster.Space{Size: 6, Partitions: 4}
	node := func(id string, parts ...int) cluster.Node {
		return cluster.Node{ID: id, Roles: []string{cluster.RoleClock}, State: cluster.Live, Partitions: parts}
	}
	for _, c := range []struct {
		name  string
		nodes []cluster.Node
		want  bool
	}{
		{"one node", []cluster.Node{node("a", 0, 1, 2, 3, 4, 5)}, true},
		{"even", []cluster.Node{node("a", 0, 1, 4), node("b", 2, 3, 5)}, true},
		{"regular ones still moving", []cluster.Node{node("a", 0, 1, 2, 4), node("b", 3, 5)}, false},
		{"dedicated ones on one node", []cluster.Node{node("a", 0, 1, 4, 5), node("b", 2, 3)}, false},
		{"a dead node's partitions do not count", []cluster.Node{node("a", 0, 1, 4), node("b", 2, 3, 5),
			{ID: "c", Roles: []string{cluster.RoleClock}, State: cluster.Dead}}, true},
	} {
		if got := balanced(&cluster.Status{Space: space, Nodes: c.nodes}); got != c.want {
			t.Errorf("%s: balanced = %v, want %v", c.name, got, c.want)
		}
	}
}
