package executor

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
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
// Open then opens the file through an os.Root of the root it lies in, so
// that no symbolic link leads out of that root, even one made after the
// path was checked. It creates the missing directories (0700) and the file
// (0600), and refuses a file that is one of the server's under another
// name (os.SameFile): a file in Own, or a regular file directly in a
// Private directory.
//
// The zero LogFiles confines nothing: a path is used as given (a file it
// creates is still 0600).
type LogFiles struct {
	// Roots are the directories log files may be in: absolute and clean.
	Roots []string `json:"roots,omitempty"`
	// Private are the server's directories (absolute and clean).
	Private []string `json:"private,omitempty"`
	// Own are the server's files wherever they are (absolute and clean):
	// its database, with its -wal and -shm files.
	Own []string `json:"own,omitempty"`
}

// logFlags open a log file for appending, creating it if needed.
const logFlags = os.O_WRONLY | os.O_APPEND | os.O_CREATE

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
// does; the server's files it compares them with are listed once, at its
// first call.
func (l *LogFiles) Opener() func(path string) (*os.File, error) {
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
		r, ok := l.rootOf(p)
		var f *os.File
		if ok {
			f, err = openIn(r, p)
		} else {
			f, err = os.OpenFile(p, logFlags, 0o600)
		}
		if err != nil || l == nil {
			return f, err
		}
		if !listed {
			own, listed = l.own(), true
		}
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
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

// openIn opens p, which lies inside root, through an os.Root of root,
// creating the directories it needs.
func openIn(root, p string) (*os.File, error) {
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, fmt.Errorf("log root: %w", err)
	}
	defer r.Close()
	rel, err := filepath.Rel(root, p)
	if err != nil {
		return nil, err
	}
	f, err := r.OpenFile(rel, logFlags, 0o600)
	if dir := filepath.Dir(rel); errors.Is(err, fs.ErrNotExist) && dir != "." {
		if err = r.MkdirAll(dir, 0o700); err == nil {
			f, err = r.OpenFile(rel, logFlags, 0o600)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%s, in the log root %s: %w", p, root, err)
	}
	return f, nil
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
		f, err = root.Open(rel)
	} else {
		f, err = os.Open(p)
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
