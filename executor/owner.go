package executor

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/user"
	"strconv"
	"strings"
	"syscall"
)

// Owner is the OS user a command runs as, looked up: its IDs, its
// supplementary groups, and what its environment names (USER, LOGNAME,
// HOME).
type Owner struct {
	Name   string
	UID    uint32
	GID    uint32
	Groups []uint32
	Home   string
}

// LookupOwner looks up an owner, "user" or "user:group": the user's
// primary group unless a group is named, and the user's supplementary
// groups (with the group named, if it is not among them). A user or group
// unknown to this machine is an error that says so.
func LookupOwner(owner string) (*Owner, error) {
	name, group, hasGroup := strings.Cut(owner, ":")
	u, err := user.Lookup(name)
	if err != nil {
		var unknown user.UnknownUserError
		if errors.As(err, &unknown) {
			return nil, fmt.Errorf("no user %s on this machine (create it, or name another owner)", name)
		}
		return nil, fmt.Errorf("look up user %s: %w", name, err)
	}
	o := &Owner{Name: u.Username, Home: u.HomeDir}
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("user %s: uid %q", name, u.Uid)
	}
	o.UID = uint32(uid)
	gidStr := u.Gid
	if hasGroup {
		g, err := user.LookupGroup(group)
		if err != nil {
			var unknown user.UnknownGroupError
			if errors.As(err, &unknown) {
				return nil, fmt.Errorf("no group %s on this machine (create it, or name another group)", group)
			}
			return nil, fmt.Errorf("look up group %s: %w", group, err)
		}
		gidStr = g.Gid
	}
	gid, err := strconv.ParseUint(gidStr, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("user %s: gid %q", name, gidStr)
	}
	o.GID = uint32(gid)
	ids, err := u.GroupIds()
	if err != nil {
		return nil, fmt.Errorf("groups of user %s: %w", name, err)
	}
	for _, s := range ids {
		if g, err := strconv.ParseUint(s, 10, 32); err == nil {
			o.Groups = append(o.Groups, uint32(g))
		}
	}
	return o, nil
}

// Self reports whether the owner is the user and group the process runs
// as: running as it needs no privilege.
func (o *Owner) Self() bool {
	return int(o.UID) == os.Geteuid() && int(o.GID) == os.Getegid()
}

// credential is what the command's process runs with.
func (o *Owner) credential() *syscall.Credential {
	return &syscall.Credential{Uid: o.UID, Gid: o.GID, Groups: o.Groups}
}

// env returns env with USER, LOGNAME and HOME those of the owner.
func (o *Owner) env(env []string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, "USER=") && !strings.HasPrefix(kv, "LOGNAME=") && !strings.HasPrefix(kv, "HOME=") {
			out = append(out, kv)
		}
	}
	return append(out, "USER="+o.Name, "LOGNAME="+o.Name, "HOME="+o.Home)
}

// Capabilities that changing users takes.
const (
	capSetGID = 6
	capSetUID = 7
)

// CanChangeUser returns nil if this process may start commands as other
// users: it has CAP_SETUID and CAP_SETGID in its effective set (as root
// has, unless the capabilities were dropped), and else an error that says
// who it runs as and what it lacks.
func CanChangeUser() error {
	eff, err := effectiveCaps()
	if err != nil {
		return fmt.Errorf("cannot tell whether this server may run commands as other users: %w", err)
	}
	if eff&(1<<capSetUID) != 0 && eff&(1<<capSetGID) != 0 {
		return nil
	}
	who := strconv.Itoa(os.Geteuid())
	if u, err := user.LookupId(who); err == nil {
		who = u.Username + " (uid " + who + ")"
	}
	return fmt.Errorf("this server runs as %s without CAP_SETUID and CAP_SETGID, so it cannot run commands as another user: "+
		"run the server as root (or give it those capabilities), or remove owner", who)
}

// effectiveCaps reads the effective capability set of this process.
func effectiveCaps() (uint64, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "CapEff:"); ok {
			return strconv.ParseUint(strings.TrimSpace(v), 16, 64)
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, errors.New("/proc/self/status has no CapEff line")
}

// CheckOwner says why a command may not run as owner on this machine, or
// nil: the owner must exist, and unless it is the user and group this
// process runs as, the process must be able to change users.
func CheckOwner(owner string) error {
	o, err := LookupOwner(owner)
	if err != nil {
		return err
	}
	if o.Self() {
		return nil
	}
	return CanChangeUser()
}
