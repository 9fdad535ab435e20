package engine

import (
	"fmt"

	"github.com/gnomon-sched/gnomon/job"
)

// Refusal returns why the engine would refuse operator action a on a task
// of definition t in state st, and "" when it would take it. backfilling
// tells whether a backfill of the task is under way (an abort cancels
// it). The engine asks it before acting on an Act; a user interface asks it
// to offer only the actions that apply.
func Refusal(a job.Action, t *job.Task, st *job.State, backfilling bool) string {
	switch t.Type {
	case job.Group:
		return fmt.Sprintf("%s is a group: events go to its jobs", t.Name)
	case job.Resource:
		return fmt.Sprintf("%s is a resource: events go to the tasks that take it", t.Name)
	}
	s := st.Status
	switch a {
	case job.ActStart:
		switch {
		case s.Active() && t.Type != job.Bundle && waits(t, st):
			return "" // it waits for the active run
		case s == job.Ready || s == job.Running || (t.Type == job.Bundle && s.Active()):
			return "event start is not effective on active task"
		case t.Type == job.Configuration && !t.Executes():
			// It would wait in Ready for a run that never comes.
			return fmt.Sprintf("configuration %s has no command or function to start: its data events trigger it", t.Name)
		}
	case job.ActAbort:
		if s.Settled() && !backfilling {
			return "event abort is not effective on inactive task"
		}
	case job.ActFreeze, job.ActReset, job.ActGreen, job.ActRed:
		if s.Active() {
			return fmt.Sprintf("event %s is not effective on active task", a)
		}
	default:
		return fmt.Sprintf("invalid send event %q", a)
	}
	return ""
}

// waits reports whether a start sent to an active task waits for its
// active run (overlap allow or queue) rather than being refused or making
// the task ready at once.
func waits(t *job.Task, st *job.State) bool {
	o := t.Extras().Overlap
	return (o == job.OverlapAllow || o == job.OverlapQueue) && len(st.Pending) < MaxPending
}

// Describe says in words what action a does to a task of definition t in
// state st, for a confirmation that an operator reads before sending it.
// It assumes the action applies (see Refusal).
func Describe(a job.Action, t *job.Task, st *job.State, backfilling bool) string {
	name, s := t.Name, st.Status
	switch a {
	case job.ActStart:
		switch {
		case t.Type == job.Bundle:
			return fmt.Sprintf("Starts a run of bundle %s now: each of its tasks starts as its condition allows.", name)
		case s.Active() && waits(t, st) && t.Extras().Overlap == job.OverlapAllow:
			return fmt.Sprintf("%s is %s: this starts a second run beside it (overlap allow).", name, s)
		case s.Active() && waits(t, st):
			return fmt.Sprintf("%s is %s: this start waits, and runs when the active run ends (overlap queue).", name, s)
		case s.Active():
			return fmt.Sprintf("%s is %s: this makes it ready at once, whatever its condition.", name, s)
		}
		return fmt.Sprintf("Starts a run of %s now, whatever its condition.", name)
	case job.ActAbort:
		var text string
		switch {
		case s.Settled():
			return fmt.Sprintf("Cancels the backfill of %s: its occurrences not started yet are dropped and its backfill runs killed.", name)
		case t.Type == job.Bundle:
			text = fmt.Sprintf("Aborts every active task of bundle %s and ends its run as aborted.", name)
		case s == job.Running:
			text = fmt.Sprintf("Stops %s's run %d: its processes get TERM, then KILL after the grace; %s is aborted at once.", name, st.RunID, name)
		default:
			text = fmt.Sprintf("%s stops being %s and is marked aborted; it does not run.", name, s)
		}
		if len(st.Pending) > 0 {
			text += fmt.Sprintf(" The %d starts waiting for it are dropped.", len(st.Pending))
		}
		if backfilling {
			text += " Its backfill is cancelled too."
		}
		return text
	case job.ActFreeze:
		if s == job.Frozen {
			return fmt.Sprintf("%s is frozen already: this changes nothing.", name)
		}
		return fmt.Sprintf("Freezes %s until it is reset: nothing starts it (its occurrences are recorded skipped), and every condition clause on it holds, so the tasks waiting for it may start.", name)
	case job.ActReset:
		text := fmt.Sprintf("Sets %s back to idle: its condition and its time trigger start it again.", name)
		if t.Type == job.Bundle {
			text += " Its settled tasks go back to idle too, the frozen ones excepted."
		}
		if t.Type == job.Configuration {
			text += " The data events it holds are dropped."
		}
		return text
	case job.ActGreen:
		return fmt.Sprintf("Marks %s as succeeded without running it: the tasks whose condition waits for its success may start.", name)
	case job.ActRed:
		return fmt.Sprintf("Marks %s as failed without running it: the tasks whose condition waits for its failure may start.", name)
	}
	return ""
}
