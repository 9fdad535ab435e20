package cluster

import (
	"slices"
)

// Move is a partition changing hands: From is its previous owner (a node
// that may be dead or draining), "" if it had none; To is "" when no node
// is left to take it.
type Move struct {
	Partition int    `json:"partition"`
	From      string `json:"from"`
	To        string `json:"to"`
}

// Assign returns an even assignment of partitions 0 to count-1 to nodes
// that moves as few partitions as it can from current (partition →
// owner), and the moves that lead there, in partition order. Each node
// gets count/len(nodes) partitions, or one more; the nodes that hold the
// most keep the larger shares. A partition whose owner is not among nodes
// (dead, draining, gone) is free. With no nodes every partition is
// unowned. A node's partitions are spread over the range rather than in a
// block: free partitions go to the nodes in turn, and a node that must
// give some up keeps a share spread over those it holds.
func Assign(count int, nodes []string, current map[int]string) (map[int]string, []Move) {
	parts := make([]int, count)
	for p := range parts {
		parts[p] = p
	}
	next := make(map[int]string, count)
	return next, assign(parts, nodes, current, next)
}

// AssignSpace assigns the partitions of a space as Assign does, the
// regular partitions and the dedicated ones each evenly on its own: the
// regular ones hold most schedules, and an even count overall would give
// one of two nodes every regular partition and the other only the
// dedicated ones. Moves are in partition order.
func AssignSpace(s Space, nodes []string, current map[int]string) (map[int]string, []Move) {
	next := make(map[int]string, s.Count())
	var moves []Move
	for _, group := range [][2]int{{0, s.Partitions}, {s.Partitions, s.Count()}} {
		parts := make([]int, 0, group[1]-group[0])
		for p := group[0]; p < group[1]; p++ {
			parts = append(parts, p)
		}
		moves = append(moves, assign(parts, nodes, current, next)...)
	}
	return next, moves
}

// assign assigns parts, in increasing order, as Assign says, into next,
// and returns the moves.
func assign(parts []int, nodes []string, current map[int]string, next map[int]string) []Move {
	nodes = slices.Clone(nodes)
	slices.Sort(nodes)
	nodes = slices.Compact(nodes)
	var moves []Move
	if len(nodes) == 0 {
		for _, p := range parts {
			if from := current[p]; from != "" {
				moves = append(moves, Move{Partition: p, From: from})
			}
		}
		return moves
	}
	held := map[string][]int{}
	for _, p := range parts {
		if o := current[p]; o != "" && slices.Contains(nodes, o) {
			held[o] = append(held[o], p)
		}
	}
	// The larger shares go to the nodes that hold the most already.
	byHeld := slices.Clone(nodes)
	slices.SortStableFunc(byHeld, func(a, b string) int { return len(held[b]) - len(held[a]) })
	quota := map[string]int{}
	for i, n := range byHeld {
		quota[n] = len(parts) / len(nodes)
		if i < len(parts)%len(nodes) {
			quota[n]++
		}
	}
	counts := map[string]int{}
	for _, n := range nodes {
		keep := spread(held[n], quota[n])
		for _, p := range keep {
			next[p] = n
		}
		counts[n] = len(keep)
	}
	// What is left goes, in partition order, to the nodes under quota in
	// turn, in name order. The quotas add up to the partitions, so none is
	// left over.
	i := 0
	for _, p := range parts {
		if _, ok := next[p]; ok {
			continue
		}
		for counts[nodes[i%len(nodes)]] >= quota[nodes[i%len(nodes)]] {
			i++
		}
		n := nodes[i%len(nodes)]
		next[p] = n
		counts[n]++
		i++
	}
	for _, p := range parts {
		if from, to := current[p], next[p]; from != to {
			moves = append(moves, Move{Partition: p, From: from, To: to})
		}
	}
	return moves
}

// spread returns k of held, in order, spread evenly over it; all of them
// when k is not less.
func spread(held []int, k int) []int {
	if k >= len(held) {
		return held
	}
	out := make([]int, k)
	for j := range k {
		out[j] = held[j*len(held)/k]
	}
	return out
}
