package executor

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// LogFiles says where the log files of runs (out_log_file, err_log_file)
// may be, and opens them.
//
// A path is first checked as written (Resolve): a relative path is taken
// from the first root and must stay inside it; an absolute one, once
// cleaned, must lie inside one of the roots. Neither may be one of the
// server's files: a file in Own, or anything under a Private directory
// except under a root that lies inside it (the data directory is private,
// its logs subdirectory a root). The path /dev/null is always accepted.
//
// Open then opens the file's directory through an os.Root of the root it
// lies in, so that no symbolic link leads out of that root, even one made
// after the path was checked, and the file itself without following a
// link (O_NOFOLLOW) and without waiting (O_NONBLOCK: a FIFO is refused at
// once). It creates the missing directories (0700), and the file
// exclusively (O_EXCL, 0600) for the user the run runs as (OpenerAs). It
// refuses what is not a regular file, a file that exists and belongs to
// another user than the run's (whoever made it could read what the run
// writes), and a file that is one of the server's under another name
// (os.SameFile): a file in Own, or a regular file directly in a Private
// directory.
//
// The zero LogFiles confines nothing: a path is used as given, with the
// same rules on links, file types and owners.
type LogFiles struct {
	// Roots are the directories log files may be in: absolute and clean.
	Roots []string `json:"roots,omitempty"`
	// Private are the server's directories (absolute and clean).
	Private []string `json:"private,omitempty"`
	// Own are the server's files wherever they are (absolute and clean):
	// its database, with its -wal and -shm files.
	Own []string `json:"own,omitempty"`
	// Rotate bounds the files by size and age (see Rotation), unless a run's
	// task has its own (job.Launch.LogRotate); the runner rotates
	// them when runs start.
	Rotate Rotation `json:"rotate,omitzero"`
}

// Resolve returns the file a log path names, or why it may not be a log
// file. It reads nothing from the file system.
func (l *LogFiles) Resolve(path string) (string, error) {
	switch {
	case path == os.DevNull:
		return path, nil
	case path == "":
		return "", errors.New("no file named")
	case l == nil || len(l.Roots) == 0:
		return path, nil
	}
	var p string
	if filepath.IsAbs(path) {
		p = filepath.Clean(path)
		if _, ok := l.root(p); !ok {
			return "", fmt.Errorf("%s is outside the log roots (%s)", path, l.roots())
		}
	} else {
		if !filepath.IsLocal(path) {
			return "", fmt.Errorf("%s leads out of the log root %s, which relative paths are taken from (log roots: %s)",
				path, l.Roots[0], l.roots())
		}
		p = filepath.Join(l.Roots[0], path)
	}
	for _, o := range l.Own {
		if p == o {
			return "", fmt.Errorf("%s is a file of the gnomon server", p)
		}
	}
	for _, d := range l.Private {
		if (p == d || within(d, p)) && !l.inRootWithin(d, p) {
			return "", fmt.Errorf("%s is in the gnomon server's directory %s (log roots: %s)", p, d, l.roots())
		}
	}
	return p, nil
}

// inRootWithin reports whether p lies in a root that lies inside dir.
func (l *LogFiles) inRootWithin(dir, p string) bool {
	for _, r := range l.Roots {
		if within(dir, r) && within(r, p) {
			return true
		}
	}
	return false
}

// root returns the first root p lies inside.
func (l *LogFiles) root(p string) (string, bool) {
	for _, r := range l.Roots {
		if within(r, p) {
			return r, true
		}
	}
	return "", false
}

func (l *LogFiles) roots() string { return strings.Join(l.Roots, ", ") }

// within reports whether path p lies strictly inside directory dir; both
// are clean.
func within(dir, p string) bool {
	if dir == string(filepath.Separator) {
		return len(p) > 1 && p[0] == filepath.Separator
	}
	return len(p) > len(dir)+1 && p[len(dir)] == filepath.Separator && p[:len(dir)] == dir
}

// Opener returns a function that opens log files for appending, as Open
// does, for runs of the server's own user; the server's files it compares
// them with are listed once, at its first call.
func (l *LogFiles) Opener() func(path string) (*os.File, error) { return l.OpenerAs(nil) }

// OpenerAs is Opener for the runs of an owner (nil: the server's own
// user): a file it creates is the owner's, and a file that exists must
// be.
func (l *LogFiles) OpenerAs(o *Owner) func(path string) (*os.File, error) {
	uid, gid := os.Geteuid(), os.Getegid()
	if o != nil {
		uid, gid = int(o.UID), int(o.GID)
	}
	var own []ownFile
	listed := false
	return func(path string) (*os.File, error) {
		p, err := l.Resolve(path)
		if err != nil {
			return nil, err
		}
		if p == os.DevNull {
			return os.OpenFile(p, os.O_WRONLY, 0)
		}
		r, _ := l.rootOf(p)
		f, err := openLog(r, p, uid, gid)
		if err != nil || l == nil {
			return f, err
		}
		if !listed {
			own, listed = l.own(), true
		}
		if fi, err := f.Stat(); err == nil {
			if err := isOwn(p, fi, own); err != nil {
				f.Close()
				return nil, err
			}
		}
		return f, nil
	}
}

