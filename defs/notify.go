package defs

import (
	"fmt"
	"net/url"
	"path"
	"slices"
	"strings"

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
