package cli

import (
	"fmt"
	"strconv"
	"time"

	"github.com/gnomon-sched/gnomon/job"
)

// sizeFlag is a size in bytes given as a whole number with an optional
// unit, K, M or G (powers of 1024, as logrotate's size), also written
// KiB, MiB, GiB or KB, MB, GB: --log-rotate-size.
type sizeFlag struct{ n *int64 }

func (f sizeFlag) String() string {
	if f.n == nil || *f.n == 0 {
		return "0"
	}
	return formatSize(*f.n)
}

func (f sizeFlag) Set(s string) error {
	n, err := parseSize(s)
	if err != nil {
		return err
	}
	*f.n = n
	return nil
}

func (sizeFlag) Type() string { return "SIZE" }

// parseSize reads a size: 0, or a positive whole number of bytes with an
// optional unit (job.ParseSize).
func parseSize(s string) (int64, error) { return job.ParseSize(s) }

// formatSize writes a size as parseSize reads it (job.FormatSize).
func formatSize(n int64) string { return job.FormatSize(n) }

// ageFlag is an age given as a retention is, without forever (job.ParseAge):
// --log-rotate-age.
type ageFlag struct{ d *time.Duration }

func (f ageFlag) String() string {
	if f.d == nil || *f.d == 0 {
		return "0"
	}
	return job.Duration(*f.d).Retention()
}

func (f ageFlag) Set(s string) error {
	if s == "0" {
		*f.d = 0
		return nil
	}
	d, err := job.ParseAge(s)
	if err != nil {
		return err
	}
	*f.d = d
	return nil
}

func (ageFlag) Type() string { return "AGE" }

// setLogRotation sets --log-rotate-size, --log-rotate-age or --log-keep from its text (for
// tests, as the flags do).
func (c *ServerConfig) setLogRotation(flag, v string) error {
	switch flag {
	case "log-rotate-size":
		return sizeFlag{&c.LogRotation.Size}.Set(v)
	case "log-rotate-age":
		return ageFlag{&c.LogRotation.Age}.Set(v)
	case "log-keep":
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return fmt.Errorf("--log-keep: %q should be a number of files, at least 1", v)
		}
		c.LogRotation.Keep = n
		return nil
	}
	return fmt.Errorf("no flag --%s", flag)
}
