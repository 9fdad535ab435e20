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

// logStat is what one statx call tells of a log file: its size, its
// identity and whether it is a regular file. The identity is one a rename
// keeps: the inode number with the birth time, where the file system
// records it, since an inode number is reused once a file is removed.
type logStat struct {
	size    int64
	id      uint64
	regular bool
}

// statLog reads a log file's logStat without following a symbolic link (a
// link is never opened as a log file), in one system call: a run's start
// and end each read their log files' sizes.
func statLog(path string) (logStat, error) {
	var st unix.Statx_t
	const mask = unix.STATX_TYPE | unix.STATX_SIZE | unix.STATX_INO | unix.STATX_BTIME
	if err := unix.Statx(unix.AT_FDCWD, path, unix.AT_SYMLINK_NOFOLLOW, mask, &st); err != nil {
		return logStat{}, &fs.PathError{Op: "statx", Path: path, Err: err}
	}
	ls := logStat{size: int64(st.Size), id: st.Ino, regular: st.Mode&unix.S_IFMT == unix.S_IFREG}
	if st.Mask&unix.STATX_BTIME != 0 {
		h := fnv.New64a()
		var b [8 * 3]byte
		binary.LittleEndian.PutUint64(b[0:], st.Ino)
		binary.LittleEndian.PutUint64(b[8:], uint64(st.Btime.Sec))
		binary.LittleEndian.PutUint64(b[16:], uint64(st.Btime.Nsec))
		h.Write(b[:])
		ls.id = max(h.Sum64(), 1)
	}
	return ls, nil
}

// Stat returns the size of a log file (0 for one not written yet) and its
// identity (0 for none, see logStat), which reads nothing of it.
func (l *LogFiles) Stat(path string) (size int64, id uint64, err error) {
	p, err := l.Resolve(path)
	if err != nil || p == os.DevNull {
		return 0, 0, err
	}
	ls, err := statLog(p)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, 0, nil
	}
	if err != nil {
		return 0, 0, err
	}
	return ls.size, ls.id, nil
}

// Locate returns the path of the log file of identity id: path itself, or
// one of its rotated files (PATH.1, PATH.2, ...); ok is false when none is
// (rotated away since).
func (l *LogFiles) Locate(path string, id uint64) (string, bool) {
	p, _, ok := l.locate(path, id)
	return p, ok
}

// locate is Locate, which also returns the size of the file found.
func (l *LogFiles) locate(path string, id uint64) (string, int64, bool) {
	p, err := l.Resolve(path)
	if err != nil {
		return "", 0, false
	}
	for n := 0; n <= maxRotated; n++ {
		name := p
		if n > 0 {
			name = p + "." + strconv.Itoa(n)
		}
		ls, err := statLog(name)
		if err != nil {
			if n > 0 && errors.Is(err, fs.ErrNotExist) {
				return "", 0, false
			}
			continue
		}
		if ls.regular && ls.id == id {
			if n == 0 {
				return path, ls.size, true
			}
			return name, ls.size, true
		}
	}
	return "", 0, false
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
	ls, err := statLog(p)
	if errors.Is(err, fs.ErrNotExist) || err == nil && (!ls.regular || ls.size < l.Rotate.Size) {
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
