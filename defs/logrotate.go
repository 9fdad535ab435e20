package defs

import (
	"fmt"
	"strconv"
	"time"

	"github.com/gnomon-sched/gnomon/job"
)

// logRotateTable holds the attributes of a task's own log rotation
// (job.LogRotation), over the server's --log-rotate-size,
// --log-rotate-age and --log-keep. "0" turns the server's size or age
// off for the task. On a group they are its members' (each one a member
// leaves to the server).
var logRotateTable = []attr{
	{name: "log_rotate_size", on: onTask | onGroup,
		setFunc: func(t *job.Task, v string) error {
			n, err := job.ParseSize(v)
			if err != nil {
				return fmt.Errorf("log_rotate_size: %w; or 0 for none", err)
			}
			if n == 0 {
				n = job.Off
			}
			editLogRotate(t).Size = n
			return nil
		},
		clearFunc: clearLogRotate(func(r *job.LogRotation) { r.Size = 0 }),
		formatFunc: func(t *job.Task) string {
			switch r := t.Extras().LogRotate; {
			case r == nil || r.Size == 0:
				return ""
			case r.Size < 0:
				return "0"
			default:
				return job.FormatSize(r.Size)
			}
		}},
	{name: "log_rotate_age", on: onTask | onGroup,
		setFunc: func(t *job.Task, v string) error {
			var d time.Duration = job.Off
			if v != "0" {
				var err error
				if d, err = job.ParseAge(v); err != nil {
					return fmt.Errorf("log_rotate_age: %w; or 0 for none", err)
				}
			}
			editLogRotate(t).Age = job.Duration(d)
			return nil
		},
		clearFunc: clearLogRotate(func(r *job.LogRotation) { r.Age = 0 }),
		formatFunc: func(t *job.Task) string {
			switch r := t.Extras().LogRotate; {
			case r == nil || r.Age == 0:
				return ""
			case r.Age < 0:
				return "0"
			default:
				return r.Age.Retention()
			}
		}},
	{name: "log_keep", on: onTask | onGroup,
		setFunc: func(t *job.Task, v string) error {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > maxLogKeep {
				return fmt.Errorf("log_keep: %q should be a number of rotated files, 1 to %d", v, maxLogKeep)
			}
			editLogRotate(t).Keep = n
			return nil
		},
		clearFunc: clearLogRotate(func(r *job.LogRotation) { r.Keep = 0 }),
		formatFunc: func(t *job.Task) string {
			if r := t.Extras().LogRotate; r != nil {
				return positive(r.Keep)
			}
			return ""
		}},
}

// editLogRotate returns the task's own log rotation for setting it.
func editLogRotate(t *job.Task) *job.LogRotation {
	x := t.Edit()
	if x.LogRotate == nil {
		x.LogRotate = &job.LogRotation{}
	}
	return x.LogRotate
}

// maxLogKeep bounds log_keep: the rotated files a run's output is looked
// for in.
const maxLogKeep = 1000

// clearLogRotate returns the clearer of a log rotation attribute: it
// resets the attribute, and drops a rotation left empty.
func clearLogRotate(reset func(r *job.LogRotation)) func(t *job.Task) {
	return func(t *job.Task) {
		if t.Extras().LogRotate == nil {
			return
		}
		reset(editLogRotate(t))
		t.Compact()
	}
}
