package executor

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// Rotation bounds the log files of runs by size, as logrotate's size and
// rotate do: when a run starts and its task's log file holds Size bytes
// or more, and no run in flight writes to it, PATH becomes PATH.1, PATH.1
// becomes PATH.2, and so on up to PATH.Keep; the oldest goes. The run then
// writes to a new PATH. A run's output is never split: the file is renamed
// only while no run writes to it, and a run whose file was renamed under
// it by another tool (logrotate's default, create) goes on writing to the
// renamed file, where its range is found (job.LogSpan's OutFile and
// ErrFile). The zero Rotation never rotates.
type Rotation struct {
	Size int64 `json:"size,omitempty"`
	// Keep is how many rotated files are kept; 0 means DefaultKeep.
	Keep int `json:"keep,omitempty"`
}

// DefaultKeep is Rotation.Keep's default.
const DefaultKeep = 5

// maxRotated bounds the rotated files a run's output is looked for in
// (PATH.1 to PATH.maxRotated): logrotate may keep more than gnomon does.
const maxRotated = 1000

// fileID is the identity of a log file, which a rename keeps: its inode
// number with its birth time, where the file system records it, since an
// inode number is reused once a file is removed; 0 when it cannot be read.
func fileID(path string) uint64 {
	var st unix.Statx_t
	if err := unix.Statx(unix.AT_FDCWD, path, unix.AT_SYMLINK_NOFOLLOW, unix.STATX_INO|unix.STATX_BTIME, &st); err != nil {
		return 0
	}
	if st.Mask&unix.STATX_BTIME == 0 {
		return st.Ino
	}
	h := fnv.New64a()
	var b [8 * 3]byte
	binary.LittleEndian.PutUint64(b[0:], st.Ino)
	binary.LittleEndian.PutUint64(b[8:], uint64(st.Btime.Sec))
	binary.LittleEndian.PutUint64(b[16:], uint64(st.Btime.Nsec))
	h.Write(b[:])
	return max(h.Sum64(), 1)
}

// Stat returns the size of a log file (0 for one not written yet) and its
// identity (0 for none, see fileID), which reads nothing of it.
func (l *LogFiles) Stat(path string) (size int64, id uint64, err error) {
	p, err := l.Resolve(path)
	if err != nil || p == os.DevNull {
		return 0, 0, err
	}
	fi, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, 0, nil
	}
	if err != nil {
		return 0, 0, err
	}
	return fi.Size(), fileID(p), nil
}

// Locate returns the path of the log file of identity id: path itself, or
// one of its rotated files (PATH.1, PATH.2, ...); ok is false when none is
// (rotated away since).
func (l *LogFiles) Locate(path string, id uint64) (string, bool) {
	p, err := l.Resolve(path)
	if err != nil {
		return "", false
	}
	for n := 0; n <= maxRotated; n++ {
		name := p
		if n > 0 {
			name = p + "." + strconv.Itoa(n)
		}
		fi, err := os.Lstat(name)
		if err != nil {
			if n > 0 && errors.Is(err, fs.ErrNotExist) {
				return "", false
			}
			continue
		}
		if fi.Mode().IsRegular() && fileID(name) == id {
			if n == 0 {
				return path, true
			}
			return name, true
		}
	}
	return "", false
}

// rotate rotates a log file that reached the rotation's size (see
// Rotation), and reports whether it did. The caller makes sure that no
// run writes to it.
func (l *LogFiles) rotate(path string) (bool, error) {
	if l == nil || l.Rotate.Size <= 0 || path == "" {
		return false, nil
	}
	p, err := l.Resolve(path)
	if err != nil || p == os.DevNull {
		return false, err
	}
	fi, err := os.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) || err == nil && (!fi.Mode().IsRegular() || fi.Size() < l.Rotate.Size) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	keep := l.Rotate.Keep
	if keep <= 0 {
		keep = DefaultKeep
	}
	// Through the root the file lies in, as Open: no link leads out.
	dir, base := filepath.Dir(p), filepath.Base(p)
	rename, remove := os.Rename, os.Remove
	if r, ok := l.rootOf(p); ok {
		root, err := os.OpenRoot(r)
		if err != nil {
			return false, fmt.Errorf("log root: %w", err)
		}
		defer root.Close()
		rel, _ := filepath.Rel(r, dir)
		at := func(name string) string { return filepath.Join(rel, filepath.Base(name)) }
		rename = func(a, b string) error { return root.Rename(at(a), at(b)) }
		remove = func(a string) error { return root.Remove(at(a)) }
	}
	name := func(n int) string {
		if n == 0 {
			return filepath.Join(dir, base)
		}
		return filepath.Join(dir, base+"."+strconv.Itoa(n))
	}
	if err := remove(name(keep)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, fmt.Errorf("rotate %s: %w", path, err)
	}
	for n := keep - 1; n >= 0; n-- {
		if err := rename(name(n), name(n+1)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return false, fmt.Errorf("rotate %s: %w", path, err)
		}
	}
	return true, nil
}
