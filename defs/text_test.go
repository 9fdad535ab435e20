package defs

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gnomon-sched/gnomon/job"
)

// TestText checks what a file may hold: UTF-8, and names and values of
// printable text; each refusal names the file, the line and the field.
func TestText(t *testing.T) {
	t.Parallel()
	const cfg = `{"name":"c","dependencies":[{"type":"TABLE","resourceId":"t","lifeDuration":0}]`
	tests := []struct {
		name, text string
		want       string // the whole error, as Error() writes it
	}{
		{"not UTF-8", "update_task: a\nlabel: caf\xe9\n", "f.def:2: not UTF-8 text: byte 0xe9 (column 11) is not UTF-8; save the file as UTF-8"},
		{"not UTF-8 in a comment", "# r\xc3sum\xc3\n", "f.def:1: not UTF-8 text: byte 0xc3 (column 4) is not UTF-8; save the file as UTF-8"},
		{"not UTF-8 in JSON", "[\n" + cfg + `,"command":"echo ` + "\xff\"}]", "f.def:2: not UTF-8 text: byte 0xff (column 97) is not UTF-8; save the file as UTF-8"},
		{"NUL in a command", "update_task: a\ncommand: echo a\x00b\n", "f.def:2: update_task a: command: holds a NUL character"},
		{"NUL in a label", "update_task: a\nlabel: x\x00\n", "f.def:2: update_task a: label: holds a NUL character"},
		{"escape in a command", "update_task: a\ncommand: echo \x1b[2J\n", `f.def:2: update_task a: command: holds the control character U+001B (a definition holds printable text and tabs only)`},
		{"carriage return in a command", "update_task: a\ncommand: rm -rf /tmp/x\rtrue\n", `f.def:2: update_task a: command: holds the control character U+000D (a definition holds printable text and tabs only)`},
		{"DEL in a log file", "update_task: a\nout_log_file: /tmp/a\x7f\n", `f.def:2: update_task a: out_log_file: holds the control character U+007F (a definition holds printable text and tabs only)`},
		{"C1 in a machine", "update_task: a\nmachine: host\u009b1\n", `f.def:2: update_task a: machine: holds the control character U+009B (a definition holds printable text and tabs only)`},
		{"bidi in a command", "update_task: a\ncommand: echo \u202e ok\n", `f.def:2: update_task a: command: holds the bidirectional formatting character U+202E, which shows the text around it in another order than it is read`},
		{"control in a timezone", "update_task: a\ntimezone: Europe/Paris\x1b\n", `f.def:2: update_task a: timezone: holds the control character U+001B (a definition holds printable text and tabs only)`},
		{"control in a group's jobs", "insert_group: g\njobs: a,\x1bb\n", `f.def:2: insert_group g: jobs: holds the control character U+001B (a definition holds printable text and tabs only)`},
		{"control in a parent", "update_task: a\nparent: box\x1b\n", `f.def:2: update_task a: parent: holds the control character U+001B (a definition holds printable text and tabs only)`},
		{"control in a task name", "insert_task: a\x1b[31mb\n" + callable, `f.def:1: insert_task a\x1b[31mb: task name can only contain alpha numeric and underscore chars: it holds the control character U+001B (a definition holds printable text and tabs only)`},
		{"NUL in a group name", "insert_group: g\x00\njobs: a\n", `f.def:1: insert_group g\x00: task name can only contain alpha numeric and underscore chars: it holds a NUL character`},
		{"control in a deleted name", "delete_task: a\u0085b\n", `f.def:1: delete_task a\u0085b: task name can only contain alpha numeric and underscore chars: it holds the control character U+0085 (a definition holds printable text and tabs only)`},
		{"bell in a label", "update_task: a\nlabel: \x07\n", `f.def:2: update_task a: label: holds the control character U+0007 (a definition holds printable text and tabs only)`},
		{"NUL in a resource id", "insert_task: c\ntype: configuration\ndependencies: [{\"type\":\"FILE\",\"resourceId\":\"/in/\\u0000\",\"lifeDuration\":0}]\n", `f.def:3: insert_task c: dependencies: dependencies[0].resourceId: holds a NUL character (\u0000)`},
		{"raw bidi in the dependencies line", "insert_task: c\ntype: configuration\ndependencies: [{\"type\":\"FILE\",\"resourceId\":\"/in/\u202e\",\"lifeDuration\":0}]\n", `f.def:3: insert_task c: dependencies: holds the bidirectional formatting character U+202E, which shows the text around it in another order than it is read`},
		{"JSON: NUL in a command", cfg + `,"command":"x\u0000","out_log_file":"/o","err_log_file":"/e"}`, `f.def:1: configuration c: command: holds a NUL character (\u0000)`},
		{"JSON: control in a command", cfg + `,"command":"x\u001b[2J","out_log_file":"/o","err_log_file":"/e"}`, `f.def:1: insert_task c: command: holds the control character U+001B (a definition holds printable text and tabs only)`},
		{"JSON: newline in a command", cfg + `,"command":"a\nb","out_log_file":"/o","err_log_file":"/e"}`, `f.def:1: insert_task c: command: holds the control character U+000A (a definition holds printable text and tabs only)`},
		{"JSON: control in a name", `{"name":"c\u001b","dependencies":[{"type":"TABLE","resourceId":"t","lifeDuration":0}]}`, `f.def:1: insert_task c\x1b: task name can only contain alpha numeric and underscore chars: it holds the control character U+001B (a definition holds printable text and tabs only)`},
		{"JSON: half a surrogate pair", cfg + `,"label":"\udc00"}`, `f.def:1: configuration c: label: holds \udc00, half of a surrogate pair without its other half: not a character`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cur := load(t, base)
			before := fmt.Sprint(cur)
			_, err := run(cur, tt.text)
			var errs Errors
			if !errors.As(err, &errs) {
				t.Fatalf("err = %v, want Errors", err)
			}
			if errs[0].Error() != tt.want || len(errs) > 1 && errs[1].Line == errs[0].Line && !strings.HasSuffix(errs[1].Msg, "not exist") {
				t.Errorf("errors:\n%v\nwant first, and alone on its line\n%s", err, tt.want)
			}
			if fmt.Sprint(cur) != before {
				t.Error("a rejected file changed the current definitions")
			}
		})
	}
}

