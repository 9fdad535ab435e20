package web

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/engine"
	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/store"
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

// The task page answers what became of an occurrence (?at=): the fire
// ledger's record with a link to its run, an occurrence still to come, a
// time the task's trigger has no occurrence at, and a time it cannot read.
func TestTaskPageOccurrence(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	_, u := withHistory(t, "insert_task: a\ntype: callable\nfunction: log\ncron: 0 10 * * *\n", func(last int64) store.Batch {
		id := last + 1
		return store.Batch{
			Runs:  []job.Run{{ID: id, Task: "a", Status: job.Failure, Start: at, End: at.Add(time.Minute), Scheduled: at, ExitCode: 3}},
			Fires: []job.Fire{{Task: "a", Scheduled: at, At: at, Fate: job.FateRan, RunID: id}},
		}
	})
	ask := func(when string) atView {
		t.Helper()
		r := httptest.NewRequest(http.MethodGet, "/tasks/a?at="+url.QueryEscape(when), nil)
		r.SetPathValue("name", "a")
		_, d, err := u.task(r)
		if err != nil {
			t.Fatal(err)
		}
		return d.(taskData).At
	}
	if v := ask("2026-03-02T10:00"); v.Err != "" || v.Run == 0 || !strings.Contains(v.Text, "the occurrence at 2026-03-02T10:00:00Z ran: run") ||
		!strings.Contains(v.Text, "failure") || v.Value != "2026-03-02T10:00" {
		t.Errorf("the occurrence that ran: %+v", v)
	}
	if v := ask("2026-03-02T11:00"); v.Err != "" || v.Run != 0 || !strings.Contains(v.Text, "has no occurrence at 2026-03-02T11:00:00Z") {
		t.Errorf("a time without an occurrence: %+v", v)
	}
	if v := ask("2999-01-01 10:00"); v.Err != "" || !strings.Contains(v.Text, "is still to come") {
		t.Errorf("an occurrence to come: %+v", v)
	}
	if v := ask("tuesday"); !strings.Contains(v.Err, `"tuesday" is not an instant`) || v.Value != "tuesday" {
		t.Errorf("an unreadable time: %+v", v)
	}
}

// A frozen task's page says who froze it and when.
func TestTaskPageSaysWhoSetItsStatus(t *testing.T) {
	t.Parallel()
	s, u := startScheduler(t, "insert_task: a\ntype: callable\nfunction: log\n")
	if err := s.Submit(context.Background(), engine.Act{Task: "a", Action: job.ActFreeze, By: "ada"}); err != nil {
		t.Fatal(err)
	}
	_, st, _ := s.View().Task("a")
	if st.SetBy == nil {
		t.Fatal("the View has no SetBy after the freeze")
	}
	r := httptest.NewRequest(http.MethodGet, "/tasks/a", nil)
	r.SetPathValue("name", "a")
	w := httptest.NewRecorder()
	u.pageHandler("task", u.task)(w, r)
	want := "by the event freeze of ada at <time datetime=\"" + st.SetBy.At.Time().UTC().Format(time.RFC3339) + "\">" + st.SetBy.At.Time().UTC().Format("2006-01-02 15:04:05") + "</time>"
	if body := w.Body.String(); !strings.Contains(body, want) {
		t.Errorf("the page of a frozen task does not say %q", want)
	}
}
