package cond

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gnomon-sched/gnomon/job"
)

func statuses(m map[string]job.Status) func(string) job.Status {
	return func(n string) job.Status { return m[n] }
}

func TestCanonicalForm(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"SU(a) & ( fa(b) )":   "su(a)&(fa(b))",
		"su(task1)":           "su(task1)",
		"  Nr(x)|su(y)&fa(z)": "nr(x)|su(y)&fa(z)",
		"su(task1) | (((su(task2) & su(task3) | fa(task4)) | nr(task5)) | nr(task6)) & su(task7)": "su(task1)|(((su(task2)&su(task3)|fa(task4))|nr(task5))|nr(task6))&su(task7)",
	} {
		e, err := Parse(in)
		if err != nil {
			t.Fatalf("Parse(%q): %v", in, err)
		}
		if e.String() != want {
			t.Errorf("Parse(%q).String() = %q, want %q", in, e.String(), want)
		}
	}
}

func TestNames(t *testing.T) {
	t.Parallel()
	e := MustParse("su(b) & fa(a) | nr(b)")
	if got := strings.Join(e.Names(), ","); got != "a,b" {
		t.Errorf("Names = %s, want a,b", got)
	}
}

func TestEval(t *testing.T) {
	t.Parallel()
	tests := []struct {
		expr string
		st   map[string]job.Status
		want bool
	}{
		{"su(a)", map[string]job.Status{"a": job.Success}, true},
		{"su(a)", map[string]job.Status{"a": job.Failure}, false},
		{"fa(a)", map[string]job.Status{"a": job.Failure}, true},
		{"fa(a)", map[string]job.Status{"a": job.Aborted}, false}, // aborted is not failure
		{"nr(a)", map[string]job.Status{"a": job.Running}, false},
		{"nr(a)", map[string]job.Status{"a": job.Ready}, false},
		{"nr(a)", map[string]job.Status{"a": job.Waiting}, true},
		{"nr(a)", map[string]job.Status{"a": job.Queued}, true},
		{"nr(a)", map[string]job.Status{"a": job.Idle}, true},
		// frozen satisfies every prefix
		{"su(a)", map[string]job.Status{"a": job.Frozen}, true},
		{"fa(a)", map[string]job.Status{"a": job.Frozen}, true},
		{"nr(a)", map[string]job.Status{"a": job.Frozen}, true},
		// & binds tighter than |: su(a) | (su(b) & su(c))
		{"su(a) | su(b) & su(c)", map[string]job.Status{"a": job.Success}, true},
		{"su(a) | su(b) & su(c)", map[string]job.Status{"b": job.Success}, false},
		{"su(b) & su(c) | su(a)", map[string]job.Status{"a": job.Success}, true},
		{"(su(a) | su(b)) & su(c)", map[string]job.Status{"a": job.Success}, false},
		{"(su(a) | su(b)) & su(c)", map[string]job.Status{"a": job.Success, "c": job.Success}, true},
	}
	for _, tt := range tests {
		if got := MustParse(tt.expr).Eval(statuses(tt.st)); got != tt.want {
			t.Errorf("%s with %v = %v, want %v", tt.expr, tt.st, got, tt.want)
		}
	}
}

func TestErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, detail string
		pos        int
	}{
		{"", "condition ended", 1},
		{"su(a) &", "condition ended", 8},
		{"xx(a)", "unknown status prefix", 1},
		{"success(a)", `unknown status prefix "success" (want su, fa or nr; AutoSys's success(x) is su(x))`, 1},
		{"su(a) & done(b)", "AutoSys's done(x) is (su(x) | fa(x))", 9},
		{"su a)", `expected "(" after su`, 4},
		{"su(a b)", "blank inside task name", 6},
		{"su()", "expected a task name", 4},
		{"su(a))", `unexpected ")"`, 6},
		{"(su(a)", `expected ")"`, 7},
		{"su(a) su(b)", `unexpected "su"`, 7},
		{"su(a-b)", `expected ")" after task name but found "-"`, 5},
		{"su(" + strings.Repeat("x", 65) + ")", "longer than 64", 4},
		{"su(é)", `found "é"`, 4},
		{strings.Repeat("(", 200) + "su(a)" + strings.Repeat(")", 200), "nested deeper", 101},
	}
	for _, tt := range tests {
		_, err := Parse(tt.in)
		var ce *Error
		if !errors.As(err, &ce) {
			t.Errorf("Parse(%q) = %v, want *Error", tt.in, err)
			continue
		}
		if !strings.Contains(ce.Detail, tt.detail) || ce.Pos != tt.pos {
			t.Errorf("Parse(%q) = %q at %d, want %q at %d", tt.in, ce.Detail, ce.Pos, tt.detail, tt.pos)
		}
		if !strings.HasPrefix(err.Error(), "invalid condition: ") {
			t.Errorf("Error() = %q", err)
		}
	}
}

// FuzzParse checks that the parser never panics and that the canonical form
// is a fixed point that evaluates exactly like the input.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"su(a)", "su(a)|fa(b)&nr(c)", "((su(a)))", "su(a) & (fa(b) | nr(c))", "su(", "|", "SU(x_1)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e, err := Parse(s)
		if err != nil {
			return
		}
		again, err := Parse(e.String())
		if err != nil {
			t.Fatalf("canonical form %q of %q does not parse: %v", e.String(), s, err)
		}
		if again.String() != e.String() {
			t.Fatalf("canonical form not stable: %q -> %q", e.String(), again.String())
		}
		// Evaluate both under a few assignments derived from the names.
		for i, st := range []job.Status{job.Success, job.Failure, job.Running, job.Frozen} {
			f := func(n string) job.Status {
				if (len(n)+i)%2 == 0 {
					return st
				}
				return job.Idle
			}
			if e.Eval(f) != again.Eval(f) {
				t.Fatalf("%q and %q evaluate differently", s, e.String())
			}
		}
	})
}

func TestClauses(t *testing.T) {
	x := MustParse("su(a) & (fa(b) | nr(c)) & su(d)")
	st := map[string]job.Status{"a": job.Success, "b": job.Success, "c": job.Running, "d": job.Frozen}
	got := x.Clauses(func(n string) job.Status { return st[n] })
	want := []string{"su(a) success true", "fa(b) success false", "nr(c) running false", "su(d) frozen true"}
	if len(got) != len(want) {
		t.Fatalf("Clauses = %+v", got)
	}
	for i, c := range got {
		if s := fmt.Sprintf("%s %s %v", c, c.Status, c.Holds); s != want[i] {
			t.Errorf("clause %d = %q, want %q", i, s, want[i])
		}
	}
}
