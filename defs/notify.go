package defs

import (
	"fmt"
	"net/url"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/gnomon-sched/gnomon/job"
)

// ParseNotify reads the notify attribute: a comma list of webhooks,
// webhook:URL, slack:URL or teams:URL, each an http or https URL with a
// host, and pagerduty:@file:/PATH, the file holding a PagerDuty routing
// key (a key written inline is refused: it is a secret). A comma inside
// a URL stays in it: only a comma before a kind starts the next.
func ParseNotify(v string) ([]string, error) {
	var items []string
	for part := range strings.SplitSeq(v, ",") {
		p := strings.TrimSpace(part)
		kind, _, _ := strings.Cut(p, ":")
		if len(items) > 0 && kind != job.HookWebhook && kind != job.HookSlack && kind != job.HookTeams && kind != job.HookPagerDuty {
			items[len(items)-1] += "," + part // a comma of the URL
			continue
		}
		items = append(items, p)
	}
	for i, it := range items {
		it = strings.TrimSpace(it)
		items[i] = it
		if kind, rest, _ := strings.Cut(it, ":"); kind == job.HookPagerDuty {
			switch {
			case !strings.HasPrefix(rest, job.SecretFile):
				return nil, fmt.Errorf("notify: pagerduty: the routing key is a secret: write it in a file only the server's user may read (chmod 600) and give pagerduty:@file:/PATH")
			case !strings.HasPrefix(rest, job.SecretFile+"/") || path.Clean(strings.TrimPrefix(rest, job.SecretFile)) != strings.TrimPrefix(rest, job.SecretFile):
				return nil, fmt.Errorf("notify: %s: the key's file must be a clean absolute path (pagerduty:@file:/etc/gnomon/pagerduty.key)", it)
			}
			if slices.Contains(items[:i], it) {
				return nil, fmt.Errorf("notify: %s given more than once", it)
			}
			continue
		}
		_, raw, ok := job.HookTarget(it)
		if !ok {
			return nil, fmt.Errorf("notify: %q is not webhook:URL, slack:URL or teams:URL with an http or https URL, nor pagerduty:@file:/PATH", job.Redact(it))
		}
		if u, err := url.Parse(raw); err != nil || u.Host == "" || strings.ContainsAny(raw, " \t") {
			return nil, fmt.Errorf("notify: %s: not a URL with a host", job.Redact(it))
		}
		if slices.Contains(items[:i], it) {
			return nil, fmt.Errorf("notify: %s given more than once", job.Redact(it))
		}
	}
	return items, nil
}

// sampleAlert is what CheckNotifyTemplate renders a template with: every
// field set.
var sampleAlert = job.HookPayload{
	AlertID: 1, Task: "task", Outcome: job.OutcomeFailure, RunID: 2,
	Start: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), End: time.Date(2026, 1, 2, 3, 5, 5, 0, time.UTC),
	ExitCode: 1, Message: "exit status 1", Data: map[string]string{"k": "v"}, Sources: []string{"task"},
	Created: time.Date(2026, 1, 2, 3, 5, 5, 0, time.UTC),
}

// CheckNotifyTemplate checks the notify_template attribute: a Go
// text/template of a generic webhook's JSON body, one line, that renders
// JSON for an alert with every field set.
func CheckNotifyTemplate(v string) error {
	t, err := job.ParseHookBody(v)
	if err != nil {
		return fmt.Errorf("notify_template: %v", strings.TrimPrefix(err.Error(), "template: "))
	}
	if _, err := job.RenderHookBody(t, sampleAlert); err != nil {
		return fmt.Errorf("notify_template: %v", strings.TrimPrefix(err.Error(), "template: "))
	}
	return nil
}
