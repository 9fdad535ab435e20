package bench

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/gnomon-sched/gnomon/cluster"
)

// The clock-node benchmark gives a cluster n schedules spread over the
// minute spots: schedule k fires once an hour, at minute (k/60) mod 60 and
// second k mod 60 (the six-field cron expression "S M * * * *"), so that
// each of the 60 minute spots, and each partition of the default space,
// holds n/60 of them, and each second of the hour n/3600.

// SpreadHourly returns function tasks h<first>... firing as the
// clock-node benchmark's schedules do.
func SpreadHourly(first, n int) string {
	var b strings.Builder
	for k := first; k < first+n; k++ {
		off := HourlyOffset(k)
		fmt.Fprintf(&b, "insert_task: h%d\ntype: callable\nfunction: log\ncron: %d %d * * * *\n\n", k, int(off/time.Second)%60, int(off/time.Minute))
	}
	return b.String()
}

// HourlyOffset returns when in each hour schedule k fires.
func HourlyOffset(k int) time.Duration {
	return time.Duration((k/60)%60)*time.Minute + time.Duration(k%60)*time.Second
}

// DueBetween returns how many occurrences of the n schedules fall in
// (from, to], both offsets from an hour's start.
func DueBetween(n int, from, to time.Duration) int {
	due := 0
	for k := range n {
		off := HourlyOffset(k)
		// The occurrences of k are off + h hours; count those in
		// (from, to].
		due += int(floorDiv(to-off, time.Hour) - floorDiv(from-off, time.Hour))
	}
	return due
}

func floorDiv(a, b time.Duration) int64 {
	q := int64(a / b)
	if a%b < 0 {
		q--
	}
	return q
}

// Sighting is a fire a watcher saw recorded: the occurrence, the node that
// recorded it, and when the watcher first saw it.
type Sighting struct {
	cluster.Recorded
	Seen time.Time
}

// Watch reads the fires recorded in reg after ID after every poll until
// it has seen want of them or ctx is done, and returns each fire once,
// stamped with when it was first seen. Fires whose IDs (one per
// statement) commit out of order (two nodes recording at once) are found
// as a director's feed finds them: the IDs above the lowest one not seen
// are read again until it appears, or for two seconds (an ID that never
// commits).
func Watch(ctx context.Context, reg cluster.FireSource, after int64, poll time.Duration, want int) ([]Sighting, error) {
	var out []Sighting
	seen := map[int64]bool{}
	lo := after // every ID up to lo was seen, or skipped
	var gapSince time.Time
	t := time.NewTicker(poll)
	defer t.Stop()
	for len(out) < want {
		select {
		case <-ctx.Done():
			return out, nil
		case <-t.C:
		}
		rows, err := reg.Fires(ctx, lo, 100000)
		if err != nil {
			return out, err
		}
		now := time.Now()
		// The fires of a statement share its ID and are read together.
		var read []int64
		for _, r := range rows {
			if !seen[r.ID] {
				read = append(read, r.ID)
				out = append(out, Sighting{Recorded: r, Seen: now})
			}
		}
		for _, id := range read {
			seen[id] = true
		}
		for len(seen) > 0 {
			if seen[lo+1] {
				delete(seen, lo+1)
				lo++
				gapSince = time.Time{}
				continue
			}
			if gapSince.IsZero() {
				gapSince = now
			}
			if now.Sub(gapSince) < 2*time.Second {
				break
			}
			lo++
			gapSince = time.Time{}
		}
	}
	return out, nil
}
