package engine

import (
	"container/heap"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/gnomon-sched/gnomon/job"
)

// resource is the accounting of a resource shared between tasks
// (insert_resource): what the runs in flight hold of it, and the ready
// tasks that wait for it, in dispatch order.
//
// A ready task that dispatch reaches takes the resources it claims when
// all of them are free and no task before it in dispatch order waits for
// one of them; otherwise it leaves the ready queue for the waiters of the
// first resource that holds it back, and the tasks behind it that need
// other things go on. A release wakes the waiters of the resource, in
// order, as many as its free units could start: they go back to the ready
// queue, where dispatch takes them in their place. So each task waits in
// one heap at a time, and a dispatch or a release costs O(log n) per task
// it moves: a storm of ready tasks never makes it a scan.
type resource struct {
	name   string
	amount int
	// units are held by claims of units, exclusive by an exclusive
	// claim (0 or 1), shared counts the shared claims held.
	units, shared, exclusive int
	// holders are the runs that hold the resource, and their tasks.
	holders map[int64]string
	waiters waitQueue
}

// fits reports whether claim c can be taken now.
func (r *resource) fits(c job.Claim) bool {
	switch c.Mode {
	case job.ClaimExclusive:
		return r.exclusive == 0 && r.units == 0 && r.shared == 0
	case job.ClaimShared:
		return r.exclusive == 0
	}
	return r.exclusive == 0 && r.units+c.Units <= r.amount
}

// add takes (n = 1) or gives back (n = -1) claim c.
func (r *resource) add(c job.Claim, n int) {
	switch c.Mode {
	case job.ClaimExclusive:
		r.exclusive += n
	case job.ClaimShared:
		r.shared += n
	default:
		r.units += n * c.Units
	}
}

// claimOn returns a task's claim on a resource.
func claimOn(def *job.Task, name string) (job.Claim, bool) {
	for _, c := range def.Extras().Claims {
		if c.Resource == name {
			return c, true
		}
	}
	return job.Claim{}, false
}

// waiter is a held task in the waiters of one of the resources it claims.
type waiter struct {
	en  *entry
	r   *resource
	idx int
}

// waitQueue orders the tasks waiting for one resource as dispatch does
// (before). Each waiter knows its index.
type waitQueue []*waiter

func (q waitQueue) Len() int           { return len(q) }
func (q waitQueue) Less(i, j int) bool { return before(q[i].en, q[j].en) }
func (q waitQueue) Swap(i, j int) {
	q[i], q[j] = q[j], q[i]
	q[i].idx, q[j].idx = i, j
}
func (q *waitQueue) Push(x any) {
	w := x.(*waiter)
	w.idx = len(*q)
	*q = append(*q, w)
}
func (q *waitQueue) Pop() any {
	old := *q
	w := old[len(old)-1]
	old[len(old)-1] = nil
	*q = old[:len(old)-1]
	w.idx = -1
	return w
}

// hold is a claim a run holds.
type hold struct {
	r *resource
	c job.Claim
}

// blocking returns the first resource, in the order the task claims
// them, that holds back a ready task: one with too little free, or one a
// task before it in dispatch order waits for (it keeps its place). Nil
// when the task may take all it claims now.
func (e *Engine) blocking(en *entry) *resource {
	for _, c := range en.def.Extras().Claims {
		r := e.res[c.Resource]
		if r == nil {
			continue // not defined any more: nothing to wait for
		}
		if len(r.waiters) > 0 && before(r.waiters[0].en, en) || !r.fits(c) {
			return r
		}
	}
	return nil
}

// fitsAll reports whether a run of the task that does not go through the
// ready queue (a concurrent run under overlap allow, a backfill run) may
// take its resources now: each has room for it and no ready task waits
// for it. Those runs start after dispatch, so every waiter is before them
// in dispatch order, and taking what a waiter needs could starve it.
func (e *Engine) fitsAll(en *entry) bool {
	for _, c := range en.def.Extras().Claims {
		if r := e.res[c.Resource]; r != nil && (len(r.waiters) > 0 || !r.fits(c)) {
			return false
		}
	}
	return true
}

