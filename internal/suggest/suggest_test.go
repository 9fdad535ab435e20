package suggest

import (
	"slices"
	"testing"
	"unicode/utf8"
)

func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"", "abc", 3},
		{"abc", "", 3},
		{"start", "start", 0},
		{"strat", "start", 1},    // transposition
		{"jbo", "job", 1},        // transposition
		{"comand", "command", 1}, // insertion
		{"nightly_bakup", "nightly_backup", 1},
		{"kitten", "sitting", 3},
		{"ca", "abc", 3}, // optimal string alignment: no substring edited twice
		{"été", "ete", 2},
		{"Start", "start", 1},
	} {
		if got := Distance(c.a, c.b); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
		if got := Distance(c.b, c.a); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d (symmetry)", c.b, c.a, got, c.want)
		}
	}
}

func TestClosest(t *testing.T) {
	tasks := []string{"nightly_backup", "nightly_report", "demo_flow", "demo_report", "extract"}
	events := []string{"start", "abort", "freeze", "reset", "green", "red"}
	flags := []string{"--job", "--count", "--date", "--output", "--fires", "--server", "--ca-cert"}
	for _, c := range []struct {
		word  string
		names []string
		want  []string
	}{
		{"nightly_bakup", tasks, []string{"nightly_backup"}},
		{"NIGHTLY_BACKUP", tasks, []string{"nightly_backup"}}, // case aside
		{"demo_reprot", tasks, []string{"demo_report"}},
		{"nightly", tasks, []string{"nightly_backup", "nightly_report"}}, // a prefix
		{"nightly_backup", tasks, nil},                                   // known
		{"zzz", tasks, nil},
		{"strat", events, []string{"start"}},
		{"gren", events, []string{"green"}},
		{"rd", events, []string{"red"}},
		{"x", events, nil}, // one rune: nothing within one edit but nothing begins with it either
		{"--jbo", flags, []string{"--job"}},
		{"--ca", flags, []string{"--ca-cert"}},
		{"--servre", flags, []string{"--server"}},
	} {
		if got := Closest(c.word, c.names); !slices.Equal(got, c.want) {
			t.Errorf("Closest(%q) = %q, want %q", c.word, got, c.want)
		}
	}
	many := []string{"a1", "a2", "a3", "a4", "a5"}
	if got := Closest("a0", many); len(got) != MaxSuggestions || got[0] != "a1" {
		t.Errorf("Closest(a0) = %q, want the first %d in order", got, MaxSuggestions)
	}
}

func TestPhrase(t *testing.T) {
	if got := Phrase(nil, nil); got != "" {
		t.Errorf("Phrase(nil) = %q", got)
	}
	if got, want := Phrase([]string{"a", "b"}, func(s string) string { return "--" + s }), "did you mean --a or --b?"; got != want {
		t.Errorf("Phrase = %q, want %q", got, want)
	}
}

// FuzzDistance checks the properties of a distance on any two strings:
// zero exactly for equal strings, symmetric, at most the longer length and
// at least the difference of the lengths.
func FuzzDistance(f *testing.F) {
	f.Add("strat", "start")
	f.Add("", "abc")
	f.Add("été", "ete")
	f.Fuzz(func(t *testing.T, a, b string) {
		if !utf8.ValidString(a) || !utf8.ValidString(b) {
			return
		}
		d := Distance(a, b)
		la, lb := len([]rune(a)), len([]rune(b))
		if (d == 0) != (a == b) {
			t.Fatalf("Distance(%q, %q) = %d", a, b, d)
		}
		if d != Distance(b, a) {
			t.Fatalf("Distance(%q, %q) is not symmetric", a, b)
		}
		if d > max(la, lb) || d < max(la-lb, lb-la) {
			t.Fatalf("Distance(%q, %q) = %d out of bounds", a, b, d)
		}
	})
}
