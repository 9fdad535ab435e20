package scheduler

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/gnomon-sched/gnomon/engine"
	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/store"
)

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
