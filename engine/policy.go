package engine

import (
	"fmt"
	"time"

	"github.com/gnomon-sched/gnomon/calendar"
	"github.com/gnomon-sched/gnomon/job"
)

// A task's run policy (job.Policy) is kept here: retries of a failed run,
// the time limit that kills a run, and the alarms. Each is a decision the
// engine takes at an instant it computes from the state alone (a run's
// start, the occurrence it runs for, when a retry is due), so a restart
// rebuilds them and a simulated clock rehearses them.

// maxAlarms bounds the alarms a task's state keeps: the oldest go first.
const maxAlarms = 20

// Alarmed records, for the log and listeners, an alarm raised on a task.
type Alarmed struct {
	Task  string
	Alarm job.Alarm
}

func (Alarmed) effect() {}

// watch keeps the set of tasks whose policy has a deadline that may fall
// due: tasks active or with backfill runs in flight, with a time limit or
// an alarm.
func (e *Engine) watch(name string, en *entry) {
	if (en.st.Status.Active() || en.backfilling > 0) && en.def.Extras().RunPolicy().Timed() {
		if e.timed == nil {
			e.timed = map[string]struct{}{}
		}
		e.timed[name] = struct{}{}
	} else if e.timed != nil {
		delete(e.timed, name)
	}
}

// retry runs a failed run's trigger again if the task's policy has a retry
// left, and reports whether it does: the task stays running for its
// dependents, which see only the final outcome, and the next run starts
// when its wait has passed (as a staged task's does), with a worker slot.
func (e *Engine) retry(en *entry, r *job.Run) bool {
	p := en.def.Extras().RunPolicy()
	if en.st.Attempt >= p.Retries {
		return false
	}
	n := en.st.Attempt + 1
	en.st.Attempt = n
	if en.st.RetryOf == 0 {
		en.st.RetryOf = r.ID
	}
	en.st.RunID = 0
	en.st.Trigger, en.st.By, en.st.Params = "retry", r.By, r.Params
	due := e.now.Add(p.RetryWait(n))
	reason := fmt.Sprintf("run %d failed; retry %d of %d at %s", r.ID, n, p.Retries, due.UTC().Format(time.RFC3339))
	e.alert(en, job.OutcomeRetry, r, reason)
	name := en.def.Name
	if !due.After(e.now) {
		e.setStatus(name, job.Ready, false)
		return true
	}
	en.st.DueAt = job.At(due)
	e.staged[name] = struct{}{}
	e.touch(name)
	return true
}

// endPolicy applies the policy to a run that ended: a run killed at its
// time limit failed with the reason, and one that ended by itself sooner
// than min_run_alarm raises that alarm.
func (e *Engine) endPolicy(en *entry, r *job.Run, timedOut bool, reason string) {
	p := en.def.Extras().RunPolicy()
	if timedOut {
		r.Result = job.ResultTimeout
		if r.Message == "" {
			r.Message = reason
		} else {
			r.Message = reason + ": " + r.Message
		}
		if r.Status == job.Success {
			r.Status = job.Failure // it handled TERM and exited 0: it still ran too long
		}
	}
	if d := time.Duration(p.MinRunAlarm); d > 0 && r.Result == job.ResultNormal && r.End.Sub(r.Start) < d {
		e.raise(en, job.Alarm{Kind: job.AlarmMinRun, RunID: r.ID,
			Message: fmt.Sprintf("run %d ended after %s, sooner than min_run_alarm %s", r.ID, r.End.Sub(r.Start), d)}, r)
	}
}

// raise records an alarm on a task: in its state, for listeners, and in
// mail to those who ask for alarms.
func (e *Engine) raise(en *entry, a job.Alarm, r *job.Run) {
	a.At = e.now
	st := &en.st
	if len(st.Alarms) >= maxAlarms {
		st.Alarms = append(st.Alarms[:0:0], st.Alarms[len(st.Alarms)-maxAlarms+1:]...)
	}
	st.Alarms = append(st.Alarms, a)
	e.touch(en.def.Name)
	e.out.Effects = append(e.out.Effects, Alarmed{Task: en.def.Name, Alarm: a})
	e.alert(en, job.OutcomeAlarm, r, a.Message)
}

// alarmed reports whether the task's state has an alarm of a kind for a
// run (or, with run 0, for an occurrence).
func alarmed(st *job.State, kind job.AlarmKind, run int64, occ job.Instant) bool {
	for _, a := range st.Alarms {
		if a.Kind == kind && a.RunID == run && job.At(a.Scheduled) == occ {
			return true
		}
	}
	return false
}

// deadline is one instant at which the policy of a task acts.
type deadline struct {
	at   time.Time
	kind job.AlarmKind // or "" for the time limit
	run  *job.Run      // the run it is about, nil for an occurrence's
}

