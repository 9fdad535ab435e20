package engine

import (
	"strings"

	"github.com/gnomon-sched/gnomon/job"
)

// MaxParamValue bounds the value of one parameter a start gives.
const MaxParamValue = 4096

// checkParams says why parameter values given with an action to task t
// are refused, or nil: only a start (or a backfill) gives them, each one
// the task declares (or, for a task that watches files, job.WatchParam),
// once, and a value is text an environment variable can hold.
func checkParams(t *job.Task, a job.Action, given []job.Var) error {
	if len(given) == 0 {
		return nil
	}
	if a != job.ActStart {
		return refused("parameters go with a start, not with %s", a)
	}
	declared := t.Extras().Env().Params
	names := make([]string, len(declared), len(declared)+1)
	for i, p := range declared {
		names[i] = p.Name
	}
	if t.Extras().Watching() != nil {
		// The file its watcher found (see job.WatchParam).
		names = append(names, job.WatchParam)
	}
	for i, g := range given {
		known := false
		for _, n := range names {
			known = known || n == g.Name
		}
		switch {
		case len(names) == 0:
			return refused("%s declares no parameters (add params: %s=DEFAULT to its definition)", t.Name, g.Name)
		case !known:
			return refused("%s declares no parameter %q (it declares %s)", t.Name, g.Name, strings.Join(names, ", "))
		case len(g.Value) > MaxParamValue:
			return refused("parameter %s: value longer than %d bytes", g.Name, MaxParamValue)
		case strings.ContainsRune(g.Value, 0):
			return refused("parameter %s: a value cannot hold a NUL byte", g.Name)
		}
		for _, h := range given[:i] {
			if h.Name == g.Name {
				return refused("parameter %s given more than once", g.Name)
			}
		}
	}
	return nil
}
