// Package defs reads and checks task definition files.
//
// A file is a sequence of actions (insert_task, update_task, delete_task,
// and insert_group, update_group, delete_group for job groups), each
// followed by "key: value" attribute lines, or configurations in the
// JSON shape of seed 000 (see ParseJSON). Parse turns the text into
// actions; Apply validates them against the current definitions, all or
// nothing, and returns the definitions that result. Format writes definitions
// back in the same language.
package defs

import (
	"fmt"
	"strings"

	"github.com/gnomon-sched/gnomon/eventdep"
	"github.com/gnomon-sched/gnomon/job"
)

// Kind is an action keyword.
type Kind string

// Action keywords.
const (
	Insert Kind = "insert_task"
	Update Kind = "update_task"
	Delete Kind = "delete_task"
	// Job groups (seed 004).
	InsertGroup Kind = "insert_group"
	UpdateGroup Kind = "update_group"
	DeleteGroup Kind = "delete_group"
)

// IsGroup reports whether the action is on a job group.
func (k Kind) IsGroup() bool { return k == InsertGroup || k == UpdateGroup || k == DeleteGroup }

// base returns the task action the kind corresponds to.
func (k Kind) base() Kind {
	switch k {
	case InsertGroup:
		return Insert
	case UpdateGroup:
		return Update
	case DeleteGroup:
		return Delete
	}
	return k
}

// Field is one "key: value" line.
type Field struct {
	Key, Value string
	Line       int
}

// Action is one action with its attribute lines.
type Action struct {
	Kind   Kind
	Name   string
	Line   int
	Fields []Field
}

// Error is a problem in a definition file. It names the file, the line, and
// where known the action and its target.
type Error struct {
	File   string
	Line   int
	Kind   Kind
	Target string
	Msg    string
}

func (e *Error) Error() string {
	loc := e.File
	if e.Line > 0 {
		loc = fmt.Sprintf("%s:%d", e.File, e.Line)
	}
	if e.Kind != "" {
		return fmt.Sprintf("%s: %s %s: %s", loc, e.Kind, e.Target, e.Msg)
	}
	return fmt.Sprintf("%s: %s", loc, e.Msg)
}

// Errors is a list of definition errors, in line order.
type Errors []*Error

func (es Errors) Error() string {
	s := make([]string, len(es))
	for i, e := range es {
		s[i] = e.Error()
	}
	return strings.Join(s, "\n")
}

// Attribute names known to the language.
var attributes = map[string]bool{
	"type": true, "command": true, "condition": true, "out_log_file": true, "err_log_file": true,
	"label": true, "machine": true, "parent": true, "priority": true, "profile": true,
	"run_days": true, "run_window": true, "start_mins": true, "start_times": true,
	"timezone": true, "start_date": true, "end_date": true, "interval": true, "cron": true,
	"start_delay": true, "overlap": true, "function": true,
	"alert_on": true, "alert_to": true, "alert_template": true,
	"dependencies": true, "jobs": true,
}

// MaxFileSize bounds a definition file.
const MaxFileSize = 4 << 20

// Parse splits a definition file into actions. It checks the grammar only;
// Apply checks the meaning. All syntax errors are reported.
func Parse(file, src string) ([]Action, error) {
	var (
		acts []Action
		errs Errors
		cur  *Action
		seen map[string]int
		// skipping is set after an invalid action line: its attributes
		// are not reported again.
		skipping bool
	)
	if len(src) > MaxFileSize {
		return nil, Errors{{File: file, Msg: fmt.Sprintf("file larger than %d bytes", MaxFileSize)}}
	}
	if eventdep.IsJSON(src) {
		return parseJSON(file, src)
	}
	for i, raw := range strings.Split(src, "\n") {
		line := i + 1
		text := strings.TrimSpace(strings.TrimSuffix(raw, "\r"))
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		key, value, ok := strings.Cut(text, ":")
		if !ok {
			errs = append(errs, &Error{File: file, Line: line, Msg: "key value pair separated by colon is expected"})
			continue
		}
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		switch k := Kind(key); {
		case k == Insert || k == Update || k == Delete || k.IsGroup():
			acts = append(acts, Action{Kind: k, Name: value, Line: line})
			cur, seen, skipping = &acts[len(acts)-1], map[string]int{}, false
			if value == "" {
				errs = append(errs, &Error{File: file, Line: line, Kind: k, Msg: "target name is empty"})
			}
		case actionLike(key):
			errs = append(errs, &Error{File: file, Line: line, Msg: fmt.Sprintf("invalid action %q", key)})
			cur, skipping = nil, true
		case skipping:
			// attributes of an action already reported as invalid
		case attributes[key]:
			if cur == nil {
				errs = append(errs, &Error{File: file, Line: line, Msg: fmt.Sprintf("invalid action: attribute %q before the first action", key)})
				continue
			}
			if prev, dup := seen[key]; dup {
				errs = append(errs, &Error{File: file, Line: line, Kind: cur.Kind, Target: cur.Name,
					Msg: fmt.Sprintf("attribute %s given more than once (first on line %d)", key, prev)})
				continue
			}
			seen[key] = line
			cur.Fields = append(cur.Fields, Field{Key: key, Value: value, Line: line})
		case cur == nil:
			errs = append(errs, &Error{File: file, Line: line, Msg: fmt.Sprintf("invalid action %q", key)})
			skipping = true
		default:
			errs = append(errs, &Error{File: file, Line: line, Kind: cur.Kind, Target: cur.Name, Msg: fmt.Sprintf("invalid field %q", key)})
		}
	}
	if len(acts) == 0 && len(errs) == 0 {
		errs = append(errs, &Error{File: file, Msg: "no task actions found"})
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return acts, nil
}

// actionLike reports whether a key that is not a known action looks like a
// misspelt one ("update:", "insert_job:").
func actionLike(key string) bool {
	for _, p := range []string{"insert", "update", "delete"} {
		if strings.HasPrefix(key, p) {
			return true
		}
	}
	return strings.HasSuffix(key, "_task") || strings.HasSuffix(key, "_group")
}

// parseJSON turns configurations in the seed-000 JSON shape into
// insert_task actions of type configuration, one per object, at the line
// where the object starts. Applied declaratively (see Declarative), a file
// of configurations creates or replaces them.
func parseJSON(file, src string) ([]Action, error) {
	cfgs, cerrs := eventdep.ParseConfigs([]byte(src))
	if len(cerrs) > 0 {
		errs := make(Errors, len(cerrs))
		for i, e := range cerrs {
			errs[i] = &Error{File: file, Line: e.Line, Msg: e.Error()}
		}
		return nil, errs
	}
	acts := make([]Action, len(cfgs))
	for i, c := range cfgs {
		a := Action{Kind: Insert, Name: c.Name, Line: c.Line, Fields: []Field{
			{Key: "type", Value: string(job.Configuration), Line: c.Line},
			{Key: "dependencies", Value: DepsJSON(c.Deps), Line: c.Line},
		}}
		for _, kv := range c.Attrs {
			a.Fields = append(a.Fields, Field{Key: kv[0], Value: kv[1], Line: c.Line})
		}
		acts[i] = a
	}
	return acts, nil
}

// IsJSON reports whether a definition text holds configurations in the
// JSON shape, which are always applied declaratively.
func IsJSON(src string) bool { return eventdep.IsJSON(src) }
