package defs

import (
	"fmt"
	"math"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/gnomon-sched/gnomon/job"
)

// watchTable holds the file watcher's attributes (job.Watch).
var watchTable = []attr{
	{name: "watch_file", on: onTask,
		setFunc: func(t *job.Task, v string) error {
			if err := CheckWatchFile(v); err != nil {
				return err
			}
			t.EditWatch().File = v
			return nil
		},
		clearFunc: clearWatch(func(w *job.Watch) { w.File = "" }),
		formatFunc: func(t *job.Task) string {
			if w := t.Extras().Watch; w != nil {
				return w.File
			}
			return ""
		}},
	{name: "watch_min_size", on: onTask,
		setFunc: func(t *job.Task, v string) error {
			n, err := ParseSize(v)
			if err != nil {
				return fmt.Errorf("watch_min_size: %w", err)
			}
			t.EditWatch().MinSize = n
			return nil
		},
		clearFunc: clearWatch(func(w *job.Watch) { w.MinSize = 0 }),
		formatFunc: func(t *job.Task) string {
			if w := t.Extras().Watch; w != nil && w.MinSize > 0 {
				return FormatSize(w.MinSize)
			}
			return ""
		}},
	watchDuration("watch_steady", func(w *job.Watch) *job.Duration { return &w.Steady }, func(v string, d time.Duration) error {
		if d < time.Second {
			return fmt.Errorf("watch_steady: %q is below 1s; write how long a file stays unchanged before it triggers, such as 30s (a file renamed in whole settles at the first look after 1s)", v)
		}
		return nil
	}),
	watchDuration("watch_interval", func(w *job.Watch) *job.Duration { return &w.Interval }, func(v string, d time.Duration) error {
		if d < job.MinInterval {
			return fmt.Errorf("watch_interval: %q is below %s; files are looked at %s apart at the most often", v, job.MinInterval, job.MinInterval)
		}
		return nil
	}),
}

// clearWatch returns the clearer of a file watcher attribute.
func clearWatch(reset func(w *job.Watch)) func(t *job.Task) {
	return func(t *job.Task) {
		if t.Extras().Watch != nil {
			reset(t.EditWatch())
		}
	}
}

// watchDuration is a duration of the file watcher, written with a unit,
// in the field that ptr returns; check refuses one out of bounds.
func watchDuration(name string, ptr func(w *job.Watch) *job.Duration, check func(v string, d time.Duration) error) attr {
	return attr{name: name, on: onTask,
		setFunc: func(t *job.Task, v string) error {
			if err := withUnit(name, v); err != nil {
				return err
			}
			d, err := ParseDuration(name, v)
			if err != nil {
				return err
			}
			if err := check(v, d); err != nil {
				return err
			}
			*ptr(t.EditWatch()) = job.Duration(d)
			return nil
		},
		clearFunc: clearWatch(func(w *job.Watch) { *ptr(w) = 0 }),
		formatFunc: func(t *job.Task) string {
			if w := t.Extras().Watch; w != nil {
				return durationValue(*ptr(w))
			}
			return ""
		},
	}
}

// CheckWatchFile checks the value of watch_file: an absolute, clean path
// whose elements may be glob patterns (path/filepath.Match).
func CheckWatchFile(v string) error {
	switch {
	case !strings.HasPrefix(v, "/"):
		return fmt.Errorf("watch_file: %q is not an absolute path (write it from /, such as /data/in/*.csv)", v)
	case strings.HasSuffix(v, "/") || path.Clean(v) != v:
		return fmt.Errorf("watch_file: %q is not a clean path (write it as %s, a pattern of files, not of a directory)", v, strings.TrimSuffix(path.Clean(v), "/"))
	case v == "/":
		return fmt.Errorf("watch_file: %q names no file (write a pattern such as /data/in/*.csv)", v)
	}
	if _, err := filepath.Match(v, ""); err != nil {
		return fmt.Errorf("watch_file: %q is not a valid pattern: %v (a pattern uses *, ?, [a-z], and \\ to escape)", v, err)
	}
	return nil
}

