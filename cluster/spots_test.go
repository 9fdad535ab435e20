package cluster

import (
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
	for _, bad := range []Space{{0, 1}, {1441, 1}, {60, 0}, {60, 61}} {
		if bad.Check() == nil {
			t.Errorf("space %+v accepted", bad)
		}
	}
}
