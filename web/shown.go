package web

import (
	"unicode/utf8"

	"github.com/gnomon-sched/gnomon/internal/termsafe"
)

// shown makes a rendered page safe to show: every character a terminal or
// a browser would act on rather than show (see termsafe.Unsafe: escape
// sequences, C1 controls, bidirectional overrides and isolates) is written
// as an escape, \x1b or \u202e, wherever it is on the page. html/template
// escapes what HTML would read, not these: a resource ID holding U+202E
// shows its text reversed, and one holding ESC puts a raw escape sequence
// in a page that a user may copy into a terminal. Tab, newline and
// carriage return are left as they are: they lay out a page and a log.
// The templates hold none of these characters, so only stored strings are
// changed.
func shown(page []byte) []byte {
	i := firstShownUnsafe(page)
	if i == len(page) {
		return page
	}
	out := make([]byte, 0, len(page)+16)
	out = append(out, page[:i]...)
	for i < len(page) {
		r, n := utf8.DecodeRune(page[i:])
		if r == utf8.RuneError && n <= 1 || !shownUnsafe(r) {
			out = append(out, page[i:i+max(n, 1)]...)
			i += max(n, 1)
			continue
		}
		out = append(out, termsafe.String(string(r))...)
		i += n
	}
	return out
}

// shownUnsafe reports whether shown escapes r.
func shownUnsafe(r rune) bool {
	return r != '\t' && r != '\n' && r != '\r' && termsafe.Unsafe(r)
}

// firstShownUnsafe returns the offset of the first character shown
// escapes, or len(page).
func firstShownUnsafe(page []byte) int {
	for i := 0; i < len(page); {
		c := page[i]
		if c >= 0x20 && c < 0x7f || c == '\t' || c == '\n' || c == '\r' {
			i++
			continue
		}
		if c < 0x80 {
			return i
		}
		r, n := utf8.DecodeRune(page[i:])
		if shownUnsafe(r) {
			return i
		}
		i += max(n, 1)
	}
	return len(page)
}