// take makes run id hold its task's claims.
func (e *Engine) take(id int64, def *job.Task) {
	claims := def.Extras().Claims
	if len(claims) == 0 {
		return
	}
	hs := make([]hold, 0, len(claims))
	for _, c := range claims {
		r := e.res[c.Resource]
		if r == nil {
			continue
		}
		r.add(c, 1)
		r.holders[id] = def.Name
		hs = append(hs, hold{r, c})
	}
	if e.holds == nil {
		e.holds = map[int64][]hold{}
	}
	e.holds[id] = hs
}

// releaseHolds gives back what run id holds, and wakes the tasks waiting for
// it.
func (e *Engine) releaseHolds(id int64) {
	hs, ok := e.holds[id]
	if !ok {
		return
	}
	delete(e.holds, id)
	for _, h := range hs {
		h.r.add(h.c, -1)
		delete(h.r.holders, id)
		e.wake(h.r)
	}
}

// held reports whether a ready task waits for resources.
func (e *Engine) held(en *entry) bool {
	return len(e.parked) > 0 && e.parked[en] != nil
}

// holdBack takes a ready task, out of the ready queue, into the waiters of
// every resource it claims: it keeps its place on each, so that no task
// after it in dispatch order takes one of them first. r is the resource
// that holds it back.
func (e *Engine) holdBack(en *entry, r *resource) {
	if e.parked == nil {
		e.parked = map[*entry][]*waiter{}
	}
	var ws []*waiter
	for _, c := range en.def.Extras().Claims {
		if q := e.res[c.Resource]; q != nil {
			w := &waiter{en: en, r: q}
			heap.Push(&q.waiters, w)
			ws = append(ws, w)
		}
	}
	e.parked[en] = ws
	en.st.WaitsFor = r.name
	e.touch(en.def.Name)
}

// unhold takes a held task out of the waiters (it stays Ready, for its
// caller to queue or change) and returns the resources it waited for.
func (e *Engine) unhold(en *entry) []*resource {
	ws := e.parked[en]
	delete(e.parked, en)
	rs := make([]*resource, len(ws))
	for i, w := range ws {
		heap.Remove(&w.r.waiters, w.idx)
		rs[i] = w.r
	}
	en.st.WaitsFor = ""
	e.touch(en.def.Name)
	return rs
}

// fixHeld puts a held task back in its place among the waiters after its
// priority changed.
func (e *Engine) fixHeld(en *entry) {
	for _, w := range e.parked[en] {
		heap.Fix(&w.r.waiters, w.idx)
	}
}

// wakeClaimed wakes the resources a task claims: it left the ready queue
// or the waiters without taking them.
func (e *Engine) wakeClaimed(def *job.Task) {
	for _, c := range def.Extras().Claims {
		if r := e.res[c.Resource]; r != nil {
			e.wake(r)
		}
	}
}

// wake moves back to the ready queue the held tasks that may start now,
// from the waiters of r on: a task goes when it is first among the waiters
// of every resource it claims and each has room for it, counting what the
// tasks moved before it will take; the resources it claims are then looked
// at in turn. It moves those a fresh dispatch would start, and no more
// than those that fit: a release costs O(log n) per task it moves.
func (e *Engine) wake(r *resource) {
	if len(r.waiters) == 0 {
		return
	}
	// What the resources would hold once the tasks moved take their
	// claims: copies, counted on.
	scratch := map[*resource]*resource{}
	avail := func(q *resource) *resource {
		f := scratch[q]
		if f == nil {
			f = &resource{amount: q.amount, units: q.units, shared: q.shared, exclusive: q.exclusive}
			scratch[q] = f
		}
		return f
	}
	todo := []*resource{r}
	for len(todo) > 0 {
		q := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		for len(q.waiters) > 0 {
			en := q.waiters[0].en
			ok := true
			for _, w := range e.parked[en] {
				c, _ := claimOn(en.def, w.r.name)
				if w.r.waiters[0] != w || !avail(w.r).fits(c) {
					ok = false
					break
				}
			}
			if !ok {
				break
			}
			for _, w := range e.parked[en] {
				c, _ := claimOn(en.def, w.r.name)
				avail(w.r).add(c, 1)
				if w.r != q {
					todo = append(todo, w.r) // its next waiter may go too
				}
			}
			e.unhold(en)
			heap.Push(&e.ready, en)
		}
	}
}

