package engine

import (
	"cmp"
	"slices"

	"github.com/gnomon-sched/gnomon/job"
)

// startBundle begins a bundle run. Every child is considered once: frozen
// children are skipped, active ones adopted, and all others are queued in
// one step before any condition is evaluated, so that statuses left from
// the previous run cannot satisfy a sibling's condition.
//
// The identity that started the bundle run (State.By) is that of every
// run its members start for it, even once a condition releases them.
func (e *Engine) startBundle(name string) {
	en := e.tasks[name]
	e.lastRun++
	r := &job.Run{ID: e.lastRun, Task: name, Status: job.Running, Start: e.now, Trigger: cmp.Or(en.st.Trigger, "start"), Scheduled: en.st.Scheduled.Time(),
		By: en.st.By}
	e.runs[r.ID] = r
	e.touchRun(r)
	en.st.Start, en.st.End, en.st.RunID = job.At(e.now), 0, r.ID
	e.setStatus(name, job.Running, false)

	var queued []string
	for _, c := range e.byDispatchOrder(sortedSet(e.kids[name])) {
		ce := e.tasks[c]
		switch s := ce.st.Status; {
		case s == job.Frozen:
			continue
		case s.Active():
			if ce.st.RunID != 0 {
				if cr := e.runs[ce.st.RunID]; cr != nil {
					cr.BundleRun = r.ID
					e.touchRun(cr)
				}
			}
		default:
			queued = append(queued, c)
			ce.st.Scheduled, ce.st.By = en.st.Scheduled, r.By
			e.setStatus(c, job.Queued, false)
		}
		ce.st.BundleRun, ce.st.BundleOutcome = r.ID, job.Idle
		e.touch(c)
	}
	for _, c := range queued {
		if e.tasks[c].st.Status == job.Queued {
			e.release(c)
		}
	}
	e.checkBundle(name)
}

// byDispatchOrder sorts names by priority (highest first), then name.
func (e *Engine) byDispatchOrder(names []string) []string {
	slices.SortStableFunc(names, func(a, b string) int {
		return int(e.tasks[b].def.Priority) - int(e.tasks[a].def.Priority)
	})
	return names
}

// checkBundle completes a running bundle when every member has settled for
// this run or is blocked: waiting on a false condition that only settled or
// blocked siblings could change.
func (e *Engine) checkBundle(name string) {
	en := e.tasks[name]
	if en == nil || en.def.Type != job.Bundle || en.st.Status != job.Running {
		return
	}
	run := en.st.RunID
	var pending []string
	outcome := job.Success
	for _, c := range sortedSet(e.kids[name]) {
		ce := e.tasks[c]
		if ce.st.BundleRun != run {
			continue
		}
		if o := ce.st.BundleOutcome; o != job.Idle {
			if o != job.Success && o != job.Frozen {
				outcome = job.Failure
			}
			continue
		}
		pending = append(pending, c)
	}
	blocked := map[string]bool{}
	for changed := true; changed; {
		changed = false
		for _, c := range pending {
			if !blocked[c] && e.blocked(name, c, blocked) {
				blocked[c], changed = true, true
			}
		}
	}
	if len(blocked) < len(pending) {
		return
	}
	if len(blocked) > 0 {
		outcome = job.Failure
	}
	for _, c := range pending {
		e.tasks[c].st.End = job.At(e.now)
		e.setStatus(c, job.Idle, false)
	}
	e.finishBundle(name, outcome)
}

func (e *Engine) blocked(bundle, c string, blocked map[string]bool) bool {
	ce := e.tasks[c]
	if ce.st.Status != job.Waiting || e.evaluate(ce) {
		return false
	}
	for _, ref := range ce.cond.Names() {
		re := e.tasks[ref]
		if re == nil || re.def.Parent != bundle {
			return false
		}
		if !re.st.Status.Settled() && !blocked[ref] {
			return false
		}
	}
	return true
}

// finishBundle ends a bundle run with an outcome and releases its members.
func (e *Engine) finishBundle(name string, result job.Status) {
	en := e.tasks[name]
	run := en.st.RunID
	if r := e.runs[run]; r != nil {
		delete(e.runs, run)
		r.Status, r.End, r.Result = result, e.now, job.ResultNormal
		if r.EndedBy == "" {
			r.EndedBy = e.endedBy // an abort's, of the bundle or of a member
		}
		if result == job.Aborted {
			r.Result = job.ResultKilled
		}
		e.touchRun(r)
		e.alert(en, outcome(result), r, "")
	}
	for _, c := range sortedSet(e.kids[name]) {
		if ce := e.tasks[c]; ce.st.BundleRun == run {
			ce.st.BundleRun, ce.st.BundleOutcome = 0, job.Idle
			e.touch(c)
		}
	}
	en.st.RunID, en.st.End = 0, job.At(e.now)
	e.setStatus(name, result, true)
}
