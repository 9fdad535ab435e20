package engine

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/gnomon-sched/gnomon/job"
)

// The engine keeps what an overview of every task shows as it changes, so
// that reading it costs the few rows it lists, not a pass over a hundred
// thousand tasks on the loop: the count of tasks in each status, the tasks
// that settled failed or aborted lately, and (from the structures it has
// anyway) the runs in flight and the fire heap.

// Summary is the overview of the engine's tasks (groups are not counted).
type Summary struct {
	// Counts holds the number of tasks in each status.
	Counts [job.Frozen + 1]int
	// Running names the tasks that are running, earliest start first;
	// Next those whose time trigger fires next, earliest first. Each holds
	// at most the number asked for.
	Running, Next []string
	// Failed are the tasks that failed or were aborted since the instant
	// asked for, each at its latest, latest first, at most the number
	// asked for; a task may have run again since. (After a restart, the
	// engine knows of the failures of before only from the tasks that are
	// still failed or aborted.)
	Failed []Failure
}

// Failure is a task that settled failed or aborted at an instant.
type Failure struct {
	Task   string
	At     time.Time
	Status job.Status
}

// Total returns the number of tasks.
func (s *Summary) Total() int {
	n := 0
	for _, c := range s.Counts {
		n += c
	}
	return n
}

// ended is a task that settled failed or aborted at an instant.
type ended struct {
	at     job.Instant
	name   string
	status job.Status
}

// recentSpan is how long settled failures stay in the engine's list, and
// disorder the slack allowed between the order in which runs are applied
// and the instants at which they ended (a supervisor reports its own).
const (
	recentSpan = 25 * time.Hour
	disorder   = time.Hour
)

// count adds d to the count of tasks in status s, for a task of
// definition def; a group is not counted.
func (e *Engine) count(def *job.Task, s job.Status, d int) {
	if def != nil && def.Type != job.Group && int(s) < len(e.counts) {
		e.counts[s] += d
	}
}

// settled notes a task that settled failed or aborted, and forgets what
// settled before recentSpan.
func (e *Engine) settled(name string, st *job.State) {
	if st.Status != job.Failure && st.Status != job.Aborted {
		return
	}
	e.recent = append(e.recent, ended{st.End, name, st.Status})
	old := job.At(e.now.Add(-recentSpan))
	i := 0
	for i < len(e.recent) && e.recent[i].at < old {
		i++
	}
	if i > len(e.recent)/2 {
		e.recent = append(e.recent[:0], e.recent[i:]...)
	}
}

// Summarize returns the overview, with at most n names in each list, and
// the failures since the instant given.
func (e *Engine) Summarize(n int, since time.Time) Summary {
	s := Summary{Counts: e.counts}
	type mark struct {
		at   job.Instant
		name string
	}
	order := func(a, b mark) int { return cmp.Or(cmp.Compare(a.at, b.at), strings.Compare(a.name, b.name)) }

	var running []mark
	seen := map[string]bool{}
	add := func(name string) {
		if en := e.tasks[name]; en != nil && !seen[name] && en.st.Status == job.Running {
			seen[name] = true
			running = append(running, mark{en.st.Start, name})
		}
	}
	for _, r := range e.runs {
		add(r.Task)
	}
	for name := range e.staged {
		add(name) // waiting to retry
	}
	slices.SortFunc(running, order)
	for _, m := range running[:min(n, len(running))] {
		s.Running = append(s.Running, m.name)
	}

	from, stop := job.At(since), job.At(since.Add(-disorder))
	listed := map[string]bool{}
	for i := len(e.recent) - 1; i >= 0 && len(s.Failed) < n; i-- {
		r := e.recent[i]
		if r.at < stop {
			break
		}
		if r.at < from || listed[r.name] || e.tasks[r.name] == nil {
			continue
		}
		listed[r.name] = true
		s.Failed = append(s.Failed, Failure{Task: r.name, At: r.at.Time(), Status: r.status})
	}
	slices.SortStableFunc(s.Failed, func(a, b Failure) int { return b.At.Compare(a.At) })

	// The occurrences of a tick in progress still to decide come first,
	// then the n earliest of the fire heap and of the occurrences set
	// aside by the tick (see fireAlone).
	var later []*entry
	if f := e.firing; f != nil {
		for _, en := range f.todo {
			if len(s.Next) == n {
				break
			}
			if e.undecided(en) {
				s.Next = append(s.Next, en.def.Name)
			}
		}
		for _, en := range f.later {
			if e.tasks[en.def.Name] == en && en.hidx < 0 && !en.st.NextFire.IsZero() {
				later = append(later, en)
			}
		}
	}
	later = append(later, e.fires.earliest(n-len(s.Next))...)
	slices.SortFunc(later, func(a, b *entry) int {
		if c := cmp.Compare(a.st.NextFire, b.st.NextFire); c != 0 {
			return c
		}
		return strings.Compare(a.def.Name, b.def.Name)
	})
	for _, en := range later[:min(len(later), n-len(s.Next))] {
		s.Next = append(s.Next, en.def.Name)
	}
	return s
}

// earliest returns the n earliest entries of the heap, in order: a walk
// from its root that always takes the earliest of the nodes it can reach
// (without touching the heap, whose entries know their places in it).
func (h fireHeap) earliest(n int) []*entry {
	var out []*entry
	var front []int
	if len(h) > 0 {
		front = []int{0}
	}
	for len(front) > 0 && len(out) < n {
		k := 0
		for j := range front {
			if h.Less(front[j], front[k]) {
				k = j
			}
		}
		i := front[k]
		front = slices.Delete(front, k, k+1)
		out = append(out, h[i])
		for _, c := range []int{2*i + 1, 2*i + 2} {
			if c < len(h) {
				front = append(front, c)
			}
		}
	}
	return out
}
