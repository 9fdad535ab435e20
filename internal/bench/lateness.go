package bench

import (
	"container/heap"
	"fmt"
	"slices"
	"time"
)

// The fire-lateness benchmark gives every scheduler it measures the same n
// schedules: schedule k fires once a minute, at second k mod 60, as the
// six-field cron expression "k%60 * * * * *" (EverySecondOfMinute for
// gnomon, CronSpec for the libraries).

// CronSpec returns schedule k's six-field cron expression (seconds first).
func CronSpec(k int) string { return fmt.Sprintf("%d * * * * *", k%60) }

// Fire is one start of schedule K: Due is the instant the schedule named,
// At when the job started, both in Unix nanoseconds.
type Fire struct {
	K       int
	Due, At int64
}

// DueNear returns the instant schedule k names that is nearest to at: the
// due instant of a fire of schedule k that started at at, for a scheduler
// that does not say which instant it fired for. It is exact as long as a
// fire is less than 30 s early or late.
func DueNear(k int, at int64) int64 {
	const minute = int64(time.Minute)
	due := at - mod(at, minute) + int64(k%60)*int64(time.Second)
	switch {
	case at-due > minute/2:
		due += minute
	case due-at > minute/2:
		due -= minute
	}
	return due
}

func mod(a, b int64) int64 { return (a%b + b) % b }

// Lateness is what one scheduler did with the occurrences of the n
// schedules due in one window.
type Lateness struct {
	// Due is how many occurrences were due in the window.
	Due int
	// Fired is how many of them fired at least once.
	Fired int
	// Doubled counts the fires of an occurrence beyond its first.
	Doubled int
	// Stray counts fires for an instant their schedule does not name.
	Stray int
	// Late holds each fire's start minus its due instant, sorted, the
	// doubled fires included.
	Late []time.Duration
}

// Missed returns how many occurrences due in the window did not fire.
func (l Lateness) Missed() int { return l.Due - l.Fired }

// Tally returns the Lateness of fires of the n schedules for the
// occurrences due in [from, to); it ignores fires of other occurrences.
func Tally(n int, from, to time.Time, fires []Fire) Lateness {
	const sec = int64(time.Second)
	f, t := from.UnixNano(), to.UnixNano()
	var l Lateness
	for s := (f + sec - 1) / sec; s*sec < t; s++ {
		l.Due += n / 60
		if int(mod(s, 60)) < n%60 {
			l.Due++
		}
	}
	type occurrence struct {
		k   int
		due int64
	}
	seen := make(map[occurrence]bool, l.Due)
	for _, x := range fires {
		if x.Due < f || x.Due >= t {
			continue
		}
		if x.K < 0 || x.K >= n || mod(x.Due, sec) != 0 || mod(x.Due/sec, 60) != int64(x.K%60) {
			l.Stray++
			continue
		}
		o := occurrence{x.K, x.Due}
		if seen[o] {
			l.Doubled++
		} else {
			seen[o] = true
			l.Fired++
		}
		l.Late = append(l.Late, time.Duration(x.At-x.Due))
	}
	slices.Sort(l.Late)
	return l
}

// Await waits until to plus drain, then reads the fires of n schedules
// until every occurrence due in [from, to) has fired or to plus grace has
// passed, and returns their Lateness. A fire later than grace counts as
// missed.
func Await(n int, from, to time.Time, drain, grace time.Duration, read func() ([]Fire, error)) (Lateness, error) {
	time.Sleep(time.Until(to.Add(drain)))
	for {
		fires, err := read()
		if err != nil {
			return Lateness{}, err
		}
		l := Tally(n, from, to, fires)
		if l.Missed() == 0 || time.Now().After(to.Add(grace)) {
			return l, nil
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// HeapTimer is the baseline of fire lateness: the n schedules as a heap of
// their next due instants, with one timer armed for the earliest. Until
// the instant until it fires every instant due from its start, and it
// returns when each was handled.
func HeapTimer(n int, until time.Time) []Fire {
	start := time.Now()
	minute := start.Truncate(time.Minute)
	h := make(dueHeap, n)
	for k := range n {
		due := minute.Add(time.Duration(k%60) * time.Second)
		if due.Before(start) {
			due = due.Add(time.Minute)
		}
		h[k] = entry{due: due, k: k}
	}
	heap.Init(&h)
	var fires []Fire
	timer := time.NewTimer(time.Until(h[0].due))
	defer timer.Stop()
	for time.Now().Before(until) {
		<-timer.C
		now := time.Now()
		for len(h) > 0 && !h[0].due.After(now) {
			fires = append(fires, Fire{K: h[0].k, Due: h[0].due.UnixNano(), At: now.UnixNano()})
			h[0].due = h[0].due.Add(time.Minute)
			heap.Fix(&h, 0)
		}
		timer.Reset(time.Until(h[0].due))
	}
	return fires
}

// entry is a schedule in the baseline's heap.
type entry struct {
	due time.Time
	k   int
}

type dueHeap []entry

func (h dueHeap) Len() int           { return len(h) }
func (h dueHeap) Less(i, j int) bool { return h[i].due.Before(h[j].due) }
func (h dueHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *dueHeap) Push(x any)        { *h = append(*h, x.(entry)) }
func (h *dueHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
