package job

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Policy is what a task asks of its runs beyond starting them: retries
// of a failed run, a time limit, and the alarms raised when a run is
// longer or shorter than expected or an occurrence starts or completes
// late. The zero value asks nothing.
type Policy struct {
	// Retries is how many times a failed run of one trigger is run again
	// before the failure is final (n_retrys).
	Retries int
	// RetryDelay is the wait before the first retry; each later one waits
	// RetryBackoff times longer than the one before (a factor of 1 or
	// more; 0 means 1), never longer than RetryMaxDelay when it is set.
	RetryDelay    Duration
	RetryBackoff  float64
	RetryMaxDelay Duration
	// TermRunTime kills a run that has run this long and records it
	// failed (term_run_time).
	TermRunTime Duration
	// MaxRunAlarm and MinRunAlarm raise an alarm when a run runs longer,
	// or ends sooner, than this.
	MaxRunAlarm Duration
	MinRunAlarm Duration
	// MustStartBy and MustCompleteBy raise an alarm when an occurrence of
	// the task's time trigger has not started, or not completed, by then.
	MustStartBy    Deadline
	MustCompleteBy Deadline
}

// IsZero reports whether the policy asks nothing.
func (p *Policy) IsZero() bool { return p == nil || *p == Policy{} }

// Timed reports whether the policy has a limit or alarm that falls due
// while a task is active: the engine then keeps a wake-up for it.
func (p *Policy) Timed() bool {
	return p.TermRunTime > 0 || p.MaxRunAlarm > 0 || p.MustStartBy.IsSet() || p.MustCompleteBy.IsSet()
}

// RetryWait returns the wait before retry number n (1 for the first):
// RetryDelay × RetryBackoff^(n-1), capped by RetryMaxDelay.
func (p *Policy) RetryWait(n int) time.Duration {
	d := float64(p.RetryDelay)
	if b := p.RetryBackoff; b > 1 && n > 1 {
		d *= math.Pow(b, float64(n-1))
	}
	if limit := float64(p.RetryMaxDelay); limit > 0 && d > limit {
		d = limit
	}
	if d >= math.MaxInt64 {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(d)
}

// Deadline is a time by which an occurrence must start or complete,
// relative to the occurrence: an offset after it ("+30m"), or the first
// time of day at or after it in the task's zone ("06:00"). The zero value
// is unset.
type Deadline struct {
	// Offset is the time after the occurrence; zero for a time of day.
	Offset Duration
	// Clock is the time of day, when At is set.
	Clock Clock
	At    bool
}

// IsSet reports whether the deadline is set.
func (d Deadline) IsSet() bool { return d.Offset > 0 || d.At }

// String renders the deadline as ParseDeadline reads it: "+30m0s" or
// "06:00"; empty when unset.
func (d Deadline) String() string {
	switch {
	case d.At:
		return d.Clock.String()
	case d.Offset > 0:
		return "+" + time.Duration(d.Offset).String()
	}
	return ""
}

// ParseDeadline reads "+DURATION" (an offset after the occurrence, such
// as +30m or +1h30m; a bare +N is N minutes, as AutoSys writes it) or
// "HH:MM" (a time of day).
func ParseDeadline(s string) (Deadline, error) {
	if rest, ok := strings.CutPrefix(s, "+"); ok {
		d, err := ParseMinutes(rest)
		if err != nil || d <= 0 {
			return Deadline{}, fmt.Errorf("%q is not an offset such as +30m, +2h or +45 (minutes), nor a time of day such as 06:00", s)
		}
		return Deadline{Offset: Duration(d)}, nil
	}
	h, m, ok := strings.Cut(s, ":")
	hh, err1 := strconv.Atoi(h)
	mm, err2 := strconv.Atoi(m)
	if !ok || err1 != nil || err2 != nil || len(h) > 2 || len(m) != 2 || hh < 0 || hh > 23 || mm < 0 || mm > 59 {
		return Deadline{}, fmt.Errorf("%q is not an offset such as +30m, +2h or +45 (minutes), nor a time of day such as 06:00", s)
	}
	return Deadline{Clock: Clock(hh*60 + mm), At: true}, nil
}

// MarshalText implements encoding.TextMarshaler.
func (d Deadline) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (d *Deadline) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		*d = Deadline{}
		return nil
	}
	v, err := ParseDeadline(string(b))
	*d = v
	return err
}

// ParseMinutes reads a duration such as 90s, 30m or 1h30m, or a bare
// number of minutes as AutoSys writes term_run_time and the run alarms.
func ParseMinutes(s string) (time.Duration, error) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		if n < 0 || n > math.MaxInt64/int64(time.Minute) {
			return 0, fmt.Errorf("%q minutes is out of range", s)
		}
		return time.Duration(n) * time.Minute, nil
	}
	return time.ParseDuration(s)
}

// Alarm is a run or an occurrence that did not go as its task's policy
// expects: it ran too long or too short, or started or completed late.
// An alarm does not change what the task does; it is shown with the task's
// status until the task is triggered again, logged, and mailed to those
// who ask for alarms.
type Alarm struct {
	Kind AlarmKind `json:"kind"`
	At   time.Time `json:"at"`
	// RunID is the run it is about, 0 for an occurrence that has not
	// started.
	RunID int64 `json:"run_id,omitempty"`
	// Scheduled is the occurrence a must_start_by or must_complete_by
	// alarm is about.
	Scheduled time.Time `json:"scheduled,omitzero"`
	Message   string    `json:"message"`
}

// AlarmKind names what an alarm is about, as the attribute that asks
// for it.
type AlarmKind string

// Alarm kinds.
const (
	AlarmMaxRun       AlarmKind = "max_run_alarm"
	AlarmMinRun       AlarmKind = "min_run_alarm"
	AlarmMustStart    AlarmKind = "must_start_by"
	AlarmMustComplete AlarmKind = "must_complete_by"
)
