package defs

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gnomon-sched/gnomon/job"
)

// policyTable holds the run policy's attributes (job.Policy): retries,
// the time limit and the alarms. `retries` is another name of
// `n_retrys`, AutoSys's.
var policyTable = []attr{
	retriesAttr("n_retrys", true),
	retriesAttr("retries", false),
	policyDuration("retry_delay", onRunner, func(p *job.Policy) *job.Duration { return &p.RetryDelay }),
	{name: "retry_backoff", on: onRunner,
		setFunc:   setPolicy(setBackoff),
		clearFunc: clearPolicy(func(p *job.Policy) { p.RetryBackoff = 0 }),
		formatFunc: func(t *job.Task) string {
			if f := t.Extras().RunPolicy().RetryBackoff; f > 0 {
				return strconv.FormatFloat(f, 'g', -1, 64)
			}
			return ""
		}},
	policyDuration("retry_max_delay", onRunner, func(p *job.Policy) *job.Duration { return &p.RetryMaxDelay }),
	policyDuration("term_run_time", onRunner, func(p *job.Policy) *job.Duration { return &p.TermRunTime }),
	policyDuration("max_run_alarm", onTask, func(p *job.Policy) *job.Duration { return &p.MaxRunAlarm }),
	policyDuration("min_run_alarm", onTask, func(p *job.Policy) *job.Duration { return &p.MinRunAlarm }),
	policyDeadline("must_start_by", func(p *job.Policy) *job.Deadline { return &p.MustStartBy }),
	policyDeadline("must_complete_by", func(p *job.Policy) *job.Deadline { return &p.MustCompleteBy }),
}

// MaxRetries bounds n_retrys.
const MaxRetries = 100

// maxBackoff bounds retry_backoff: past it, a few retries wait years.
const maxBackoff = 10

// setPolicy returns the setter of a policy attribute: it parses a
// non-empty value into the task's run policy.
func setPolicy(parse func(p *job.Policy, v string) error) func(t *job.Task, v string) error {
	return func(t *job.Task, v string) error { return parse(t.EditPolicy(), v) }
}

// clearPolicy returns the clearer of a policy attribute: it resets the
// attribute, and drops a policy left empty.
func clearPolicy(reset func(p *job.Policy)) func(t *job.Task) {
	return func(t *job.Task) {
		if t.Extras().Policy == nil {
			return
		}
		reset(t.EditPolicy())
		t.Compact()
	}
}

// retriesAttr is the number of retries, under name; written says
// whether Attrs writes it under that name.
func retriesAttr(name string, written bool) attr {
	a := attr{name: name, on: onRunner,
		setFunc: setPolicy(func(p *job.Policy, v string) error {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 || n > MaxRetries {
				return fmt.Errorf("%s: %q is not a number of retries from 0 to %d", name, v, MaxRetries)
			}
			p.Retries = n
			return nil
		}),
		clearFunc: clearPolicy(func(p *job.Policy) { p.Retries = 0 }),
	}
	if written {
		a.formatFunc = func(t *job.Task) string { return positive(t.Extras().RunPolicy().Retries) }
	}
	return a
}

// setBackoff reads the factor each retry's delay grows by.
func setBackoff(p *job.Policy, v string) error {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || !(f >= 1 && f <= maxBackoff) {
		return fmt.Errorf("retry_backoff: %q is not a factor from 1 to %d such as 2 or 1.5", v, maxBackoff)
	}
	p.RetryBackoff = f
	return nil
}

// policyDuration is a positive duration of the run policy, in the field
// that ptr returns.
func policyDuration(name string, on kinds, ptr func(p *job.Policy) *job.Duration) attr {
	return attr{name: name, on: on,
		setFunc: setPolicy(func(p *job.Policy, v string) error {
			d, err := ParseDuration(name, v)
			if err != nil {
				return err
			}
			if d <= 0 {
				return fmt.Errorf("%s: %q is not positive; write a duration such as 90s, 5m, 1h30m or 5 minutes", name, v)
			}
			*ptr(p) = job.Duration(d)
			return nil
		}),
		clearFunc:  clearPolicy(func(p *job.Policy) { *ptr(p) = 0 }),
		formatFunc: func(t *job.Task) string { return durationValue(*ptr(t.Extras().RunPolicy())) },
	}
}

// policyDeadline is a deadline of the run policy, in the field that ptr
// returns: a time of day, or an offset after the occurrence (+30m).
func policyDeadline(name string, ptr func(p *job.Policy) *job.Deadline) attr {
	return attr{name: name, on: onTask,
		setFunc: setPolicy(func(p *job.Policy, v string) error {
			d, err := parseDeadline(name, v)
			if err != nil {
				return err
			}
			*ptr(p) = d
			return nil
		}),
		clearFunc:  clearPolicy(func(p *job.Policy) { *ptr(p) = job.Deadline{} }),
		formatFunc: func(t *job.Task) string { return ptr(t.Extras().RunPolicy()).String() },
	}
}

// parseDeadline reads the deadline of attribute key.
func parseDeadline(key, v string) (job.Deadline, error) {
	rest, ok := strings.CutPrefix(v, "+")
	if !ok {
		d, err := job.ParseDeadline(v)
		if err != nil {
			return d, fmt.Errorf("%s: %w", key, err)
		}
		return d, nil
	}
	// An offset after the occurrence: a duration.
	off, err := ParseDuration(key, rest)
	if err == nil && off <= 0 {
		err = fmt.Errorf("%s: %q is not an offset after the occurrence such as +30m: it is not positive", key, v)
	}
	return job.Deadline{Offset: job.Duration(off)}, err
}

// checkPolicy applies the rules of the run policy to a resulting
// definition.
func (a *applier) checkPolicy(act *Action, t *job.Task, at func(...string) int, ok func(...string) bool) {
	p := t.Extras().RunPolicy()
	if p.IsZero() {
		return
	}
	if p.Retries == 0 && (p.RetryDelay > 0 || p.RetryBackoff > 0 || p.RetryMaxDelay > 0) && ok("n_retrys", "retries") {
		a.errorf(act, at("retry_delay", "retry_backoff", "retry_max_delay"), "retry_delay, retry_backoff and retry_max_delay need n_retrys")
	}
	if p.RetryMaxDelay > 0 && p.RetryMaxDelay < p.RetryDelay && ok("retry_delay", "retry_max_delay") {
		a.errorf(act, at("retry_max_delay"), "retry_max_delay %s is shorter than retry_delay %s", time.Duration(p.RetryMaxDelay), time.Duration(p.RetryDelay))
	}
	if p.MinRunAlarm > 0 && p.MaxRunAlarm > 0 && p.MinRunAlarm >= p.MaxRunAlarm && ok("min_run_alarm", "max_run_alarm") {
		a.errorf(act, at("min_run_alarm", "max_run_alarm"), "min_run_alarm %s should be shorter than max_run_alarm %s", time.Duration(p.MinRunAlarm), time.Duration(p.MaxRunAlarm))
	}
	if (p.Retries > 0 || p.TermRunTime > 0) && !t.Executes() && t.Type != "" {
		a.errorf(act, at("n_retrys", "retries", "term_run_time"), "n_retrys and term_run_time need a task that runs a command or a function")
	}
	if (p.MustStartBy.IsSet() || p.MustCompleteBy.IsSet()) && !t.HasTimeTrigger() && ok("start_times", "run_window", "cron", "start_date", "interval") {
		a.errorf(act, at("must_start_by", "must_complete_by"), "must_start_by and must_complete_by need a time trigger (start_times, run_window, cron or start_date): they are relative to its occurrence")
	}
}
