package scheduler

import (
	"fmt"
	"time"

	"github.com/gnomon-sched/gnomon/engine"
	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/store"
)

// batch gathers what the outputs of one commit's events write, and the
// effects to perform once it is durable.
type batch struct {
	b store.Batch
	// Tasks whose definition or state changed, those among them whose
	// definition changed, and those deleted.
	tasks, defined, deleted map[string]bool
	// seen are the tasks readers see changed: tasks and deleted, and the
	// configurations whose windows or executions changed without their
	// stored state (engine.Output.Ran, Validations).
	seen map[string]bool
	runs map[int64]job.Run
	// calendars are the named calendars changed (true) or deleted
	// (false), as they are after the batch.
	calendars map[string]bool
	// data gathers consecutive data events into one journal entry.
	data      dataRun
	journaled int // events journaled
	effects   []effect
	// notes are what listeners are told, after the effects.
	notes []effect
	// exited are the runs whose end the batch records: their files are
	// released once it is durable.
	exited []int64
	// held is how many runs the checkpointer held back before the batch:
	// those it holds from there on are not written with it.
	held int
	// flush writes every run and fire held back.
	flush bool
	// notices: a listener wants to hear of runs.
	notices bool
	// trees is what the batch writes of the timeperiod trees; treeFiles
	// the tree files the store holds once it is durable (nil: unchanged).
	trees     treeWrites
	treeFiles map[string]bool
	// nodeExits are how the node runs whose end the batch records ended.
	nodeExits map[int64]job.Exit
	// obs is told what each event did.
	obs Observer
}

func newBatch(spare []byte, held int, notices bool, obs Observer) *batch {
	return &batch{
		tasks: map[string]bool{}, defined: map[string]bool{}, deleted: map[string]bool{}, seen: map[string]bool{}, runs: map[int64]job.Run{},
		data: dataRun{spare: spare}, held: held, notices: notices, obs: obs,
	}
}

// add takes what an applied event did: its journal entry, the tasks and
// runs it changed, its alerts and effects.
func (bt *batch) add(ev engine.Event, out *engine.Output, now time.Time) error {
	bt.journaled++
	var err error
	if d, ok := ev.(engine.Data); ok {
		err = bt.data.add(d, out, now)
	} else {
		bt.data.flush(&bt.b)
		var body []byte
		body, err = appendJournalBody(nil, ev, out, now)
		bt.b.Entries = append(bt.b.Entries, store.Entry{At: now, Kind: engine.Kind(ev), Body: body})
	}
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	for _, n := range out.Tasks {
		bt.tasks[n] = true
		bt.seen[n] = true
		delete(bt.deleted, n)
	}
	for _, r := range out.Ran {
		bt.seen[r.Task] = true
	}
	for _, v := range out.Validations {
		bt.seen[v.Task] = true
	}
	for _, n := range out.Defined {
		bt.defined[n] = true
	}
	for _, n := range out.Deleted {
		bt.deleted[n] = true
		bt.seen[n] = true
		delete(bt.tasks, n)
		bt.defined[n] = true // if it comes back in this batch, it is new
	}
	for _, run := range out.Runs {
		bt.runs[run.ID] = *run
	}
	for _, n := range out.Calendars {
		bt.calendar(n, true)
	}
	for _, n := range out.DeletedCalendars {
		bt.calendar(n, false)
	}
	bt.b.Fires = append(bt.b.Fires, out.Fires...)
	bt.b.Alerts = append(bt.b.Alerts, out.Alerts...)
	if ex, ok := ev.(engine.RunExited); ok {
		bt.exited = append(bt.exited, ex.RunID)
	}
	for _, ef := range out.Effects {
		bt.effects = append(bt.effects, effectOf(ef))
	}
	if bt.notices {
		bt.notes = appendNotices(bt.notes, out)
	}
	for _, f := range out.Fires {
		if f.Fate != job.FateRan {
			bt.effects = append(bt.effects, logFire(f))
		}
	}
	bt.observe(ev, out)
	return nil
}

// calendar records that a named calendar changed (or was deleted).
func (bt *batch) calendar(name string, changed bool) {
	if bt.calendars == nil {
		bt.calendars = map[string]bool{}
	}
	bt.calendars[name] = changed
}

// observe tells the observer what an applied event did: the fires it
// recorded, the runs it started, the run it ended, the data it took.
func (bt *batch) observe(ev engine.Event, out *engine.Output) {
	by := TriggerTime
	switch ev := ev.(type) {
	case engine.Data:
		by = TriggerEvent
		if out.Data != nil {
			bt.obs.DataApplied(len(out.Data.Triggered))
		}
		// A configuration without a command ran, its fire written later
		// with its run (engine.Output.Ran).
		for range out.Ran {
			bt.obs.Fired(TriggerEvent, job.FateRan, 0)
		}
	case engine.RunExited:
		for _, r := range out.Runs {
			if r.ID == ev.RunID && r.Done() {
				bt.obs.RunEnded(r.Status, r.Result)
			}
		}
	}
	for i := range out.Fires {
		f := &out.Fires[i]
		late := time.Duration(0)
		switch {
		case f.Fate == job.FateBackfilled:
			bt.obs.Fired(TriggerBackfill, f.Fate, 0)
			continue
		case by == TriggerTime:
			late = f.At.Sub(f.Scheduled)
		}
		bt.obs.Fired(by, f.Fate, late)
	}
	for _, ef := range out.Effects {
		if _, ok := ef.(engine.StartRun); ok {
			bt.obs.RunStarted()
		}
	}
}

// finish completes the store batch: the definitions and states of the
// tasks changed, read from the engine as they are after the whole batch,
// the runs (but those the checkpointer holds back), their audit records,
// and the next part of a checkpoint.
func (bt *batch) finish(eng *engine.Engine, ckpt *checkpointer) *store.Batch {
	b := &bt.b
	for n := range bt.tasks {
		ckpt.written(n)
		def, st, ok := eng.Task(n)
		switch {
		case !ok:
		case bt.defined[n]:
			b.Tasks = append(b.Tasks, job.Record{Def: &def, State: st})
		default:
			b.States = append(b.States, store.TaskState{Name: n, State: st})
		}
	}
	for n := range bt.deleted {
		ckpt.written(n)
		b.Deleted = append(b.Deleted, n)
	}
	for n, changed := range bt.calendars {
		c, ok := eng.Calendar(n)
		switch {
		case changed && ok:
			b.Calendars = append(b.Calendars, *c)
		case !changed:
			b.DeletedCalendars = append(b.DeletedCalendars, n)
		}
	}
	for _, r := range bt.runs {
		if !ckpt.heldSince(bt.held, r.ID) {
			b.Runs = append(b.Runs, r)
		}
	}
	b.Audit = auditOf(bt.runs)
	bt.data.flush(b)
	ckpt.part(eng, b, bt.tasks)
	if bt.flush {
		ckpt.flush(b)
	}
	for _, id := range bt.exited {
		bt.effects = append(bt.effects, forget(id))
	}
	bt.effects = append(bt.effects, bt.notes...)
	return b
}
