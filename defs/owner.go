package defs

import (
	"strings"

	"github.com/gnomon-sched/gnomon/job"
)

// CheckOwner checks an owner attribute: "user" or "user:group" (see
// job.CheckOwner).
func CheckOwner(v string) error { return job.CheckOwner(v) }

// SplitOwner returns the user and the group (empty: the user's primary
// group) of an owner CheckOwner accepts.
func SplitOwner(v string) (user, group string) {
	user, group, _ = strings.Cut(v, ":")
	return user, group
}

// CheckOwners checks every owner the actions name with check, which says
// why a command may not run as that owner on this server (no privilege
// to change users, no such user), and returns an error for each owner
// refused, naming its line, its action and the field. It is for a server
// that runs commands: Apply does not call it, since an offline check
// cannot know who the server runs as.
func CheckOwners(file string, acts []Action, check func(owner string) error) Errors {
	var errs Errors
	for _, a := range acts {
		if a.Kind.base() == Delete {
			continue
		}
		for _, f := range a.Fields {
			if f.Key != "owner" || f.Value == "" || CheckOwner(f.Value) != nil {
				continue // a malformed owner is reported by Apply
			}
			if err := check(f.Value); err != nil {
				errs = append(errs, &Error{File: file, Line: f.Line, Kind: a.Kind, Target: a.Name, Msg: "owner: " + err.Error()})
			}
		}
	}
	return errs
}
