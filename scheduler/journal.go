package scheduler

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/gnomon-sched/gnomon/engine"
	"github.com/gnomon-sched/gnomon/internal/jsonenc"
	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/store"
)

// dataEntry is how the journal records a data event: the event, when it
// was received and the dependencies it validated, as (configuration,
// dependency key) pairs. The journal is where accepted events are stored:
// a checkpoint of the windows plus the data entries after it rebuild them
// at a restart. Consecutive data events of one commit share one journal
// entry of kind "data", a JSON array of them.
//
// It also names the configurations the event ran without a command, and
// their runs' IDs (engine.Output.Ran): those runs, their fires and the
// configurations' states are written later than the event, and a restart
// rebuilds them from here.
type dataEntry struct {
	engine.Data
	Received time.Time   `json:"received"`
	Accepted [][2]string `json:"accepted,omitempty"`
	Ran      []ranEntry  `json:"ran,omitempty"`
}

// ranEntry names a configuration a data event ran, and the run.
type ranEntry struct {
	Task string `json:"task"`
	Run  int64  `json:"run"`
}

// dataRun gathers consecutive data events into one journal entry. The
// first entry of a batch is written into spare, a buffer the loop keeps
// from one commit to the next (the store keeps nothing of a batch once it
// returns); a later one in the same batch gets a buffer of its own.
type dataRun struct {
	body  []byte // the entry being gathered, nil if none
	at    time.Time
	spare []byte // nil once an entry took it
	kept  []byte // the first entry's buffer, grown
}

// add appends a data event and what it did to the entry, starting one.
func (d *dataRun) add(ev engine.Data, out *engine.Output, at time.Time) error {
	if d.body == nil {
		buf := d.spare
		if cap(buf) == 0 {
			buf = make([]byte, 0, 4096)
		}
		d.body, d.at, d.spare = append(buf[:0], '['), at, nil
	} else {
		d.body = append(d.body, ',')
	}
	var err error
	d.body, err = appendJournalBody(d.body, ev, out, at)
	return err
}

// flush appends the gathered events to the batch as one entry.
func (d *dataRun) flush(b *store.Batch) {
	if d.body == nil {
		return
	}
	body := append(d.body, ']')
	b.Entries = append(b.Entries, store.Entry{At: d.at, Kind: "data", Body: body})
	if d.kept == nil {
		d.kept = body[:0]
	}
	d.body = nil
}

// defineEntry is the journal body of a definition change, with the
// dependencies it removed (a configuration's key empty: all of them).
type defineEntry struct {
	engine.Define
	Cleared [][2]string `json:"cleared,omitempty"`
}

// actEntry is the journal body of an operator action, with the
// configurations a reset emptied.
type actEntry struct {
	engine.Act
	Cleared [][2]string `json:"cleared,omitempty"`
}

// cleared lists the dependencies an output emptied.
func cleared(out *engine.Output) [][2]string {
	var c [][2]string
	for _, v := range out.Validations {
		if v.Expire {
			c = append(c, [2]string{v.Task, v.Dep})
		}
	}
	return c
}

// appendJournalBody appends to dst what the journal records of an applied
// event.
func appendJournalBody(dst []byte, ev engine.Event, out *engine.Output, now time.Time) ([]byte, error) {
	var v any = ev
	switch ev := ev.(type) {
	case engine.Data:
		if b, ok := appendDataEntry(dst, ev, now, out.Validations, out.Ran); ok {
			return b, nil
		}
		e := dataEntry{Data: ev, Received: now}
		for _, v := range out.Validations {
			e.Accepted = append(e.Accepted, [2]string{v.Task, v.Dep})
		}
		for _, r := range out.Ran {
			e.Ran = append(e.Ran, ranEntry{Task: r.Task, Run: r.ID})
		}
		v = e
	case engine.Define:
		v = defineEntry{Define: ev, Cleared: cleared(out)}
	case engine.Act:
		v = actEntry{Act: ev, Cleared: cleared(out)}
	}
	b, err := json.Marshal(v)
	if dst == nil {
		return b, err // a definition's entry may be megabytes: not copied again
	}
	return append(dst, b...), err
}