// WatchDir returns the directory that holds every file a watch_file
// pattern matches: its leading elements without pattern characters.
func WatchDir(pattern string) string {
	dir := "/"
	for el := range strings.SplitSeq(strings.TrimPrefix(pattern, "/"), "/") {
		if strings.ContainsAny(el, `*?[\`) {
			break
		}
		dir = path.Join(dir, el)
	}
	if dir == pattern {
		return path.Dir(pattern)
	}
	return dir
}

// sizeUnits are the units of a size, binary as du and ls -h count.
var sizeUnits = []struct {
	names []string
	n     int64
}{
	{[]string{"g", "gb", "gib"}, 1 << 30},
	{[]string{"m", "mb", "mib"}, 1 << 20},
	{[]string{"k", "kb", "kib"}, 1 << 10},
	{[]string{"b", ""}, 1},
}

// ParseSize reads a size in bytes: a whole number, alone or followed by a
// unit K, M or G (also KB, KiB, ..., in any case), each 1024 times the
// one before, as du and ls -h count: 10K is 10240 bytes.
func ParseSize(v string) (int64, error) {
	s := strings.TrimSpace(v)
	i := 0
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || i == 0 && (s[i] == '-' || s[i] == '+')) {
		i++
	}
	num, unit := s[:i], strings.ToLower(strings.TrimSpace(s[i:]))
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a size; write a number of bytes, or one with a unit: 512, 10K, 5M, 1G", v)
	}
	if n < 0 {
		return 0, fmt.Errorf("%q is negative; a size is 0 or more bytes", v)
	}
	for _, u := range sizeUnits {
		for _, name := range u.names {
			if unit == name {
				if n > math.MaxInt64/u.n {
					return 0, fmt.Errorf("%q is too large", v)
				}
				return n * u.n, nil
			}
		}
	}
	return 0, fmt.Errorf("%q: unknown unit %q; write a number of bytes, or one with a unit K, M or G (10K is 10240 bytes)", v, strings.TrimSpace(s[i:]))
}

// FormatSize writes a size as ParseSize reads it, in the largest unit
// that holds it whole.
func FormatSize(n int64) string {
	for _, u := range sizeUnits[:3] {
		if n >= u.n && n%u.n == 0 {
			return strconv.FormatInt(n/u.n, 10) + strings.ToUpper(u.names[0])
		}
	}
	return strconv.FormatInt(n, 10)
}

// checkWatch applies the rules of file watchers: the other attributes go
// with watch_file, a watcher starts a task that runs something, and a
// configuration's watched files are in a directory one of its FILE
// dependencies names, where the events it posts validate it.
func (a *applier) checkWatch(act *Action, t *job.Task, at func(...string) int, ok func(...string) bool) {
	w := t.Extras().Watch
	if w == nil {
		return
	}
	if w.File == "" {
		if ok("watch_file") {
			a.errorf(act, at("watch_min_size", "watch_steady", "watch_interval"), "watch_min_size, watch_steady and watch_interval need watch_file: the files to watch")
		}
		return
	}
	switch t.Type {
	case job.Callable, job.Configuration:
	default:
		a.errorf(act, at("watch_file"), "watch_file: a file watcher starts a callable task or feeds a configuration, not a %s", t.Type)
		return
	}
	if t.Type != job.Configuration || !ok("dependencies") {
		return
	}
	dir := WatchDir(w.File)
	for _, d := range t.Extras().Deps {
		if d.Type != job.File {
			continue
		}
		dd := path.Clean(d.Resource)
		if dir == dd || strings.HasPrefix(dir, strings.TrimSuffix(dd, "/")+"/") {
			return
		}
	}
	a.errorf(act, at("watch_file"), "watch_file: no FILE dependency covers %s, so the events the watcher posts would validate nothing; add {\"type\": \"FILE\", \"resourceId\": %q, \"lifeDuration\": 3600}", dir, dir)
}

// withUnit refuses a bare number for a watcher's duration: elsewhere a
// bare number is minutes, but AutoSys's watch_interval counts seconds,
// and a file watcher written from an AutoSys job would look 60 times
// less often than meant.
func withUnit(key, v string) error {
	if _, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
		return fmt.Errorf("%s: %q has no unit; write %ss or %sm (AutoSys counts watch_interval in seconds, gnomon's bare numbers elsewhere are minutes)",
			key, v, strings.TrimSpace(v), strings.TrimSpace(v))
	}
	return nil
}
