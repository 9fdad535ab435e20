package engine

import (
	"fmt"
	"slices"
	"time"

	"github.com/gnomon-sched/gnomon/calendar"
	"github.com/gnomon-sched/gnomon/job"
)

// A backfill runs past occurrences of a task, each as that occurrence: a
// run whose Scheduled is the occurrence and whose Trigger is
// job.TriggerBackfill. Its rules:
//
//   - The occurrences are those of the task's time trigger in [From, To],
//     or for a configuration those its stored data events would have
//     triggered (Backfill.Occurrences, which the scheduler replays). Only
//     those before the clock's time and before the task's next occurrence
//     may be backfilled: the later ones are the regular schedule's, so the
//     clock never runs an occurrence a backfill ran, nor the reverse.
//   - The fire ledger decides, exactly once: an occurrence that ran or was
//     backfilled is not run again; one that was missed or skipped is, and
//     its ledger record becomes backfilled (the reason keeps what it was).
//     An occurrence an earlier backfill holds is not queued twice. The
//     scheduler hands the ledger in with the event (Backfill.Ledger).
//   - What remains to run is part of the task's state (job.Backfill), so a
//     backfill goes on after a restart, and an occurrence is written
//     backfilled in the ledger with the start of its run.
//   - Runs start in occurrence order, at most MaxParallel at once, and
//     only with a worker slot left after the ready tasks took theirs;
//     together, backfill runs leave one worker slot to the regular
//     schedule. A frozen task starts none until it is thawed.
//   - Unless the task's overlap is allow, its runs do not overlap: a
//     backfill run starts only while the task is not active, and a regular
//     trigger that comes while backfill runs are in flight makes the task
//     ready; it starts as soon as they end, before the next backfill run.
//     Under overlap allow, backfill runs run beside the task's own.
//   - A backfill run bypasses the task's condition, as a start does, and
//     its start delay, and does not change the task's status: the status, which conditions
//     read, belongs to the regular schedule. Its outcome is recorded,
//     alerted and told to listeners as any run's, but it triggers no
//     dependent: backfill them in turn.
//   - The task's run policy holds for backfill runs as for its own: a run
//     past term_run_time is killed and fails with result timeout, the run
//     alarms are raised, and a failed run is retried under n_retrys. A
//     retry waits in the queue, holding no worker slot, until its delay
//     has passed, then runs the same occurrence again (Attempt, RetryOf);
//     only the last failure is alerted as final. The occurrence alarms
//     (must_start_by, must_complete_by) are the regular schedule's: a
//     backfilled occurrence is past them by definition.
//   - A cancel (BackfillCancel, or an abort of the task) drops the
//     occurrences not started and kills the backfill runs in flight, which
//     end aborted and are not retried; their occurrences stay backfilled.

// MaxBackfill bounds the occurrences one backfill may hold in its range,
// and those a task's backfills may have waiting.
const MaxBackfill = 10_000

// Backfill asks for the past occurrences of a task in [From, To] to run.
type Backfill struct {
	Task string    `json:"task"`
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
	// MaxParallel is the most backfill runs of the task at once; zero
	// means 1. It applies to what the task's earlier backfills left too.
	MaxParallel int `json:"max_parallel,omitempty"`
	// By names the identity that asked (see job.Run.By).
	By string `json:"by,omitempty"`
	// Params are parameter values for every run of the backfill, as a
	// start's (see Act.Params).
	Params []job.Var `json:"params,omitempty"`
	// Occurrences are, for a configuration, the instants in [From, To]
	// at which its stored data events would have triggered it; the
	// scheduler replays them from the journal. Unused for other tasks,
	// whose time trigger yields them.
	Occurrences []time.Time `json:"occurrences,omitempty"`
	// Ledger is what the fire ledger recorded of the task's occurrences
	// in [From, To] when the event is applied, in the order recorded.
	Ledger []job.Fire `json:"ledger,omitempty"`
}

// BackfillCancel stops the backfills of a task: the occurrences not
// started are dropped, and the backfill runs in flight are killed.
type BackfillCancel struct {
	Task string `json:"task"`
	By   string `json:"by,omitempty"`
}

func (Backfill) kind() string       { return "backfill" }
func (BackfillCancel) kind() string { return "backfill_cancel" }

// BackfillAction is what a backfill does with one occurrence.
type BackfillAction string

