package engine

import (
	"fmt"
	"slices"
	"time"

	"github.com/gnomon-sched/gnomon/job"
)

// MaxPending bounds the triggers that may wait on one task under overlap
// allow or queue; a trigger beyond it is skipped.
const MaxPending = 100

// admit decides what a trigger of a task does. It returns why the trigger
// is skipped ("" if it is not), and whether it was put to wait instead of
// starting the task now: a task that is active and allows overlapping or
// queued runs keeps the trigger as pending. what names the task's kind in
// reasons.
func (e *Engine) admit(en *entry, what string, p job.Pending) (queued bool, why string) {
	why = busy(en, what)
	if why == "" || en.st.Status == job.Frozen {
		return false, why
	}
	x := en.def.Extras()
	if x.Overlap != job.OverlapAllow && x.Overlap != job.OverlapQueue {
		return false, why
	}
	if len(en.st.Pending) >= MaxPending {
		return false, fmt.Sprintf("the %s is %s and %d triggers already wait (overlap %s)", what, en.st.Status, MaxPending, x.Overlap)
	}
	if x.Overlap == job.OverlapAllow && x.StartDelay > 0 {
		p.Due = e.now.Add(time.Duration(x.StartDelay))
	}
	en.st.Pending = append(en.st.Pending, p)
	e.pending[en.def.Name] = struct{}{}
	e.touch(en.def.Name)
	return true, ""
}

// waitReason describes a trigger admit put to wait.
func waitReason(en *entry) string {
	if en.def.Extras().Overlap == job.OverlapAllow {
		return fmt.Sprintf("the task is %s: it starts a concurrent run (overlap allow)", en.st.Status)
	}
	return fmt.Sprintf("the task is %s: it runs when the active run ends (overlap queue)", en.st.Status)
}

// startPending starts what waits: on a task that is no longer active, its
// oldest pending trigger, as a trigger of the task; on a running task that
// allows overlapping runs, a concurrent run for each pending trigger whose
// delay has passed, while workers are free.
func (e *Engine) startPending() {
	for _, name := range sortedSet(e.pending) {
		en := e.tasks[name]
		switch {
		case en == nil || len(en.st.Pending) == 0:
			delete(e.pending, name)
			continue
		case en.st.Status == job.Frozen:
			continue // a frozen task starts nothing; they wait for it to thaw
		case !en.st.Status.Active():
			p := en.st.Pending[0]
			en.st.Pending = slices.Delete(en.st.Pending, 0, 1)
			e.touch(name)
			en.st.Trigger, en.st.Scheduled, en.st.By, en.st.Params = p.Trigger, job.At(p.Scheduled), p.By, p.Params
			if p.Due.After(e.now) || (p.Due.IsZero() && en.def.Extras().StartDelay > 0) {
				e.trigger(name, true) // waits for its start delay
			} else {
				e.setStatus(name, job.Queued, false)
				e.release(name)
			}
		case en.def.Extras().Overlap == job.OverlapAllow && en.st.Status == job.Running:
			for len(en.st.Pending) > 0 && !en.st.Pending[0].Due.After(e.now) && e.running < e.workers && !e.draining && e.fitsAll(en) {
				p := en.st.Pending[0]
				en.st.Pending = slices.Delete(en.st.Pending, 0, 1)
				e.touch(name)
				e.startExtra(en, p)
			}
		}
		if len(en.st.Pending) == 0 {
			delete(e.pending, name)
		}
	}
}

// startExtra starts a run of a task that already has one (overlap allow).
// The task's status stays running until its last run ends.
func (e *Engine) startExtra(en *entry, p job.Pending) {
	name := en.def.Name
	if !e.evaluate(en) {
		e.notStarted(name, fmt.Sprintf("a %s trigger came while the task ran, and its condition %s is false", p.Trigger, en.def.Condition))
		return
	}
	e.lastRun++
	r := &job.Run{ID: e.lastRun, Task: name, Status: job.Running, Start: e.now, Trigger: p.Trigger, Scheduled: p.Scheduled, By: p.By, Params: p.Params}
	e.runs[r.ID] = r
	e.running++
	e.take(r.ID, en.def)
	en.active++
	e.touchRun(r)
	e.touch(name)
	e.out.Effects = append(e.out.Effects, StartRun{Run: *r, Task: *en.def})
}

// pendingWake returns the earliest start delay of a pending concurrent run
// still to pass, zero if none.
func (e *Engine) pendingWake() time.Time {
	var t time.Time
	for name := range e.pending {
		en := e.tasks[name]
		if en == nil || len(en.st.Pending) == 0 || en.def.Extras().Overlap != job.OverlapAllow {
			continue
		}
		if due := en.st.Pending[0].Due; due.After(e.now) && (t.IsZero() || due.Before(t)) {
			t = due
		}
	}
	return t
}

// latestRun returns the newest active run of a task, 0 if none.
func (e *Engine) latestRun(name string) int64 {
	var id int64
	for rid, r := range e.runs {
		if r.Task == name && rid > id {
			id = rid
		}
	}
	return id
}
