package calendar

import (
	"container/heap"
	"fmt"
	"strings"
	"time"
)

// Planned is one planned fire of a task. Excluded names the calendar
// that excludes it (exclude_calendar): such an occurrence will be recorded
// skipped, not run.
type Planned struct {
	At       time.Time `json:"at"`
	Task     string    `json:"task"`
	Excluded string    `json:"excluded,omitempty"`
}

// Forecast merges the fires of several schedules in [from, to), sorted by
// instant then task name, each occurrence a calendar excludes marked so, at most limit of them (no limit when limit <= 0),
// and reports whether more were left out.
func Forecast(scheds map[string]Schedule, from, to time.Time, limit int) ([]Planned, bool) {
	h := &plannedHeap{}
	for name, s := range scheds {
		if s == nil {
			continue
		}
		if t, ok := s.Next(from.Add(-time.Nanosecond)); ok && t.Before(to) {
			h.items = append(h.items, cursor{Planned{At: t, Task: name}, s})
		}
	}
	heap.Init(h)
	var out []Planned
	for h.Len() > 0 {
		if limit > 0 && len(out) == limit {
			return out, true
		}
		c := &h.items[0]
		p := c.Planned
		p.Excluded = Excluded(c.s, p.At)
		out = append(out, p)
		if t, ok := c.s.Next(c.At); ok && t.Before(to) {
			c.At = t
			heap.Fix(h, 0)
		} else {
			heap.Pop(h)
		}
	}
	return out, false
}

type cursor struct {
	Planned
	s Schedule
}

type plannedHeap struct{ items []cursor }

func (h *plannedHeap) Len() int { return len(h.items) }
func (h *plannedHeap) Less(i, j int) bool {
	a, b := h.items[i], h.items[j]
	if !a.At.Equal(b.At) {
		return a.At.Before(b.At)
	}
	return a.Task < b.Task
}
func (h *plannedHeap) Swap(i, j int) { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *plannedHeap) Push(x any)    { h.items = append(h.items, x.(cursor)) }
func (h *plannedHeap) Pop() any {
	x := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	return x
}

// ParseInstant reads an instant: RFC 3339 with an offset
// (2026-03-08T07:00:00Z), or a wall-clock date and time in loc
// (2026-03-08 02:30, 2026-03-08T02:30:00, 2026-03-08), which is resolved by
// the package's DST rule.
func ParseInstant(s string, loc *time.Location) (time.Time, error) {
	s = strings.TrimSpace(s)
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC(), nil
	}
	d, err := ParseDateTime(s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is not an instant such as 2026-03-08T07:00:00Z or a local date and time such as 2026-03-08 02:30", s)
	}
	return time.Unix(resolve(d.wall(), loc), 0).UTC(), nil
}