// Actions of a backfill.
const (
	// BackfillQueued: this backfill runs it (RunID is set once started).
	BackfillQueued BackfillAction = "queued"
	// BackfillDone: it ran or was backfilled already (Fate says which).
	BackfillDone BackfillAction = "done"
	// BackfillPending: an earlier backfill holds it and has not started it.
	BackfillPending BackfillAction = "pending"
	// BackfillScheduled: it is not past yet for the task (at or after its
	// next occurrence, or the clock's time): the regular schedule's.
	BackfillScheduled BackfillAction = "scheduled"
	// BackfillExcluded: it falls on a day of the task's exclude_calendar:
	// a backfill does not run it, as the clock did not (Reason says which).
	BackfillExcluded BackfillAction = "excluded"
	// BackfillCanceled: a cancel dropped it before it started.
	BackfillCanceled BackfillAction = "canceled"
	// BackfillKilled: a cancel killed its backfill run (RunID).
	BackfillKilled BackfillAction = "killed"
)

// BackfillOccurrence is what a backfill does with one occurrence.
type BackfillOccurrence struct {
	Scheduled time.Time      `json:"scheduled"`
	Action    BackfillAction `json:"action"`
	// Fate is what the fire ledger recorded of it before, if anything.
	Fate   job.Fate `json:"fate,omitempty"`
	Reason string   `json:"reason,omitempty"`
	RunID  int64    `json:"run_id,omitempty"`
}

// BackfillResult is what a backfill (or its dry run, or a cancel) did.
type BackfillResult struct {
	Task string `json:"task"`
	// Until is the end, excluded, of what could be backfilled: the
	// clock's time, or the task's next occurrence if earlier.
	Until time.Time `json:"until,omitzero"`
	// Occurrences are those of the range, in order.
	Occurrences []BackfillOccurrence `json:"occurrences"`
}

// Count returns how many occurrences had action a.
func (r *BackfillResult) Count(a BackfillAction) int {
	n := 0
	for _, o := range r.Occurrences {
		if o.Action == a {
			n++
		}
	}
	return n
}

// PlanBackfill says what a backfill would do at instant now, and changes
// nothing: a dry run.
func (e *Engine) PlanBackfill(ev Backfill, now time.Time) (*BackfillResult, error) {
	_, res, _, err := e.planBackfill(ev, now)
	return res, err
}

