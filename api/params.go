package api

import (
	"slices"
	"strings"

	"github.com/gnomon-sched/gnomon/job"
)

// Params returns parameter values given by name as the engine takes them,
// sorted by name; nil for none.
func Params(m map[string]string) []job.Var {
	if len(m) == 0 {
		return nil
	}
	out := make([]job.Var, 0, len(m))
	for k, v := range m {
		out = append(out, job.Var{Name: k, Value: v})
	}
	slices.SortFunc(out, func(a, b job.Var) int { return strings.Compare(a.Name, b.Name) })
	return out
}
