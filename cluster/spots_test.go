package cluster

import (
	"slices"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/calendar"
)

func cron(t *testing.T, expr string, loc *time.Location) calendar.Schedule {
	t.Helper()
	c, err := calendar.ParseCron(expr, loc)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func interval(t *testing.T, start, every string, loc *time.Location) calendar.Schedule {
	t.Helper()
	s, err := calendar.ParseDateTime(start)
	if err != nil {
		t.Fatal(err)
	}
	if every == "" { // once
		return calendar.NewInterval(s, nil, nil, loc)
	}
	e, err := calendar.ParseEvery(every)
	if err != nil {
		t.Fatal(err)
	}
	return calendar.NewInterval(s, nil, &e, loc)
}

// The seed's table of minute spots, then the repeaters' dedicated spots.
func TestSpot(t *testing.T) {
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		sched calendar.Schedule
		loc   *time.Location
		size  int
		want  int
	}{
		{"every hour at :00", cron(t, "0 * * * *", time.UTC), time.UTC, 60, 0},
		{"every hour at :30", cron(t, "30 * * * *", time.UTC), time.UTC, 60, 30},
		{"daily at 00:00", cron(t, "0 0 * * *", time.UTC), time.UTC, 60, 0},
		{"daily at 23:10", cron(t, "10 23 * * *", time.UTC), time.UTC, 60, 10},
		{"daily at 23:10, S=120", cron(t, "10 23 * * *", time.UTC), time.UTC, 120, 70},
		{"daily at 23:25, S=1440", cron(t, "25 23 * * *", time.UTC), time.UTC, 1440, 1405},
		{"weekly like daily", cron(t, "25 23 * * 3", time.UTC), time.UTC, 1440, 1405},
		{"once at 12:00", interval(t, "2030-05-01 12:00", "", time.UTC), time.UTC, 1440, 720},
		// The wall clock of the schedule's zone, winter or summer.
		{"daily at 23:10 in Paris", cron(t, "10 23 * * *", paris), paris, 120, 70},
		{"daily at 02:30 in Paris", cron(t, "30 2 * * *", paris), paris, 1440, 150},
		// Repeaters: a dedicated spot per step.
		{"every minute", cron(t, "* * * * *", time.UTC), time.UTC, 60, -1},
		{"every 15 minutes", cron(t, "*/15 * * * *", time.UTC), time.UTC, 60, -15},
		{"every 30 seconds", interval(t, "2020-01-01", "30 seconds", time.UTC), time.UTC, 60, -1},
		{"every 59 minutes", interval(t, "2020-01-01", "59 minutes", time.UTC), time.UTC, 60, -59},
		// Not repeaters: an hour apart, or unevenly spaced.
		{"every 60 minutes from :07", interval(t, "2020-01-01 00:07", "60 minutes", time.UTC), time.UTC, 60, 7},
		{"at :05 and :35 of 9 o'clock", cron(t, "5,35 9 * * *", time.UTC), time.UTC, 1440, 545},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, ok := Space{Size: c.size, Partitions: c.size}.Spot(c.sched, c.loc)
			if !ok || got != c.want {
				t.Fatalf("spot %d, %v; want %d", got, ok, c.want)
			}
		})
	}
	if _, ok := DefaultSpace.Spot(interval(t, "2000-05-01 12:00", "", time.UTC), time.UTC); ok {
		t.Fatal("a schedule that fired only before the reference instant has a spot")
	}
}

func TestPartitions(t *testing.T) {
	s := Space{Size: 120, Partitions: 12}
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ spot, part int }{{0, 0}, {70, 10}, {119, 11}, {-1, 12}, {-15, 26}, {-59, 70}} {
		if got := s.Partition(c.spot); got != c.part {
			t.Errorf("spot %d in partition %d, want %d", c.spot, got, c.part)
		}
	}
	if s.Count() != 71 || s.PartitionName(10) != "p10" || s.PartitionName(26) != "every 15m" {
		t.Fatalf("count %d, names %q %q", s.Count(), s.PartitionName(10), s.PartitionName(26))
	}
	for _, bad := range []Space{{Size: 0, Partitions: 1}, {Size: 1441, Partitions: 1}, {Size: 60, Partitions: 0}, {Size: 60, Partitions: 61}} {
		if bad.Check() == nil {
			t.Errorf("space %+v accepted", bad)
		}
	}
}