// planBackfill decides what a backfill does with each occurrence of its
// range, and returns the items to queue.
func (e *Engine) planBackfill(ev Backfill, now time.Time) (*entry, *BackfillResult, []job.BackfillItem, error) {
	en, ok := e.tasks[ev.Task]
	if !ok {
		return nil, nil, nil, fmt.Errorf("%w: task %s not found", ErrNotFound, ev.Task)
	}
	def := en.def
	switch {
	case def.Type == job.Group:
		return nil, nil, nil, refused("%s is a group: backfill its jobs", ev.Task)
	case def.Type == job.Resource:
		return nil, nil, nil, refused("%s is a resource: backfill the tasks that take it", ev.Task)
	case def.Type == job.Bundle:
		return nil, nil, nil, refused("%s is a bundle: a backfill runs callables and configurations, not bundle runs", ev.Task)
	case def.Type == job.Configuration && !def.Executes():
		return nil, nil, nil, refused("configuration %s has no command or function: a backfill has nothing to run", ev.Task)
	case def.Type == job.Callable && en.sched == nil && def.HasTimeTrigger():
		return nil, nil, nil, refused("the time trigger of %s could not be compiled: it has no occurrences to backfill", ev.Task)
	case def.Type == job.Callable && en.sched == nil:
		return nil, nil, nil, refused("%s has no time trigger: it has no occurrences to backfill (start it instead)", ev.Task)
	case ev.To.Before(ev.From):
		return nil, nil, nil, refused("to %s is before from %s", ev.To.UTC().Format(time.RFC3339), ev.From.UTC().Format(time.RFC3339))
	case ev.MaxParallel < 0:
		return nil, nil, nil, refused("max_parallel must be at least 1, got %d", ev.MaxParallel)
	}
	if err := checkParams(def, job.ActStart, ev.Params); err != nil {
		return nil, nil, nil, err
	}
	var occ []time.Time
	if def.Type == job.Configuration {
		occ = slices.Clone(ev.Occurrences)
		slices.SortFunc(occ, time.Time.Compare)
		occ = slices.CompactFunc(occ, time.Time.Equal)
		occ = slices.DeleteFunc(occ, func(t time.Time) bool { return t.Before(ev.From) || t.After(ev.To) })
	} else {
		var more bool
		if occ, more = calendar.Between(en.sched, ev.From, ev.To.Add(time.Nanosecond), MaxBackfill); more {
			return nil, nil, nil, refused("%s has more than %d occurrences from %s to %s: backfill a shorter range at a time",
				ev.Task, MaxBackfill, ev.From.UTC().Format(time.RFC3339), ev.To.UTC().Format(time.RFC3339))
		}
	}
	if len(occ) > MaxBackfill {
		return nil, nil, nil, refused("%s has more than %d occurrences from %s to %s: backfill a shorter range at a time",
			ev.Task, MaxBackfill, ev.From.UTC().Format(time.RFC3339), ev.To.UTC().Format(time.RFC3339))
	}
	ledger := map[int64]*job.Fire{}
	for i := range ev.Ledger {
		f := &ev.Ledger[i]
		if f.Task != ev.Task {
			continue
		}
		k := f.Scheduled.UnixNano()
		if old := ledger[k]; old == nil || f.Supersedes(old) {
			ledger[k] = f
		}
	}
	held := map[int64]bool{}
	waiting := 0
	if bf := en.st.Backfill; bf != nil {
		waiting = len(bf.Queue)
		for _, it := range bf.Queue {
			held[it.Scheduled.UnixNano()] = true
		}
	}
	until := now
	if nf := en.st.NextFire; !nf.IsZero() && nf.Before(until) {
		until = nf.Time()
	}
	res := &BackfillResult{Task: ev.Task, Until: until, Occurrences: make([]BackfillOccurrence, 0, len(occ))}
	var items []job.BackfillItem
	for _, t := range occ {
		o := BackfillOccurrence{Scheduled: t}
		f := ledger[t.UnixNano()]
		if f != nil {
			o.Fate, o.RunID = f.Fate, f.RunID
		}
		switch {
		case f != nil && (f.Fate == job.FateRan || f.Fate == job.FateBackfilled):
			o.Action, o.Reason = BackfillDone, doneReason(f)
		case held[t.UnixNano()]:
			o.Action, o.Reason = BackfillPending, "an earlier backfill holds it and has not started it yet"
		case en.sched != nil && exclusion(en.sched, t) != "":
			o.Action, o.Reason = BackfillExcluded, exclusion(en.sched, t)
		case !t.Before(until) && until.Equal(now):
			o.Action, o.Reason = BackfillScheduled, "it is not past yet: the regular schedule runs it"
		case !t.Before(until):
			o.Action, o.Reason = BackfillScheduled, fmt.Sprintf("the schedule has not reached it (its next occurrence is %s): the regular schedule runs it",
				until.UTC().Format(time.RFC3339))
		default:
			o.Action = BackfillQueued
			it := job.BackfillItem{Scheduled: t, By: ev.By, Params: ev.Params}
			if f != nil {
				it.Was = string(f.Fate)
				if f.Reason != "" {
					it.Was += ": " + f.Reason
				}
				o.Reason = "it was " + it.Was
			}
			items = append(items, it)
		}
		res.Occurrences = append(res.Occurrences, o)
	}
	if waiting+len(items) > MaxBackfill {
		return nil, nil, nil, refused("%s would have more than %d occurrences waiting to be backfilled (%d already do): cancel, or wait for them",
			ev.Task, MaxBackfill, waiting)
	}
	return en, res, items, nil
}

func doneReason(f *job.Fire) string {
	what := "it ran"
	if f.Fate == job.FateBackfilled {
		what = "it was backfilled"
	}
	if f.RunID != 0 {
		what += fmt.Sprintf(" (run %d)", f.RunID)
	}
	return what
}

// backfill applies a Backfill: the occurrences to run join the task's
// queue, in order.
func (e *Engine) backfill(ev Backfill) error {
	en, res, items, err := e.planBackfill(ev, e.now)
	if err != nil {
		return err
	}
	e.out.Backfill = res
	bf := en.st.Backfill
	if len(items) == 0 && (bf == nil || len(bf.Queue) == 0) {
		return nil
	}
	if bf == nil {
		bf = &job.Backfill{}
		en.st.Backfill = bf
	}
	bf.MaxParallel = max(1, ev.MaxParallel)
	bf.Queue = append(bf.Queue, items...)
	slices.SortStableFunc(bf.Queue, func(a, b job.BackfillItem) int { return a.Scheduled.Compare(b.Scheduled) })
	if e.backfills == nil {
		e.backfills = map[string]struct{}{}
	}
	e.backfills[ev.Task] = struct{}{}
	e.touch(ev.Task)
	return nil
}

