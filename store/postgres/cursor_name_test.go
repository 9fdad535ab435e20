package postgres

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzCursorName: every name comes back from its stored form, which
// PostgreSQL's text can hold; a name it can hold is stored as it is.
func FuzzCursorName(f *testing.F) {
	for _, s := range []string{"", "cluster.fires", "watch\x00task\x00/in/a.csv", "watch\x00t\x00/in/caf\xe9.csv", "hex:41", "hex:zz", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		enc := encodeName(name)
		if !utf8.ValidString(enc) || strings.ContainsRune(enc, 0) {
			t.Fatalf("encodeName(%q) = %q: not text PostgreSQL holds", name, enc)
		}
		if got := decodeName(enc); got != name {
			t.Fatalf("decodeName(encodeName(%q)) = %q", name, got)
		}
		if utf8.ValidString(name) && !strings.ContainsRune(name, 0) && !strings.HasPrefix(name, hexPrefix) && enc != name {
			t.Fatalf("encodeName(%q) = %q, want it as it is", name, enc)
		}
	})
}
