package periods

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gnomon-sched/gnomon/internal/termsafe"
)

// oneLevel is a tree file of one tree of one level, whose level's members
// (after process and qualifier) are given.
func oneLevel(tree, process, more string) string {
	return `{"settings": {"startTimeperiod": "2024010100"}, "trees": [{"name": "` + tree + `", "levels": [
  {"process": "` + process + `", "qualifier": "hourly"` + more + `}]}]}`
}

// TestParseText checks what strings may hold; each refusal names the
// file, line and JSON path.
func TestParseText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, text string
		want       []string
	}{
		{"not UTF-8", oneLevel("a", "p", `, "command": "echo caf`+"\xe9"+`"`), []string{
			`sites.json:2: not UTF-8 text: byte 0xe9 (column 63) is not UTF-8; save the file as UTF-8`}},
		{"not UTF-8 in a key", "{\"trees\": [], \"x\xff\": 1}", []string{
			`sites.json:1: not UTF-8 text: byte 0xff (column 17) is not UTF-8; save the file as UTF-8`}},
		{"NUL in a command", oneLevel("a", "p", `, "command": "echo a\u0000b"`), []string{
			`sites.json:2: trees[0].levels[0].command: holds a NUL character (\u0000)`}},
		{"escape in a command", oneLevel("a", "p", `, "command": "echo \u001b[2J"`), []string{
			`sites.json:2: trees[0].levels[0].command: holds the control character U+001B (a command holds printable text, tabs and newlines)`}},
		{"carriage return in a command", oneLevel("a", "p", `, "command": "rm -rf /x\rtrue"`), []string{
			`sites.json:2: trees[0].levels[0].command: holds the control character U+000D (a command holds printable text, tabs and newlines)`}},
		{"C1 in a command", oneLevel("a", "p", `, "command": "echo \u009b"`), []string{
			`sites.json:2: trees[0].levels[0].command: holds the control character U+009B (a command holds printable text, tabs and newlines)`}},
		{"bidi in a command", oneLevel("a", "p", `, "command": "echo \u2067"`), []string{
			`sites.json:2: trees[0].levels[0].command: holds the bidirectional formatting character U+2067, which shows the text around it in another order than it runs`}},
		{"NUL in a tree name", oneLevel("a\\u0000", "p", ""), []string{
			`sites.json:1: trees[0].name: holds a NUL character (\u0000)`}},
		{"escape in a tree name", oneLevel("a\\u001b[31m", "p", ""), []string{
			`sites.json:1: trees[0].name: tree name "a\x1b[31m": use only letters, digits and underscores`}},
		{"C1 in a process name", oneLevel("a", "p\u0085", ""), []string{
			`sites.json:2: trees[0].levels[0].process: process name "p\u0085": use only letters, digits and underscores`}},
		{"DEL in a function name", oneLevel("a", "p", `, "function": "f`+"\x7f"+`"`), []string{
			`sites.json:2: trees[0].levels[0].function: function name "f\x7f": use only letters, digits and underscores`}},
		{"half a pair in an address", oneLevel("a", "p", `, "alertOn": ["failure"], "alertTo": ["ops@example.com\udc00"]`), []string{
			`sites.json:2: trees[0].levels[0].alertTo[0]: holds \udc00, half of a surrogate pair without its other half: not a character`}},
		{"escape in an unknown key", oneLevel("a", "p", `, "x\u001b[2J": 1`), []string{
			`sites.json:2: trees[0].levels[0].x\x1b[2J: unknown key (want one of process, qualifier, stateMachine, blocking, command, owner, function, every, alertOn, alertTo)`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := problems(t, tt.text, Options{})
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("problems (-want +got):\n%s", d)
			}
			for _, p := range got {
				if strings.ContainsFunc(p, termsafe.Unsafe) {
					t.Errorf("problem %q holds a control character", p)
				}
			}
		})
	}
	// A command may hold tabs, newlines (a script of several lines) and
	// letters of any script.
	f, err := Parse("a.json", []byte(oneLevel("a", "p", `, "command": "set -e\n\tcd /données\n\trun 日本"`)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c := f.Trees[0].Levels[0].Command; c != "set -e\n\tcd /données\n\trun 日本" {
		t.Errorf("command %q", c)
	}
}

// TestFormatEscapes checks that Format writes the characters a terminal
// would act on as JSON escapes, and that a restore reads back a file with
// a command that Parse now refuses, as an earlier version stored it.
func TestFormatEscapes(t *testing.T) {
	t.Parallel()
	f := &File{Settings: Settings{StartTimeperiod: 2024010100}, Trees: []Tree{{Name: "a", Levels: []Level{
		{Process: "a_hourly", Qualifier: Hourly, Command: "echo \x1b[31m\x7f\u0085\u202e\x00 done\n"},
	}}}}
	text := Format(f)
	if !strings.Contains(string(text), `"command": "echo \u001b[31m\u007f\u0085\u202e\u0000 done\n"`) {
		t.Errorf("Format wrote\n%s", text)
	}
	for _, r := range string(text) {
		if r != '\n' && termsafe.Unsafe(r) {
			t.Errorf("Format wrote %U:\n%s", r, text)
		}
	}
	if _, err := Parse("a.json", text, Options{}); err == nil || !strings.Contains(err.Error(), "trees[0].levels[0].command: holds a NUL character") {
		t.Errorf("Parse: %v", err)
	}
	back, err := Parse("a.json", text, Options{stored: true})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(f, back); d != "" {
		t.Errorf("stored round trip (-want +got):\n%s", d)
	}
	forest := New(Config{})
	if err := forest.Restore(Snapshot{Now: parseTime(t, "2024-01-01T02:00"), Files: []SnapshotFile{{Name: "a.json", Text: string(text)}}}); err != nil {
		t.Fatalf("Restore: %v", err)
	}
	if got, ok := forest.Definition("a.json"); !ok || got.Trees[0].Levels[0].Command != f.Trees[0].Levels[0].Command {
		t.Errorf("restored %+v", got)
	}
}