// rootOf returns the log root p is in, if any.
func (l *LogFiles) rootOf(p string) (string, bool) {
	if l == nil {
		return "", false
	}
	return l.root(p)
}

// Open opens a log file for appending: see LogFiles.
func (l *LogFiles) Open(path string) (*os.File, error) { return l.Opener()(path) }

// logOpen are the flags a log file is opened with: for appending, without
// following a symbolic link in its last component (os.Root follows those
// that stay inside the root: a link is refused), and without waiting (a
// FIFO without a reader is refused at once instead of wedging the run's
// launch until someone reads it).
const logOpen = syscall.O_WRONLY | syscall.O_APPEND | syscall.O_NOFOLLOW | syscall.O_NONBLOCK | syscall.O_CLOEXEC

// openLog opens log file p, inside root (empty: no root), for a run of
// uid and gid, creating the directories it needs (0700) inside the root.
//
// A file that does not exist is created exclusively (O_EXCL), 0600, and
// given to uid and gid. A file that exists must be a regular file that
// uid owns: a file another account made at the path (in a directory it
// may write to) is not written to, since whoever made it may read it.
func openLog(root, p string, uid, gid int) (*os.File, error) {
	dir, err := openDir(root, filepath.Dir(p))
	if err != nil && root != "" {
		return nil, fmt.Errorf("%s, in the log root %s: %w", p, root, err)
	}
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	dfd, name := int(dir.Fd()), filepath.Base(p)
	created := false
	var fd int
	for try := 0; ; try++ {
		fd, err = syscall.Openat(dfd, name, logOpen, 0)
		if err != syscall.ENOENT {
			break
		}
		fd, err = syscall.Openat(dfd, name, logOpen|syscall.O_CREAT|syscall.O_EXCL, 0o600)
		if err != syscall.EEXIST || try > 0 {
			created = err == nil
			break
		}
		// Made between the two opens: open it as one that exists.
	}
	switch err {
	case nil:
	case syscall.ELOOP:
		return nil, fmt.Errorf("%s is a symbolic link: a log file is opened without following links (name the file it points to)", p)
	case syscall.ENXIO:
		return nil, fmt.Errorf("%s is a FIFO or a socket, not a regular file: a log file must be a regular file (remove it)", p)
	default:
		return nil, &fs.PathError{Op: "open", Path: p, Err: err}
	}
	if err := syscall.SetNonblock(fd, false); err != nil {
		syscall.Close(fd)
		return nil, &fs.PathError{Op: "open", Path: p, Err: err}
	}
	f := os.NewFile(uintptr(fd), p)
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s is a %s, not a regular file: a log file must be a regular file (remove it)", p, kind(fi.Mode()))
	}
	st, _ := fi.Sys().(*syscall.Stat_t)
	switch {
	case st == nil:
	case created && (int(st.Uid) != uid || int(st.Gid) != gid):
		if err := f.Chown(uid, gid); err != nil {
			f.Close()
			return nil, err
		}
	case !created && st.Nlink != 1:
		f.Close()
		return nil, fmt.Errorf("%s has %d names (hard links): a log file that exists must have one, so that it cannot be another file under a second name (remove it, or name another file)", p, st.Nlink)
	case !created && int(st.Uid) != uid:
		f.Close()
		return nil, fmt.Errorf("%s belongs to %s, not to %s, whom the run runs as: a log file that exists must be the run's own, since its owner may read what the run writes (remove it, or name another file)",
			p, userName(int(st.Uid)), userName(uid))
	}
	return f, nil
}

// openDir opens directory dir, inside root (empty: no root) through an
// os.Root, so that no link leads out of the root, creating it (0700) if it
// is missing.
func openDir(root, dir string) (*os.File, error) {
	// Without waiting: a FIFO where the directory should be is refused
	// (ENOTDIR), not waited on.
	const flags = os.O_RDONLY | syscall.O_DIRECTORY | syscall.O_NONBLOCK
	if root == "" {
		return os.OpenFile(dir, flags, 0)
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	rel, err := filepath.Rel(root, dir)
	if err != nil {
		return nil, err
	}
	d, err := r.OpenFile(rel, flags, 0)
	if errors.Is(err, fs.ErrNotExist) && rel != "." {
		if err = r.MkdirAll(rel, 0o700); err == nil {
			d, err = r.OpenFile(rel, flags, 0)
		}
	}
	return d, err
}

// kind names a file type that is not a regular file.
func kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "FIFO"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeDevice != 0:
		return "device"
	case m.IsDir():
		return "directory"
	}
	return "special file"
}

