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
