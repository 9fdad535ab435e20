package job

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Forever is the retention that keeps every record.
const Forever Duration = -1

// HistoryFloor is the shortest retention of a task's history (its runs,
// fires, audit records and alerts): the last day's stays.
const HistoryFloor = 24 * time.Hour

// Units of retentions beyond Go's durations: a year is 365 days.
var retentionUnits = []struct {
	suffix string
	unit   time.Duration
}{{"y", 365 * 24 * time.Hour}, {"w", 7 * 24 * time.Hour}, {"d", 24 * time.Hour}}

// ParseRetention parses how long records are kept: "forever", a whole
// number of days, weeks or years ("90d", "2w", "7y"; a year is 365 days),
// or a Go duration ("36h", "90m"). It must be positive.
func ParseRetention(s string) (Duration, error) {
	if s == "forever" {
		return Forever, nil
	}
	for _, u := range retentionUnits {
		n, ok := strings.CutSuffix(s, u.suffix)
		if !ok {
			continue
		}
		v, err := strconv.ParseInt(n, 10, 64)
		if err != nil || v <= 0 || v > int64(1<<63-1)/int64(u.unit) {
			return 0, fmt.Errorf("%q is not a retention: give a positive whole number of days, weeks or years (90d, 2w, 7y), a duration (36h) or forever", s)
		}
		return Duration(time.Duration(v) * u.unit), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%q is not a retention: give a positive whole number of days, weeks or years (90d, 2w, 7y), a duration (36h) or forever", s)
	}
	return Duration(d), nil
}

// Retention formats d as ParseRetention reads it back: "forever", in
// years or days when they divide it, or as a Go duration.
func (d Duration) Retention() string {
	if d < 0 {
		return "forever"
	}
	for _, u := range retentionUnits {
		if u.suffix != "w" && d > 0 && time.Duration(d)%u.unit == 0 {
			return strconv.FormatInt(int64(time.Duration(d)/u.unit), 10) + u.suffix
		}
	}
	return time.Duration(d).String()
}
