package defs

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/gnomon-sched/gnomon/job"
	"github.com/google/go-cmp/cmp"
)

// TestPlanFileModes checks the three modes a file is planned in: as
// written, declared and synced, with what the sync owns and deletes, and
// an error at a delete the sync adds told as such.
func TestPlanFileModes(t *testing.T) {
	t.Parallel()
	base := callable2("a", "label: old") + callable2("b", "") + callable2("c", "") +
		"insert_calendar: hol\ndates: 2026-12-25\n\n" +
		`insert_task: cfg
type: configuration
dependencies: [{"type":"TABLE","resourceId":"t","lifeDuration":60}]
`
	first, err := PlanFile("base.def", base, Told, AsWritten, nil, nil, Server{})
	if err != nil {
		t.Fatal(err)
	}
	cur := map[string]*job.Task{}
	for _, task := range first.Tasks {
		cur[task.Name] = task
	}
	cals := map[string]*job.Calendar{}
	for _, c := range first.Calendars {
		cals[c.Name] = c
	}
	env := &Env{Calendars: cals}
	file := callable2("a", "label: new") + callable2("d", "")

	// As written, an insert of a task that exists is an error.
	if _, err := PlanFile("f.def", file, Told, AsWritten, cur, env, Server{}); err == nil || !strings.Contains(err.Error(), "f.def:1") {
		t.Fatalf("as written: %v", err)
	}
	// Declared, it replaces it; nothing is deleted.
	p, err := PlanFile("f.def", file, Told, Declared, cur, env, Server{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Task("a").Extras().Label != "new" || p.Task("d") == nil || len(p.Deleted) != 0 || p.Owns != nil {
		t.Errorf("declared: %+v", p)
	}
	// Synced, the file owns the tasks but not the configurations or the
	// calendars: b and c go, cfg and hol stay.
	p, err = PlanFile("f.def", file, Told, Synced, cur, env, Server{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.Deleted, []string{"b", "c"}) || len(p.DeletedCalendars) != 0 || !slices.Equal(p.Owns, []string{"tasks"}) {
		t.Errorf("synced: deleted %v, calendars %v, owns %v", p.Deleted, p.DeletedCalendars, p.Owns)
	}
	// A file of calendars owns them.
	p, err = PlanFile("c.def", "insert_calendar: work\nrule: every monday\n", Told, Synced, cur, env, Server{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.DeletedCalendars, []string{"hol"}) || len(p.Deleted) != 0 || !slices.Equal(p.Owns, []string{"calendars"}) {
		t.Errorf("a file of calendars: %+v", p)
	}
	// A delete the sync adds that cannot be done says why it is there,
	// with no line: c is active.
	env.Active = func(name string) bool { return name == "c" }
	_, err = PlanFile("f.def", file, Told, Synced, cur, env, Server{})
	var errs Errors
	if err == nil || !errors.As(err, &errs) || len(errs) != 1 || errs[0].Line != 0 ||
		!strings.Contains(errs[0].Msg, "active") || !strings.Contains(errs[0].Msg, "(the sync deletes c: f.def does not define it)") {
		t.Fatalf("an active task the sync deletes: %v", err)
	}
}

// TestDefineIsTheDefinition checks that the action Define makes of a task
// plans back to the same task, for tasks that set every attribute.
func TestDefineIsTheDefinition(t *testing.T) {
	t.Parallel()
	env := &Env{Calendars: map[string]*job.Calendar{"work": {Name: "work"}, "off": {Name: "off"}}}
	all, err := PlanFile("every.def", everyAttr, Told, AsWritten, nil, env, Server{})
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range all.Tasks {
		cur := map[string]*job.Task{}
		for _, o := range all.Tasks {
			if o.Name != task.Name {
				cur[o.Name] = o
			}
		}
		p, err := PlanActions("go", []Action{Define(task)}, AsWritten, cur, env, Server{})
		if err != nil {
			t.Fatalf("%s: %v", task.Name, err)
		}
		if diff := cmp.Diff(task, p.Task(task.Name)); diff != "" {
			t.Errorf("%s planned from its action differs (-file +action):\n%s", task.Name, diff)
		}
	}
}

// TestDeclaredSyntax: a file read in a declared syntax is read in that
// one only, whatever its shape; undeclared, its shape tells; a syntax is
// declared by its name.
func TestDeclaredSyntax(t *testing.T) {
	t.Parallel()
	lang := callable2("a", "")
	conf := `[{"name":"cfg","dependencies":[{"type":"TABLE","resourceId":"t","lifeDuration":60}]}]`
	for _, c := range []struct {
		text string
		syn  Syntax
		want string // the task planned, or a part of the error
	}{
		{lang, Told, "a"},
		{lang, Language, "a"},
		{conf, Told, "cfg"},
		{conf, Configurations, "cfg"},
		{lang, Configurations, "f:1"},
		{conf, Language, "f:1"},
	} {
		p, err := PlanFile("f", c.text, c.syn, AsWritten, nil, nil, Server{})
		refused := strings.Contains(c.want, ":")
		switch {
		case refused && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%q in %v: %v, want an error with %q", c.text, c.syn, err, c.want)
		case !refused && err != nil:
			t.Errorf("%q in %v: %v, want it planned", c.text, c.syn, err)
		case !refused && (len(p.Tasks) != 1 || p.Tasks[0].Name != c.want):
			t.Errorf("%q in %v: planned %+v, want %s", c.text, c.syn, p.Tasks, c.want)
		}
	}
	for name, want := range map[string]Syntax{"": Told, "language": Language, "configurations": Configurations, "trees": Trees} {
		if got, err := ParseSyntax(name); err != nil || got != want || got.Name() != name {
			t.Errorf("ParseSyntax(%q) = %v, %v; want %v", name, got, err, want)
		}
	}
	if _, err := ParseSyntax("json"); err == nil || !strings.Contains(err.Error(), `"json" is not a syntax: give language, configurations or trees`) {
		t.Errorf("ParseSyntax(json): %v", err)
	}
	if Told.Of(`{"trees":[]}`) != Trees || Language.Of(`{"trees":[]}`) != Language {
		t.Error("Of: a declared syntax is not the one declared, or an undeclared one not the shape's")
	}
}
