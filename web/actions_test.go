package web

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gnomon-sched/gnomon/job"
)

// The task page offers each action with what the engine would answer: on
// an idle task, start says what it does and abort is refused, saying why.
func TestTaskPageActions(t *testing.T) {
	t.Parallel()
	_, u := startScheduler(t, "insert_task: a\ntype: callable\nfunction: log\n\ninsert_group: g\njobs: a\n")
	page := func(name string) taskData {
		t.Helper()
		r := httptest.NewRequest(http.MethodGet, "/tasks/"+name, nil)
		r.SetPathValue("name", name)
		_, d, err := u.task(r)
		if err != nil {
			t.Fatal(err)
		}
		return d.(taskData)
	}
	got := map[job.Action]actionView{}
	for _, a := range page("a").Actions {
		got[a.Name] = a
	}
	if a := got[job.ActStart]; a.Refusal != "" || !strings.Contains(a.Words, "Starts a run of a now") {
		t.Errorf("start on an idle task: %+v", a)
	}
	if a := got[job.ActAbort]; a.Refusal != "event abort is not effective on inactive task" || a.Words != "" {
		t.Errorf("abort on an idle task: %+v", a)
	}
	if a := got[job.ActFreeze]; a.Refusal != "" || !strings.Contains(a.Words, "Freezes a until it is reset") {
		t.Errorf("freeze on an idle task: %+v", a)
	}
	if len(got) != 6 {
		t.Errorf("%d actions offered, want 6: %+v", len(got), got)
	}
	if acts := page("g").Actions; len(acts) != 0 {
		t.Errorf("a group is offered actions: %+v", acts)
	}
}