// steps returns from, from+step, ... up to to, excluded.
func steps(from, to, step int) []int {
	var out []int
	for i := from; i < to; i += step {
		out = append(out, i)
	}
	return out
}

// scanNext returns f's first occurrence after t found within one scan.
func scanNext(f *Filtered, t time.Time) (time.Time, bool) {
	at, found, ok := f.Scan(t)
	return at, found && ok
}

// parts returns the partitions of a schedule's Filtered.
func parts(fs []*Filtered) []int {
	out := make([]int, len(fs))
	for i, f := range fs {
		out[i] = f.Partition()
	}
	return out
}

// holders counts the Filtered that hold each of a schedule's occurrences
// from from to to, and fails unless it is exactly one.
func holders(t *testing.T, fs []*Filtered, sched calendar.Schedule, from, to time.Time) {
	t.Helper()
	for at, ok := sched.Next(from); ok && at.Before(to); at, ok = sched.Next(at) {
		n := 0
		for _, f := range fs {
			if f.holds(at) {
				n++
			}
		}
		if n != 1 {
			t.Fatalf("the occurrence at %s is held by %d partitions", at.Format(time.RFC3339), n)
		}
	}
}

func TestScattered(t *testing.T) {
	t.Parallel()
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Fatal(err)
	}
	s60 := Space{Size: 60, Partitions: 60, Scatter: true}
	every15 := cron(t, "*/15 * * * *", time.UTC)
	t.Run("placed whole", func(t *testing.T) {
		t.Parallel()
		if fs := DefaultSpace.Scattered(every15, time.UTC); fs != nil {
			t.Errorf("a space that does not scatter: %v", parts(fs))
		}
		if fs := s60.Scattered(cron(t, "10 23 * * *", time.UTC), time.UTC); fs != nil {
			t.Errorf("a daily schedule: %v", parts(fs))
		}
		if fs := s60.Scattered(interval(t, "2030-05-01 12:00", "", time.UTC), time.UTC); fs != nil {
			t.Errorf("a single run: %v", parts(fs))
		}
	})
	for _, c := range []struct {
		name  string
		space Space
		sched calendar.Schedule
		loc   *time.Location
		want  []int
	}{
		{"*/15, S=60", s60, every15, time.UTC, []int{0, 15, 30, 45}},
		{"*/15, S=60, P=12", Space{Size: 60, Partitions: 12, Scatter: true}, every15, time.UTC, []int{0, 3, 6, 9}},
		// 108 a day, from 09:00 to 17:55: a repeater by its first 48.
		{"*/5 from 9 to 17, S=1440", Space{Size: 1440, Partitions: 1440, Scatter: true}, cron(t, "*/5 9-17 * * *", time.UTC), time.UTC,
			steps(540, 1080, 5)},
		{"every minute, S=60, P=6", Space{Size: 60, Partitions: 6, Scatter: true}, cron(t, "* * * * *", time.UTC), time.UTC, []int{0, 1, 2, 3, 4, 5}},
		{"every 30 seconds, S=60, P=4", Space{Size: 60, Partitions: 4, Scatter: true}, interval(t, "2020-01-01", "30 seconds", time.UTC), time.UTC, []int{0, 1, 2, 3}},
		{"every 20 minutes from :05, S=60", s60, interval(t, "2020-01-01 00:05", "20 minutes", time.UTC), time.UTC, []int{5, 25, 45}},
		{"*/30 in Paris, S=1440, P=48", Space{Size: 1440, Partitions: 48, Scatter: true}, cron(t, "*/30 * * * *", paris), paris, steps(0, 48, 6)},
		{"every 7 minutes in Paris, S=60", s60, interval(t, "2020-01-01", "7 minutes", paris), paris, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			fs := c.space.Scattered(c.sched, c.loc)
			if c.want == nil { // every partition
				for q := range c.space.Partitions {
					c.want = append(c.want, q)
				}
			}
			if got := parts(fs); !slices.Equal(got, c.want) {
				t.Fatalf("partitions %v, want %v", got, c.want)
			}
			from := time.Date(2026, 3, 28, 0, 0, 0, 0, time.UTC)
			holders(t, fs, c.sched, from, from.Add(48*time.Hour))
			// Each yields the occurrences of its partition, in order.
			for _, f := range fs {
				at, ok := scanNext(f, from)
				if !ok || c.space.OccurrenceSpot(at, c.loc)%c.space.Partitions != f.Partition() {
					t.Fatalf("partition %d: next at %s, %v", f.Partition(), at, ok)
				}
				if prev, _ := c.sched.Next(from); at.Before(prev) {
					t.Fatalf("partition %d: next at %s, before the schedule's", f.Partition(), at)
				}
			}
		})
	}
	// An interval whose step does not divide the day reaches partitions
	// past the day the partitions are taken from: the home partition (its
	// first occurrence's) holds those, and each occurrence has one holder.
	t.Run("beyond the day", func(t *testing.T) {
		t.Parallel()
		space := Space{Size: 1440, Partitions: 1440, Scatter: true}
		sched := interval(t, "2020-01-01", "59 minutes", time.UTC)
		fs := space.Scattered(sched, time.UTC)
		if n := len(fs); n < 2 || n >= 1440 {
			t.Fatalf("%d partitions", n)
		}
		holders(t, fs, sched, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC))
		// A partition reached once in 59 days: a scan from after its
		// occurrence stops without one, where it looked last.
		var rare *Filtered
		for _, f := range fs {
			if !f.home {
				rare = f
				break
			}
		}
		at, ok := scanNext(rare, reference)
		if !ok {
			t.Fatal("no first occurrence")
		}
		stop, found, ok := rare.Scan(at)
		if found || !ok || !stop.After(at) {
			t.Fatalf("scan from its occurrence: %s, found %v, ok %v", stop, found, ok)
		}
	})
}

