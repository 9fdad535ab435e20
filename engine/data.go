package engine

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/gnomon-sched/gnomon/eventdep"
	"github.com/gnomon-sched/gnomon/job"
)

// DataResult is what a data event did: the dependencies it validated and
// the configurations it triggered.
type DataResult struct {
	// Triggered names the configurations that ran, sorted.
	Triggered []string
	// Validated lists the dependencies the event validated, by
	// configuration then dependency order.
	Validated []Validated
}

// Validated names one dependency an event validated, as its configuration
// defines it.
type Validated struct {
	Configuration string       `json:"configuration"`
	Type          job.DataType `json:"type"`
	Resource      string       `json:"resourceId"`
}

var (
	minInstant = time.Unix(0, math.MinInt64)
	maxInstant = time.Unix(0, math.MaxInt64)
)

// data applies a data event (spec/events.md §2-§5). Configurations are
// visited in name order; each one independently accepts the event for the
// dependencies it matches when the event is newer than its last
// execution, then is evaluated at the event's timestamp.
func (e *Engine) data(ev Data) error {
	if _, ok := job.ParseDataType(string(ev.Type)); !ok || ev.Type == "TIME_BASED_CRON" {
		return refused("unknown data event type %q", ev.Type)
	}
	if ev.Resource == "" {
		return refused("a data event needs a resource")
	}
	if ev.At.Before(minInstant) || ev.At.After(maxInstant) {
		return refused("data event timestamp %s out of range", ev.At.Format(time.RFC3339Nano))
	}
	res := &DataResult{Triggered: []string{}, Validated: []Validated{}}
	e.out.Data = res
	refs := e.dataIdx.Match(ev.Type, ev.Resource, e.refBuf[:0])
	defer func() { e.refBuf = refs[:0] }()
	slices.SortFunc(refs, func(a, b eventdep.Ref) int {
		return cmp.Or(cmp.Compare(a.Config, b.Config), a.Dep-b.Dep)
	})
	for i := 0; i < len(refs); {
		j := i + 1
		for j < len(refs) && refs[j].Config == refs[i].Config {
			j++
		}
		e.accept(e.tasks[refs[i].Config], refs[i:j], ev, res)
		i = j
	}
	return nil
}

// accept stores the event for the dependencies of one configuration it
// validates and triggers the configuration if it is then met.
func (e *Engine) accept(en *entry, refs []eventdep.Ref, ev Data, res *DataResult) {
	r := ev.At.UnixNano()
	if last := en.st.LastExec; !last.IsZero() && r <= last.UnixNano() {
		return // not newer than the last execution: ignored for this configuration
	}
	if e.lateness > 0 && en.win.hasNewest && r < en.win.newest-e.lateness {
		return // later than the lateness allowed after the newest event
	}
	name := en.def.Name
	e.noteNewest(en, r)
	for _, ref := range refs {
		d := en.def.Extras().Deps[ref.Dep]
		res.Validated = append(res.Validated, Validated{Configuration: name, Type: d.Type, Resource: d.Resource})
		en.win.seen.Add(ref.Dep, r)
		e.hold(en)
		e.out.Validations = append(e.out.Validations, job.Validation{Task: name, Dep: d.Key(), TS: ev.At})
	}
	for i, d := range en.def.Extras().Deps {
		if !en.win.seen.Met(i, r, d.Life) {
			return
		}
	}
	if e.dataFire(en, ev) {
		res.Triggered = append(res.Triggered, name)
	}
}

// dataFire triggers a configuration whose dependencies are met at the
// event's timestamp, unless it is frozen or still running, and reports
// whether it ran.
func (e *Engine) dataFire(en *entry, ev Data) bool {
	name := en.def.Name
	touched := e.out.tasks[name]
	f := job.Fire{Task: name, Scheduled: ev.At, At: e.now, Fate: job.FateRan}
	queued, why := e.admit(en, "configuration", job.Pending{Trigger: "event", Scheduled: ev.At, By: ev.By})
	if why != "" {
		f.Fate, f.Reason = job.FateSkipped, why
	} else if queued {
		f.Reason = waitReason(en)
	}
	if f.Fate != job.FateRan {
		e.out.Fires = append(e.out.Fires, f)
		return false
	}
	en.st.LastExec = job.At(ev.At)
	e.touch(name)
	e.pruneExecuted(en)
	trig := Triggered{Task: name, At: ev.At, Type: ev.Type, Resource: ev.Resource}
	if queued || en.def.Executes() {
		e.out.Fires = append(e.out.Fires, f)
		e.out.Effects = append(e.out.Effects, trig)
		if !queued {
			en.st.Trigger, en.st.Scheduled, en.st.By = "event", job.At(ev.At), ev.By
			e.setStatus(name, job.Queued, false)
			e.release(name)
		}
		return true
	}
	// Without a command the execution is recorded as a run that ended
	// when it started.
	e.lastRun++
	run := EventRun(e.lastRun, name, ev, e.now)
	e.touchRun(run)
	e.alert(en, job.OutcomeSuccess, run, "")
	trig.RunID = run.ID
	e.out.Effects = append(e.out.Effects, trig)
	en.st.Start, en.st.End, en.st.RunID = job.At(e.now), job.At(e.now), 0
	e.setStatus(name, job.Success, true)
	if touched || en.st.BundleRun != 0 {
		// Its state changed for other reasons too, or it takes part in a
		// bundle run, which the run does not tell: written as usual.
		f.RunID = run.ID
		e.out.Fires = append(e.out.Fires, f)
	} else {
		e.out.Ran = append(e.out.Ran, run)
		delete(e.out.tasks, name) // unless what it causes changes it again
	}
	return true
}

