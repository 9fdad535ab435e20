// Package termsafe writes stored strings so that a terminal shows them and
// never obeys them. A task name, a resource id or a message may hold an
// escape sequence (ESC [ ... m recolours the screen; other sequences move
// the cursor or retitle the window), a carriage return that hides what
// came before it on the line, or a bidirectional override that shows text
// in another order than it is stored. What the command line prints of such
// strings goes through String, which writes those characters as escapes.
package termsafe

import (
	"strings"
	"unicode/utf8"
)

// Unsafe reports whether a terminal may act on r instead of showing it:
// the C0 controls (tab and newline included), DEL, the C1 controls, and the
// bidirectional embeddings, overrides and isolates (U+202A-U+202E,
// U+2066-U+2069), which reorder the text around them.
func Unsafe(r rune) bool {
	return r < 0x20 || (r >= 0x7f && r <= 0x9f) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069)
}

// String returns s with every unsafe character (see Unsafe) and every
// byte that is not UTF-8 written as an escape, so that the result holds
// only printable text and prints on one line: \t, \n and \r for tab,
// newline and carriage return, \x1b for the other C0 controls and DEL,
// \u0085 for a C1 control, \u202e for a bidirectional character, and \xff
// for a byte that is not UTF-8. Everything else, non-ASCII letters
// included, is left as it is; a string with nothing to escape is returned
// unchanged. A backslash is not escaped: the result is for reading, not
// for reading back.
func String(s string) string {
	i := firstUnsafe(s)
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			writeHex(&b, `\x`, uint32(s[i]), 2)
		case !Unsafe(r):
			b.WriteString(s[i : i+n])
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x80:
			writeHex(&b, `\x`, uint32(r), 2)
		default:
			writeHex(&b, `\u`, uint32(r), 4)
		}
		i += n
	}
	return b.String()
}

// firstUnsafe returns the offset of the first byte of s that String
// escapes, or len(s).
func firstUnsafe(s string) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < 0x7f {
			i++
			continue
		}
		if c < 0x80 {
			return i
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n == 1) || Unsafe(r) {
			return i
		}
		i += n
	}
	return len(s)
}

func writeHex(b *strings.Builder, prefix string, v uint32, digits int) {
	const hex = "0123456789abcdef"
	b.WriteString(prefix)
	for d := digits - 1; d >= 0; d-- {
		b.WriteByte(hex[v>>(4*d)&0xf])
	}
}
