package engine

import (
	"strings"
	"testing"
	"time"
)

func TestFormatInstants(t *testing.T) {
	t.Parallel()
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Fatal(err)
	}
	local := func(t time.Time) string { return t.In(paris).Format("2006-01-02 15:04:05") }
	for in, want := range map[string]string{
		"a is running since 2026-11-28T10:00:00Z (run 3)":                 "a is running since 2026-11-28 11:00:00 (run 3)",
		"next at 2026-03-29T00:30:00Z, then 2026-03-29T01:30:00.5Z":       "next at 2026-03-29 01:30:00, then 2026-03-29 03:30:00",
		"the occurrence at 2026-11-28T11:00:00+01:00 ran: run 7, success": "the occurrence at 2026-11-28 11:00:00 ran: run 7, success",
		"no instant here, nor 2026-11-28 or 2026-13-45T99:99:99Z":         "no instant here, nor 2026-11-28 or 2026-13-45T99:99:99Z",
	} {
		if got := FormatInstants(in, local); got != want {
			t.Errorf("FormatInstants(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzFormatInstants(f *testing.F) {
	f.Add("a is running since 2026-11-28T10:00:00Z (run 3)")
	f.Add("2026-11-28T11:00:00+01:00 and 2026-13-45T99:99:99Z")
	f.Fuzz(func(t *testing.T, s string) {
		// Every instant it can read goes: once done, doing it again
		// changes nothing, and what is left of the text is kept.
		mark := func(time.Time) string { return "<instant>" }
		once := FormatInstants(s, mark)
		if twice := FormatInstants(once, mark); twice != once {
			t.Errorf("FormatInstants(%q) = %q, then %q", s, once, twice)
		}
		if strings.ReplaceAll(once, "<instant>", "") == "" && s != "" && !instantText.MatchString(s) {
			t.Errorf("FormatInstants(%q) lost the text: %q", s, once)
		}
	})
}