// appendDataEntry appends the JSON of a dataEntry, as json.Marshal writes
// it, without reflection: every data event is journaled, so this is on the
// path of each one. It reports false, having appended nothing, when a
// time is outside the years JSON can hold; the caller then uses
// json.Marshal, which says so.
func appendDataEntry(b []byte, d engine.Data, received time.Time, accepted []job.Validation, ran []*job.Run) ([]byte, bool) {
	if !jsonYear(d.At) || !jsonYear(received) {
		return b, false
	}
	b = append(b, `{"type":`...)
	b = jsonenc.AppendString(b, string(d.Type))
	b = append(b, `,"resource":`...)
	b = jsonenc.AppendString(b, d.Resource)
	b = append(b, `,"ts":"`...)
	b = d.At.AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","received":"`...)
	b = received.AppendFormat(b, time.RFC3339Nano)
	b = append(b, '"')
	if len(accepted) > 0 {
		b = append(b, `,"accepted":`...)
		b = jsonenc.AppendArray(b, accepted, func(b []byte, v job.Validation) []byte {
			b = append(b, '[')
			b = jsonenc.AppendString(b, v.Task)
			b = append(b, ',')
			b = jsonenc.AppendString(b, v.Dep)
			return append(b, ']')
		})
	}
	if len(ran) > 0 {
		b = append(b, `,"ran":`...)
		b = jsonenc.AppendArray(b, ran, func(b []byte, r *job.Run) []byte {
			b = append(b, `{"task":`...)
			b = jsonenc.AppendString(b, r.Task)
			b = append(b, `,"run":`...)
			b = strconv.AppendInt(b, r.ID, 10)
			return append(b, '}')
		})
	}
	return append(b, '}'), true
}

// jsonYear reports whether t's year is one time.Time's MarshalJSON accepts.
func jsonYear(t time.Time) bool {
	y := t.Year()
	return y >= 0 && y <= 9999
}

// replay is what the journal after the last checkpoint tells beyond the
// stored state.
type replay struct {
	// vals are the events configurations had accepted: the checkpoint,
	// then what the journal after it adds and clears, in order.
	vals []job.Validation
	// runs are the runs of configurations that data events ran without
	// a command, in order: the store may not have them, nor their fires,
	// yet.
	runs []*job.Run
	// ran holds, for each configuration, the last of those runs since
	// the last reset or deletion of the configuration: its stored state
	// may not have it yet (engine.Replay).
	ran map[string]*job.Run
	// tail counts the journaled events after the checkpoint; last is the
	// last journal sequence number, lastRun the highest run ID named.
	tail    int
	last    int64
	lastRun int64
}

// replayJournal reads the checkpoint of the windows in snap and the journal
// after it.
func replayJournal(ctx context.Context, st store.Store, snap *store.Snapshot) (*replay, error) {
	r := &replay{vals: snap.Windows, last: snap.WindowsSeq, ran: map[string]*job.Run{}}
	for {
		entries, err := st.Journal(ctx, r.last, 10_000)
		if err != nil {
			return nil, err
		}
		if len(entries) == 0 {
			return r, nil
		}
		for _, en := range entries {
			r.last = en.Seq
			r.tail++
			switch en.Kind {
			case "data":
				var ds []dataEntry
				if err := json.Unmarshal(en.Body, &ds); err != nil {
					return nil, fmt.Errorf("journal entry %d: %w", en.Seq, err)
				}
				r.tail += len(ds) - 1
				for _, d := range ds {
					for _, a := range d.Accepted {
						r.vals = append(r.vals, job.Validation{Task: a[0], Dep: a[1], TS: d.At})
					}
					for _, ran := range d.Ran {
						run := engine.EventRun(ran.Run, ran.Task, d.Data, d.Received)
						r.runs = append(r.runs, run)
						r.ran[run.Task] = run
						r.lastRun = max(r.lastRun, run.ID)
					}
				}
			case "define", "act":
				// A definition's text can be megabytes: decode only those
				// that emptied windows.
				if !bytes.Contains(en.Body, []byte(`"cleared"`)) {
					continue
				}
				var d struct {
					Cleared [][2]string `json:"cleared"`
				}
				if err := json.Unmarshal(en.Body, &d); err != nil {
					return nil, fmt.Errorf("journal entry %d: %w", en.Seq, err)
				}
				for _, c := range d.Cleared {
					r.vals = append(r.vals, job.Validation{Task: c[0], Dep: c[1], Expire: true})
					if c[1] == "" {
						// A reset or a deletion: the state written with it
						// is later than the executions before it.
						delete(r.ran, c[0])
					}
				}
			}
		}
	}
}

// apply brings the stored states in recs up to date with the executions
// the journal names, and returns the configurations it changed.
func (r *replay) apply(recs []job.Record) []string {
	if len(r.ran) == 0 {
		return nil
	}
	var changed []string
	for i := range recs {
		rec := &recs[i]
		if run, ok := r.ran[rec.Def.Name]; ok && rec.Def.Type == job.Configuration && engine.Replay(&rec.State, run) {
			changed = append(changed, rec.Def.Name)
		}
	}
	return changed
}

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
		if c.dirty == nil {
			c.dirty = map[string]bool{}
		}
		c.dirty[r.Task] = true
	}
}

// heldSince reports whether run id is among the runs held back from the
// from-th on.
func (c *checkpointer) heldSince(from int, id int64) bool {
	// Held runs are in the order of their IDs.
	_, ok := slices.BinarySearchFunc(c.held[from:], id, func(r *job.Run, id int64) int { return cmp.Compare(r.ID, id) })
	return ok
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

// Received is a data event as the journal recorded it.
type Received struct {
	Seq      int64        `json:"seq"` // of the journal entry that holds it
	At       time.Time    `json:"received"`
	Type     job.DataType `json:"type"`
	Resource string       `json:"resourceId"`
	TS       time.Time    `json:"timestamp"`
	// Accepted names the configurations that stored it, sorted.
	Accepted []string `json:"accepted"`
}

// ReceivedEvents returns the data events the journal holds, newest first,
// at most limit of them, only those a configuration accepted when it is not
// empty. It reads at most scan entries back.
func ReceivedEvents(ctx context.Context, st store.Store, configuration string, limit, scan int) ([]Received, error) {
	out := []Received{}
	var before int64
	for scanned := 0; scanned < scan && len(out) < limit; {
		entries, err := st.JournalBefore(ctx, "data", before, min(1000, scan-scanned))
		if err != nil {
			return nil, err
		}
		if len(entries) == 0 {
			break
		}
		for _, en := range entries {
			before = en.Seq
			var ds []dataEntry
			if err := json.Unmarshal(en.Body, &ds); err != nil {
				return nil, fmt.Errorf("journal entry %d: %w", en.Seq, err)
			}
			scanned += len(ds)
			for i := len(ds) - 1; i >= 0 && len(out) < limit; i-- {
				d := ds[i]
				r := Received{Seq: en.Seq, At: d.Received, Type: d.Type, Resource: d.Resource, TS: d.At, Accepted: []string{}}
				for _, a := range d.Accepted {
					if len(r.Accepted) == 0 || r.Accepted[len(r.Accepted)-1] != a[0] {
						r.Accepted = append(r.Accepted, a[0])
					}
				}
				if configuration == "" || slices.Contains(r.Accepted, configuration) {
					out = append(out, r)
				}
			}
			if len(out) == limit {
				break
			}
		}
	}
	return out, nil
}
