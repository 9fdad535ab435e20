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
	"time"

	"golang.org/x/sys/unix"

	"github.com/gnomon-sched/gnomon/job"
)

// Rotation bounds the log files of runs by size and by age, as
// logrotate's size, maxage and rotate do: when a run starts and its task's
// log file holds Size bytes or more, or its oldest content is Age old or
// older, and no run in flight writes to it, PATH becomes PATH.1, PATH.1
// becomes PATH.2, and so on up to PATH.Keep; older ones go. The run then
// writes to a new PATH. A run's output is never split: the file is renamed
// only while no run writes to it, and a run whose file was renamed under
// it by another tool (logrotate's default, create) goes on writing to the
// renamed file, where its range is found (job.LogSpan's OutFile and
// ErrFile). The zero Rotation never rotates.
//
// The age of a file's oldest content is the time since it was begun, on
// the runner's clock (LocalConfig.Now, a simulated one included): the
// runner makes each log file when the first run that writes to it starts,
// and notes when. A file it did not make, or made before a restart, is as
// old as its birth time says (statx's btime, on the system's clock); on a
// file system that does not record births, as the time since the last
// write to PATH.1, which ended when PATH was begun; a file never rotated
// there rotates by size only.
type Rotation struct {
	Size int64 `json:"size,omitempty"`
	// Age rotates a file whose oldest content is this old; 0 never.
	Age time.Duration `json:"age,omitempty"`
	// Keep is how many rotated files are kept; 0 means DefaultKeep.
	Keep int `json:"keep,omitempty"`
}

// Over returns the rotation a task's own (job.LogRotation) makes of r:
// each of its fields set replaces r's, Off turning a trigger off.
func (r Rotation) Over(t *job.LogRotation) Rotation {
	if t == nil {
		return r
	}
	if t.Size != 0 {
		r.Size = max(t.Size, 0)
	}
	if t.Age != 0 {
		r.Age = max(time.Duration(t.Age), 0)
	}
	if t.Keep > 0 {
		r.Keep = t.Keep
	}
	return r
}

// due reports whether a file of logStat ls, whose rotated files are at
// PATH.N (p is PATH), is due for rotation at now; begun is when the
// runner made it, zero when not known.
func (r Rotation) due(p string, ls logStat, begun, now time.Time) bool {
	if !ls.regular || ls.size == 0 {
		return false
	}
	if r.Size > 0 && ls.size >= r.Size {
		return true
	}
	if r.Age <= 0 {
		return false
	}
	born := begun
	if born.IsZero() {
		born = ls.born
	}
	if born.IsZero() {
		fi, err := os.Lstat(p + ".1")
		if err != nil {
			return false
		}
		born = fi.ModTime()
	}
	return now.Sub(born) >= r.Age
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
	// born is when the file was made, zero when not recorded.
	born time.Time
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
		ls.born = time.Unix(st.Btime.Sec, int64(st.Btime.Nsec))
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

// rotate rotates a log file that is due by rotation r at now (see
// Rotation); begun returns when the runner made a file of an identity, if
// it did. It returns the identity of the file it rotated, 0 when it did
// not (or the file has none). The caller makes sure that no run writes to
// it.
func (l *LogFiles) rotate(path string, r Rotation, now time.Time, begun func(id uint64) time.Time) (rotated uint64, err error) {
	if l == nil || r.Size <= 0 && r.Age <= 0 || path == "" {
		return 0, nil
	}
	p, err := l.Resolve(path)
	if err != nil || p == os.DevNull {
		return 0, err
	}
	ls, err := statLog(p)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	var at time.Time
	if begun != nil {
		at = begun(ls.id)
	}
	if !r.due(p, ls, at, now) {
		return 0, nil
	}
	if ls.id == 0 {
		ls.id = 1 // rotated, though without an identity
	}
	keep := r.Keep
	if keep <= 0 {
		keep = DefaultKeep
	}
	// Through the root the file lies in, as Open: no link leads out.
	dir, base := filepath.Dir(p), filepath.Base(p)
	rename, remove := os.Rename, os.Remove
	if r, ok := l.rootOf(p); ok {
		root, err := os.OpenRoot(r)
		if err != nil {
			return 0, fmt.Errorf("log root: %w", err)
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
	// The oldest kept goes, with any beyond it (a Keep lowered since).
	for n := keep; n <= maxRotated; n++ {
		err := remove(name(n))
		if errors.Is(err, fs.ErrNotExist) && n > keep {
			break
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return 0, fmt.Errorf("rotate %s: %w", path, err)
		}
	}
	for n := keep - 1; n >= 0; n-- {
		if err := rename(name(n), name(n+1)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return 0, fmt.Errorf("rotate %s: %w", path, err)
		}
	}
	return ls.id, nil
}

// rotation returns the runner's rotation: none without LogFiles.
func (l *LogFiles) rotation() Rotation {
	if l == nil {
		return Rotation{}
	}
	return l.Rotate
}
