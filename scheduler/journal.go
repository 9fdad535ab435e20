package scheduler

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
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
type dataEntry struct {
	engine.Data
	Received time.Time   `json:"received"`
	Accepted [][2]string `json:"accepted,omitempty"`
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
		if b, ok := appendDataEntry(dst, ev, now, out.Validations); ok {
			return b, nil
		}
		e := dataEntry{Data: ev, Received: now}
		for _, v := range out.Validations {
			e.Accepted = append(e.Accepted, [2]string{v.Task, v.Dep})
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
func appendDataEntry(b []byte, d engine.Data, received time.Time, accepted []job.Validation) ([]byte, bool) {
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
	return append(b, '}'), true
}

// jsonYear reports whether t's year is one time.Time's MarshalJSON accepts.
func jsonYear(t time.Time) bool {
	y := t.Year()
	return y >= 0 && y <= 9999
}

// windows returns the events configurations had accepted when the store
// was last written: the checkpoint, then what the journal after it adds
// and clears, in order. It also counts the journal entries after the
// checkpoint and returns the last journal sequence number.
func windows(ctx context.Context, st store.Store, snap *store.Snapshot) (vals []job.Validation, tail int, last int64, err error) {
	vals, last = snap.Windows, snap.WindowsSeq
	for {
		entries, err := st.Journal(ctx, last, 10_000)
		if err != nil {
			return nil, 0, 0, err
		}
		if len(entries) == 0 {
			return vals, tail, last, nil
		}
		for _, en := range entries {
			last = en.Seq
			tail++
			switch en.Kind {
			case "data":
				var ds []dataEntry
				if err := json.Unmarshal(en.Body, &ds); err != nil {
					return nil, 0, 0, fmt.Errorf("journal entry %d: %w", en.Seq, err)
				}
				tail += len(ds) - 1
				for _, d := range ds {
					for _, a := range d.Accepted {
						vals = append(vals, job.Validation{Task: a[0], Dep: a[1], TS: d.At})
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
					return nil, 0, 0, fmt.Errorf("journal entry %d: %w", en.Seq, err)
				}
				for _, c := range d.Cleared {
					vals = append(vals, job.Validation{Task: c[0], Dep: c[1], Expire: true})
				}
			}
		}
	}
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
	// every and size override checkpointEvery and checkpointPart (tests).
	every, size int
}

// part returns the next part of the checkpoint being written, if any,
// copying from eng the configurations it needs.
func (c *checkpointer) part(eng *engine.Engine) *store.Checkpoint {
	if c.writing == nil {
		return nil
	}
	size := checkpointPart
	if c.size > 0 {
		size = c.size
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
	n := min(size, len(c.rows))
	return &store.Checkpoint{Gen: c.writing.Gen, Seq: c.writing.Seq, Rows: c.rows[:n:n], Done: len(c.refs) == 0 && n == len(c.rows)}
}

// committed records a durable batch, which journaled that many events,
// and starts a checkpoint when one is due.
func (c *checkpointer) committed(b *store.Batch, journaled int, eng *engine.Engine) {
	if p := b.Checkpoint; p != nil {
		c.rows = c.rows[len(p.Rows):] // the part was a prefix of them
		c.total += len(p.Rows)
		if p.Done {
			c.gen, c.live, c.writing, c.refs, c.rows = p.Gen, c.total, nil, nil, nil
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