// EventRun returns the run that records the execution of configuration
// task, which has no command, triggered by ev at now. A restart rebuilds
// it from the journaled event, identity included.
func EventRun(id int64, task string, ev Data, now time.Time) *job.Run {
	return &job.Run{ID: id, Task: task, Status: job.Success, Start: now, End: now, Result: job.ResultNormal,
		Trigger: "event", Scheduled: ev.At, Message: fmt.Sprintf("event %s %s", ev.Type, ev.Resource), By: ev.By}
}

// RanFire returns the fire of the trigger an EventRun records.
func RanFire(r *job.Run) job.Fire {
	return job.Fire{Task: r.Task, Scheduled: r.Scheduled, Fate: job.FateRan, At: r.Start, RunID: r.ID}
}

// Replay applies to st what a configuration keeps of the execution an
// EventRun records, and reports whether it did: not if st already holds
// a later execution. Restarting from a stored state older than the run
// then rebuilds the state the execution left.
func Replay(st *job.State, r *job.Run) bool {
	at := job.At(r.Scheduled)
	if !st.LastExec.IsZero() && at <= st.LastExec {
		return false
	}
	st.LastExec, st.Start, st.End, st.RunID = at, job.At(r.Start), job.At(r.Start), 0
	st.Status, st.DueAt, st.ReadySeq, st.Trigger, st.Scheduled, st.By = job.Success, 0, 0, "", 0, ""
	return true
}

// noteNewest records an accepted timestamp and, once the newest one has
// moved by an eighth of the allowed lateness, drops the validations that
// are too old to count for any event still accepted. Dropping them later
// than possible changes no outcome: they could not count anyway.
func (e *Engine) noteNewest(en *entry, r int64) {
	if en.win.hasNewest && r <= en.win.newest {
		return
	}
	if !en.win.hasNewest {
		en.win.pruned = r
	}
	en.win.newest, en.win.hasNewest = r, true
	if e.lateness == 0 || r-en.win.pruned < e.lateness/8 || r-e.lateness > r {
		return
	}
	en.win.pruned = r
	e.pruneLate(en)
}

// pruneExecuted drops the stored timestamps that cannot count after the
// configuration's last execution.
func (e *Engine) pruneExecuted(en *entry) {
	if en.st.LastExec.IsZero() {
		return
	}
	last := en.st.LastExec.UnixNano()
	for i, d := range en.def.Extras().Deps {
		en.win.seen.Prune(i, eventdep.Expired(last, d.Life))
	}
}

// pruneLate drops the stored timestamps too old to count for any event
// still accepted under the allowed lateness.
func (e *Engine) pruneLate(en *entry) {
	if e.lateness == 0 || !en.win.hasNewest || en.win.newest-e.lateness > en.win.newest {
		return
	}
	oldest := en.win.newest - e.lateness // the oldest instant still evaluated
	for i, d := range en.def.Extras().Deps {
		if lo := eventdep.Before(oldest, d.Life); lo != math.MinInt64 {
			en.win.seen.Prune(i, lo-1)
		}
	}
}

// indexData moves a configuration's dependencies in the data index and
// carries its stored timestamps over to the new definition, dependency by
// dependency (by type and resource). Validations of dependencies that are
// gone are expired.
func (e *Engine) indexData(en *entry, old, def *job.Task) {
	var prev eventdep.Seen
	if old != nil && old.Type == job.Configuration {
		e.dataIdx.Remove(old.Name, old.Extras().Deps)
		if en.win != nil {
			prev = en.win.seen
		}
	}
	if def != nil && def.Type == job.Configuration {
		e.dataIdx.Add(def.Name, def.Extras().Deps)
		// New windows, not the old ones emptied: prev may live in them.
		w := newWindows(len(def.Extras().Deps))
		if en.win != nil {
			w.newest, w.pruned, w.hasNewest = en.win.newest, en.win.pruned, en.win.hasNewest
		}
		en.win = w
	} else {
		en.win = nil
	}
	if old == nil || prev == nil {
		return
	}
	for i, d := range old.Extras().Deps {
		j := -1
		if def != nil && def.Type == job.Configuration {
			j = slices.IndexFunc(def.Extras().Deps, func(n job.DataDep) bool { return n.Key() == d.Key() })
		}
		if j >= 0 {
			en.win.seen[j] = prev[i]
		} else if def != nil {
			e.out.Validations = append(e.out.Validations, job.Validation{Task: old.Name, Dep: d.Key(), Expire: true})
		}
	}
	if def == nil {
		e.out.Validations = append(e.out.Validations, job.Validation{Task: old.Name, Expire: true})
	}
}

