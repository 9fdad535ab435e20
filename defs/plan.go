package defs

import (
	"slices"

	"github.com/gnomon-sched/gnomon/job"
)

// Server is what a running server knows beyond the definitions that a
// file is checked against on it (Apply's Env knows the rest).
type Server struct {
	// LogFile says why a path may not be a log file (see CheckLogFiles);
	// nil accepts every path.
	LogFile func(path string) error
	// Owner says why a command may not run as an owner (see
	// CheckOwners); nil accepts every owner.
	Owner func(owner string) error
}

// Planned is what a definition file does: its plan and, in the sync mode,
// the kinds of definitions it owns ("tasks", "configurations",
// "calendars").
type Planned struct {
	job.Plan
	Owns []string
}

// PlanFile is the one way a definition file comes into a server: it reads
// the file in syntax syn (the task language or configuration JSON; Told:
// the one its shape tells; a tree file is planned by PlanTrees),
// applies it to cur with env in the mode given, checks what srv refuses,
// and returns what the file does.
// Errors are Errors, each with its file and line (none for a delete the
// sync mode adds, which says why it is there).
func PlanFile(file, text string, syn Syntax, mode Mode, cur map[string]*job.Task, env *Env, srv Server) (*Planned, error) {
	acts, mode, err := ReadFile(file, text, syn, mode)
	if err != nil {
		return nil, err
	}
	return PlanActions(file, acts, mode, cur, env, srv)
}

// ReadFile reads a file as PlanFile does before planning it: its actions
// and the mode they are planned in (configuration JSON is declared).
func ReadFile(file, text string, syn Syntax, mode Mode) ([]Action, Mode, error) {
	syn = syn.Of(text)
	acts, err := Read(file, text, syn)
	if syn == Configurations {
		mode = max(mode, Declared)
	}
	return acts, mode, err
}

// PlanActions plans actions as PlanFile plans a file's: those Parse read,
// or those a program built (Define, or a delete).
func PlanActions(file string, acts []Action, mode Mode, cur map[string]*job.Task, env *Env, srv Server) (*Planned, error) {
	var err error
	var cals map[string]*job.Calendar
	if env != nil {
		cals = env.Calendars
	}
	decl := acts
	if mode != AsWritten {
		decl = DeclarativeCalendars(file, cals, Declarative(file, cur, acts))
	}
	out := &Planned{}
	var sync *syncing
	if mode == Synced {
		if sync, err = syncDeletes(file, acts, decl, cur, cals, env, lastLine(acts)); err != nil {
			return nil, err
		}
		decl = append(slices.Clip(decl), sync.gone...)
		out.Owns = sync.owns
	}
	res, err := Apply(file, cur, decl, env)
	if srv.LogFile != nil {
		err = Join(err, CheckLogFiles(file, acts, srv.LogFile))
	}
	if srv.Owner != nil {
		err = Join(err, CheckOwners(file, acts, srv.Owner))
	}
	if err != nil {
		return nil, sync.rewrite(err)
	}
	out.Plan = *res.Plan()
	return out, nil
}

// Plan returns what the result changes as a plan.
func (r *Result) Plan() *job.Plan {
	p := &job.Plan{Deleted: slices.Clone(r.Deleted), DeletedCalendars: slices.Clone(r.DeletedCalendars)}
	for _, name := range r.Changed {
		p.Tasks = append(p.Tasks, r.Tasks[name])
	}
	for _, name := range r.ChangedCalendars {
		p.Calendars = append(p.Calendars, r.Calendars[name])
	}
	return p
}
