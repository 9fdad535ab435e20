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
	exact map[job.DataType]map[string]refs
	dirs  map[string]refs // FILE dependencies by cleaned directory
	n     int
}

// refs are the dependencies of one key, in the order they were added. The
// first is held inline: most keys have one, and a million of them then cost
// the garbage collector a million objects fewer.
type refs struct {
	first Ref // Config empty: none
	rest  []Ref
}

func (r refs) appendTo(buf []Ref) []Ref {
	if r.first.Config == "" {
		return buf
	}
	return append(append(buf, r.first), r.rest...)
}

func (r refs) add(ref Ref) refs {
	if r.first.Config == "" {
		r.first = ref
	} else {
		r.rest = append(r.rest, ref)
	}
	return r
}

// remove drops ref, keeping the others in order.
func (r refs) remove(ref Ref) refs {
	if r.first == ref {
		if len(r.rest) == 0 {
			return refs{}
		}
		r.first, r.rest = r.rest[0], slices.Clone(r.rest[1:])
		return r
	}
	r.rest = slices.DeleteFunc(r.rest, func(x Ref) bool { return x == ref })
	return r
}

// CleanPath cleans a FILE path lexically: "//" collapsed, "." and ".."
// resolved, no trailing "/".
func CleanPath(p string) string { return path.Clean(p) }

func (x *Index) bucket(d job.DataDep) (map[string]refs, string) {
	if d.Type == job.File {
		if x.dirs == nil {
			x.dirs = map[string]refs{}
		}
		return x.dirs, CleanPath(d.Resource)
	}
	if x.exact == nil {
		x.exact = map[job.DataType]map[string]refs{}
	}
	m := x.exact[d.Type]
	if m == nil {
		m = map[string]refs{}
		x.exact[d.Type] = m
	}
	return m, d.Resource
}

// Add indexes the dependencies of a configuration.
func (x *Index) Add(config string, deps []job.DataDep) {
	for i, d := range deps {
		m, key := x.bucket(d)
		m[key] = m[key].add(Ref{Config: config, Dep: i})
		x.n++
	}
}

// Remove forgets the dependencies of a configuration, as they were added.
func (x *Index) Remove(config string, deps []job.DataDep) {
	for i, d := range deps {
		m, key := x.bucket(d)
		if r := m[key].remove(Ref{Config: config, Dep: i}); r.first.Config == "" {
			delete(m, key)
		} else {
			m[key] = r
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
		return x.exact[t][resource].appendTo(buf)
	}
	if len(x.dirs) == 0 {
		return buf
	}
	p := CleanPath(resource)
	if p[0] == '/' && p != "/" {
		buf = x.dirs["/"].appendTo(buf)
	}
	for i := 1; i < len(p); i++ {
		if p[i] == '/' {
			buf = x.dirs[p[:i]].appendTo(buf)
		}
	}
	return x.dirs[p].appendTo(buf)
}