// defineResource enters or updates a resource's definition; a larger
// amount may wake its waiters.
func (e *Engine) defineResource(def *job.Task) {
	r := e.res[def.Name]
	if r == nil {
		r = &resource{name: def.Name, holders: map[int64]string{}}
		if e.res == nil {
			e.res = map[string]*resource{}
		}
		e.res[def.Name] = r
	}
	r.amount = def.Extras().Amount
	e.wake(r)
}

// restoreResources rebuilds the accounting after a restart: the resources
// from their definitions, and what the runs in flight hold from their
// tasks' claims. No run holds what it does not: holdings are those of
// the runs recorded active, so a crash leaks none.
func (e *Engine) restoreResources(active []*job.Run) {
	for name, def := range e.defs {
		if def.Type == job.Resource {
			e.defineResource(def)
		}
		// The first dispatch holds back again what waits.
		e.tasks[name].st.WaitsFor = ""
	}
	for _, r := range active {
		if en := e.tasks[r.Task]; en != nil && en.def.Type != job.Bundle {
			e.take(r.ID, en.def)
		}
	}
}

// Resource is what the engine knows of one resource.
type Resource struct {
	Name   string `json:"name"`
	Amount int    `json:"amount"`
	// Held are the units held; Exclusive and Shared count the claims of
	// each mode held.
	Held      int `json:"held"`
	Exclusive int `json:"exclusive,omitempty"`
	Shared    int `json:"shared,omitempty"`
	// Holders are the tasks whose runs hold it, sorted, a task once.
	Holders []string `json:"holders,omitempty"`
	// Waiting counts the ready tasks that wait for it.
	Waiting int `json:"waiting"`
}

// Resources returns the resources and their use, by name.
func (e *Engine) Resources() []Resource {
	out := make([]Resource, 0, len(e.res))
	for _, name := range slices.Sorted(maps.Keys(e.res)) {
		out = append(out, e.resourceOf(e.res[name]))
	}
	return out
}

func (e *Engine) resourceOf(r *resource) Resource {
	v := Resource{Name: r.name, Amount: r.amount, Held: r.units, Exclusive: r.exclusive, Shared: r.shared, Waiting: len(r.waiters)}
	for _, t := range r.holders {
		v.Holders = append(v.Holders, t)
	}
	slices.Sort(v.Holders)
	v.Holders = slices.Compact(v.Holders)
	return v
}

// whyResource says what a ready task waits for of its resource.
func (e *Engine) whyResource(en *entry) string {
	r := e.res[en.st.WaitsFor]
	v := e.resourceOf(r)
	c, _ := claimOn(en.def, r.name)
	var held string
	switch {
	case v.Exclusive > 0:
		held = "held exclusively"
	case c.Mode == job.ClaimExclusive && v.Shared > 0 && v.Held == 0:
		held = fmt.Sprintf("%d shared hold(s)", v.Shared)
	default:
		held = fmt.Sprintf("%d of %d held", v.Held, v.Amount)
		if v.Shared > 0 {
			held += fmt.Sprintf(", %d shared hold(s)", v.Shared)
		}
	}
	if len(v.Holders) > 0 {
		held += " by " + strings.Join(v.Holders, ", ")
	}
	want := fmt.Sprintf("it needs %d", c.Units)
	if c.Mode != "" {
		want = "it needs it " + string(c.Mode)
	}
	s := fmt.Sprintf("%s is ready and waits for resource %s: %s; %s", en.def.Name, r.name, held, want)
	if ahead := e.ahead(en, r); ahead > 0 {
		s += fmt.Sprintf(", after %d task(s) before it in priority order that wait for it too", ahead)
	}
	return s
}

// ahead counts the waiters of r that dispatch takes before en.
func (e *Engine) ahead(en *entry, r *resource) int {
	n := 0
	for _, w := range r.waiters {
		if w.en != en && before(w.en, en) {
			n++
		}
	}
	return n
}
