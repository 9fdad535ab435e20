package cond

import (
	"fmt"

	"github.com/gnomon-sched/gnomon/job"
)

// Clause is one clause of a condition as it stands: the task it names,
// that task's status, and whether the clause holds.
type Clause struct {
	Op     Op
	Task   string
	Status job.Status
	Holds  bool
}

var opNames = [...]string{Su: "su", Fa: "fa", Nr: "nr"}

// String writes the clause as the language does: su(name).
func (c Clause) String() string { return fmt.Sprintf("%s(%s)", opNames[c.Op], c.Task) }

// Clauses returns every clause of the condition in the order written,
// each with its task's status and whether it holds: what a person needs
// to see why the condition does or does not.
func (e *Expr) Clauses(status func(name string) job.Status) []Clause {
	var out []Clause
	var walk func(n node)
	walk = func(n node) {
		switch n := n.(type) {
		case clause:
			out = append(out, Clause{Op: n.op, Task: n.name, Status: status(n.name), Holds: n.eval(status)})
		case and:
			for _, c := range n {
				walk(c)
			}
		case or:
			for _, c := range n {
				walk(c)
			}
		}
	}
	walk(e.root)
	return out
}
