package web

import (
	"net/http"
	"strings"

	"github.com/gnomon-sched/gnomon/auth"
	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/scheduler"
)

// The lists of every task (the task list, the runs page, the timeline,
// the audit) answer a token with a scope with the tasks the scope covers
// (auth.Scope.Covers), and their runs and audit records, saying so; their
// routes are api.Filtered, which the API's check lets through for the
// handler to narrow.

// scopeOf returns the scope of the request's identity: nil for a token
// without one, which sees every task.
func scopeOf(r *http.Request) auth.Scope {
	if id := auth.FromContext(r.Context()); id != nil {
		return id.Scope
	}
	return nil
}

// scopeLine is the scope as the pages name it, "" for no scope.
func scopeLine(s auth.Scope) string { return strings.Join(s, ", ") }

// covers reports whether the scope covers a task of the view (every task
// for no scope).
func covers(v *scheduler.View, s auth.Scope, name string) bool {
	if len(s) == 0 {
		return true
	}
	var groups []string
	if s.NeedsGroups() {
		groups = v.Groups(name)
	}
	return s.Covers(name, groups)
}

// scopedTasks returns the tasks the scope covers (groups left out), in
// name order.
func scopedTasks(v *scheduler.View, s auth.Scope) []string {
	var out []string
	v.Ascend("", func(it *scheduler.TaskItem) bool {
		if it.Def.Type != job.Group && s.Covers(it.Def.Name, it.Groups) {
			out = append(out, it.Def.Name)
		}
		return true
	})
	return out
}