// cancel applies a BackfillCancel.
func (e *Engine) cancel(ev BackfillCancel) error {
	en, ok := e.tasks[ev.Task]
	if !ok {
		return fmt.Errorf("%w: task %s not found", ErrNotFound, ev.Task)
	}
	if !e.backfillUnderWay(en) {
		return refused("no backfill of %s is under way", ev.Task)
	}
	e.out.Backfill = &BackfillResult{Task: ev.Task, Occurrences: e.cancelBackfill(en, ev.By)}
	return nil
}

// backfillUnderWay reports whether a task has occurrences waiting to be
// backfilled, or backfill runs in flight that no cancel killed yet.
func (e *Engine) backfillUnderWay(en *entry) bool {
	bf := en.st.Backfill
	if bf != nil && len(bf.Queue) > 0 {
		return true
	}
	killed := 0
	if bf != nil {
		killed = len(bf.Killed)
	}
	return en.backfilling > killed
}

// cancelBackfill drops the occurrences a task's backfills hold and kills
// its backfill runs in flight, naming by as who ended them; it returns
// what became of each.
func (e *Engine) cancelBackfill(en *entry, by string) []BackfillOccurrence {
	name := en.def.Name
	bf := en.st.Backfill
	if bf == nil {
		bf = &job.Backfill{MaxParallel: 1}
	}
	out := []BackfillOccurrence{}
	for _, it := range bf.Queue {
		out = append(out, BackfillOccurrence{Scheduled: it.Scheduled, Action: BackfillCanceled, Reason: "dropped before it started"})
	}
	bf.Queue = nil
	if en.backfilling > 0 {
		for _, r := range e.ActiveRuns() {
			if r.Task != name || r.Trigger != job.TriggerBackfill {
				continue
			}
			out = append(out, BackfillOccurrence{Scheduled: r.Scheduled, Action: BackfillKilled, RunID: r.ID, Reason: "its backfill run was killed"})
			if slices.Contains(bf.Killed, r.ID) {
				continue
			}
			bf.Killed = append(bf.Killed, r.ID)
			if !e.killing(r.ID) {
				e.out.Effects = append(e.out.Effects, KillRun{RunID: r.ID})
			}
			if by != "" && r.EndedBy == "" {
				r.EndedBy = by
			}
			e.touchRun(r)
		}
	}
	slices.SortStableFunc(out, func(a, b BackfillOccurrence) int { return a.Scheduled.Compare(b.Scheduled) })
	en.st.Backfill = bf
	if bf.Empty() {
		en.st.Backfill = nil
	}
	delete(e.backfills, name)
	e.touch(name)
	return out
}

// killing reports whether this Apply kills run id already.
func (e *Engine) killing(id int64) bool {
	return slices.ContainsFunc(e.out.Effects, func(ef Effect) bool {
		k, ok := ef.(KillRun)
		return ok && k.RunID == id
	})
}

// mayBackfill reports whether a task may start a backfill run now, leaving
// aside worker slots and its parallelism.
func mayBackfill(en *entry) bool {
	switch {
	case en.st.Status == job.Frozen || !en.def.Executes():
		return false
	case en.def.Extras().Overlap == job.OverlapAllow:
		return true
	}
	return !en.st.Status.Active()
}

// heldByBackfill reports whether a ready task waits for its backfill runs
// to end: its runs do not overlap.
func (e *Engine) heldByBackfill(name string) bool {
	en := e.tasks[name]
	return en != nil && en.backfilling > 0 && en.def.Extras().Overlap != job.OverlapAllow
}

// backfillSlots is the most backfill runs in flight at once, of every
// task together: one worker slot stays for the regular schedule.
func (e *Engine) backfillSlots() int { return max(1, e.workers-1) }

// startBackfills starts the waiting occurrences of backfills, in order,
// as far as each task's parallelism and the worker slots allow. It runs
// after dispatch: ready tasks go first.
func (e *Engine) startBackfills() {
	if e.draining {
		return
	}
	for _, name := range e.byDispatchOrder(sortedSet(e.backfills)) {
		en := e.tasks[name]
		if en == nil || en.st.Backfill == nil || len(en.st.Backfill.Queue) == 0 {
			delete(e.backfills, name)
			continue
		}
		if !mayBackfill(en) {
			continue
		}
		bf := en.st.Backfill
		for en.backfilling < max(1, bf.MaxParallel) && e.running < e.workers && e.backfillTotal < e.backfillSlots() && e.fitsAll(en) {
			i := slices.IndexFunc(bf.Queue, func(it job.BackfillItem) bool { return !it.Due.After(e.now) })
			if i < 0 {
				break // what is left are retries still waiting
			}
			it := bf.Queue[i]
			bf.Queue = slices.Delete(bf.Queue, i, i+1)
			e.startBackfillRun(en, it)
		}
		if len(bf.Queue) == 0 {
			delete(e.backfills, name)
			if bf.Empty() {
				en.st.Backfill = nil
			}
		}
	}
}