// deadlines returns the instants at which the policy of an active task
// has yet to act.
func (e *Engine) deadlines(en *entry) []deadline {
	p := en.def.Extras().RunPolicy()
	var out []deadline
	for _, r := range e.runsOf(en) {
		if d := time.Duration(p.TermRunTime); d > 0 && (r.Result != job.ResultTimeout || !e.killedAtLimit[r.ID]) {
			out = append(out, deadline{at: r.Start.Add(d), run: r})
		}
		if d := time.Duration(p.MaxRunAlarm); d > 0 && !alarmed(&en.st, job.AlarmMaxRun, r.ID, 0) {
			out = append(out, deadline{at: r.Start.Add(d), kind: job.AlarmMaxRun, run: r})
		}
	}
	occ := en.st.Scheduled
	if occ == 0 || !en.st.Status.Active() {
		return out
	}
	if p.MustStartBy.IsSet() && en.st.Status != job.Running && !alarmed(&en.st, job.AlarmMustStart, 0, occ) {
		out = append(out, deadline{at: e.by(en, p.MustStartBy), kind: job.AlarmMustStart})
	}
	if p.MustCompleteBy.IsSet() && !alarmed(&en.st, job.AlarmMustComplete, 0, occ) {
		out = append(out, deadline{at: e.by(en, p.MustCompleteBy), kind: job.AlarmMustComplete})
	}
	return out
}

// runsOf returns the task's runs in flight: its run, every one under
// overlap allow, and its backfill runs.
func (e *Engine) runsOf(en *entry) []*job.Run {
	if en.active+en.backfilling <= 1 {
		if r := e.runs[en.st.RunID]; r != nil {
			return []*job.Run{r}
		}
		if en.active+en.backfilling == 0 {
			return nil
		}
	}
	var out []*job.Run
	for _, r := range e.ActiveRuns() {
		if r.Task == en.def.Name {
			out = append(out, r)
		}
	}
	return out
}

// by returns the instant a deadline falls on for the task's current
// occurrence: an offset after it, or the first such time of day at or
// after it in the task's zone (after a gap in the clocks, the first
// instant after it, as calendars do).
func (e *Engine) by(en *entry, d job.Deadline) time.Time {
	occ := en.st.Scheduled.Time()
	if !d.At {
		return occ.Add(time.Duration(d.Offset))
	}
	next, _ := calendar.NewBatch(job.AllDays, []job.Clock{d.Clock}, e.zone(en.def)).Next(occ.Add(-time.Nanosecond))
	return next
}

// zone returns a task's time zone: its own, or the engine's default.
func (e *Engine) zone(t *job.Task) *time.Location {
	if t.Timezone == "" {
		return e.loc
	}
	if l, ok := e.zones[t.Timezone]; ok {
		return l
	}
	l, err := time.LoadLocation(t.Timezone)
	if err != nil {
		l = e.loc // validated at definition: the zone left the host since
	}
	if e.zones == nil {
		e.zones = map[string]*time.Location{}
	}
	e.zones[t.Timezone] = l
	return l
}

// PolicyWake returns the earliest instant at which a task's run policy
// acts (a time limit, an alarm), zero if none: a simulation lets virtual
// time reach it while runs are in flight.
func (e *Engine) PolicyWake() time.Time {
	var t time.Time
	for name := range e.timed {
		for _, d := range e.deadlines(e.tasks[name]) {
			if t.IsZero() || d.at.Before(t) {
				t = d.at
			}
		}
	}
	return t
}

// enforce acts on every deadline that has come: it kills a run at its
// time limit and raises the alarms.
func (e *Engine) enforce() {
	for _, name := range sortedSet(e.timed) {
		en := e.tasks[name]
		p := en.def.Extras().RunPolicy()
		for _, d := range e.deadlines(en) {
			if d.at.After(e.now) {
				continue
			}
			switch d.kind {
			case "":
				if e.killedAtLimit == nil {
					e.killedAtLimit = map[int64]bool{}
				}
				e.killedAtLimit[d.run.ID] = true
				d.run.Result = job.ResultTimeout
				d.run.Message = fmt.Sprintf("killed after running %s, its term_run_time", time.Duration(p.TermRunTime))
				e.touchRun(d.run)
				e.out.Effects = append(e.out.Effects, KillRun{RunID: d.run.ID, Reason: "term_run_time"})
			case job.AlarmMaxRun:
				e.raise(en, job.Alarm{Kind: d.kind, RunID: d.run.ID,
					Message: fmt.Sprintf("run %d has run longer than max_run_alarm %s", d.run.ID, time.Duration(p.MaxRunAlarm))}, d.run)
			case job.AlarmMustStart:
				e.raise(en, job.Alarm{Kind: d.kind, Scheduled: en.st.Scheduled.Time(),
					Message: fmt.Sprintf("the occurrence of %s has not started by %s (must_start_by %s)", fmtInstant(en.st.Scheduled.Time()), fmtInstant(d.at), p.MustStartBy)}, nil)
			case job.AlarmMustComplete:
				e.raise(en, job.Alarm{Kind: d.kind, Scheduled: en.st.Scheduled.Time(),
					Message: fmt.Sprintf("the occurrence of %s has not completed by %s (must_complete_by %s)", fmtInstant(en.st.Scheduled.Time()), fmtInstant(d.at), p.MustCompleteBy)}, nil)
			}
		}
	}
}

func fmtInstant(t time.Time) string { return t.UTC().Format(time.RFC3339) }
