package defs

import (
	"fmt"
	"regexp"
	"strings"
)

// ownerNameRE is a user or group name as useradd and groupadd accept it
// by default, less the upper case they refuse too: a letter or an
// underscore, then letters, digits, '_', '.' and '-', at most 32 in all,
// with an optional trailing '$' (machine accounts).
var ownerNameRE = regexp.MustCompile(`^[a-z_][a-z0-9_.-]{0,30}\$?$`)

// CheckOwner checks an owner attribute: "user" or "user:group", each a
// user or group name of the system (not a number: a name says who runs
// the command where a number may mean another user on another machine).
func CheckOwner(v string) error {
	user, group, hasGroup := strings.Cut(v, ":")
	if !ownerNameRE.MatchString(user) {
		return fmt.Errorf("owner: %q is not a user name (write owner: USER or owner: USER:GROUP, names of 1 to 32 lower-case letters, digits, '_', '.' and '-', starting with a letter or '_')", user)
	}
	if hasGroup && !ownerNameRE.MatchString(group) {
		return fmt.Errorf("owner: %q is not a group name (write owner: USER or owner: USER:GROUP, names of 1 to 32 lower-case letters, digits, '_', '.' and '-', starting with a letter or '_')", group)
	}
	return nil
}

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
