package auth

import (
	"fmt"
	"path"
	"slices"
	"strings"
)

// Role is what a token may do: one of the roles below.
type Role string

// The roles, from the least to the most allowed; Ingest stands apart.
const (
	Viewer   Role = "viewer"   // reads everything but task logs
	Operator Role = "operator" // and acts on tasks and nodes, posts data events
	Admin    Role = "admin"    // and defines tasks (which run code), tokens, the cluster
	Ingest   Role = "ingest"   // posts data events, nothing else
)

// Roles lists the roles in the order documentation gives them.
var Roles = []Role{Viewer, Operator, Admin, Ingest}

// ParseRole reads a role's name.
func ParseRole(s string) (Role, error) {
	r := Role(s)
	if !slices.Contains(Roles, r) {
		return "", fmt.Errorf("unknown role %q (want viewer, operator, admin or ingest)", s)
	}
	return r, nil
}

// Permission is one thing a request may need; a refusal names it.
type Permission string

// The permissions. Read covers every answer of the API and the web UI but
// task logs, which may hold what a command printed of its secrets; each
// other permission is needed by the requests its comment names.
const (
	Read          Permission = "read"
	ReadSensitive Permission = "read:sensitive" // task logs (the web UI's log tail)
	Operate       Permission = "tasks:operate"  // task events, backfills, timeperiod node actions
	PostData      Permission = "data:post"      // POST /events
	Clock         Permission = "clock:advance"  // move a simulated clock
	Define        Permission = "definitions:write"
	ManageTokens  Permission = "tokens:manage"
	ManageCluster Permission = "cluster:manage"
)

var grants = map[Role][]Permission{
	Viewer:   {Read},
	Operator: {Read, ReadSensitive, Operate, PostData, Clock},
	Admin:    {Read, ReadSensitive, Operate, PostData, Clock, Define, ManageTokens, ManageCluster},
	Ingest:   {PostData},
}

// Has reports whether the role grants p.
func (r Role) Has(p Permission) bool { return slices.Contains(grants[r], p) }

// Scoped reports whether a permission concerns particular tasks, so that
// a token's scope narrows it.
func (p Permission) Scoped() bool {
	return p == ReadSensitive || p == Operate || p == Define
}

// Scope narrows what a token may change to some tasks: each pattern is a
// task name, a name prefix ending in '*' (finance_*), or group:NAME for the
// tasks of a group. An empty scope is every task. Reads other than task
// logs are not narrowed.
type Scope []string

// ParseScope checks a scope's patterns.
func ParseScope(patterns []string) (Scope, error) {
	for _, p := range patterns {
		name, group := strings.CutPrefix(p, "group:")
		if !group {
			name = strings.TrimSuffix(name, "*") // a prefix; "*" alone is every task
		}
		if name == "" && (group || p != "*") || strings.ContainsAny(name, "*?[]\\ \t\r\n,") {
			return nil, fmt.Errorf("scope %q: want a task name, a prefix ending in *, or group:NAME", p)
		}
	}
	return Scope(patterns), nil
}

// Covers reports whether the scope covers a task of that name in those
// groups.
func (s Scope) Covers(task string, groups []string) bool {
	if len(s) == 0 {
		return true
	}
	for _, p := range s {
		switch {
		case strings.HasPrefix(p, "group:"):
			if slices.Contains(groups, p[len("group:"):]) {
				return true
			}
		case strings.HasSuffix(p, "*"):
			if strings.HasPrefix(task, p[:len(p)-1]) {
				return true
			}
		case p == task:
			return true
		}
	}
	return false
}

// Owners are the OS users a token may define commands to run as (a
// task's owner): each pattern is a user name, "user:group", or a glob of
// them as path.Match reads it (batch_*, etl:*, * for any). A command
// without an owner counts as one for the user it runs as: the server's
// default owner, or the server's own user.
type Owners []string

// ParseOwners checks owner patterns; none (an empty list) is nil.
func ParseOwners(patterns []string) (Owners, error) {
	if len(patterns) == 0 {
		return nil, nil
	}
	for _, p := range patterns {
		if _, err := path.Match(p, ""); err != nil || p == "" || strings.ContainsAny(p, "/ \t\r\n,") {
			return nil, fmt.Errorf("owners %q: want a user name, USER:GROUP, or a glob of them such as batch_* or etl:*", p)
		}
	}
	return Owners(patterns), nil
}

// Cover reports whether the patterns cover owner, "user" or "user:group":
// a pattern without a colon covers the user in any group, one with a
// colon the user in the groups it matches.
func (o Owners) Cover(owner string) bool {
	user, _, hasGroup := strings.Cut(owner, ":")
	for _, p := range o {
		target := owner
		if !strings.Contains(p, ":") {
			target = user
		} else if !hasGroup {
			target = owner + ":" // the user's primary group: only a pattern for any group covers it
		}
		if ok, _ := path.Match(p, target); ok {
			return true
		}
	}
	return false
}

// MayRunAs returns nil if the identity may define a command that runs as
// owner ("user" or "user:group"; a command without an owner passes the
// user it runs as), and else an error that says why. A token with owners
// may name those; without, a token without a scope may name any, and a
// token with a scope none: code it defines could otherwise run as the
// server's own user, which owns the data directory and so everything.
func (id *Identity) MayRunAs(owner string) error {
	if id.Owners == nil && len(id.Scope) == 0 || id.Owners.Cover(owner) {
		return nil
	}
	return &Denied{Identity: id, Permission: Define, Owner: owner}
}

// NeedsGroups reports whether Covers needs a task's groups to decide.
func (s Scope) NeedsGroups() bool {
	return slices.ContainsFunc(s, func(p string) bool { return strings.HasPrefix(p, "group:") })
}
