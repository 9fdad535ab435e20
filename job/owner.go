package job

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

// CheckOwner checks the owner of a command, the OS user it runs as:
// "user" or "user:group", each a user or group name (not a number: a name
// says who runs the command, where a number may mean another user on
// another machine).
func CheckOwner(v string) error {
	user, group, hasGroup := strings.Cut(v, ":")
	const how = "write owner: USER or owner: USER:GROUP, names of 1 to 32 lower-case letters, digits, '_', '.' and '-', starting with a letter or '_'"
	if !ownerNameRE.MatchString(user) {
		return fmt.Errorf("owner: %q is not a user name (%s)", user, how)
	}
	if hasGroup && !ownerNameRE.MatchString(group) {
		return fmt.Errorf("owner: %q is not a group name (%s)", group, how)
	}
	return nil
}
