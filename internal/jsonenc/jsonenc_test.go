package jsonenc

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "db.orders", "FILE:/a b/c", `a"b\c`, "<&>", "é\u2028", "\x00\x1f\x7f", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		got := AppendString([]byte("x"), s)
		if string(got) != "x"+string(want) {
			t.Fatalf("AppendString(%q) = %s, want x%s", s, got, want)
		}
		if plain(s) && string(want) != `"`+s+`"` {
			t.Fatalf("plain(%q), but json.Marshal writes %s", s, want)
		}
	})
}

func TestCheckString(t *testing.T) {
	t.Parallel()
	tests := []struct{ tok, want string }{
		{`""`, ""},
		{`"plain"`, ""},
		{`"a\"b\\c\n\t\u001b\u00e9"`, ""},
		{`"\ud83d\ude00"`, ""}, // 😀 as a pair
		{`"\uD83D\uDE00"`, ""},
		{`"\\u0000"`, ""}, // an escaped backslash, then text
		{`"a\u0000b"`, `holds a NUL character`},
		{`"\ud800"`, `holds \ud800, half of a surrogate pair`},
		{`"\ud800x"`, `holds \ud800`},
		{`"\ud800\u0041"`, `holds \ud800`},
		{`"\ud800\ud800"`, `holds \ud800`},
		{`"\udc00"`, `holds \udc00`},
		{`"\uDFFF\uD800"`, `holds \udfff`},
	}
	for _, tt := range tests {
		got := CheckString([]byte(tt.tok))
		if (tt.want == "") != (got == "") || !strings.HasPrefix(got, tt.want) {
			t.Errorf("CheckString(%s) = %q, want %q", tt.tok, got, tt.want)
		}
	}
}

// FuzzCheckString checks CheckString against encoding/json: a token it
// accepts decodes to a string without NUL that encodes back to the same
// string, so nothing was replaced.
func FuzzCheckString(f *testing.F) {
	for _, s := range []string{`""`, `"\u0000"`, `"\ud800"`, `"\ud83d\ude00"`, `"\\ud800"`, `"\ud800\\"`, `"\ufffd"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, tok string) {
		var s string
		if !utf8.ValidString(tok) || json.Unmarshal([]byte(tok), &s) != nil || !strings.HasPrefix(tok, `"`) {
			return // not a string token
		}
		if CheckString([]byte(tok)) != "" {
			return
		}
		if strings.Contains(s, "\x00") {
			t.Fatalf("%s holds a NUL: %q", tok, s)
		}
		// Every U+FFFD comes from the token, not from the decoder.
		if strings.Count(s, "\ufffd") > strings.Count(tok, "\ufffd")+strings.Count(strings.ToLower(tok), `\ufffd`) {
			t.Fatalf("%s decodes to %q: a U+FFFD was made up", tok, s)
		}
	})
}
