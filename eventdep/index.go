package eventdep

import (
	"path"
	"slices"

	"github.com/gnomon-sched/gnomon/job"
)

// Ref names one dependency of one configuration.
type Ref struct {
	Config string
	Dep    int // index in the configuration's dependencies
}

// Index finds the dependencies an event validates. TABLE and TIME_BASED
// dependencies are found by exact resource, FILE dependencies by looking
// up every directory prefix of the event's cleaned path, so that matching
// costs O(path depth + matches) however many configurations there are.
// The zero value is ready to use. An Index is not safe for concurrent use.
type Index struct {
	exact map[job.DataType]map[string][]Ref
	dirs  map[string][]Ref // FILE dependencies by cleaned directory
	n     int
}

// CleanPath cleans a FILE path lexically: "//" collapsed, "." and ".."
// resolved, no trailing "/".
func CleanPath(p string) string { return path.Clean(p) }

func (x *Index) bucket(d job.DataDep) (map[string][]Ref, string) {
	if d.Type == job.File {
		if x.dirs == nil {
			x.dirs = map[string][]Ref{}
		}
		return x.dirs, CleanPath(d.Resource)
	}
	if x.exact == nil {
		x.exact = map[job.DataType]map[string][]Ref{}
	}
	m := x.exact[d.Type]
	if m == nil {
		m = map[string][]Ref{}
		x.exact[d.Type] = m
	}
	return m, d.Resource
}

// Add indexes the dependencies of a configuration.
func (x *Index) Add(config string, deps []job.DataDep) {
	for i, d := range deps {
		m, key := x.bucket(d)
		m[key] = append(m[key], Ref{Config: config, Dep: i})
		x.n++
	}
}

// Remove forgets the dependencies of a configuration, as they were added.
func (x *Index) Remove(config string, deps []job.DataDep) {
	for i, d := range deps {
		m, key := x.bucket(d)
		refs := slices.DeleteFunc(m[key], func(r Ref) bool { return r.Config == config && r.Dep == i })
		if len(refs) == 0 {
			delete(m, key)
		} else {
			m[key] = refs
		}
		x.n--
	}
}

// Len returns the number of dependencies indexed.
func (x *Index) Len() int { return x.n }

// Match appends to buf the dependencies an event of type t and resource
// validates, and returns the extended slice.
func (x *Index) Match(t job.DataType, resource string, buf []Ref) []Ref {
	if t != job.File {
		return append(buf, x.exact[t][resource]...)
	}
	if len(x.dirs) == 0 {
		return buf
	}
	p := CleanPath(resource)
	if p[0] == '/' && p != "/" {
		buf = append(buf, x.dirs["/"]...)
	}
	for i := 1; i < len(p); i++ {
		if p[i] == '/' {
			buf = append(buf, x.dirs[p[:i]]...)
		}
	}
	return append(buf, x.dirs[p]...)
}
