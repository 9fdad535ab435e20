package engine

import (
	"regexp"
	"time"
)

// instant matches an instant as the engine writes one in a text (RFC 3339,
// in UTC) and as the API writes one in the server's zone (with its offset).
var instantText = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)`)

// FormatInstants rewrites each instant a text holds (a Reason's, for
// one: see Why) with format, so that a reader shows every time of a page
// or a command's output alike.
func FormatInstants(text string, format func(time.Time) string) string {
	return instantText.ReplaceAllStringFunc(text, func(s string) string {
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return s
		}
		return format(t)
	})
}