// resetData forgets a configuration's last execution and stored events:
// the remedy when an event stamped far in the future has muted it.
func (e *Engine) resetData(en *entry) {
	en.st.LastExec = 0
	en.win = newWindows(len(en.def.Extras().Deps))
	e.out.Validations = append(e.out.Validations, job.Validation{Task: en.def.Name, Expire: true})
	e.touch(en.def.Name)
}

// hold notes that a configuration stores timestamps, for Windows.
func (e *Engine) hold(en *entry) {
	if e.holders == nil {
		e.holders = map[string]*entry{}
	}
	if e.holders[en.def.Name] != en {
		e.holders[en.def.Name] = en
	}
}

// restoreWindows rebuilds the stored timestamps of configurations from
// their last checkpoint and the journal after it, in order: a validation
// adds a timestamp, an Expire record clears a dependency (or, without Dep,
// a whole configuration) that a definition removed. Records of unknown
// configurations or dependencies are ignored. What can no longer count is
// then dropped, as it was in memory before the restart.
func (e *Engine) restoreWindows(vals []job.Validation) {
	var touched []*entry
	for _, v := range vals {
		en := e.tasks[v.Task]
		if en == nil || en.win == nil {
			continue
		}
		for i, d := range en.def.Extras().Deps {
			if v.Expire && (v.Dep == "" || v.Dep == d.Key()) {
				en.win.seen[i] = nil
			} else if !v.Expire && d.Key() == v.Dep {
				en.win.seen.Add(i, v.TS.UnixNano())
				e.hold(en)
				touched = append(touched, en)
			}
		}
	}
	for _, en := range touched {
		for i := range en.win.seen {
			if n := len(en.win.seen[i]); n > 0 && (!en.win.hasNewest || en.win.seen[i][n-1] > en.win.newest) {
				en.win.newest, en.win.hasNewest = en.win.seen[i][n-1], true
			}
		}
	}
	for _, en := range e.tasks {
		if en.win == nil {
			continue
		}
		if last := en.st.LastExec; !last.IsZero() && (!en.win.hasNewest || last.UnixNano() > en.win.newest) {
			en.win.newest, en.win.hasNewest = last.UnixNano(), true
		}
		en.win.pruned = en.win.newest
		e.pruneExecuted(en)
		e.pruneLate(en)
	}
}

// WindowSet is a copy of the stored timestamps of one configuration,
// dependency by dependency.
type WindowSet struct {
	Task string
	Deps []string  // dependency keys
	TS   [][]int64 // Unix nanoseconds, ascending, for each dependency
}

// WindowRef names a configuration that holds stored events, so that a
// checkpoint can copy them later, a part at a time (Window).
type WindowRef struct{ en *entry }

// WindowRefs returns the configurations that hold stored events, in no
// particular order. It copies no events: with a million configurations,
// copying them all at once stalled the loop for a third of a second.
func (e *Engine) WindowRefs() []WindowRef {
	out := make([]WindowRef, 0, len(e.holders))
	for _, en := range e.holders {
		out = append(out, WindowRef{en})
	}
	return out
}

// Window returns a copy of the stored timestamps of ref's configuration as
// they are now, and false if it holds none or was since deleted or
// redefined (its events then are the new entry's, or gone).
func (e *Engine) Window(ref WindowRef) (WindowSet, bool) {
	en := ref.en
	if en.win == nil || e.tasks[en.def.Name] != en {
		if e.holders[en.def.Name] == en {
			delete(e.holders, en.def.Name)
		}
		return WindowSet{}, false
	}
	set := WindowSet{Task: en.def.Name}
	for i, list := range en.win.seen {
		if len(list) > 0 {
			set.Deps = append(set.Deps, en.def.Extras().Deps[i].Key())
			set.TS = append(set.TS, slices.Clone(list))
		}
	}
	if len(set.Deps) == 0 {
		delete(e.holders, en.def.Name)
		return WindowSet{}, false
	}
	return set, true
}

// Stored summarises what one dependency of a configuration holds.
type Stored struct {
	Type     job.DataType `json:"type"`
	Resource string       `json:"resourceId"`
	Count    int          `json:"count"`
	Oldest   time.Time    `json:"oldest,omitzero"`
	Newest   time.Time    `json:"newest,omitzero"`
}

// StoredEvents summarises the events a configuration holds, dependency by
// dependency, nil for other tasks: what answers "why did it not trigger".
func (e *Engine) StoredEvents(name string) []Stored {
	en := e.tasks[name]
	if en == nil || en.win == nil {
		return nil
	}
	out := make([]Stored, len(en.def.Extras().Deps))
	for i, d := range en.def.Extras().Deps {
		out[i] = Stored{Type: d.Type, Resource: d.Resource, Count: len(en.win.seen[i])}
		if n := len(en.win.seen[i]); n > 0 {
			out[i].Oldest, out[i].Newest = time.Unix(0, en.win.seen[i][0]).UTC(), time.Unix(0, en.win.seen[i][n-1]).UTC()
		}
	}
	return out
}
