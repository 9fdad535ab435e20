package scheduler

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/gnomon-sched/gnomon/engine"
	"github.com/gnomon-sched/gnomon/internal/jsonenc"
	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/store"
)

// The journal's codec: what the journal records of each applied event.

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
	b = append(b, '"')
	if d.By != "" {
		b = append(b, `,"by":`...)
		b = jsonenc.AppendString(b, d.By)
	}
	b = append(b, `,"received":"`...)
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
