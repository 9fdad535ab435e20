package cluster

import (
	"context"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/job"
)

// schedules is a fixed set of definitions, as a clock node reads them.
type schedules []job.Record

func (s schedules) Definitions(context.Context) ([]job.Record, error) { return s, nil }
func (s schedules) DefinitionsVersion(context.Context) (int64, error) { return 1, nil }

// hourly is a task that fires at every hour, whose next occurrence the
// director has not handled is next.
func hourly(name string, next time.Time) job.Record {
	return job.Record{Def: &job.Task{Name: name, Type: job.Callable, Cron: "0 * * * *"}, State: job.State{NextFire: job.At(next)}}
}

// clockNode returns the clock of node c1, which owns every partition of
// r, on the definitions defs.
func clockNode(t *testing.T, r *Registry, defs schedules, now func() time.Time, virtual func(context.Context) (time.Time, bool, error)) *clock {
	t.Helper()
	ctx := context.Background()
	register(t, r, "c1", t0, RoleClock)
	rebalance(t, r, "c1", t0)
	n := &node{cfg: Config{Registry: r, Node: Node{ID: "c1", Roles: []string{RoleClock}}, Now: now, Virtual: virtual,
		Schedules: defs, Location: time.UTC, Bound: time.Minute}, log: slog.New(slog.DiscardHandler)}
	c := newClock(n)
	if c.virtual() {
		if _, err := c.sync(ctx); err != nil {
			t.Fatal(err)
		}
	}
	leases, err := r.Heartbeat(ctx, "c1", t0)
	if err != nil {
		t.Fatal(err)
	}
	if c.ready() {
		if err := c.setLeases(ctx, leases); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.reload(ctx); err != nil {
		t.Fatal(err)
	}
	return c
}

// recorded returns the fires of the registry as "task@HH:MM found HH:MM".
func recorded(t *testing.T, r *Registry) []string {
	t.Helper()
	fs, err := r.Fires(context.Background(), 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range fs {
		out = append(out, f.Task+"@"+f.Scheduled.Format("15:04")+" found "+f.At.Format("15:04"))
	}
	return out
}

// A clock node that takes tasks after an outage, with no fire of theirs
// recorded, resumes from the first occurrence the director has not
// handled: one past the catch-up bound is recorded at once, for the
// director to record it and those up to the bound missed, and the task
// resumes within the bound.
func TestClockCatchesUpFromTheDirectorsState(t *testing.T) {
	t.Parallel()
	r := registry(t, Space{Size: 4, Partitions: 4})
	now := t0.Add(2*time.Hour + 30*time.Second) // 11:00:30
	c := clockNode(t, r, schedules{hourly("late", t0), hourly("due", t0.Add(2*time.Hour)), hourly("ahead", t0.Add(3*time.Hour))},
		func() time.Time { return now }, nil)
	if got, want := recorded(t, r), []string{"late@09:00 found 11:00"}; !slices.Equal(got, want) {
		t.Errorf("recorded %q, want %q", got, want)
	}
	if w := c.wake(); !w.Equal(t0.Add(2 * time.Hour)) {
		t.Errorf("wakes at %s, want 11:00", w.Format(time.TimeOnly))
	}
	if err := c.fire(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got, want := recorded(t, r), []string{"late@09:00 found 11:00", "due@11:00 found 11:00", "late@11:00 found 11:00"}; !slices.Equal(got, want) {
		t.Errorf("recorded %q, want %q", got, want)
	}
	for _, e := range c.due {
		if p := e.p; !p.next.Equal(t0.Add(3*time.Hour)) || e.at != p.next.UnixNano() {
			t.Errorf("%s next at %s (ordered at %d), want 12:00", p.name, p.next.Format(time.TimeOnly), e.at)
		}
	}
}

// On a virtual clock a clock node takes no partition before the director
// saved a reading, then fires by the reading alone, and stamps its fires
// with it.
func TestClockFollowsTheVirtualClock(t *testing.T) {
	t.Parallel()
	r := registry(t, Space{Size: 4, Partitions: 4})
	var reading time.Time
	virtual := func(context.Context) (time.Time, bool, error) { return reading, !reading.IsZero(), nil }
	system := func() time.Time { return t0.Add(365 * 24 * time.Hour) } // far ahead: never read for fires
	c := clockNode(t, r, schedules{hourly("a", t0.Add(time.Hour)), hourly("b", t0.Add(2*time.Hour))}, system, virtual)
	if c.ready() || len(c.leases) != 0 || !c.wake().IsZero() {
		t.Fatalf("without a reading: ready %v, %d leases, wakes at %v", c.ready(), len(c.leases), c.wake())
	}
	ctx := context.Background()
	reading = t0.Add(30 * time.Minute)
	if moved, err := c.sync(ctx); !moved || err != nil {
		t.Fatalf("sync: %v %v", moved, err)
	}
	leases, err := r.Heartbeat(ctx, "c1", t0)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.setLeases(ctx, leases); err != nil {
		t.Fatal(err)
	}
	for _, step := range []struct {
		at   time.Duration
		want []string
	}{
		{30 * time.Minute, nil},
		{time.Hour, []string{"a@10:00 found 10:00"}},
		{2*time.Hour + 10*time.Second, []string{"a@10:00 found 10:00", "a@11:00 found 11:00", "b@11:00 found 11:00"}},
		{2*time.Hour + 20*time.Second, []string{"a@10:00 found 10:00", "a@11:00 found 11:00", "b@11:00 found 11:00"}},
	} {
		reading = t0.Add(step.at)
		if _, err := c.sync(ctx); err != nil {
			t.Fatal(err)
		}
		if err := c.fire(ctx); err != nil {
			t.Fatal(err)
		}
		if got := recorded(t, r); !slices.Equal(got, step.want) {
			t.Errorf("at %s: recorded %q, want %q", reading.Format(time.TimeOnly), got, step.want)
		}
	}
	// A reading that goes back is not taken.
	reading = t0
	if moved, _ := c.sync(ctx); moved || !c.now().Equal(t0.Add(2*time.Hour+20*time.Second)) {
		t.Errorf("the clock went back to %s", c.now().Format(time.TimeOnly))
	}
	// What a simulating director waits for: b from 10:00 is recorded (at
	// 11:00), a and b from 12:00 are not.
	missing, err := r.Unrecorded(ctx, []Fire{{Task: "b", Scheduled: t0.Add(time.Hour)}, {Task: "b", Scheduled: t0.Add(3 * time.Hour)},
		{Task: "a", Scheduled: t0.Add(3 * time.Hour)}}, t0.Add(3*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if want := []Fire{{Task: "a", Scheduled: t0.Add(3 * time.Hour)}, {Task: "b", Scheduled: t0.Add(3 * time.Hour)}}; !slices.Equal(missing, want) {
		t.Errorf("unrecorded %+v, want %+v", missing, want)
	}
}