// startBackfillRun starts the backfill run of one occurrence and records
// the occurrence backfilled.
func (e *Engine) startBackfillRun(en *entry, it job.BackfillItem) {
	name := en.def.Name
	e.lastRun++
	r := &job.Run{ID: e.lastRun, Task: name, Status: job.Running, Start: e.now, Trigger: job.TriggerBackfill, Scheduled: it.Scheduled, By: it.By,
		Attempt: it.Attempt, RetryOf: it.RetryOf, Params: it.Params}
	e.runs[r.ID] = r
	e.running++
	e.take(r.ID, en.def)
	e.backfillTotal++
	en.backfilling++
	e.touchRun(r)
	e.touch(name)
	e.watch(name, en)
	e.out.Effects = append(e.out.Effects, StartRun{Run: *r, Task: *en.def})
	if it.Attempt > 0 {
		return // the occurrence was recorded backfilled with its first run
	}
	reason := "backfilled"
	if it.By != "" {
		reason += " at the request of " + it.By
	}
	if it.Was != "" {
		reason += "; it was " + it.Was
	}
	e.out.Fires = append(e.out.Fires, job.Fire{Task: name, Scheduled: it.Scheduled, Fate: job.FateBackfilled, Reason: reason, At: e.now, RunID: r.ID})
	if res := e.out.Backfill; res != nil && res.Task == name {
		if i, ok := slices.BinarySearchFunc(res.Occurrences, it.Scheduled, func(o BackfillOccurrence, t time.Time) int {
			return o.Scheduled.Compare(t)
		}); ok && res.Occurrences[i].Action == BackfillQueued {
			res.Occurrences[i].RunID = r.ID
		}
	}
}

// backfillExited records the end of a backfill run: the task's status
// does not change, and no dependent hears of it.
func (e *Engine) backfillExited(r *job.Run, ev RunExited) {
	end := ev.At
	if end.IsZero() {
		end = e.now
	}
	if end.Before(r.Start) {
		end = r.Start
	}
	timedOut, reason := r.Result == job.ResultTimeout, r.Message
	r.End, r.ExitCode, r.Result, r.Message, r.Data, r.Log = end, ev.ExitCode, ev.Result, ev.Message, ev.Data, ev.Log
	e.running--
	e.backfillTotal--
	en := e.tasks[r.Task]
	killed := false
	if en != nil {
		en.backfilling--
		if bf := en.st.Backfill; bf != nil {
			if i := slices.Index(bf.Killed, r.ID); i >= 0 {
				killed = true
				bf.Killed = slices.Delete(bf.Killed, i, i+1)
				if bf.Empty() {
					en.st.Backfill = nil
				}
				e.touch(r.Task)
			}
		}
	}
	switch {
	case killed:
		r.Status = job.Aborted
		if r.Result == job.ResultNormal {
			r.Result = job.ResultKilled
		}
	case ev.Result == job.ResultNormal && ev.ExitCode == 0:
		r.Status = job.Success
	default:
		r.Status = job.Failure
	}
	if en == nil {
		e.touchRun(r)
		return
	}
	e.endPolicy(en, r, timedOut && !killed, reason)
	e.touchRun(r)
	e.watch(r.Task, en)
	if r.Status == job.Failure && e.retryBackfill(en, r) {
		return
	}
	e.alert(en, outcome(r.Status), r, "")
}

