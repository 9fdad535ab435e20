package jsonenc

import (
	"encoding/json"
	"testing"
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
