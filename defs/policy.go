package defs

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gnomon-sched/gnomon/job"
)

// The run policy's attributes (job.Policy): retries, the time limit and
// the alarms. `retries` is another name of `n_retrys`, AutoSys's.
var policyAttrs = map[string]bool{
	"n_retrys": true, "retries": true, "retry_delay": true, "retry_backoff": true, "retry_max_delay": true,
	"term_run_time": true, "max_run_alarm": true, "min_run_alarm": true, "must_start_by": true, "must_complete_by": true,
}

// MaxRetries bounds n_retrys.
const MaxRetries = 100

// maxBackoff bounds retry_backoff: past it, a few retries wait years.
const maxBackoff = 10

// setPolicy parses a non-empty policy attribute into t.
func setPolicy(t *job.Task, key, v string) error {
	p := t.EditPolicy()
	switch key {
	case "n_retrys", "retries":
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > MaxRetries {
			return fmt.Errorf("%s: %q is not a number of retries from 0 to %d", key, v, MaxRetries)
		}
		p.Retries = n
	case "retry_backoff":
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || !(f >= 1 && f <= maxBackoff) {
			return fmt.Errorf("retry_backoff: %q is not a factor from 1 to %d such as 2 or 1.5", v, maxBackoff)
		}
		p.RetryBackoff = f
	case "must_start_by", "must_complete_by":
		var (
			d   job.Deadline
			err error
		)
		if rest, ok := strings.CutPrefix(v, "+"); ok {
			// An offset after the occurrence: a duration.
			var off time.Duration
			if off, err = ParseDuration(key, rest); err == nil && off <= 0 {
				err = fmt.Errorf("%s: %q is not an offset after the occurrence such as +30m: it is not positive", key, v)
			}
			d = job.Deadline{Offset: job.Duration(off)}
		} else if d, err = job.ParseDeadline(v); err != nil {
			err = fmt.Errorf("%s: %w", key, err)
		}
		if err != nil {
			return err
		}
		if key == "must_start_by" {
			p.MustStartBy = d
		} else {
			p.MustCompleteBy = d
		}
	default:
		d, err := ParseDuration(key, v)
		if err != nil {
			return err
		}
		if d <= 0 {
			return fmt.Errorf("%s: %q is not positive; write a duration such as 90s, 5m, 1h30m or 5 minutes", key, v)
		}
		*durationOf(p, key) = job.Duration(d)
	}
	return nil
}

// durationOf returns the field of a duration attribute of the policy.
func durationOf(p *job.Policy, key string) *job.Duration {
	switch key {
	case "retry_delay":
		return &p.RetryDelay
	case "retry_max_delay":
		return &p.RetryMaxDelay
	case "term_run_time":
		return &p.TermRunTime
	case "max_run_alarm":
		return &p.MaxRunAlarm
	case "min_run_alarm":
		return &p.MinRunAlarm
	}
	panic("defs: not a duration of the run policy: " + key)
}

// clearPolicy resets a policy attribute.
func clearPolicy(t *job.Task, key string) {
	if t.Extras().Policy == nil {
		return
	}
	p := t.EditPolicy()
	switch key {
	case "n_retrys", "retries":
		p.Retries = 0
	case "retry_backoff":
		p.RetryBackoff = 0
	case "must_start_by":
		p.MustStartBy = job.Deadline{}
	case "must_complete_by":
		p.MustCompleteBy = job.Deadline{}
	default:
		*durationOf(p, key) = 0
	}
	t.Compact()
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

// addPolicy adds the set policy attributes, as Attrs does.
func addPolicy(add func(k, v string), t *job.Task) {
	p := t.Extras().RunPolicy()
	if p.IsZero() {
		return
	}
	if p.Retries > 0 {
		add("n_retrys", strconv.Itoa(p.Retries))
	}
	dur := func(k string, d job.Duration) {
		if d > 0 {
			add(k, FormatDuration(time.Duration(d)))
		}
	}
	dur("retry_delay", p.RetryDelay)
	if p.RetryBackoff > 0 {
		add("retry_backoff", strconv.FormatFloat(p.RetryBackoff, 'g', -1, 64))
	}
	dur("retry_max_delay", p.RetryMaxDelay)
	dur("term_run_time", p.TermRunTime)
	dur("max_run_alarm", p.MaxRunAlarm)
	dur("min_run_alarm", p.MinRunAlarm)
	add("must_start_by", p.MustStartBy.String())
	add("must_complete_by", p.MustCompleteBy.String())
}
