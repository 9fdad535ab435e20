package defs

import (
	"github.com/gnomon-sched/gnomon/eventdep"
	"github.com/gnomon-sched/gnomon/periods"
)

// Syntax is the language a definition file is written in.
type Syntax int

const (
	// Language is the task language: actions and attributes, one per line.
	Language Syntax = iota
	// Configurations is configuration JSON: a configuration object, or an
	// array of them. It is always applied declaratively.
	Configurations
	// Trees is a timeperiod tree file: a JSON object with a "trees"
	// member. The timeperiod forest reads it (periods.Parse).
	Trees
)

// SyntaxOf tells the syntax of a definition file. It is the one place
// that does: a file declares its syntax by its first character (an
// object or an array is JSON; anything else is the task language, where a
// line never starts with either) and, in JSON, by a top-level "trees"
// member.
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
	}
	return "the task language"
}
