package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// LockFile is the file, in a server's data directory, that the server
// holds an exclusive lock on while it runs, and that names its PID.
const LockFile = "server.lock"

// lockData takes the exclusive lock of a data directory (flock on
// DATA/server.lock, released by the kernel when the process ends however
// it ends) and writes the process's PID in the file. A second server on
// the same directory, whatever its --listen or --db, is refused at once,
// naming the PID that holds the lock: two servers on one directory would
// both run its tasks, and the second would overwrite its files.
func lockData(dir string) (*os.File, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("data directory: %w", err)
	}
	f, err := takeLock(dir)
	var held *heldError
	if errors.As(err, &held) {
		return nil, fmt.Errorf("data directory %s is in use by another gnomon server (PID %s, which holds %s): stop it, or give this one a --data of its own", dir, held.pid, held.path)
	}
	return f, err
}

// heldError is the lock of a data directory held by a running server.
type heldError struct{ path, pid string }

func (e *heldError) Error() string { return e.path + " is held by PID " + e.pid }

// takeLock takes the exclusive lock of the data directory dir, which
// exists, and writes the process's PID in it; a *heldError when a running
// server holds it.
func takeLock(dir string) (*os.File, error) {
	path := filepath.Join(dir, LockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, fmt.Errorf("data directory lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			holder := "unknown"
			if b, err := os.ReadFile(path); err == nil && strings.TrimSpace(string(b)) != "" {
				holder = strings.TrimSpace(string(b))
			}
			return nil, &heldError{path, holder}
		}
		return nil, fmt.Errorf("data directory lock %s: %w", path, err)
	}
	// The PID is for the message to a server refused: without it, the lock
	// holds all the same.
	if f.Truncate(0) == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return f, nil
}
