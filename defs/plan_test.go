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
	first, err := PlanFile("base.def", base, AsWritten, nil, nil, Server{})
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
	if _, err := PlanFile("f.def", file, AsWritten, cur, env, Server{}); err == nil || !strings.Contains(err.Error(), "f.def:1") {
		t.Fatalf("as written: %v", err)
	}
	// Declared, it replaces it; nothing is deleted.
	p, err := PlanFile("f.def", file, Declared, cur, env, Server{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Task("a").Extras().Label != "new" || p.Task("d") == nil || len(p.Deleted) != 0 || p.Owns != nil {
		t.Errorf("declared: %+v", p)
	}
	// Synced, the file owns the tasks but not the configurations or the
	// calendars: b and c go, cfg and hol stay.
	p, err = PlanFile("f.def", file, Synced, cur, env, Server{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.Deleted, []string{"b", "c"}) || len(p.DeletedCalendars) != 0 || !slices.Equal(p.Owns, []string{"tasks"}) {
		t.Errorf("synced: deleted %v, calendars %v, owns %v", p.Deleted, p.DeletedCalendars, p.Owns)
	}
	// A file of calendars owns them.
	p, err = PlanFile("c.def", "insert_calendar: work\nrule: every monday\n", Synced, cur, env, Server{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.DeletedCalendars, []string{"hol"}) || len(p.Deleted) != 0 || !slices.Equal(p.Owns, []string{"calendars"}) {
		t.Errorf("a file of calendars: %+v", p)
	}
	// A delete the sync adds that cannot be done says why it is there,
	// with no line: c is active.
	env.Active = func(name string) bool { return name == "c" }
	_, err = PlanFile("f.def", file, Synced, cur, env, Server{})
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
	all, err := PlanFile("every.def", everyAttr, AsWritten, nil, env, Server{})
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
