package defs

import (
	"fmt"

	"github.com/gnomon-sched/gnomon/eventdep"
	"github.com/gnomon-sched/gnomon/periods"
)

// Syntax is the language a definition file is written in.
type Syntax int

const (
	// Told is the syntax of a file that does not declare one: the file
	// tells it by its shape (see SyntaxOf).
	Told Syntax = iota
	// Language is the task language: actions and attributes, one per line.
	Language
	// Configurations is configuration JSON: a configuration object, or an
	// array of them. It is always applied declaratively.
	Configurations
	// Trees is a timeperiod tree file: a JSON object with a "trees"
	// member. PlanTrees reads it, for the timeperiod forest.
	Trees
)

// syntaxNames are the names a file's syntax is declared by.
var syntaxNames = map[Syntax]string{Language: "language", Configurations: "configurations", Trees: "trees"}

// ParseSyntax reads a declared syntax by its name (language,
// configurations or trees); the empty name is Told.
func ParseSyntax(name string) (Syntax, error) {
	if name == "" {
		return Told, nil
	}
	for s, n := range syntaxNames {
		if n == name {
			return s, nil
		}
	}
	return Told, fmt.Errorf("%q is not a syntax: give language, configurations or trees, or leave it out for the file to tell by its shape", name)
}

// Name is the name a syntax is declared by, empty for Told.
func (s Syntax) Name() string { return syntaxNames[s] }

// Of returns the syntax of text: s when it is declared, else the one text
// tells by its shape. Where a file comes into a server (the API's
// handler, Scheduler.Define) its syntax is resolved so, once, and what
// follows is given the syntax resolved, which Of returns as it is.
func (s Syntax) Of(text string) Syntax {
	if s != Told {
		return s
	}
	return SyntaxOf(text)
}

// SyntaxOf tells the syntax of a definition file that does not declare
// one by its shape: its first character (an object or an array is JSON;
// anything else is the task language, where a line never starts with
// either) and, in JSON, a top-level "trees" member.
func SyntaxOf(text string) Syntax {
	switch {
	case !eventdep.IsJSON(text):
		return Language
	case periods.IsTreeFile(text):
		return Trees
	}
	return Configurations
}

func (s Syntax) String() string {
	switch s {
	case Configurations:
		return "configuration JSON"
	case Trees:
		return "a timeperiod tree file"
	case Told:
		return "the syntax the file tells"
	}
	return "the task language"
}
