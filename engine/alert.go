package engine

import (
	"slices"
	"strings"
	"time"

	"github.com/gnomon-sched/gnomon/job"
)

// outcome is what a settled run status means to alerts and listeners.
func outcome(s job.Status) job.Outcome {
	if s == job.Success {
		return job.OutcomeSuccess
	}
	return job.OutcomeFailure // failure, aborted, lost, failed to launch
}

// alert records the alerts that an outcome of task en asks for.
func (e *Engine) alert(en *entry, o job.Outcome, r *job.Run, reason string) {
	if len(en.def.Extras().AlertTo) == 0 && len(en.def.Extras().Notify) == 0 && len(e.memberOf[en.def.Name]) == 0 {
		return // nothing to ask: the common case, on the path of every run's end
	}
	e.out.Alerts = append(e.out.Alerts, e.Alerts(en.def, o, r, reason, e.now)...)
}

// Alerts returns the alerts that an outcome of own asks for, created at
// now: own's settings, then those of every group that names it, in name
// order. own is a task, or a timeperiod process's level settings under
// the process's name (a group may name a process). A recipient named by
// several gets one mail, through the first that names it; recipients
// reached through the same template share one alert. r is the run, if
// the outcome is a run's; reason says why otherwise.
func (e *Engine) Alerts(own *job.Task, o job.Outcome, r *job.Run, reason string, now time.Time) []job.Alert {
	name := own.Name
	sources := []*job.Task{own}
	for _, g := range sortedSet(e.memberOf[name]) {
		sources = append(sources, e.defs[g])
	}
	var out []job.Alert
	seen := map[string]bool{}
	for _, src := range sources {
		on := src.Alerts(o)
		// A success resolves the incident a PagerDuty target's trigger
		// opened: it goes there whatever alert_on says.
		resolves := !on && o == job.OutcomeSuccess && len(src.Extras().AlertOn) > 0
		if !on && !resolves {
			continue
		}
		for _, to := range src.Extras().AlertTo {
			if !on {
				break
			}
			if seen[to] {
				continue
			}
			seen[to] = true
			i := slices.IndexFunc(out, func(a job.Alert) bool { return a.Template == src.Extras().AlertTemplate })
			if i < 0 {
				a := job.Alert{Task: name, Outcome: o, Created: now, Template: src.Extras().AlertTemplate, State: job.AlertPending, Message: reason}
				if r != nil {
					a.RunID, a.Start, a.End, a.ExitCode, a.Message, a.Data = r.ID, r.Start, r.End, r.ExitCode, r.Message, r.Data
				}
				out = append(out, a)
				i = len(out) - 1
			}
			out[i].To = append(out[i].To, to)
			if !slices.Contains(out[i].Sources, src.Name) {
				out[i].Sources = append(out[i].Sources, src.Name)
			}
		}
		// A webhook is an alert of its own: its delivery is its own.
		for _, to := range src.Extras().Notify {
			if seen[to] || !on && !strings.HasPrefix(to, job.HookPagerDuty+":") {
				continue
			}
			seen[to] = true
			// A generic webhook's template is its body's; the others take
			// none.
			tmpl := ""
			if strings.HasPrefix(to, job.HookWebhook+":") {
				tmpl = src.Extras().NotifyTemplate
			}
			a := job.Alert{Task: name, Outcome: o, Created: now, Template: tmpl, State: job.AlertPending, Message: reason,
				To: []string{to}, Sources: []string{src.Name}}
			if r != nil {
				a.RunID, a.Start, a.End, a.ExitCode, a.Message, a.Data = r.ID, r.Start, r.End, r.ExitCode, r.Message, r.Data
			}
			out = append(out, a)
		}
	}
	return out
}
