package api

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"

	"github.com/gnomon-sched/gnomon/auth"
	"github.com/gnomon-sched/gnomon/eventdep"
	"github.com/gnomon-sched/gnomon/scheduler"
)

// Rule is what a route asks of a request's identity: a permission of its
// role, and how far a token with a scope may go with it. The routes of
// the API (NewServer) and of the web UI each name theirs, and one check
// (Check) applies them, before any handler runs.
type Rule struct {
	Perm  auth.Permission
	Reach Reach
	// Param names the path value (Reach Shown, Explained, Acted) or, when
	// the path has none of that name, the query parameter that names the
	// task or timeperiod process the request concerns.
	Param string
}

// Reach says what a request touches, and so what a token's scope must
// cover for it.
type Reach int

// The reaches, from the least to the most.
const (
	// NoTask: the request concerns no task (who am I, the clock's time,
	// calendars, counts): any scope.
	NoTask Reach = iota
	// Filtered: the handler answers only with the tasks in the scope.
	Filtered
	// Shown: the task or process Param names, with the members of a
	// bundle or group, or the processes of its tree and of the trees
	// next to it, which a read of it shows.
	Shown
	// Explained: Shown, and the tasks its condition names, and theirs,
	// whose status and reasons an explanation shows.
	Explained
	// Acted: the task or process Param names and every task or process
	// an action on it can start, end or settle (engine.Engine.Reached,
	// periods.Forest.Reached).
	Acted
	// DataEvent: the configurations a data event is offered to, and what
	// they reach when it triggers them.
	DataEvent
	// Defined: the tasks a definition file touches, checked on the loop
	// before the file is planned (scopeAllowed), from the request's body.
	Defined
	// Unscoped: the request concerns every task or the server itself
	// (tokens, the cluster, the clock, lists of everything): only for a
	// token without a scope.
	Unscoped
)

func need(p auth.Permission) Rule { return Rule{Perm: p} }
func over(p auth.Permission, r Reach, param string) Rule {
	return Rule{Perm: p, Reach: r, Param: param}
}
func whole(p auth.Permission) Rule { return Rule{Perm: p, Reach: Unscoped} }

type checkerKey struct{}

// Check returns nil if the identity of a request that passed the API's
// guard may make it under rule, and else the error to answer with: a
// *auth.Denied naming the permission, and the task outside the scope if
// that is why. The web UI checks its pages with it.
func Check(r *http.Request, rule Rule) error {
	id := identity(r)
	if id == nil {
		return &Error{Status: http.StatusUnauthorized, Message: "no identity: sign in"}
	}
	if err := id.Can(rule.Perm); err != nil {
		return err
	}
	s, _ := r.Context().Value(checkerKey{}).(*Server)
	if len(id.Scope) == 0 || rule.Reach == NoTask || rule.Reach == Filtered || rule.Reach == Defined {
		return nil
	}
	if s == nil {
		return &auth.Denied{Identity: id, Permission: rule.Perm, Task: "*"}
	}
	return s.inScope(r, id, rule)
}

// withChecker gives a request's context the server that Check asks.
func (s *Server) withChecker(ctx context.Context) context.Context {
	return context.WithValue(ctx, checkerKey{}, s)
}

// inScope checks a request of an identity with a scope.
func (s *Server) inScope(r *http.Request, id *auth.Identity, rule Rule) error {
	if rule.Reach == Unscoped {
		return &auth.Denied{Identity: id, Permission: rule.Perm, Task: "*"}
	}
	if rule.Reach == DataEvent {
		return s.dataInScope(r, id, rule)
	}
	name := r.PathValue(rule.Param)
	if name == "" {
		if name = r.URL.Query().Get(rule.Param); name == "" {
			return &Error{Status: http.StatusForbidden, Message: fmt.Sprintf(
				"permission %s over every task required: %s's scope is %v; name a task of the scope with ?%s=NAME",
				rule.Perm, id.Name, []string(id.Scope), rule.Param)}
		}
	}
	reached, err := s.sched.Reach(r.Context(), name,
		scheduler.Reach{Acted: rule.Reach == Acted, Upstream: rule.Reach == Explained, Groups: id.Scope.NeedsGroups()})
	if err != nil {
		return err
	}
	return covered(id, rule.Perm, name, reached.Names, reached.Groups)
}

// dataInScope checks a data event: every configuration it is offered to,
// and every task those reach, must be in the scope. The body is read
// here and given back to the handler.
func (s *Server) dataInScope(r *http.Request, id *auth.Identity, rule Rule) error {
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxEventBody+1))
	r.Body = io.NopCloser(bytes.NewReader(body)) // the handler reads it again, and refuses it if it must
	switch {
	case err != nil:
		return badRequest("truncated request body: %v", err)
	case len(body) > MaxEventBody:
		return nil // the handler refuses it (413)
	}
	ev, err := eventdep.DecodeEvent(body)
	if err != nil {
		return nil // the handler refuses it, saying why
	}
	reached, err := s.sched.DataReached(r.Context(), ev.Type, ev.Resource, id.Scope.NeedsGroups())
	if err != nil {
		return err
	}
	return covered(id, rule.Perm, "a data event on "+ev.Resource, reached.Names, reached.Groups)
}

// covered returns a *auth.Denied naming the first task of reached the
// scope does not cover, and what reaches it.
func covered(id *auth.Identity, p auth.Permission, from string, reached []string, groups map[string][]string) error {
	for _, n := range reached {
		if !id.Scope.Covers(n, groups[n]) {
			d := &auth.Denied{Identity: id, Permission: p, Task: n}
			if n != from {
				d.Via = from
			}
			return d
		}
	}
	return nil
}
