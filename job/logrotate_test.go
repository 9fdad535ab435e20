package job

import (
	"testing"
	"time"
)

func TestParseAge(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]time.Duration{"7d": 7 * 24 * time.Hour, "2w": 14 * 24 * time.Hour, "24h": 24 * time.Hour, "90m": 90 * time.Minute} {
		if got, err := ParseAge(in); err != nil || got != want {
			t.Errorf("ParseAge(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0", "forever", "-1d", "0d", "soon", "1.5d"} {
		if got, err := ParseAge(in); err == nil {
			t.Errorf("ParseAge(%q) = %v, want an error", in, got)
		}
	}
}

func FuzzParseAge(f *testing.F) {
	for _, s := range []string{"7d", "2w", "24h", "forever", "0", "-1h", "9999999999y", "1h30m"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseAge(s)
		if err != nil {
			return
		}
		if d <= 0 {
			t.Fatalf("ParseAge(%q) = %v", s, d)
		}
		if back, err := ParseAge(Duration(d).Retention()); err != nil || back != d {
			t.Fatalf("%q -> %v -> %q -> %v, %v", s, d, Duration(d).Retention(), back, err)
		}
	})
}
