package job

import (
	"slices"
	"strings"
)

// Environment is what a task's command starts with beyond the server's
// defaults: variables of its own, a working directory, a standard input
// and a umask, and the parameters a start may give. The zero value (and
// nil) asks nothing: the command runs in the server's directory, with
// /dev/null as input and the server's umask.
type Environment struct {
	// Vars are the envvars, in definition order. A value may reference
	// other variables ($NAME, ${NAME}; $$ is a dollar), those set before it
	// in Vars, the parameters, GNOMON_* and the server's; or it is
	// "@file:PATH", the content of a file only the server may read (see
	// SecretPrefix).
	Vars []Var `json:"vars,omitempty"`
	// WorkingDir is the directory the command starts in; StdIn the file
	// it reads as standard input. Both may reference variables as Vars do.
	WorkingDir string `json:"working_dir,omitempty"`
	StdIn      string `json:"std_in_file,omitempty"`
	// Umask is the command's file mode creation mask in octal ("022"),
	// empty for the server's.
	Umask string `json:"umask,omitempty"`
	// Params are the parameters the task declares, with their defaults:
	// a start or a backfill may give other values, which its runs record
	// (Run.Params). The command reads each as a variable of its name.
	Params []Var `json:"params,omitempty"`
}

// Var is a variable (or a parameter) and its value.
type Var struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// SecretPrefix starts a variable's value that is read from a file at
// launch ("@file:/etc/gnomon/secret"): the definition holds the file's
// path, never its content.
const SecretPrefix = "@file:"

// NameLen returns the length of the variable name s starts with (letters,
// digits and underscores, not starting with a digit), 0 if none.
func NameLen(s string) int {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9' {
			continue
		}
		return i
	}
	return len(s)
}

// IsSecret reports whether the variable's value is read from a file.
func (v Var) IsSecret() bool { return strings.HasPrefix(v.Value, SecretPrefix) }

// IsZero reports whether the environment asks nothing.
func (e *Environment) IsZero() bool {
	return e == nil || len(e.Vars) == 0 && e.WorkingDir == "" && e.StdIn == "" && e.Umask == "" && len(e.Params) == 0
}

// Clone returns a deep copy (nil for nil).
func (e *Environment) Clone() *Environment {
	if e == nil {
		return nil
	}
	c := *e
	c.Vars, c.Params = slices.Clone(e.Vars), slices.Clone(e.Params)
	return &c
}

// Resolve returns the parameters a run of the task gets: each declared
// one with the value given, else its default, in declaration order.
func (e *Environment) Resolve(given []Var) []Var {
	if e == nil || len(e.Params) == 0 {
		return nil
	}
	out := slices.Clone(e.Params)
	for i, p := range out {
		for _, g := range given {
			if g.Name == p.Name {
				out[i].Value = g.Value
			}
		}
	}
	return out
}

// Env returns the task's environment, for reading only: without one, a
// shared zero Environment.
func (x *Extra) Env() *Environment {
	if x.Environment == nil {
		return &noEnvironment
	}
	return x.Environment
}

var noEnvironment Environment

// EditEnv returns the task's environment for setting it.
func (t *Task) EditEnv() *Environment {
	x := t.Edit()
	if x.Environment == nil {
		x.Environment = &Environment{}
	}
	return x.Environment
}
