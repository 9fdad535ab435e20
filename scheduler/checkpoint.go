package scheduler

import (
	"cmp"
	"slices"
	"time"

	"github.com/gnomon-sched/gnomon/engine"
	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/store"
)

// Checkpoints are written when this many events were journaled since the
// last one (or twice as many as it holds, if that is more), in parts of
// checkpointPart rows per commit: a restart then replays at most about
// that many entries, and writing one costs a bounded share of each event.
const (
	checkpointEvery = 50_000
	checkpointPart  = 1_000
)

// checkpointer tracks the checkpoints of the windows; the loop goroutine
// owns it.
//
// A checkpoint is fuzzy: it is as of the journal entry Seq at which it
// started, but each configuration's events are copied when its part is
// written, a few commits later, with whatever the entries since then
// added or cleared. A restart loads it and replays the journal after Seq,
// which adds again what a copy already holds (the windows keep each
// timestamp once) and clears again what a copy no longer holds, in order,
// so it ends with the windows the loop had. Copying a part at a time keeps
// the loop from stalling on a copy of all the windows (a third of a
// second with a million configurations).
//
// The checkpointer also holds back what data events ran without a
// command (engine.Output.Ran) and the store does not have yet: their runs
// and fires, and the configurations whose stored state misses an
// execution. Their journal entries name them, so a restart rebuilds all
// three from the entries after Seq; a checkpoint therefore writes, with
// its parts, those there were when it started, and is done only once
// they are durable. Each such execution then costs the commit of its
// event nothing but its share of the journal entry, instead of three rows
// at random places (a run in the index by task, a fire, a state).
type checkpointer struct {
	gen   int64 // current generation
	seq   int64 // last journal entry committed
	since int   // events journaled since the current checkpoint
	live  int   // rows of the current checkpoint
	// writing is the checkpoint being written: its generation and Seq.
	writing *store.Checkpoint
	refs    []engine.WindowRef // configurations not yet copied
	rows    []job.Validation   // copied, not yet written
	total   int                // rows written to it so far
	// held are the unwritten runs, in order; held[:due] are due before
	// the checkpoint being written is done.
	held []*job.Run
	due  int
	// dirty are the configurations whose stored state misses an
	// execution; dueStates are those that were when the checkpoint being
	// written started, not yet written.
	dirty     map[string]bool
	dueStates []string
	// wroteHeld and wroteStates count what the batch being committed
	// writes of held and dueStates.
	wroteHeld, wroteStates int
	// every, size and most override checkpointEvery, checkpointPart and
	// maxHeld (tests).
	every, size, most int
}

// maxHeld bounds the runs held back: beyond it, the oldest are written a
// part at a time, checkpoint or not. A checkpoint writes at most heldPart
// held runs and as many states per commit: with 1000 of each (and their
// fires), at 10^4 configurations, the commits that wrote them held answers
// up to 100 ms, against 60 ms with 250.
const (
	maxHeld  = 10_000
	heldPart = 250
)

// hold takes the runs an applied event ran without a command.
func (c *checkpointer) hold(out *engine.Output) {
	for _, r := range out.Ran {
		c.held = append(c.held, r)
		c.markDirty(r.Task)
	}
}

// heldSince reports whether run id is among the runs held back from the
// from-th on.
func (c *checkpointer) heldSince(from int, id int64) bool {
	// Held runs are in the order of their IDs.
	_, ok := slices.BinarySearchFunc(c.held[from:], id, func(r *job.Run, id int64) int { return cmp.Compare(r.ID, id) })
	return ok
}

// markDirty notes that the stored state of a task misses an execution.
func (c *checkpointer) markDirty(name string) {
	if c.dirty == nil {
		c.dirty = map[string]bool{}
	}
	c.dirty[name] = true
}

// written notes that a batch writes the state of a task, or deletes it.
func (c *checkpointer) written(name string) {
	delete(c.dirty, name)
}

