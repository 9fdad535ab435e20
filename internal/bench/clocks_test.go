package bench

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/calendar"
	"github.com/gnomon-sched/gnomon/cluster"
	"github.com/gnomon-sched/gnomon/job"
)

// The clock-node benchmark's schedules each fire once an hour, on the
// minute spot of their minute: each partition of the default space holds
// n/60 of them, and DueBetween counts their occurrences.
func TestSpreadHourly(t *testing.T) {
	t.Parallel()
	const n = 7200
	hour := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	spots := map[int]int{}
	k := 0
	for _, line := range strings.Split(SpreadHourly(0, n), "\n") {
		spec, ok := strings.CutPrefix(line, "cron: ")
		if !ok {
			continue
		}
		s, err := calendar.ForTask(&job.Task{Name: "h" + strconv.Itoa(k), Type: job.Callable, Cron: spec}, time.UTC)
		if err != nil {
			t.Fatal(err)
		}
		next, _ := s.Next(hour.Add(-time.Nanosecond))
		if want := hour.Add(HourlyOffset(k)); !next.Equal(want) {
			t.Fatalf("schedule %d (%s) fires first at %s, want %s", k, spec, next, want)
		}
		spot, _ := cluster.DefaultSpace.Spot(s, time.UTC)
		spots[spot]++
		k++
	}
	if k != n {
		t.Fatalf("%d schedules, want %d", k, n)
	}
	if len(spots) != 60 || spots[0] != n/60 || spots[59] != n/60 {
		t.Errorf("spots: %v", spots)
	}
	for _, c := range []struct {
		from, to time.Duration
		want     int
	}{
		{-time.Nanosecond, 0, 2}, // h0 and h3600 at the hour's start
		{0, time.Hour, n},        // every schedule once
		{time.Minute, 21 * time.Minute, n / 3},
		{30 * time.Minute, 90 * time.Minute, n},
		{time.Second, 2 * time.Second, 2}, // second 2 of minute 0
	} {
		if got := DueBetween(n, c.from, c.to); got != c.want {
			t.Errorf("DueBetween(%s, %s) = %d, want %d", c.from, c.to, got, c.want)
		}
	}
}
