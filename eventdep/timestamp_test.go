package eventdep

import (
	"strings"
	"testing"
	"time"
)

func TestParseTimestamp(t *testing.T) {
	t.Parallel()
	ok := map[string]string{
		"2021-01-01 11:59:59":            "2021-01-01T11:59:59Z",
		"2021-01-01T11:59:59":            "2021-01-01T11:59:59Z",
		"2021-01-01T11:59:59Z":           "2021-01-01T11:59:59Z",
		"2021-01-01T11:59:59.5Z":         "2021-01-01T11:59:59.5Z",
		"2021-01-01T11:59:59.123456789Z": "2021-01-01T11:59:59.123456789Z",
		"2021-01-01T11:59:59.000001":     "2021-01-01T11:59:59.000001Z",
		"2021-01-01T13:59:59+02:00":      "2021-01-01T11:59:59Z",
		"2021-01-01T06:29:59-05:30":      "2021-01-01T11:59:59Z",
		"2020-02-29T00:00:00Z":           "2020-02-29T00:00:00Z",
		"2021-01-01T00:30:00+01:00":      "2020-12-31T23:30:00Z",
		"1970-01-01T00:00:00Z":           "1970-01-01T00:00:00Z",
		"2262-04-11T23:47:16Z":           "2262-04-11T23:47:16Z",
	}
	for in, want := range ok {
		got, err := ParseTimestamp(in)
		if err != nil {
			t.Errorf("%q: %v", in, err)
			continue
		}
		if got.Format(time.RFC3339Nano) != want || got.Location() != time.UTC {
			t.Errorf("%q = %s, want %s", in, got.Format(time.RFC3339Nano), want)
		}
	}
	bad := map[string]string{
		"":                                "expected 4 digits",
		"2021-01-01":                      "expected 'T' or a space",
		"2021-01-01T11:59":                "expected ':'",
		"2021-01-01t11:59:59":             "expected 'T'",
		"2021-01-01T11:59:59z":            "expected 'Z'",
		"2021-01-01T11:59:59.":            "1 to 9 digits",
		"2021-01-01T11:59:59.1234567891Z": "more than 9 fraction digits",
		"2021-01-01T11:59:59+0200":        "expected ':'",
		"2021-01-01T11:59:59+02":          "expected ':'",
		"2021-02-30T00:00:00Z":            "date does not exist",
		"2021-13-01T00:00:00Z":            "date does not exist",
		"2021-00-10T00:00:00Z":            "date does not exist",
		"2021-02-29T00:00:00Z":            "date does not exist",
		"2021-01-01T25:00:00Z":            "time of day does not exist",
		"2021-01-01T23:60:00Z":            "time of day does not exist",
		"2021-01-01T23:59:60Z":            "time of day does not exist",
		"2021-01-01T11:59:59+24:00":       "offset is out of range",
		"1609502399":                      "expected '-'",
		"2021-01-01T11:59:59Z ":           "unexpected text",
		" 2021-01-01T11:59:59Z":           "expected 4 digits",
		"2021-1-01T11:59:59Z":             "expected 2 digits",
		"9999-12-31T23:59:59Z":            "out of the supported range",
		"1600-01-01T00:00:00Z":            "out of the supported range",
		"２０２1-01-01T11:59:59Z":            "expected 4 digits",
	}
	for in, want := range bad {
		_, err := ParseTimestamp(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want one containing %q", in, err, want)
		}
	}
}

// FuzzParseTimestamp checks that whatever parses formats back to the same
// instant through the standard library, and that nothing panics.
func FuzzParseTimestamp(f *testing.F) {
	for _, s := range []string{"2021-01-01 11:59:59", "2021-01-01T11:59:59.123Z", "2021-01-01T11:59:59-05:30", "2021-02-29T00:00:00Z", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseTimestamp(s)
		if err != nil {
			return
		}
		// The grammar is a subset of RFC 3339 once the separator and zone
		// are normalised.
		norm := strings.Replace(s, " ", "T", 1)
		if !strings.HasSuffix(norm, "Z") && !strings.ContainsAny(norm[19:], "+-") {
			norm += "Z"
		}
		want, err := time.Parse(time.RFC3339Nano, norm)
		if err != nil {
			t.Fatalf("%q parsed as %v but the standard library refuses %q: %v", s, got, norm, err)
		}
		if !got.Equal(want) {
			t.Fatalf("%q = %v, the standard library reads %v", s, got, want)
		}
	})
}
