// Package ostest makes real OS users for tests: a test that runs commands
// as another user creates one with useradd and removes it when it ends.
// Making users takes root, as the CI machine runs tests; elsewhere such a
// test is skipped, saying why.
package ostest

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// User is an OS user a test made, with a group of its own name.
type User struct {
	Name     string
	UID, GID int
}

// mu keeps the users a test binary makes one at a time: useradd and
// userdel lock the account files, and one that finds them locked fails.
var mu sync.Mutex

// NewUser creates an OS user with a group of the same name and no home
// directory, and removes both when the test ends.
func NewUser(t testing.TB) *User {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("making an OS user takes root (the CI machine runs the tests as root)")
	}
	var b [4]byte
	rand.Read(b[:])
	name := "gnt" + hex.EncodeToString(b[:])
	accounts(t, "useradd", "--no-create-home", "--user-group", "--home-dir", "/nonexistent", "--shell", "/bin/sh", name)
	t.Cleanup(func() { accounts(t, "userdel", name) })
	u, err := user.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &User{Name: name, UID: uid, GID: gid}
}

// accounts runs useradd or userdel, again while another process holds
// the account files' lock (exit status 10 of useradd, 1 of userdel with
// "cannot lock"), for up to a minute.
func accounts(t testing.TB, argv ...string) {
	t.Helper()
	mu.Lock()
	defer mu.Unlock()
	deadline := time.Now().Add(time.Minute)
	for {
		out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
		if err == nil {
			return
		}
		if !strings.Contains(string(out), "lock") || time.Now().After(deadline) {
			t.Fatalf("%s: %v\n%s", strings.Join(argv, " "), err, out)
		}
		time.Sleep(50 * time.Millisecond) // another process holds the lock: try again
	}
}
