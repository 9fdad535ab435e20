package job

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// LogRotation is a task's own rotation of its log files (log_rotate_size,
// log_rotate_age, log_keep), over the server's: each field set replaces
// the server's, each zero field leaves it to the server. Size and Age
// are Off (-1) when the task turns that trigger off whatever the server
// says ("0" in a definition).
type LogRotation struct {
	// Size rotates a file that holds this many bytes.
	Size int64 `json:"size,omitempty"`
	// Age rotates a file whose oldest content is this old.
	Age Duration `json:"age,omitempty"`
	// Keep is how many rotated files are kept.
	Keep int `json:"keep,omitempty"`
}

// Off turns a trigger of a LogRotation off.
const Off = -1

// IsZero reports whether r leaves everything to the server; nil does.
func (r *LogRotation) IsZero() bool { return r == nil || *r == LogRotation{} }

// Units of sizes: powers of 1024, as logrotate's size.
var sizeUnits = []struct {
	name  string
	shift uint
}{{"G", 30}, {"M", 20}, {"K", 10}}

// ParseSize reads a size in bytes: 0, or a positive whole number with an
// optional unit, K, M or G (powers of 1024, as logrotate's size), also
// written KiB, MiB, GiB or KB, MB, GB.
func ParseSize(s string) (int64, error) {
	num, shift := strings.TrimSpace(s), uint(0)
	upper := strings.ToUpper(num)
	for _, u := range sizeUnits {
		for _, suffix := range []string{u.name + "IB", u.name + "B", u.name} {
			if strings.HasSuffix(upper, suffix) {
				num, shift = num[:len(num)-len(suffix)], u.shift
				break
			}
		}
		if shift != 0 {
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 || n > (1<<63-1)>>shift {
		return 0, fmt.Errorf("%q is not a size: give a whole number of bytes, with K, M or G (powers of 1024) if you like: 64M, 1G, 500000", s)
	}
	return n << shift, nil
}

// FormatSize writes a size as ParseSize reads it, in the largest unit
// that divides it.
func FormatSize(n int64) string {
	if n == 0 {
		return "0"
	}
	for _, u := range sizeUnits {
		if n%(1<<u.shift) == 0 {
			return strconv.FormatInt(n>>u.shift, 10) + u.name
		}
	}
	return strconv.FormatInt(n, 10)
}

// ParseAge reads the age at which a log file is rotated: a positive whole
// number of days, weeks or years ("7d", "2w"), or a Go duration ("24h"),
// as ParseRetention reads a retention, without "forever".
func ParseAge(s string) (time.Duration, error) {
	d, err := ParseRetention(s)
	if err == nil && d < 0 {
		err = fmt.Errorf("%q is not an age", s)
	}
	if err != nil {
		return 0, fmt.Errorf("%q is not an age: give a positive whole number of days or weeks (7d, 2w), or a duration (24h)", s)
	}
	return time.Duration(d), nil
}

func (r *LogRotation) size() int64 {
	if r == nil {
		return 0
	}
	return r.Size
}

func (r *LogRotation) age() Duration {
	if r == nil {
		return 0
	}
	return r.Age
}

func (r *LogRotation) keep() int {
	if r == nil {
		return 0
	}
	return r.Keep
}
