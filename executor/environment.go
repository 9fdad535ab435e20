package executor

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/gnomon-sched/gnomon/job"
)

// runEnv is what a command starts with, from its task's environment.
type runEnv struct {
	env   []string // the whole environment, NAME=value
	dir   string   // working directory, empty: the supervisor's
	stdin string   // standard input file, empty: /dev/null
	umask int      // -1: the supervisor's
}

// resolveEnv returns the environment of a command from base (the server's
// less its own settings, with the task's GNOMON_* and the owner's USER,
// LOGNAME and HOME) and the task's environment e: the parameters, as
// given, then the variables, each expanded against what comes before it,
// a secret read from its file; and the working directory and standard
// input, expanded against all of it. An error names the attribute and
// never holds a secret's content.
func resolveEnv(base []string, e *job.Environment) (runEnv, error) {
	r := runEnv{env: base, umask: -1}
	if e.IsZero() {
		return r, nil
	}
	vals := map[string]string{}
	for _, kv := range base {
		if k, v, ok := strings.Cut(kv, "="); ok {
			vals[k] = v
		}
	}
	env := make([]string, 0, len(base)+len(e.Params)+len(e.Vars))
	set := func(name, value string) {
		if _, ok := vals[name]; ok {
			// A later value replaces an earlier one in place: the
			// command sees each name once.
			for i, kv := range env {
				if strings.HasPrefix(kv, name+"=") {
					env = append(env[:i], env[i+1:]...)
					break
				}
			}
		}
		vals[name] = value
		env = append(env, name+"="+value)
	}
	env = append(env, base...)
	for _, p := range e.Params {
		set(p.Name, p.Value)
	}
	for _, v := range e.Vars {
		if v.IsSecret() {
			s, err := readSecret(strings.TrimPrefix(v.Value, job.SecretPrefix))
			if err != nil {
				return r, fmt.Errorf("envvars %s: %w", v.Name, err)
			}
			set(v.Name, s)
			continue
		}
		set(v.Name, expand(v.Value, vals))
	}
	r.env = env
	r.dir, r.stdin = expand(e.WorkingDir, vals), expand(e.StdIn, vals)
	if e.Umask != "" {
		u, err := strconv.ParseUint(e.Umask, 8, 32)
		if err != nil || u > 0o777 {
			return r, fmt.Errorf("umask: %q is not octal", e.Umask)
		}
		r.umask = int(u)
	}
	return r, nil
}

// expand replaces $NAME and ${NAME} in s with their values (empty for an
// unset variable, as a shell does) and $$ with a dollar; a dollar before
// anything else stays.
func expand(s string, vals map[string]string) string {
	if !strings.Contains(s, "$") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		rest := s[i+1:]
		switch {
		case rest[0] == '$':
			b.WriteByte('$')
			i++
		case rest[0] == '{':
			end := strings.IndexByte(rest, '}')
			if end < 0 {
				b.WriteByte('$')
				continue
			}
			b.WriteString(vals[rest[1:end]])
			i += end + 1
		default:
			n := job.NameLen(rest)
			if n == 0 {
				b.WriteByte('$')
				continue
			}
			b.WriteString(vals[rest[:n]])
			i += n
		}
	}
	return b.String()
}

// maxSecret bounds the file of a secret.
const maxSecret = 64 << 10

// readSecret reads the value of a secret variable: a regular file that
// only this process's user (or root) owns and that no one else may read
// or write. One final newline is not part of the value.
func readSecret(path string) (string, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return "", err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	st, _ := fi.Sys().(*syscall.Stat_t)
	switch {
	case !fi.Mode().IsRegular():
		return "", fmt.Errorf("%s is a %s, not a regular file", path, kind(fi.Mode()))
	case st != nil && st.Uid != uint32(os.Geteuid()) && st.Uid != 0:
		return "", fmt.Errorf("%s is owned by uid %d, not by the server's user: chown it", path, st.Uid)
	case fi.Mode().Perm()&0o077 != 0:
		return "", fmt.Errorf("%s may be read or written by others (mode %04o): chmod 600 it", path, fi.Mode().Perm())
	case fi.Size() > maxSecret:
		return "", fmt.Errorf("%s is larger than %d bytes", path, maxSecret)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxSecret+1))
	if err != nil {
		return "", err
	}
	if len(b) > maxSecret {
		return "", fmt.Errorf("%s is larger than %d bytes", path, maxSecret)
	}
	s := strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
	if strings.ContainsRune(s, 0) {
		return "", fmt.Errorf("%s holds a NUL byte, which an environment variable cannot", path)
	}
	return s, nil
}
