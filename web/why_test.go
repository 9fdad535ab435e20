package web

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/engine"
	"github.com/gnomon-sched/gnomon/job"
)

// The task page never waits long for the scheduler's loop: while the loop
// is held or busy, it is sent with a placeholder for why the task is not
// running, which fetches the reasons once the loop answers; otherwise the
// reasons are in the page.
func TestWhyWhileTheLoopIsBusy(t *testing.T) {
	t.Parallel()
	s, u := startScheduler(t, "insert_task: a\ntype: callable\nfunction: log\ncondition: su(b)\n\ninsert_task: b\ntype: callable\nfunction: log\n")
	page := func() taskData {
		t.Helper()
		r := httptest.NewRequest(http.MethodGet, "/tasks/a", nil)
		r.SetPathValue("name", "a")
		_, d, err := u.task(r)
		if err != nil {
			t.Fatal(err)
		}
		return d.(taskData)
	}
	// The loop is free once it has done what starting it queued; a page
	// asked while it was busy has the placeholder, so ask until it is
	// free.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Millisecond) {
		d := page()
		if !d.Why.Busy && len(d.Why.Reasons) > 0 {
			break
		}
		if !d.Why.Busy || time.Now().After(deadline) {
			t.Fatalf("with the loop free the page shows %+v, want the reasons", d.Why)
		}
	}
	held, gate := make(chan struct{}), make(chan struct{})
	go s.Read(context.Background(), func(*engine.Engine) { close(held); <-gate })
	<-held
	d := page()
	close(gate)
	if !d.Why.Busy || d.Why.Reasons != nil {
		t.Fatalf("with the loop held the page shows %+v, want the placeholder", d.Why)
	}
	w := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodGet, "/tasks/a/why", nil)
	r.SetPathValue("name", "a")
	if err := u.whyFragment(w, r); err != nil {
		t.Fatal(err)
	}
	if body := w.Body.String(); !strings.Contains(body, "su(b)") || strings.Contains(body, "busy") {
		t.Errorf("the why fragment is %q, want the reasons", body)
	}
}

// The why box of a running task says what it does, not why it does not
// run.
func TestWhyOfARunningTask(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s, u := startScheduler(t, "insert_task: a\ntype: callable\ncommand: sleep 60\nout_log_file: "+dir+"/a.out\nerr_log_file: "+dir+"/a.err\n")
	if err := s.Submit(context.Background(), engine.Act{Task: "a", Action: job.ActStart}); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		if _, st, _ := s.View().Task("a"); st.Status == job.Running {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a did not start within a minute")
		}
	}
	w := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodGet, "/tasks/a/why", nil)
	r.SetPathValue("name", "a")
	if err := u.whyFragment(w, r); err != nil {
		t.Fatal(err)
	}
	_, st, _ := s.View().Task("a")
	since := "a is running since " + st.Start.Time().In(time.UTC).Format("2006-01-02 15:04:05") + " (run "
	if body := w.Body.String(); !strings.Contains(body, "<h3>What it does now</h3>") || !strings.Contains(body, since) {
		t.Errorf("the why box of a running task does not say %q: %s", since, body)
	}
	s.Submit(context.Background(), engine.Act{Task: "a", Action: job.ActAbort})
}
