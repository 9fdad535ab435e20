package defs

import (
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/gnomon-sched/gnomon/job"
)

// envTable holds the environment's attributes (job.Environment): the
// command's variables (AutoSys's envvars), working directory, standard
// input and umask, and the parameters a start may give. Lines of envvars
// add up: the caller clears the variables before the first line of an
// action.
var envTable = []attr{
	{name: "envvars", on: onRunner, repeat: true,
		setFunc:    setVars,
		clearFunc:  clearEnv(func(e *job.Environment) { e.Vars = nil }),
		formatFunc: func(t *job.Task) string { return FormatVars(t.Extras().Env().Vars) }},
	envPath("working_dir", func(e *job.Environment) *string { return &e.WorkingDir }),
	envPath("std_in_file", func(e *job.Environment) *string { return &e.StdIn }),
	{name: "umask", on: onRunner,
		setFunc: func(t *job.Task, v string) error {
			u, err := ParseUmask(v)
			if err != nil {
				return err
			}
			t.EditEnv().Umask = u
			return nil
		},
		clearFunc:  clearEnv(func(e *job.Environment) { e.Umask = "" }),
		formatFunc: func(t *job.Task) string { return t.Extras().Env().Umask }},
	{name: "params", on: onRunner,
		setFunc: func(t *job.Task, v string) error {
			vars, err := ParseVars("params", v, true)
			if err != nil {
				return err
			}
			t.EditEnv().Params = vars
			return nil
		},
		clearFunc:  clearEnv(func(e *job.Environment) { e.Params = nil }),
		formatFunc: func(t *job.Task) string { return FormatVars(t.Extras().Env().Params) }},
}

// setVars adds a line of envvars to the task's variables.
func setVars(t *job.Task, v string) error {
	vars, err := ParseVars("envvars", v, false)
	if err != nil {
		return err
	}
	e := t.EditEnv()
	for _, nv := range vars {
		for _, old := range e.Vars {
			if old.Name == nv.Name {
				return fmt.Errorf("envvars: %s given more than once", nv.Name)
			}
		}
		if err := checkVarValue(nv); err != nil {
			return err
		}
	}
	e.Vars = append(e.Vars, vars...)
	return nil
}

// envPath is an absolute path of the environment, in the field that ptr
// returns; it may start from a variable ($HOME/work).
func envPath(name string, ptr func(e *job.Environment) *string) attr {
	return attr{name: name, on: onRunner,
		setFunc: func(t *job.Task, v string) error {
			if err := checkRefs(v); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			if !strings.HasPrefix(v, "/") && !strings.HasPrefix(v, "$") {
				return fmt.Errorf("%s: %q is not an absolute path (write it from /, or from a variable such as $HOME)", name, v)
			}
			*ptr(t.EditEnv()) = v
			return nil
		},
		clearFunc:  clearEnv(func(e *job.Environment) { *ptr(e) = "" }),
		formatFunc: func(t *job.Task) string { return *ptr(t.Extras().Env()) },
	}
}

// clearEnv returns the clearer of an environment attribute: it resets
// the attribute, and drops an environment left empty.
func clearEnv(reset func(e *job.Environment)) func(t *job.Task) {
	return func(t *job.Task) {
		if t.Extras().Environment == nil {
			return
		}
		reset(t.EditEnv())
		t.Compact()
	}
}

// checkEnv applies the rules of the environment to a resulting
// definition: it is a command's (a function's may declare parameters
// only, which it reads from its run), and a parameter is not also a
// variable.
func (a *applier) checkEnv(act *Action, t *job.Task, at func(...string) int, ok func(...string) bool) {
	e := t.Extras().Env()
	if e.IsZero() || t.Type == "" || !ok("command", "function", "envvars", "params") {
		return
	}
	if t.Command == "" {
		// A function reads its parameters (Call.Params), and nothing
		// else of an environment.
		if t.Extras().Function != "" && len(e.Vars) == 0 && e.WorkingDir == "" && e.StdIn == "" && e.Umask == "" {
			return
		}
		a.errorf(act, at("envvars", "working_dir", "std_in_file", "umask", "params"),
			"envvars, working_dir, std_in_file and umask need a task that runs a command (a function runs inside the server), and params a command or a function")
		return
	}
	for _, p := range e.Params {
		for _, v := range e.Vars {
			if v.Name == p.Name {
				a.errorf(act, at("envvars"), "envvars: %s is also a parameter: the command reads a parameter as a variable of its name (rename one)", v.Name)
			}
		}
	}
}

// ParseUmask reads a umask: one to four octal digits (022, 0027, 7).
func ParseUmask(v string) (string, error) {
	n, err := strconv.ParseUint(v, 8, 32)
	if err != nil || len(v) > 4 || n > 0o777 {
		return "", fmt.Errorf("umask: %q is not a umask: write octal digits such as 022 or 0077", v)
	}
	return fmt.Sprintf("%03o", n), nil
}

// MaxVars bounds the variables, and the parameters, of one task.
const MaxVars = 100

