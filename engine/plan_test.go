package engine

import (
	"time"

	"github.com/gnomon-sched/gnomon/defs"
)

// file is a definition file in a test. The engine never sees one: apply
// plans it against the engine first, as a server does.
type file struct{ name, text string }

func (file) kind() string { return "file" }

// plan is what a server makes of a definition file before the engine
// applies it (defs.PlanFile), with the engine's own answers to what the
// plan asks: which tasks are active, which calendars exist.
func plan(e *Engine, f file) (Define, error) {
	p, err := defs.PlanFile(f.name, f.text, defs.Told, defs.AsWritten, e.Definitions(), &defs.Env{
		Active:    e.Active,
		Calendars: e.Calendars(),
		Function:  func(name string) bool { return name == BuiltinLog },
	}, defs.Server{})
	if err != nil {
		return Define{}, err
	}
	return Define{File: f.name, Plan: p.Plan}, nil
}

// apply applies ev to e at now, planning it first if it is a file.
func apply(e *Engine, ev Event, now time.Time) (*Output, error) {
	if f, ok := ev.(file); ok {
		d, err := plan(e, f)
		if err != nil {
			return nil, err
		}
		ev = d
	}
	return e.Apply(ev, now)
}
