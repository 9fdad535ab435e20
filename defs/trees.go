package defs

import "github.com/gnomon-sched/gnomon/periods"

// TreeEnv is what a timeperiod tree file is planned against beyond its
// text: the names tasks hold, the functions registered, and what the
// forest's other tree files define.
type TreeEnv struct {
	// Task reports whether a task has the name: no process may take it.
	// Nil means no task has any.
	Task func(name string) bool
	// Function reports whether a function name is registered. Nil
	// accepts every well-formed name.
	Function func(name string) bool
	// Tree describes a tree another tree file defines: that file, and the
	// trees the tree depends on in the order they are listed. Process
	// tells the tree and file of a process another tree file defines.
	// periods.Forest.Others gives both; nil means no other file.
	Tree    func(name string) (file string, dependentOn []string, ok bool)
	Process func(name string) (tree, file string, ok bool)
}

// PlanTrees is PlanFile for a timeperiod tree file (syntax Trees): it
// reads the file (periods.Parse), checks it against env and the owners srv
// allows, and returns the file as the forest applies it (periods.Define's
// Plan). The forest then checks only what its own state tells. Errors are
// periods.Problems, each naming the file, the line and the JSON path.
func PlanTrees(file, text string, env TreeEnv, srv Server) (*periods.File, error) {
	return periods.Parse(file, []byte(text), periods.Options{
		NameTakenFunc:     env.Task,
		FunctionKnownFunc: env.Function,
		OwnerFunc:         srv.Owner,
		TreeFunc:          env.Tree,
		ProcessFunc:       env.Process,
	})
}