// TestTextKept checks what a file may hold: tabs, letters of any script,
// and any character but NUL in a resource id, written as a JSON escape;
// Format writes such an id as an escape, and what it writes applies again.
func TestTextKept(t *testing.T) {
	t.Parallel()
	res, err := run(nil, "insert_task: t\n"+
		"type: callable\ncommand: printf 'a\\tb'\t| tr a b\nout_log_file: /tmp/été/日本.out\nerr_log_file: /tmp/e\nlabel: Ünïcödé\n\n"+
		"insert_task: c\ntype: configuration\n"+
		`dependencies: [{"type":"FILE","resourceId":"/in/\u001b[31m\u007f\u0085\u202e\u2066/","lifeDuration":0}]`+"\n")
	if err != nil {
		t.Fatal(err)
	}
	if c := res.Tasks["t"].Command; c != "printf 'a\\tb'\t| tr a b" {
		t.Errorf("command %q", c)
	}
	if r := res.Tasks["c"].Extras().Deps[0].Resource; r != "/in/\x1b[31m\x7f\u0085\u202e\u2066/" {
		t.Errorf("resource id %q", r)
	}
	var b strings.Builder
	if err := Format(&b, []*job.Task{res.Tasks["c"], res.Tasks["t"]}); err != nil {
		t.Fatal(err)
	}
	want := `dependencies: [{"type":"FILE","resourceId":"/in/\u001b[31m\u007f\u0085\u202e\u2066/","lifeDuration":0}]`
	if !strings.Contains(b.String(), want+"\n") {
		t.Errorf("Format wrote\n%s\nwant a line\n%s", b.String(), want)
	}
	again, err := run(nil, b.String())
	if err != nil {
		t.Fatalf("formatted output does not apply: %v\n%s", err, b.String())
	}
	if r := again.Tasks["c"].Extras().Deps[0].Resource; r != res.Tasks["c"].Extras().Deps[0].Resource {
		t.Errorf("resource id read back as %q", r)
	}
}

// TestBounds checks the bounds on a file: MaxActions actions, and the
// errors reported past MaxErrors.
func TestBounds(t *testing.T) {
	t.Parallel()
	deletes := func(n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "delete_task: t%d\n", i)
		}
		return b.String()
	}
	if acts, err := Parse("f.def", deletes(MaxActions)); err != nil || len(acts) != MaxActions {
		t.Fatalf("%d actions: %d parsed, %v", MaxActions, len(acts), err)
	}
	_, err := Parse("f.def", deletes(MaxActions+1))
	if want := fmt.Sprintf("f.def:%d: more than %d definitions in one file: split it", MaxActions+1, MaxActions); err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
	// A configuration in the JSON shape takes 80 bytes at least: such a
	// file reaches MaxFileSize before MaxActions.
	if n := len(`{"name":"c","dependencies":[{"type":"FILE","resourceId":"a","lifeDuration":0}]}`); n*MaxActions <= MaxFileSize {
		t.Errorf("%d configurations of %d bytes fit in MaxFileSize", MaxActions, n)
	}

	// Grammar errors: the file is not read further.
	_, err = Parse("f.def", strings.Repeat("x\n", 3*MaxErrors))
	var errs Errors
	if !errors.As(err, &errs) || len(errs) != MaxErrors+1 {
		t.Fatalf("got %d errors, want %d", len(errs), MaxErrors+1)
	}
	if last := errs[MaxErrors]; last.Line != MaxErrors+2 || last.Msg != "too many errors: more than 1000, the file is not read past this line" {
		t.Errorf("last error %v", last)
	}
	// Errors of meaning: the rest are counted.
	var bad strings.Builder
	for i := range MaxErrors + 500 {
		fmt.Fprintf(&bad, "insert_task: a-%d\n%s", i, callable)
	}
	_, err = run(nil, bad.String())
	if !errors.As(err, &errs) || len(errs) != MaxErrors+1 {
		t.Fatalf("got %d errors, want %d", len(errs), MaxErrors+1)
	}
	if last := errs[MaxErrors]; last.Line != 5*MaxErrors+1 || last.Msg != "too many errors: 500 more from this line on are not shown" {
		t.Errorf("last error %v", last)
	}
}