// ParseVars reads a comma list of NAME=value (the attribute key names the
// list in errors). A value runs to the next comma that starts another
// NAME=, so it may hold commas; a value in double quotes may hold
// anything, with \" and \\ for a quote and a backslash. With bare, a NAME
// alone stands for NAME= (a parameter without a default).
func ParseVars(key, v string, bare bool) ([]job.Var, error) {
	var out []job.Var
	rest := v
	for {
		rest = strings.TrimLeft(rest, " \t")
		n := job.NameLen(rest)
		if n == 0 {
			return nil, fmt.Errorf("%s: expected NAME=value at %q (a name is letters, digits and underscores, not starting with a digit)", key, clip(rest))
		}
		name := rest[:n]
		if strings.HasPrefix(name, "GNOMON_") {
			return nil, fmt.Errorf("%s: %s: names starting with GNOMON_ are set by gnomon (see docs/definitions.md)", key, name)
		}
		for _, o := range out {
			if o.Name == name {
				return nil, fmt.Errorf("%s: %s given more than once", key, name)
			}
		}
		rest = strings.TrimLeft(rest[n:], " \t")
		var value string
		switch {
		case strings.HasPrefix(rest, "="):
			var err error
			if value, rest, err = readValue(rest[1:], bare); err != nil {
				return nil, fmt.Errorf("%s: %s: %w", key, name, err)
			}
		case bare && (rest == "" || rest[0] == ','):
		default:
			return nil, fmt.Errorf("%s: %s: expected = after the name, as in %s=value", key, name, name)
		}
		out = append(out, job.Var{Name: name, Value: value})
		if len(out) > MaxVars {
			return nil, fmt.Errorf("%s: more than %d", key, MaxVars)
		}
		if rest == "" {
			return out, nil
		}
		rest = rest[1:] // the comma
	}
}

// readValue reads a value up to the comma that ends it and returns it with
// what follows (from that comma on, or empty). With bare, a comma before a
// name alone ends it too.
func readValue(s string, bare bool) (value, rest string, err error) {
	s = strings.TrimLeft(s, " \t")
	if strings.HasPrefix(s, `"`) {
		var b strings.Builder
		for i := 1; i < len(s); i++ {
			switch c := s[i]; {
			case c == '\\' && i+1 < len(s) && (s[i+1] == '"' || s[i+1] == '\\'):
				b.WriteByte(s[i+1])
				i++
			case c == '"':
				after := strings.TrimLeft(s[i+1:], " \t")
				if after != "" && after[0] != ',' {
					return "", "", fmt.Errorf("unexpected %q after the closing quote (separate variables with commas)", clip(after))
				}
				return b.String(), after, nil
			default:
				b.WriteByte(c)
			}
		}
		return "", "", fmt.Errorf("the quote that opens %q is not closed", clip(s))
	}
	for i := 0; i < len(s); i++ {
		if s[i] != ',' {
			continue
		}
		next := strings.TrimLeft(s[i+1:], " \t")
		n := job.NameLen(next)
		after := strings.TrimLeft(next[n:], " \t")
		if n > 0 && (strings.HasPrefix(after, "=") || bare && (after == "" || after[0] == ',')) || next == "" {
			return strings.TrimRight(s[:i], " \t"), s[i:], nil
		}
	}
	return strings.TrimRight(s, " \t"), "", nil
}

// clip shortens a piece of a value quoted in an error.
func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// checkVarValue checks a variable's value: its references, or the file of
// a secret.
func checkVarValue(v job.Var) error {
	if v.IsSecret() {
		p := strings.TrimPrefix(v.Value, job.SecretPrefix)
		if !strings.HasPrefix(p, "/") || path.Clean(p) != p {
			return fmt.Errorf("envvars: %s: %q is not a clean absolute path to the file holding the value (as in %s=@file:/etc/gnomon/%s)",
				v.Name, p, v.Name, strings.ToLower(v.Name))
		}
		return nil
	}
	if err := checkRefs(v.Value); err != nil {
		return fmt.Errorf("envvars: %s: %w", v.Name, err)
	}
	return nil
}

// checkRefs checks the variable references of a value: ${ must close on
// a name.
func checkRefs(s string) error {
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 >= len(s) {
			continue
		}
		switch s[i+1] {
		case '$':
			i++
		case '{':
			end := strings.IndexByte(s[i:], '}')
			if end < 0 {
				return fmt.Errorf("${ at %q is not closed by }", clip(s[i:]))
			}
			name := s[i+2 : i+end]
			if n := job.NameLen(name); n == 0 || n != len(name) {
				return fmt.Errorf("${%s} does not name a variable (letters, digits and underscores; write $$ for a dollar)", name)
			}
			i += end
		}
	}
	return nil
}

// FormatVars writes variables as ParseVars reads them, a value in quotes
// when it would not read back bare.
func FormatVars(vars []job.Var) string {
	parts := make([]string, len(vars))
	for i, v := range vars {
		val := v.Value
		if strings.ContainsAny(val, `,"\`) || strings.TrimSpace(val) != val {
			val = `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(val) + `"`
		}
		parts[i] = v.Name + "=" + val
	}
	return strings.Join(parts, ", ")
}
