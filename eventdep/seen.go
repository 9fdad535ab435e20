package eventdep

import (
	"math"
	"slices"
)

// MaxLife is the longest life duration in seconds: the span of int64
// nanoseconds.
const MaxLife int64 = math.MaxInt64 / 1_000_000_000

// Seen holds the timestamps (Unix nanoseconds) of the events accepted for
// each dependency of one configuration, ascending and without repeats.
type Seen [][]int64

// NewSeen returns an empty Seen for n dependencies.
func NewSeen(n int) Seen { return make(Seen, n) }

// Add stores a timestamp for dependency dep and reports whether it is new.
func (s Seen) Add(dep int, ts int64) bool {
	list := s[dep]
	if n := len(list); n == 0 || list[n-1] < ts { // in order: the common case
		s[dep] = append(list, ts)
		return true
	}
	i, found := slices.BinarySearch(list, ts)
	if found {
		return false
	}
	s[dep] = slices.Insert(list, i, ts)
	return true
}

// Met reports whether dependency dep, with a life of life seconds, is met
// at instant r: some stored timestamp ts has r - life <= ts <= r.
func (s Seen) Met(dep int, r, life int64) bool {
	list := s[dep]
	// The last timestamp <= r.
	i, found := slices.BinarySearch(list, r)
	if found {
		return true
	}
	return i > 0 && list[i-1] >= Before(r, life)
}

// Prune drops the timestamps of dependency dep that are at or before upto
// and returns how many it dropped.
func (s Seen) Prune(dep int, upto int64) int {
	list := s[dep]
	i, found := slices.BinarySearch(list, upto)
	if found {
		i++
	}
	if i == 0 {
		return 0
	}
	s[dep] = slices.Delete(list, 0, i)
	if cap(s[dep]) > 64 && len(s[dep]) < cap(s[dep])/4 {
		s[dep] = slices.Clip(slices.Clone(s[dep]))
	}
	return i
}

// Len returns the number of timestamps stored for dependency dep.
func (s Seen) Len(dep int) int { return len(s[dep]) }

// Before returns r minus life seconds, saturating at the smallest instant.
func Before(r, life int64) int64 {
	d := life * 1e9
	if r < math.MinInt64+d {
		return math.MinInt64
	}
	return r - d
}

// Expired returns the instant at or before which a timestamp of a
// dependency with this life can no longer count: once a configuration has
// run at lastExec it is evaluated only at instants after lastExec, and
// ts counts at r only if ts >= r - life.
func Expired(lastExec, life int64) int64 { return Before(lastExec, life) }
