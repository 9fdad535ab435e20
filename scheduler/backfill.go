package scheduler

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/gnomon-sched/gnomon/engine"
	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/store"
)

// Backfills (see engine/backfill.go) go through the loop like any event,
// with what the fire ledger holds of their range: the loop reads it from
// the store, and from the batch it is gathering, just before it applies
// the event, so that no commit comes in between. The event, ledger
// included, is journaled, and what remains to run is in the task's
// state: both are durable before the caller is answered.

// TriggerBackfill is the trigger of a fire a backfill recorded.
const TriggerBackfill Trigger = "backfill"

// Backfill asks for the past occurrences of a task in [ev.From, ev.To] to
// run, as ev says, and returns what became of each once that is durable;
// with dry, it returns what would, and changes nothing. For a
// configuration, the occurrences are the instants at which the data
// events the journal holds would have triggered it (see
// DataOccurrences).
func (s *Scheduler) Backfill(ctx context.Context, ev engine.Backfill, dry bool) (*engine.BackfillResult, error) {
	var (
		def   job.Task
		found bool
	)
	if err := s.Read(ctx, func(e *engine.Engine) { def, _, found = e.Task(ev.Task) }); err != nil {
		return nil, err
	}
	if found {
		if err := s.backfillKept(&def, ev.From); err != nil {
			return nil, err
		}
	}
	if found && def.Type == job.Configuration && def.Executes() {
		occ, err := s.DataOccurrences(ctx, &def, ev.From, ev.To)
		if err != nil {
			return nil, err
		}
		ev.Occurrences = occ
	}
	ev.Ledger = nil // the loop reads it
	r := &request{ev: ev, dryRun: dry, reply: make(chan error, 1)}
	if err := s.send(ctx, r); err != nil {
		return nil, err
	}
	return r.backfill, nil
}

// CancelBackfill drops the occurrences a task's backfills have not
// started and kills their runs in flight, naming by as who ended them, and
// returns what became of each once that is durable.
func (s *Scheduler) CancelBackfill(ctx context.Context, task, by string) (*engine.BackfillResult, error) {
	r := &request{ev: engine.BackfillCancel{Task: task, By: by}, reply: make(chan error, 1)}
	if err := s.send(ctx, r); err != nil {
		return nil, err
	}
	return r.backfill, nil
}

// ledgerFor completes a backfill with what the fire ledger holds of its
// range: the store's records, then those of the batch being gathered.
func (s *Scheduler) ledgerFor(bt *batch, ev engine.Backfill) (engine.Backfill, error) {
	fires, err := s.cfg.Store.Fires(context.Background(), store.FireQuery{Task: ev.Task, From: ev.From, To: ev.To.Add(time.Nanosecond)})
	if err != nil {
		return ev, fmt.Errorf("backfill: fire ledger: %w", err)
	}
	slices.Reverse(fires) // oldest first, as recorded
	for _, f := range bt.b.Fires {
		if f.Task == ev.Task && !f.Scheduled.Before(ev.From) && !f.Scheduled.After(ev.To) {
			fires = append(fires, f)
		}
	}
	ev.Ledger = fires
	return ev, nil
}

// prepareBackfill reads the ledger of a backfill request just before it
// is applied, and answers a dry run at once. It reports whether the
// request is done with.
func (s *Scheduler) prepareBackfill(bt *batch, r *request, now time.Time) (done bool, err error) {
	ev, ok := r.ev.(engine.Backfill)
	if !ok {
		return false, nil
	}
	if ev, err = s.ledgerFor(bt, ev); err != nil {
		return true, err
	}
	if r.dryRun {
		r.backfill, err = s.eng.PlanBackfill(ev, now)
		return true, err
	}
	r.ev = ev
	return false, nil
}

// journalPage is how many journal entries DataOccurrences reads at a time.
const journalPage = 1000

// DataOccurrences returns the instants in [from, to] at which the data
// events the journal holds would have triggered configuration def, had it
// been defined, as it is now, and idle all along: the journal's data
// events, and the resets of the configuration, are applied in the order
// they were received to an engine that holds the configuration alone,
// without its command, so that no run of it makes it busy. It reads the
// whole journal.
func (s *Scheduler) DataOccurrences(ctx context.Context, def *job.Task, from, to time.Time) ([]time.Time, error) {
	c := def.Clone()
	c.Command, c.Edit().Function = "", ""
	c.Edit().AlertTo, c.Edit().AlertOn = nil, nil
	c.Compact()
	e := engine.New(engine.Config{Workers: 1, EventLateness: s.cfg.EventLateness})
	p, err := e.Prepare(job.Record{Def: c})
	if err != nil {
		return nil, fmt.Errorf("backfill: %w", err)
	}
	e.Restore([]engine.Prepared{p}, nil, 0, nil)
	var out []time.Time
	var after int64
	for {
		entries, err := s.cfg.Store.Journal(ctx, after, journalPage)
		if err != nil {
			return nil, fmt.Errorf("backfill: journal: %w", err)
		}
		if len(entries) == 0 {
			return out, nil
		}
		for _, en := range entries {
			after = en.Seq
			switch en.Kind {
			case "data":
				var ds []dataEntry
				if err := json.Unmarshal(en.Body, &ds); err != nil {
					return nil, fmt.Errorf("backfill: journal entry %d: %w", en.Seq, err)
				}
				for _, d := range ds {
					res, err := e.Apply(engine.Data{Type: d.Type, Resource: d.Resource, At: d.At}, d.Received)
					if err == nil && len(res.Data.Triggered) > 0 && !d.At.Before(from) && !d.At.After(to) {
						out = append(out, d.At)
					}
				}
			case "act":
				var a engine.Act
				if err := json.Unmarshal(en.Body, &a); err != nil {
					return nil, fmt.Errorf("backfill: journal entry %d: %w", en.Seq, err)
				}
				if a.Task == c.Name && a.Action == job.ActReset {
					// A reset forgets the last execution and the events held;
					// refused, it changed nothing then either.
					_, _ = e.Apply(a, en.At)
				}
			}
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
}
