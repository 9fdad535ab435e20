package defs

import (
	"reflect"

	"github.com/gnomon-sched/gnomon/job"
)

// Declarative rewrites actions so that a file can be applied again and
// again, as the server does with --definitions at every start: an
// insert_task of a task that already exists with the same type becomes an
// update_task that sets every attribute the file gives and clears every
// other one, and is dropped if it would change nothing. Line numbers are
// kept, so errors still point into the file.
func Declarative(file string, cur map[string]*job.Task, acts []Action) []Action {
	var out []Action
	for _, a := range acts {
		old, ok := cur[a.Name]
		typ, _ := field(&a, "type")
		switch a.Kind {
		case InsertGroup:
			typ.Value = string(job.Group)
		case InsertResource:
			typ.Value = string(job.Resource)
		}
		if (a.Kind != Insert && a.Kind != InsertGroup && a.Kind != InsertResource) || !ok || string(old.Type) != typ.Value {
			out = append(out, a)
			continue
		}
		// What the insert alone would define.
		res, err := Apply(file, nil, []Action{a}, nil)
		if err == nil && reflect.DeepEqual(res.Tasks[a.Name], old) {
			continue
		}
		up := Action{Kind: Update, Name: a.Name, Line: a.Line, Syntax: a.Syntax}
		switch a.Kind {
		case InsertGroup:
			up.Kind = UpdateGroup
		case InsertResource:
			up.Kind = UpdateResource
		}
		given := map[string]bool{}
		for _, f := range a.Fields {
			given[f.Key] = true
			if f.Key != "type" {
				up.Fields = append(up.Fields, f)
			}
		}
		for _, kv := range Attrs(old) {
			if k := kv[0]; !given[k] && k != "type" {
				up.Fields = append(up.Fields, Field{Key: k, Line: a.Line})
			}
		}
		out = append(out, up)
	}
	return out
}
