package cli

import (
	"fmt"
	"strconv"
	"strings"
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

var sizeUnits = []struct {
	name  string
	shift uint
}{{"G", 30}, {"M", 20}, {"K", 10}}

// parseSize reads a size: 0, or a positive whole number of bytes with an
// optional unit (see sizeFlag).
func parseSize(s string) (int64, error) {
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

// formatSize writes a size as parseSize reads it, in the largest unit
// that divides it.
func formatSize(n int64) string {
	for _, u := range sizeUnits {
		if n%(1<<u.shift) == 0 {
			return strconv.FormatInt(n>>u.shift, 10) + u.name
		}
	}
	return strconv.FormatInt(n, 10)
}

// setLogRotation sets --log-rotate-size or --log-keep from its text (for
// tests, as the flags do).
func (c *ServerConfig) setLogRotation(flag, v string) error {
	switch flag {
	case "log-rotate-size":
		return sizeFlag{&c.LogRotation.Size}.Set(v)
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
