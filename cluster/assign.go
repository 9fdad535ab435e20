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
// unowned.
func Assign(count int, nodes []string, current map[int]string) (map[int]string, []Move) {
	nodes = slices.Clone(nodes)
	slices.Sort(nodes)
	nodes = slices.Compact(nodes)
	next := make(map[int]string, count)
	var moves []Move
	if len(nodes) == 0 {
		for p := range count {
			if from := current[p]; from != "" {
				moves = append(moves, Move{Partition: p, From: from})
			}
		}
		return next, moves
	}
	held := map[string][]int{}
	for p := range count {
		if o := current[p]; o != "" && slices.Contains(nodes, o) {
			held[o] = append(held[o], p)
		}
	}
	// The larger shares go to the nodes that hold the most already.
	byHeld := slices.Clone(nodes)
	slices.SortStableFunc(byHeld, func(a, b string) int { return len(held[b]) - len(held[a]) })
	quota := map[string]int{}
	for i, n := range byHeld {
		quota[n] = count / len(nodes)
		if i < count%len(nodes) {
			quota[n]++
		}
	}
	counts := map[string]int{}
	for _, n := range nodes {
		keep := held[n][:min(len(held[n]), quota[n])]
		for _, p := range keep {
			next[p] = n
		}
		counts[n] = len(keep)
	}
	// What is left goes, in partition order, to the nodes under quota,
	// in name order. The quotas add up to count, so none is left over.
	i := 0
	for p := range count {
		if _, ok := next[p]; ok {
			continue
		}
		for counts[nodes[i]] >= quota[nodes[i]] {
			i++
		}
		next[p] = nodes[i]
		counts[nodes[i]]++
	}
	for p := range count {
		if from, to := current[p], next[p]; from != to {
			moves = append(moves, Move{Partition: p, From: from, To: to})
		}
	}
	return next, moves
}
