package engine

import (
	"slices"
	"testing"

	"github.com/gnomon-sched/gnomon/job"
)

// Each webhook a failure notifies is an alert of its own (its delivery is
// its own), beside the one mail; a webhook named by the task and by its
// group is notified once.
func TestNotifyAlerts(t *testing.T) {
	t.Parallel()
	h := setup(t, 5, callable("a", "alert_on: failure\nalert_to: ops@example.com\nnotify: slack:https://h.example.com/s, webhook:https://w.example.com/x")+
		"insert_group: g\njobs: a\nalert_on: failure\nnotify: webhook:https://w.example.com/x, teams:https://t.example.com/y\n")
	h.act("a", job.ActStart)
	_, st, _ := h.e.Task("a")
	out := h.apply(RunExited{RunID: st.RunID, ExitCode: 1, Result: job.ResultNormal})
	var got [][]string
	for _, a := range out.Alerts {
		got = append(got, append(slices.Clone(a.To), a.Sources...))
	}
	want := [][]string{{"ops@example.com", "a"}, {"slack:https://h.example.com/s", "a"}, {"webhook:https://w.example.com/x", "a"}, {"teams:https://t.example.com/y", "g"}}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("alerts %v, want %v", got, want)
	}
}

// A PagerDuty target is told of a success whatever alert_on says, so that
// the incident a failure opened is resolved; the other targets are not.
func TestPagerDutyResolvesOnSuccess(t *testing.T) {
	t.Parallel()
	h := setup(t, 5, callable("a", "alert_on: failure\nalert_to: ops@example.com\nnotify: pagerduty:@file:/etc/gnomon/pd.key, slack:https://h.example.com/s"))
	h.act("a", job.ActStart)
	_, st, _ := h.e.Task("a")
	out := h.apply(RunExited{RunID: st.RunID, ExitCode: 1, Result: job.ResultNormal})
	if len(out.Alerts) != 3 {
		t.Fatalf("failure: %+v, want 3 alerts", out.Alerts)
	}
	h.act("a", job.ActStart)
	_, st, _ = h.e.Task("a")
	out = h.apply(RunExited{RunID: st.RunID, ExitCode: 0, Result: job.ResultNormal})
	if len(out.Alerts) != 1 || out.Alerts[0].To[0] != "pagerduty:@file:/etc/gnomon/pd.key" || out.Alerts[0].Outcome != job.OutcomeSuccess {
		t.Fatalf("success: %+v, want the PagerDuty target's alone", out.Alerts)
	}
}
