package engine

import "container/heap"

// readyQueue orders the ready callables as dispatch starts them: higher
// priority first, then earlier ready (ReadySeq), then by name. Each entry
// knows its index (ridx), so that a task leaving Ready, or changing its
// priority, costs O(log n) and dispatch never sorts the ready set.
type readyQueue []*entry

func (q readyQueue) Len() int { return len(q) }

func (q readyQueue) Less(i, j int) bool { return before(q[i], q[j]) }

// before reports whether dispatch starts a before b.
func before(a, b *entry) bool {
	if a.def.Priority != b.def.Priority {
		return a.def.Priority > b.def.Priority
	}
	if a.st.ReadySeq != b.st.ReadySeq {
		return a.st.ReadySeq < b.st.ReadySeq
	}
	return a.def.Name < b.def.Name
}

func (q readyQueue) Swap(i, j int) {
	q[i], q[j] = q[j], q[i]
	q[i].ridx, q[j].ridx = i, j
}

func (q *readyQueue) Push(x any) {
	en := x.(*entry)
	en.ridx = len(*q)
	*q = append(*q, en)
}

func (q *readyQueue) Pop() any {
	old := *q
	en := old[len(old)-1]
	old[len(old)-1] = nil
	*q = old[:len(old)-1]
	en.ridx = -1
	return en
}

// markReady enters a task in the ready queue, or moves it to its place if
// it is there already.
func (e *Engine) markReady(en *entry) {
	if e.held(en) {
		e.fixHeld(en)
		return
	}
	if en.ridx >= 0 {
		heap.Fix(&e.ready, en.ridx)
		return
	}
	heap.Push(&e.ready, en)
}

// unready takes a task out of the ready queue, if it is there.
func (e *Engine) unready(en *entry) {
	if en == nil {
		return
	}
	switch {
	case e.held(en):
		for _, r := range e.unhold(en) {
			e.wake(r) // those it held back
		}
	case en.ridx >= 0:
		heap.Remove(&e.ready, en.ridx)
		// Dispatch may have counted on what it claims, waking others
		// (see wake); a run that starts has taken it already.
		if len(en.def.Extras().Claims) > 0 && len(e.parked) > 0 {
			e.wakeClaimed(en.def)
		}
	}
}

// reorderReady puts a ready task back in its place after its priority
// changed.
func (e *Engine) reorderReady(en *entry) {
	if e.held(en) {
		e.fixHeld(en)
		return
	}
	if en.ridx >= 0 {
		heap.Fix(&e.ready, en.ridx)
	}
}