// part adds to b the next part of the checkpoint being written, if any,
// copying from eng the configurations it needs, and the due states and
// runs it can take; states of tasks in skip are in b already.
func (c *checkpointer) part(eng *engine.Engine, b *store.Batch, skip map[string]bool) {
	size := checkpointPart
	if c.size > 0 {
		size = c.size
	}
	held := 0 // how many held runs this batch writes
	if c.writing != nil {
		held = min(size, heldPart, c.due)
	}
	most := maxHeld
	if c.most > 0 {
		most = c.most
	}
	if over := len(c.held) - most; over > 0 {
		held = max(held, min(over+size, len(c.held)))
	}
	c.writeHeld(b, held)
	if c.writing == nil {
		return
	}
	for len(c.rows) < size && len(c.refs) > 0 {
		ref := c.refs[len(c.refs)-1]
		c.refs = c.refs[:len(c.refs)-1]
		w, ok := eng.Window(ref)
		if !ok {
			continue
		}
		for i, dep := range w.Deps {
			for _, ts := range w.TS[i] {
				c.rows = append(c.rows, job.Validation{Task: w.Task, Dep: dep, TS: time.Unix(0, ts).UTC()})
			}
		}
	}
	c.wroteStates = min(size, heldPart, len(c.dueStates))
	for _, name := range c.dueStates[:c.wroteStates] {
		if _, st, ok := eng.Task(name); ok && !skip[name] {
			b.States = append(b.States, store.TaskState{Name: name, State: st})
		}
	}
	n := min(size, len(c.rows))
	done := len(c.refs) == 0 && n == len(c.rows) && c.wroteStates == len(c.dueStates) && c.wroteHeld >= c.due
	b.Checkpoint = &store.Checkpoint{Gen: c.writing.Gen, Seq: c.writing.Seq, Rows: c.rows[:n:n], Done: done}
}

// writeHeld adds to b the first n held runs and their fires, unless b
// has them already.
func (c *checkpointer) writeHeld(b *store.Batch, n int) {
	for _, r := range c.held[c.wroteHeld:max(n, c.wroteHeld)] {
		b.Runs = append(b.Runs, *r)
		b.Fires = append(b.Fires, engine.RanFire(r))
	}
	c.wroteHeld = max(n, c.wroteHeld)
}

// flush adds to b every held run and its fire: for a reader of either.
func (c *checkpointer) flush(b *store.Batch) { c.writeHeld(b, len(c.held)) }

// committed records a durable batch, which journaled that many events,
// and starts a checkpoint when one is due.
func (c *checkpointer) committed(b *store.Batch, journaled int, eng *engine.Engine) {
	c.held = c.held[c.wroteHeld:]
	c.due = max(c.due-c.wroteHeld, 0)
	c.dueStates = c.dueStates[c.wroteStates:]
	c.wroteHeld, c.wroteStates = 0, 0
	if len(c.held) == 0 {
		c.held = nil // let the array go
	}
	if p := b.Checkpoint; p != nil {
		c.rows = c.rows[len(p.Rows):] // the part was a prefix of them
		c.total += len(p.Rows)
		if p.Done {
			c.gen, c.live, c.writing, c.refs, c.rows, c.dueStates = p.Gen, c.total, nil, nil, nil, nil
		}
	}
	if n := len(b.Entries); n > 0 {
		c.seq = b.Entries[n-1].Seq
	}
	c.since += journaled
	every := checkpointEvery
	if c.every > 0 {
		every = c.every
	}
	if c.writing == nil && c.since >= max(every, 2*c.live) {
		c.refs, c.rows, c.total, c.since = eng.WindowRefs(), nil, 0, 0
		c.writing = &store.Checkpoint{Gen: c.gen + 1, Seq: c.seq}
		c.due = len(c.held)
		for name := range c.dirty {
			c.dueStates = append(c.dueStates, name)
		}
		c.dirty = nil
	}
}
