package defs

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/gnomon-sched/gnomon/calendar"
)

// ParseDuration reads the value of a duration attribute (start_delay,
// retry_delay, retry_max_delay, term_run_time, max_run_alarm,
// min_run_alarm), the one syntax of them all:
//
//   - Go's: 90s, 5m, 1h30m, 1500ms;
//   - words: a number and a unit, repeated: 5 minutes, 1 hour 30 minutes,
//     2 days (units second, minute, hour, day, week, singular or plural,
//     or s, sec, min, h, hr, d, w);
//   - a bare number of minutes, as AutoSys writes them (retry_delay: 5).
//
// The error names the attribute and echoes the value.
func ParseDuration(key, v string) (time.Duration, error) {
	d, err := parseDuration(strings.TrimSpace(v))
	if err != nil {
		detail := ""
		if err != errNotDuration {
			detail = " (" + err.Error() + ")"
		}
		return 0, fmt.Errorf("%s: %q is not a duration%s; write it as 90s, 5m or 1h30m, as 5 minutes, or as a number of minutes", key, v, detail)
	}
	return d, nil
}

// FormatDuration writes a duration as the definition language reads it,
// without the zero units Go's form ends with: 1h, 1h30m, 5m, 90s reads
// back as 1m30s.
func FormatDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}

// durationUnits are the units of the words form.
var durationUnits = map[string]time.Duration{
	"second": time.Second, "sec": time.Second, "s": time.Second,
	"minute": time.Minute, "min": time.Minute, "m": time.Minute,
	"hour": time.Hour, "hr": time.Hour, "h": time.Hour,
	"day": 24 * time.Hour, "d": 24 * time.Hour,
	"week": 7 * 24 * time.Hour, "w": 7 * 24 * time.Hour,
}

// errNotDuration is the error of a value that reads as no form of
// duration at all.
var errNotDuration = errors.New("not a duration")

func parseDuration(v string) (time.Duration, error) {
	if v == "" {
		return 0, errNotDuration
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n < 0 || n > math.MaxInt64/int64(time.Minute) {
			return 0, fmt.Errorf("%d minutes is out of range", n)
		}
		return time.Duration(n) * time.Minute, nil
	}
	if d, err := time.ParseDuration(v); err == nil {
		return d, nil
	} else if !strings.ContainsAny(v, " \t") {
		return 0, errNotDuration
	}
	f := strings.Fields(v)
	if len(f)%2 != 0 {
		return 0, fmt.Errorf("want numbers each followed by its unit")
	}
	var total time.Duration
	for i := 0; i < len(f); i += 2 {
		n, err := strconv.ParseFloat(f[i], 64)
		if err != nil || n < 0 || math.IsInf(n, 0) || math.IsNaN(n) {
			return 0, fmt.Errorf("%q is not a number", f[i])
		}
		word := strings.ToLower(f[i+1])
		unit, ok := durationUnits[word]
		if !ok {
			unit, ok = durationUnits[strings.TrimSuffix(word, "s")]
		}
		if !ok {
			return 0, fmt.Errorf("unknown unit %q (want seconds, minutes, hours, days or weeks)", f[i+1])
		}
		part := n * float64(unit)
		if part > float64(math.MaxInt64)-float64(total) {
			return 0, fmt.Errorf("out of range")
		}
		total += time.Duration(part)
	}
	return total, nil
}

// parseInterval reads the interval attribute: calendar units (30 minutes,
// 1 day, 1 month: days and longer are calendar days and months in the
// task's zone), or a duration of the one syntax (90s, 1h30m, a number of
// minutes), which is elapsed time in seconds, minutes or hours.
func parseInterval(v string) (calendar.Every, error) {
	e, err := calendar.ParseEvery(v)
	if err == nil {
		return e, nil
	}
	d, derr := parseDuration(strings.TrimSpace(v))
	switch {
	case derr != nil || d <= 0:
		return calendar.Every{}, err
	case d%time.Second != 0:
		return calendar.Every{}, fmt.Errorf("interval: %q should be a positive number of whole seconds, such as 90s, 30m or 30 minutes", v)
	}
	for _, u := range []struct {
		unit calendar.Unit
		d    time.Duration
	}{{calendar.Hour, time.Hour}, {calendar.Minute, time.Minute}, {calendar.Second, time.Second}} {
		if d%u.d == 0 {
			return calendar.ParseEvery(fmt.Sprintf("%d %s", d/u.d, u.unit))
		}
	}
	return calendar.Every{}, err // not reached: d is whole seconds
}
