package defs

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gnomon-sched/gnomon/job"
)

func TestNotify(t *testing.T) {
	t.Parallel()
	cur := load(t, "insert_task: x\n"+callable+"alert_on: failure\nnotify: slack:https://hooks.slack.com/services/T/B/X, webhook:https://ops.example.com/h?a=1,2, teams:https://t.example.com/w, pagerduty:@file:/etc/gnomon/pd.key\n"+
		"\ninsert_group: g\njobs: x\nalert_on: success\nnotify: webhook:http://127.0.0.1:9000/g\n")
	want := []string{"slack:https://hooks.slack.com/services/T/B/X", "webhook:https://ops.example.com/h?a=1,2", "teams:https://t.example.com/w", "pagerduty:@file:/etc/gnomon/pd.key"}
	if diff := cmp.Diff(want, cur["x"].Extras().Notify); diff != "" {
		t.Errorf("notify (-want +got):\n%s", diff)
	}
	var b strings.Builder
	if err := Format(&b, []*job.Task{cur["x"], cur["g"]}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(cur, load(t, b.String())); diff != "" {
		t.Errorf("round trip through\n%s(-want +got):\n%s", b.String(), diff)
	}
	for _, tt := range []struct{ text, want string }{
		{"insert_task: y\n" + callable + "notify: webhook:https://a.example.com/h\n", "notify needs alert_on"},
		{"insert_task: y\n" + callable + "alert_on: failure\nnotify: ops@example.com\n", `notify: "ops@example.com" is not webhook:URL, slack:URL or teams:URL`},
		{"insert_task: y\n" + callable + "alert_on: failure\nnotify: slack:ftp://x/y\n", "is not webhook:URL, slack:URL or teams:URL with an http or https URL"},
		{"insert_task: y\n" + callable + "alert_on: failure\nnotify: slack:https:///T0K3N\n", "notify: slack:https:///…: not a URL with a host"},
		{"insert_task: y\n" + callable + "alert_on: failure\nnotify: slack:https://h/T0K3N, slack:https://h/T0K3N\n", "notify: slack:https://h/… given more than once"},
		{"insert_task: y\n" + callable + "alert_on: failure\nnotify: pagerduty:T0K3N\n", "notify: pagerduty: the routing key is a secret: write it in a file"},
		{"insert_task: y\n" + callable + "alert_on: failure\nnotify: pagerduty:@file:pd.key\n", "the key's file must be a clean absolute path"},
	} {
		_, err := run(nil, tt.text)
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "T0K3N") {
			t.Errorf("%q: got %v, want %q (and no URL path)", tt.text, err, tt.want)
		}
	}
}

func TestNotifyTemplate(t *testing.T) {
	t.Parallel()
	tmpl := `{"summary": {{json (printf "%s %s" .Task .Outcome)}}, "run": {{.RunID}}, "rows": {{json .Data.rows}}}`
	cur := load(t, "insert_task: x\n"+callable+"alert_on: failure\nnotify: webhook:https://w.example.com/h\nnotify_template: "+tmpl+"\n")
	if got := cur["x"].Extras().NotifyTemplate; got != tmpl {
		t.Fatalf("notify_template %q", got)
	}
	var b strings.Builder
	if err := Format(&b, []*job.Task{cur["x"]}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(cur, load(t, b.String())); diff != "" {
		t.Errorf("round trip through\n%s(-want +got):\n%s", b.String(), diff)
	}
	for _, tt := range []struct{ text, want string }{
		{"notify: webhook:https://w/h\nnotify_template: {\"t\": {{.Task}\n", `f.def:8: insert_task y: notify_template: notify_template:1: bad character U+007D '}'`},
		{"notify: webhook:https://w/h\nnotify_template: {\"t\": {{.Task}}}\n", `notify_template: the body is not JSON: "{\"t\": task}" (write a string as {{json .Message}}`},
		{"notify: webhook:https://w/h\nnotify_template: {\"t\": {{json .Nope}}}\n", `notify_template: notify_template:1:13: executing "notify_template" at <.Nope>: can't evaluate field Nope in type job.HookPayload`},
		{"notify: slack:https://w/h\nnotify_template: {}\n", "f.def:8: insert_task y: notify_template needs a webhook:URL in notify"},
	} {
		_, err := run(nil, "insert_task: y\n"+callable+"alert_on: failure\n"+tt.text)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: got %v, want %q", tt.text, err, tt.want)
		}
	}
}
