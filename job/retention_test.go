package job

import (
	"testing"
	"time"
)

func TestParseRetention(t *testing.T) {
	t.Parallel()
	day := 24 * time.Hour
	for _, c := range []struct {
		in   string
		want Duration
		text string
	}{
		{"forever", Forever, "forever"},
		{"90d", Duration(90 * day), "90d"},
		{"2w", Duration(14 * day), "14d"},
		{"730d", Duration(730 * day), "2y"},
		{"7y", Duration(7 * 365 * day), "7y"},
		{"36h", Duration(36 * time.Hour), "36h0m0s"},
		{"48h", Duration(2 * day), "2d"},
		{"90m", Duration(90 * time.Minute), "1h30m0s"},
	} {
		got, err := ParseRetention(c.in)
		if err != nil || got != c.want || got.Retention() != c.text {
			t.Errorf("ParseRetention(%q) = %v (%s), %v; want %v (%s)", c.in, got, got.Retention(), err, c.want, c.text)
		}
	}
	for _, in := range []string{"", "0d", "-3d", "1.5d", "d", "forever ", "0", "-1h", "99999999999999y", "3 days"} {
		if got, err := ParseRetention(in); err == nil {
			t.Errorf("ParseRetention(%q) = %v, want an error", in, got)
		}
	}
}

func FuzzParseRetention(f *testing.F) {
	for _, s := range []string{"forever", "90d", "2w", "7y", "36h", "0d", "-1h", "1.5d", "99999999999999y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseRetention(s)
		if err != nil {
			return
		}
		if d == 0 || d < 0 && d != Forever {
			t.Fatalf("ParseRetention(%q) = %v", s, d)
		}
		back, err := ParseRetention(d.Retention())
		if err != nil || back != d {
			t.Fatalf("%q -> %v -> %q -> %v, %v", s, d, d.Retention(), back, err)
		}
	})
}
