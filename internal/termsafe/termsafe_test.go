package termsafe

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestString(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"", ""},
		{"nightly_load", "nightly_load"},
		{"/landing/Ünïcode/日本語.csv", "/landing/Ünïcode/日本語.csv"},
		{`C:\temp\x1b`, `C:\temp\x1b`}, // a backslash is text
		{"\x1b[31mred\x1b[0m", `\x1b[31mred\x1b[0m`},
		{"a\tb\nc\rd", `a\tb\nc\rd`},
		{"nul\x00", `nul\x00`},
		{"del\x7f", `del\x7f`},
		{"\u0085next line, \u009bCSI", `\u0085next line, \u009bCSI`},
		{"abc\u202edef", `abc\u202edef`},
		{"\u202a\u202b\u202c\u202d\u2066\u2067\u2068\u2069", `\u202a\u202b\u202c\u202d\u2066\u2067\u2068\u2069`},
		{"\u2029 and \u200f stay", "\u2029 and \u200f stay"}, // not in the set the terminal acts on
		{"bad \xff byte, cut \xe2\x80", `bad \xff byte, cut \xe2\x80`},
		{"\xc2\x9b", `\u009b`}, // C1 as UTF-8
		{"\x9b", `\x9b`},       // a lone byte that an 8-bit terminal reads as CSI
	}
	for _, tt := range tests {
		if got := String(tt.in); got != tt.want {
			t.Errorf("String(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestUnsafe(t *testing.T) {
	t.Parallel()
	for r := rune(0); r <= 0x2100; r++ {
		want := r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069)
		if Unsafe(r) != want {
			t.Errorf("Unsafe(%U) = %v", r, !want)
		}
	}
}

// Not parallel: AllocsPerRun counts the allocations of the whole process.
func TestStringDoesNotCopyCleanText(t *testing.T) {
	s := strings.Repeat("plain text, été ", 64)
	if n := testing.AllocsPerRun(100, func() { _ = String(s) }); n != 0 {
		t.Errorf("String of clean text allocates %v times", n)
	}
}

func ExampleString() {
	fmt.Println(String("report\x1b[2J.csv"))
	fmt.Println(String("invoice_\u202eexe.pdf"))
	fmt.Println(String("café"))
	// Output:
	// report\x1b[2J.csv
	// invoice_\u202eexe.pdf
	// café
}

// FuzzString checks that what String returns holds no unsafe character and
// is UTF-8, and that a UTF-8 string without unsafe characters comes back as
// it is.
func FuzzString(f *testing.F) {
	for _, s := range []string{"", "plain", "\x1b[31m", "a\tb\nc", "\u202e", "\xff\xfe", "\xe2\x80\xae", "\xc2\x85", "日本"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := String(s)
		if !utf8.ValidString(out) {
			t.Fatalf("String(%q) = %q: not UTF-8", s, out)
		}
		for _, r := range out {
			if Unsafe(r) {
				t.Fatalf("String(%q) = %q holds %U", s, out, r)
			}
		}
		clean := utf8.ValidString(s) && !strings.ContainsFunc(s, Unsafe)
		if clean != (out == s) {
			t.Fatalf("String(%q) = %q: clean %v", s, out, clean)
		}
	})
}
