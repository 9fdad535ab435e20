package cluster

import (
	"fmt"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// Assign on random clusters: every partition goes to a live node, shares
// differ by at most one, a node never both gives and takes partitions,
// the moves are exactly the differences, and an even assignment over the
// same nodes stays as it is.
func TestAssignProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		count := rapid.IntRange(1, 130).Draw(t, "count")
		all := []string{"a", "b", "c", "d", "e", "f", "g"}
		live := rapid.SliceOfNDistinct(rapid.SampledFrom(all), 0, len(all), rapid.ID[string]).Draw(t, "live")
		current := map[int]string{}
		for p := range count {
			if o := rapid.SampledFrom(append([]string{""}, all...)).Draw(t, fmt.Sprintf("owner%d", p)); o != "" {
				current[p] = o
			}
		}
		next, moves := Assign(count, live, current)
		if len(live) == 0 {
			if len(next) != 0 {
				t.Fatalf("no nodes, yet %v", next)
			}
		} else {
			shares := map[string]int{}
			for p := range count {
				o, ok := next[p]
				if !ok || !slices.Contains(live, o) {
					t.Fatalf("partition %d goes to %q, not a live node", p, o)
				}
				shares[o]++
			}
			lo, hi := count, 0
			for _, n := range live {
				lo, hi = min(lo, shares[n]), max(hi, shares[n])
			}
			if hi-lo > 1 {
				t.Fatalf("uneven shares %v", shares)
			}
		}
		gave, took := map[string]bool{}, map[string]bool{}
		var want []Move
		for p := range count {
			if current[p] != next[p] {
				want = append(want, Move{Partition: p, From: current[p], To: next[p]})
				gave[current[p]], took[next[p]] = true, true
			}
		}
		if !slices.Equal(moves, want) {
			t.Fatalf("moves %v, want %v", moves, want)
		}
		for _, n := range live {
			if gave[n] && took[n] {
				t.Fatalf("node %s both gives and takes partitions: %v", n, moves)
			}
		}
		if again, moves := Assign(count, live, next); len(moves) != 0 || len(again) != len(next) {
			t.Fatalf("an even assignment moves %v", moves)
		}
	})
}

// A node joining takes an even share from the others; a node leaving
// hands its partitions to the rest, and nothing else moves.
func TestAssignJoinLeave(t *testing.T) {
	one, _ := Assign(6, []string{"n1"}, nil)
	two, moves := Assign(6, []string{"n1", "n2"}, one)
	if len(moves) != 3 {
		t.Fatalf("join: %v", moves)
	}
	three, moves := Assign(6, []string{"n1", "n2", "n3"}, two)
	if len(moves) != 2 {
		t.Fatalf("second join: %v", moves)
	}
	left, moves := Assign(6, []string{"n1", "n3"}, three)
	for _, m := range moves {
		if m.From != "n2" {
			t.Fatalf("leave moved %v", m)
		}
	}
	if len(moves) != 2 || len(left) != 6 {
		t.Fatalf("leave: %v", moves)
	}
}

// AssignSpace shares the regular and the dedicated partitions each
// evenly: with two nodes each owns half of the minute spots, not one of
// them all and the other only the dedicated steps. Fresh partitions go to
// the nodes in turn, so a node's spots are spread over the hour; a node
// joining takes a spread share.
func TestAssignSpace(t *testing.T) {
	space := DefaultSpace
	next, moves := AssignSpace(space, []string{"a", "b"}, nil)
	if len(moves) != space.Count() {
		t.Fatalf("%d moves from nothing, want %d", len(moves), space.Count())
	}
	regular := map[string][]int{}
	for p := range space.Partitions {
		regular[next[p]] = append(regular[next[p]], p)
	}
	if len(regular["a"]) != 30 || len(regular["b"]) != 30 || regular["a"][1] != 2 || regular["b"][0] != 1 {
		t.Fatalf("regular partitions: %v", regular)
	}
	dedicated := map[string]int{}
	for p := space.Partitions; p < space.Count(); p++ {
		dedicated[next[p]]++
	}
	if dedicated["a"]+dedicated["b"] != 59 || dedicated["a"] < 29 || dedicated["b"] < 29 {
		t.Fatalf("dedicated partitions: %v", dedicated)
	}
	if _, moves := AssignSpace(space, []string{"a", "b"}, next); len(moves) != 0 {
		t.Fatalf("an even assignment moves %v", moves)
	}
	// One node holds everything; another joins.
	one, _ := AssignSpace(space, []string{"a"}, nil)
	two, moves := AssignSpace(space, []string{"a", "b"}, one)
	var taken []int
	for _, m := range moves {
		if m.From != "a" || m.To != "b" {
			t.Fatalf("join moved %+v", m)
		}
		if m.Partition < space.Partitions {
			taken = append(taken, m.Partition)
		}
	}
	if len(taken) != 30 || taken[0] != 1 || taken[1] != 3 {
		t.Fatalf("b took the regular partitions %v, want every other one", taken)
	}
	if _, moves := AssignSpace(space, []string{"a", "b"}, two); len(moves) != 0 {
		t.Fatalf("after the join: %v", moves)
	}
}

// AssignSpace on random clusters: within each group of partitions, as
// Assign on it.
func TestAssignSpaceProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		size := rapid.IntRange(1, 120).Draw(t, "size")
		space := Space{Size: size, Partitions: rapid.IntRange(1, size).Draw(t, "partitions")}
		all := []string{"a", "b", "c", "d", "e"}
		live := rapid.SliceOfNDistinct(rapid.SampledFrom(all), 1, len(all), rapid.ID[string]).Draw(t, "live")
		current := map[int]string{}
		for p := range space.Count() {
			if o := rapid.SampledFrom(append([]string{""}, all...)).Draw(t, fmt.Sprintf("owner%d", p)); o != "" {
				current[p] = o
			}
		}
		next, moves := AssignSpace(space, live, current)
		var want []Move
		for _, group := range [][2]int{{0, space.Partitions}, {space.Partitions, space.Count()}} {
			shares := map[string]int{}
			gave, took := map[string]bool{}, map[string]bool{}
			for p := group[0]; p < group[1]; p++ {
				if !slices.Contains(live, next[p]) {
					t.Fatalf("partition %d goes to %q", p, next[p])
				}
				shares[next[p]]++
				if current[p] != next[p] {
					want = append(want, Move{Partition: p, From: current[p], To: next[p]})
					gave[current[p]], took[next[p]] = true, true
				}
			}
			lo, hi := group[1], 0
			for _, n := range live {
				lo, hi = min(lo, shares[n]), max(hi, shares[n])
			}
			if hi-lo > 1 {
				t.Fatalf("partitions %v: uneven shares %v", group, shares)
			}
			for _, n := range live {
				if gave[n] && took[n] {
					t.Fatalf("partitions %v: node %s both gives and takes", group, n)
				}
			}
		}
		if !slices.Equal(moves, want) {
			t.Fatalf("moves %v, want %v", moves, want)
		}
		if _, moves := AssignSpace(space, live, next); len(moves) != 0 {
			t.Fatalf("an even assignment moves %v", moves)
		}
	})
}
