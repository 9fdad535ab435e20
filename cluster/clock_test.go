package cluster

import (
	"context"
	"log/slog"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/clock"
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
func clockNode(t *testing.T, r Registry, defs schedules, now func() time.Time, virtual func(context.Context) (time.Time, bool, error)) *clockRole {
	t.Helper()
	ctx := context.Background()
	register(t, r, "c1", t0, RoleClock)
	rebalance(t, r, "c1", t0)
	n := &node{cfg: Config{Registry: r, Node: Node{ID: "c1", Roles: []string{RoleClock}}, Clock: clock.Func(now), Virtual: virtual,
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
func recorded(t *testing.T, r Registry) []string {
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

// scatteredClock returns the clock of registered node id, which owns the
// partitions its heartbeat returns, on the definitions defs.
func scatteredClock(t *testing.T, r Registry, id string, defs schedules, now func() time.Time) *clockRole {
	t.Helper()
	ctx := context.Background()
	n := &node{cfg: Config{Registry: r, Node: Node{ID: id, Roles: []string{RoleClock}}, Clock: clock.Func(now),
		Schedules: defs, Location: time.UTC, Bound: time.Minute}, log: slog.New(slog.DiscardHandler)}
	c := newClock(n)
	leases, err := r.Heartbeat(ctx, id, t0)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.setLeases(ctx, leases); err != nil {
		t.Fatal(err)
	}
	if err := c.reload(ctx); err != nil {
		t.Fatal(err)
	}
	return c
}

// With scattered repeaters, two clock nodes that own complementary
// partitions each record exactly the occurrences of a */15 and an
// every-minute task whose minute falls in their partitions, under the
// lease of that partition: every occurrence once, by one node.
func TestClockScattersRepeaters(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	space := Space{Size: 4, Partitions: 4, Scatter: true}
	r := registry(t, space)
	register(t, r, "c1", t0, RoleClock)
	register(t, r, "c2", t0, RoleClock)
	rebalance(t, r, "c1", t0)
	own := owned(t, r)
	owner := map[int]string{}
	for id, ps := range own {
		for _, p := range ps {
			owner[p] = id
		}
	}
	for p := range space.Partitions {
		if owner[p] == "" || owner[p] == owner[(p+1)%space.Partitions] {
			t.Fatalf("regular partitions not shared by the two nodes: %v", own)
		}
	}
	defs := schedules{
		{Def: &job.Task{Name: "quarter", Type: job.Callable, Cron: "*/15 * * * *"}, State: job.State{NextFire: job.At(t0)}},
		{Def: &job.Task{Name: "minute", Type: job.Callable, Cron: "* * * * *"}, State: job.State{NextFire: job.At(t0)}},
	}
	now := t0.Add(-time.Second)
	clocks := []*clockRole{scatteredClock(t, r, "c1", defs, func() time.Time { return now }), scatteredClock(t, r, "c2", defs, func() time.Time { return now })}
	for _, c := range clocks {
		if n := len(c.tasks); n != 8 {
			t.Fatalf("%s plans %d entries, want 4 partitions of each task", c.n.cfg.Node.ID, n)
		}
	}
	// 09:00 to 09:45: each node fires what is due at each minute; c2
	// lags behind from 09:20 to 09:30, and catches up.
	end := t0.Add(45 * time.Minute)
	for now = t0; !now.After(end); now = now.Add(30 * time.Second) {
		for _, c := range clocks {
			if c.n.cfg.Node.ID == "c2" && now.After(t0.Add(20*time.Minute)) && now.Before(t0.Add(30*time.Minute)) {
				continue
			}
			if err := c.fire(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	fs, err := r.Fires(ctx, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	type occurrence struct {
		task string
		at   time.Time
	}
	seen := map[occurrence]bool{}
	for _, f := range fs {
		o := occurrence{f.Task, f.Scheduled}
		if seen[o] {
			t.Errorf("%s at %s recorded twice", f.Task, f.Scheduled.Format(time.TimeOnly))
		}
		seen[o] = true
		want := f.Scheduled.Minute() % space.Partitions
		if f.Partition != want || f.Node != owner[want] {
			t.Errorf("%s at %s recorded under partition %d by %s, want %d by %s", f.Task, f.Scheduled.Format(time.TimeOnly),
				f.Partition, f.Node, want, owner[want])
		}
	}
	var missing []string
	for m := 0; m <= 45; m++ {
		at := t0.Add(time.Duration(m) * time.Minute)
		if !seen[occurrence{"minute", at}] {
			missing = append(missing, "minute@"+at.Format("15:04"))
		}
		if m%15 == 0 && !seen[occurrence{"quarter", at}] {
			missing = append(missing, "quarter@"+at.Format("15:04"))
		}
	}
	if len(missing) > 0 || len(fs) != 46+4 {
		t.Errorf("%d fires; missing %v", len(fs), missing)
	}
	// Each node armed its own partitions only, from 09:46 on.
	for _, c := range clocks {
		for _, e := range c.due {
			if p := e.p; owner[p.partition] != c.n.cfg.Node.ID || p.next.Minute()%space.Partitions != p.partition || !p.next.After(end) {
				t.Errorf("%s armed %s in partition %d at %s", c.n.cfg.Node.ID, p.name, p.partition, p.next.Format(time.TimeOnly))
			}
		}
	}
}

// A node that takes the partitions of a scattered task after an outage
// resumes each from the first occurrence of that partition no one
// handled: the last recorded is the task's, in any partition.
func TestClockScatteredCatchUp(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	space := Space{Size: 4, Partitions: 4, Scatter: true}
	r := registry(t, space)
	defs := schedules{{Def: &job.Task{Name: "minute", Type: job.Callable, Cron: "* * * * *"}, State: job.State{NextFire: job.At(t0)}}}
	// 09:00 to 09:10 were recorded (by a node since gone); the director
	// has not handled them yet.
	register(t, r, "old", t0, RoleClock)
	rebalance(t, r, "old", t0)
	leases, err := r.Heartbeat(ctx, "old", t0)
	if err != nil {
		t.Fatal(err)
	}
	for m := range 11 {
		at := t0.Add(time.Duration(m) * time.Minute)
		if _, err := r.Record(ctx, "old", leases[m%4], Fire{Task: "minute", Scheduled: at}, at); err != nil {
			t.Fatal(err)
		}
	}
	// At 09:12:30 c1 takes every partition: 09:11 and 09:12 are within the
	// bound and fire now, each under its partition; the entries resume
	// at 09:13 to 09:16.
	now := t0.Add(12*time.Minute + 30*time.Second)
	if err := r.Leave(ctx, "old", 0, now); err != nil {
		t.Fatal(err)
	}
	register(t, r, "c1", now, RoleClock)
	rebalance(t, r, "old", now)
	c := scatteredClock(t, r, "c1", defs, func() time.Time { return now })
	if err := c.fire(ctx); err != nil {
		t.Fatal(err)
	}
	fs, err := r.Fires(ctx, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	var late []string
	for _, f := range fs[11:] {
		late = append(late, f.Scheduled.Format("15:04")+" p"+strconv.Itoa(f.Partition)+" "+f.Node)
	}
	if want := []string{"09:11 p3 c1", "09:12 p0 c1"}; !slices.Equal(late, want) {
		t.Errorf("after the outage: %q, want %q", late, want)
	}
	var next []string
	for _, e := range c.due {
		next = append(next, e.p.next.Format("15:04"))
	}
	slices.Sort(next)
	if want := []string{"09:13", "09:14", "09:15", "09:16"}; !slices.Equal(next, want) {
		t.Errorf("armed at %q, want %q", next, want)
	}
}