// retryBackfill queues a failed backfill run's occurrence again if the
// task's policy has a retry left, and reports whether it does.
func (e *Engine) retryBackfill(en *entry, r *job.Run) bool {
	p := en.def.Extras().RunPolicy()
	if r.Attempt >= p.Retries {
		return false
	}
	n := r.Attempt + 1
	first := r.RetryOf
	if first == 0 {
		first = r.ID
	}
	due := e.now.Add(p.RetryWait(n))
	bf := en.st.Backfill
	if bf == nil {
		bf = &job.Backfill{MaxParallel: 1}
		en.st.Backfill = bf
	}
	it := job.BackfillItem{Scheduled: r.Scheduled, By: r.By, Params: r.Params, Attempt: n, RetryOf: first}
	if due.After(e.now) {
		it.Due = due
	}
	i, _ := slices.BinarySearchFunc(bf.Queue, it.Scheduled, func(q job.BackfillItem, t time.Time) int { return q.Scheduled.Compare(t) })
	bf.Queue = slices.Insert(bf.Queue, i, it)
	if e.backfills == nil {
		e.backfills = map[string]struct{}{}
	}
	e.backfills[r.Task] = struct{}{}
	e.touch(r.Task)
	e.alert(en, job.OutcomeRetry, r, fmt.Sprintf("backfill run %d of %s failed; retry %d of %d at %s",
		r.ID, fmtInstant(r.Scheduled), n, p.Retries, fmtInstant(due)))
	return true
}

// backfillWake returns the earliest instant a backfill retry waits for,
// zero if none.
func (e *Engine) backfillWake() time.Time {
	var t time.Time
	for name := range e.backfills {
		en := e.tasks[name]
		if en == nil || en.st.Backfill == nil {
			continue
		}
		for _, it := range en.st.Backfill.Queue {
			if it.Due.After(e.now) && (t.IsZero() || it.Due.Before(t)) {
				t = it.Due
			}
		}
	}
	return t
}

// restoreBackfills counts the backfill runs among the runs Restore took,
// which it counted as the tasks' own, and notes the tasks whose backfills
// have occurrences waiting.
func (e *Engine) restoreBackfills(active []*job.Run) {
	for _, r := range active {
		if r.Trigger != job.TriggerBackfill {
			continue
		}
		if en := e.tasks[r.Task]; en != nil && en.def.Type != job.Bundle {
			en.active--
			en.backfilling++
			e.watch(r.Task, en)
		} else {
			e.running++ // not counted by Restore; its end is
		}
		e.backfillTotal++
	}
	for name, en := range e.tasks {
		if bf := en.st.Backfill; bf != nil && len(bf.Queue) > 0 {
			if e.backfills == nil {
				e.backfills = map[string]struct{}{}
			}
			e.backfills[name] = struct{}{}
		}
	}
}

// BackfillRuns returns the backfill runs of a task in flight, in order of
// ID.
func (e *Engine) BackfillRuns(name string) []job.Run {
	en := e.tasks[name]
	if en == nil || en.backfilling == 0 {
		return nil
	}
	var out []job.Run
	for _, r := range e.ActiveRuns() {
		if r.Task == name && r.Trigger == job.TriggerBackfill {
			out = append(out, *r)
		}
	}
	return out
}

// whyBackfill says what a task's backfills are doing, and what holds them.
func (e *Engine) whyBackfill(name string, en *entry, add func(k ReasonKind, format string, args ...any)) {
	bf := en.st.Backfill
	waiting := 0
	if bf != nil {
		waiting = len(bf.Queue)
	}
	if waiting == 0 && en.backfilling == 0 {
		return
	}
	parallel := 1
	if bf != nil {
		parallel = max(1, bf.MaxParallel)
	}
	add(WhyBackfill, "a backfill of %s is under way: %d backfill run(s) in flight, %d occurrence(s) waiting (at most %d at once)", name, en.backfilling, waiting, parallel)
	if waiting == 0 {
		return
	}
	for _, it := range bf.Queue {
		if it.Due.After(e.now) {
			add(WhyRetry, "the backfill run of %s failed: retry %d of %d at %s", fmtInstant(it.Scheduled), it.Attempt, en.def.Extras().RunPolicy().Retries, fmtInstant(it.Due))
		}
	}
	switch {
	case en.st.Status == job.Frozen:
		add(WhyBackfill, "the backfill waits while %s is frozen", name)
	case !mayBackfill(en):
		add(WhyBackfill, "the backfill waits for the %s regular trigger of %s to end: its runs do not overlap (overlap %s)", en.st.Status, name, overlapName(en.def))
	case e.draining:
		add(WhyBackfill, "the backfill waits: the scheduler is draining")
	case en.backfilling >= parallel:
	case e.running >= e.workers || e.backfillTotal >= e.backfillSlots():
		add(WhyBackfill, "the backfill waits for a worker slot: %d of %d are busy, %d by backfill runs (they leave one to the regular schedule)", e.running, e.workers, e.backfillTotal)
	}
}
