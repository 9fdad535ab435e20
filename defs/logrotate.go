package defs

import (
	"fmt"
	"strconv"
	"time"

	"github.com/gnomon-sched/gnomon/job"
)

// The attributes of a task's own log rotation (job.LogRotation), over the
// server's --log-rotate-size, --log-rotate-age and --log-keep.
var logRotateAttrs = map[string]bool{"log_rotate_size": true, "log_rotate_age": true, "log_keep": true}

// editLogRotate returns the task's own log rotation for setting it.
func editLogRotate(t *job.Task) *job.LogRotation {
	x := t.Edit()
	if x.LogRotate == nil {
		x.LogRotate = &job.LogRotation{}
	}
	return x.LogRotate
}

// setLogRotate parses a non-empty log rotation attribute into t: "0"
// turns the server's size or age off for the task.
func setLogRotate(t *job.Task, key, v string) error {
	switch key {
	case "log_rotate_size":
		n, err := job.ParseSize(v)
		if err != nil {
			return fmt.Errorf("log_rotate_size: %w; or 0 for none", err)
		}
		if n == 0 {
			n = job.Off
		}
		editLogRotate(t).Size = n
	case "log_rotate_age":
		var d time.Duration = job.Off
		if v != "0" {
			var err error
			if d, err = job.ParseAge(v); err != nil {
				return fmt.Errorf("log_rotate_age: %w; or 0 for none", err)
			}
		}
		editLogRotate(t).Age = job.Duration(d)
	case "log_keep":
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxLogKeep {
			return fmt.Errorf("log_keep: %q should be a number of rotated files, 1 to %d", v, maxLogKeep)
		}
		editLogRotate(t).Keep = n
	}
	return nil
}

// maxLogKeep bounds log_keep: the rotated files a run's output is looked
// for in.
const maxLogKeep = 1000

// clearLogRotate resets a log rotation attribute.
func clearLogRotate(t *job.Task, key string) {
	if t.Extras().LogRotate == nil {
		return
	}
	r := editLogRotate(t)
	switch key {
	case "log_rotate_size":
		r.Size = 0
	case "log_rotate_age":
		r.Age = 0
	case "log_keep":
		r.Keep = 0
	}
	t.Compact()
}

// addLogRotate adds the set log rotation attributes, as Attrs does.
func addLogRotate(add func(k, v string), x *job.Extra) {
	r := x.LogRotate
	if r == nil {
		return
	}
	switch {
	case r.Size < 0:
		add("log_rotate_size", "0")
	case r.Size > 0:
		add("log_rotate_size", job.FormatSize(r.Size))
	}
	switch {
	case r.Age < 0:
		add("log_rotate_age", "0")
	case r.Age > 0:
		add("log_rotate_age", r.Age.Retention())
	}
	if r.Keep > 0 {
		add("log_keep", strconv.Itoa(r.Keep))
	}
}