// Occurrences on the days clocks change, in the schedule's zone: the
// repeated hour's two occurrences of a minute are on one spot, and the
// skipped hour has none.
func TestScatteredDST(t *testing.T) {
	t.Parallel()
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Fatal(err)
	}
	space := Space{Size: 1440, Partitions: 1440, Scatter: true}
	sched := cron(t, "*/15 * * * *", paris)
	fs := space.Scattered(sched, paris)
	if len(fs) != 96 {
		t.Fatalf("%d partitions, want 96", len(fs))
	}
	at := func(s string) time.Time {
		t.Helper()
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	of := func(q int) *Filtered {
		for _, f := range fs {
			if f.Partition() == q {
				return f
			}
		}
		t.Fatalf("no partition %d", q)
		return nil
	}
	for _, c := range []struct {
		name      string
		partition int
		from      string
		want      []string
	}{
		// 25 October 2026: 02:15 comes twice, summer then winter time.
		{"repeated hour", 135, "2026-10-25T00:00:00+02:00", []string{"2026-10-25T02:15:00+02:00", "2026-10-25T02:15:00+01:00", "2026-10-26T02:15:00+01:00"}},
		// 29 March 2026: 02:00 to 02:59 does not exist; 03:00 follows 01:45.
		{"skipped hour", 135, "2026-03-29T00:00:00+01:00", []string{"2026-03-30T02:15:00+02:00"}},
		{"after the skipped hour", 180, "2026-03-29T00:00:00+01:00", []string{"2026-03-29T03:00:00+02:00", "2026-03-30T03:00:00+02:00"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f, from := of(c.partition), at(c.from)
			for _, w := range c.want {
				next, ok := scanNext(f, from)
				if !ok || !next.Equal(at(w)) {
					t.Fatalf("after %s: %s, %v; want %s", from.In(paris), next.In(paris), ok, w)
				}
				if s := space.OccurrenceSpot(next, paris); s != c.partition {
					t.Fatalf("%s on spot %d", next.In(paris), s)
				}
				from = next
			}
		})
	}
	holders(t, fs, sched, at("2026-03-28T00:00:00Z"), at("2026-03-31T00:00:00Z"))
	holders(t, fs, sched, at("2026-10-24T00:00:00Z"), at("2026-10-27T00:00:00Z"))
}
