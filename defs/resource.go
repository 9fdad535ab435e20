package defs

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/gnomon-sched/gnomon/job"
)

// claimTable holds the resources a task takes for its runs; a
// resource's own amount is in taskTable, before its label.
var claimTable = []attr{
	{name: "resources", on: onRunner,
		setFunc:    func(t *job.Task, v string) (err error) { t.Edit().Claims, err = ParseClaims(v); return err },
		clearFunc:  func(t *job.Task) { t.Edit().Claims = nil },
		formatFunc: func(t *job.Task) string { return job.FormatClaims(t.Extras().Claims) }},
}

// MaxAmount bounds a resource's units.
const MaxAmount = 1_000_000

// ParseAmount reads a resource's number of units.
func ParseAmount(v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > MaxAmount {
		return 0, fmt.Errorf("amount: %q is not a number of units from 1 to %d", v, MaxAmount)
	}
	return n, nil
}

// ParseClaims reads the resources attribute: a comma list of NAME (one
// unit), NAME=N (N units), NAME=exclusive or NAME=shared, each resource
// once.
func ParseClaims(v string) ([]job.Claim, error) {
	var out []job.Claim
	for item := range strings.SplitSeq(v, ",") {
		item = strings.TrimSpace(item)
		name, what, given := strings.Cut(item, "=")
		name, what = strings.TrimSpace(name), strings.TrimSpace(what)
		if msg := checkName(name); name == "" || msg != "" {
			return nil, fmt.Errorf("resources: %q is not NAME, NAME=N, NAME=exclusive or NAME=shared", item)
		}
		c := job.Claim{Resource: name, Units: 1}
		switch {
		case !given:
		case what == string(job.ClaimExclusive), what == string(job.ClaimShared):
			c.Units, c.Mode = 0, job.ClaimMode(what)
		default:
			n, err := strconv.Atoi(what)
			if err != nil || n < 1 || n > MaxAmount {
				return nil, fmt.Errorf("resources: %s=%s: want a number of units from 1 to %d, exclusive or shared", name, what, MaxAmount)
			}
			c.Units = n
		}
		for _, o := range out {
			if o.Resource == name {
				return nil, fmt.Errorf("resources: %s given more than once", name)
			}
		}
		out = append(out, c)
	}
	return out, nil
}

// resourcesGlobal checks the resources the touched tasks take: each is
// defined, as a resource, with the units a claim asks; and a deleted
// resource is taken by no task.
func (a *applier) resourcesGlobal(touched []string, gone func(string) bool) {
	for _, name := range touched {
		t, _ := a.tasks.get(name)
		for _, c := range t.Extras().Claims {
			switch r, ok := a.tasks.get(c.Resource); {
			case !ok && gone(c.Resource):
				// Reported at the delete.
			case !ok:
				a.errorAt(name, "resources", "resources: %s is not defined (define it with insert_resource: %s and amount: N)", c.Resource, c.Resource)
			case r.Type != job.Resource:
				a.errorAt(name, "resources", "resources: %s is a %s, not a resource", c.Resource, noun(r))
			case c.Units > r.Extras().Amount && r.Extras().Amount > 0:
				a.errorAt(name, "resources", "resources: %s asks %d units of %s, which has %d: it would never run", name, c.Units, c.Resource, r.Extras().Amount)
			}
		}
		if t.Type == job.Resource {
			// A resource whose amount shrank below what a task asks.
			a.tasks.each(func(other string, o *job.Task) {
				for _, c := range o.Extras().Claims {
					if c.Resource == name && c.Units > t.Extras().Amount && t.Extras().Amount > 0 && !a.touchedSet(other, touched) {
						a.errorAt(name, "amount", "amount: %s asks %d units of %s: keep at least that many", other, c.Units, name)
					}
				}
			})
		}
	}
}

// touchedSet reports whether name is among the touched tasks (sorted).
func (a *applier) touchedSet(name string, touched []string) bool {
	_, ok := slices.BinarySearch(touched, name)
	return ok
}