// userName names a user ID: its name and ID, or its ID alone.
func userName(uid int) string {
	id := strconv.Itoa(uid)
	if u, err := user.LookupId(id); err == nil {
		return u.Username + " (uid " + id + ")"
	}
	return "uid " + id
}

// ownFile is a file of the server, as it was when listed.
type ownFile struct {
	path string
	info fs.FileInfo
}

// isOwn returns an error when the file p opened (fi) is one of the
// server's files.
func isOwn(p string, fi fs.FileInfo, own []ownFile) error {
	for _, o := range own {
		if os.SameFile(fi, o.info) {
			return fmt.Errorf("%s is the gnomon server's file %s", p, o.path)
		}
	}
	return nil
}

// own lists the server's files that exist: those in Own and the regular
// files directly in each Private directory.
func (l *LogFiles) own() []ownFile {
	var out []ownFile
	for _, p := range l.Own {
		if fi, err := os.Stat(p); err == nil {
			out = append(out, ownFile{p, fi})
		}
	}
	for _, d := range l.Private {
		ents, _ := os.ReadDir(d)
		for _, e := range ents {
			if !e.Type().IsRegular() {
				continue
			}
			if fi, err := e.Info(); err == nil {
				out = append(out, ownFile{filepath.Join(d, e.Name()), fi})
			}
		}
	}
	return out
}

// Tail reads the end of a log file, at most limit bytes, for display: the
// same rules as Open choose the file (inside a log root, never a file of
// the server), and it is opened for reading only, through the root, so a
// symbolic link cannot lead out of it. It reports whether the file holds
// more than it returns; a file not written yet is empty.
func (l *LogFiles) Tail(path string, limit int64) (data []byte, more bool, err error) {
	return l.Part(path, 0, -1, limit)
}

// Part reads the bytes [from, to) of a log file (to < 0: up to its end),
// at most the last limit bytes of them, by the rules of Tail: the output
// one run appended to its task's log (see job.LogSpan). It reports whether
// the range holds more than it returns.
func (l *LogFiles) Part(path string, from, to, limit int64) (data []byte, more bool, err error) {
	f, err := l.openRead(path)
	if f == nil || err != nil {
		return nil, false, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, false, err
	}
	end := fi.Size()
	if to >= 0 && to < end {
		end = to
	}
	from = min(max(from, 0), end)
	off := max(end-limit, from)
	data = make([]byte, end-off)
	n, err := f.ReadAt(data, off)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, false, err
	}
	return data[:n], off > from, nil
}

// OpenPart opens the bytes [from, to) of a log file (to < 0: up to its
// end) for reading in full, by the rules of Tail: the whole of what one
// run appended, for a download. The caller closes the closer; a file not
// written yet reads as empty.
func (l *LogFiles) OpenPart(path string, from, to int64) (*io.SectionReader, io.Closer, error) {
	f, err := l.openRead(path)
	if err != nil {
		return nil, nil, err
	}
	if f == nil {
		return io.NewSectionReader(strings.NewReader(""), 0, 0), io.NopCloser(nil), nil
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	end := fi.Size()
	if to >= 0 && to < end {
		end = to
	}
	from = min(max(from, 0), end)
	return io.NewSectionReader(f, from, end-from), f, nil
}

// Size returns the size of a log file, 0 for one not written yet: one
// stat of the file the rules of Open choose, which reads nothing of it.
func (l *LogFiles) Size(path string) (int64, error) {
	p, err := l.Resolve(path)
	if err != nil || p == os.DevNull {
		return 0, err
	}
	fi, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

// openRead opens a log file for reading by the rules of Tail: nil, and no
// error, for one not written yet (or the null device).
func (l *LogFiles) openRead(path string) (*os.File, error) {
	p, err := l.Resolve(path)
	if err != nil || p == os.DevNull {
		return nil, err
	}
	var f *os.File
	if r, ok := l.rootOf(p); ok {
		root, rerr := os.OpenRoot(r)
		if rerr != nil {
			return nil, fmt.Errorf("log root: %w", rerr)
		}
		defer root.Close()
		rel, _ := filepath.Rel(r, p)
		// Without waiting: a FIFO at the path is refused below, not
		// waited on until someone writes to it.
		f, err = root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	} else {
		f, err = os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("%s is not a regular file", p)
	}
	if err == nil && l != nil {
		err = isOwn(p, fi, l.own())
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
