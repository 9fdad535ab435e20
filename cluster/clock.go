package cluster

import (
	"container/heap"
	"context"
	"maps"
	"slices"
	"time"

	"github.com/gnomon-sched/gnomon/calendar"
	"github.com/gnomon-sched/gnomon/job"
)

// Schedules is where a clock node reads the tasks: every definition with
// the stored state (whose next occurrence is the first the director has
// not handled), and a version that changes whenever a definition does.
type Schedules interface {
	Definitions(ctx context.Context) ([]job.Record, error)
	DefinitionsVersion(ctx context.Context) (int64, error)
}

// CalendarSource is a Schedules that also holds the named calendars the
// tasks' run_calendar and exclude_calendar name. A clock node whose
// Schedules is not one arms no task that names a calendar.
type CalendarSource interface {
	Calendars(ctx context.Context) ([]job.Calendar, error)
}

// planned is a task with a time trigger, as a clock node knows it: the
// whole task, or for a scattered repeater the part of it one partition
// holds (a task has then one planned per partition its occurrences fall
// in).
type planned struct {
	name      string
	sched     calendar.Schedule
	partition int
	// filter is the part of a scattered task's schedule that partition
	// holds; nil for a task placed whole.
	filter *Filtered
	// floor is the first occurrence the director had not handled when
	// the definitions were read: none before it is fired again.
	floor time.Time
	next  time.Time // zero when not armed: its partition is not owned, or it never fires again
	// rescan is true when next is not an occurrence but where the scan
	// of a scattered task's occurrences stopped: nothing fires then, the
	// scan goes on from there.
	rescan bool
	hidx   int
}

// plannedKey names a planned: a task and its partition.
type plannedKey struct {
	name      string
	partition int
}

// after returns p's first occurrence after t; for a scattered task whose
// scan finds none, where it stopped, and false for found.
func (p *planned) after(t time.Time) (at time.Time, found, ok bool) {
	if p.filter == nil {
		at, ok = p.sched.Next(t)
		return at, true, ok
	}
	return p.filter.Scan(t)
}

// arm sets p's next instant from after's answer, and reports whether it
// has one.
func (p *planned) arm(at time.Time, found, ok bool) bool {
	if !ok {
		p.next, p.rescan = time.Time{}, false
		return false
	}
	p.next, p.rescan = at, !found
	return true
}

// dueHeap orders armed tasks by their next occurrence, then by name. An
// entry holds the instant it is ordered by, so that the comparisons of a
// backlog's fires (a dozen each) read the heap's own array.
type dueHeap []dueEntry

type dueEntry struct {
	at int64 // the task's next occurrence, Unix nanoseconds
	p  *planned
}

func (h dueHeap) Len() int { return len(h) }
func (h dueHeap) Less(i, j int) bool {
	if h[i].at != h[j].at {
		return h[i].at < h[j].at
	}
	if h[i].p.name != h[j].p.name {
		return h[i].p.name < h[j].p.name
	}
	return h[i].p.partition < h[j].p.partition
}
func (h dueHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].p.hidx, h[j].p.hidx = i, j
}
func (h *dueHeap) Push(x any) {
	p := x.(*planned)
	p.hidx = len(*h)
	*h = append(*h, dueEntry{at: p.next.UnixNano(), p: p})
}
func (h *dueHeap) Pop() any {
	old := *h
	p := old[len(old)-1].p
	*h = old[:len(old)-1]
	p.hidx = -1
	return p
}

// clockRole is the clock role of a node: it keeps the schedules of the
// partitions it owns in memory, arms one timer for the earliest
// occurrence, and records each due fire under its lease. Only the node's
// goroutine touches it.
type clockRole struct {
	n       *node
	version int64
	tasks   map[plannedKey]*planned
	due     dueHeap
	leases  map[int]Lease
	// fired counts the fires this node recorded, for its log.
	fired int
	// vnow is the last reading of the virtual clock (Config.Virtual),
	// zero before the first.
	vnow time.Time
}

// virtual reports whether the clock follows a simulating director's
// virtual clock.
func (c *clockRole) virtual() bool { return c.n.cfg.Virtual != nil }

// ready reports whether the clock can tell the time: a virtual clock
// cannot until the director saved a reading.
func (c *clockRole) ready() bool { return !c.virtual() || !c.vnow.IsZero() }

// now returns the instant occurrences are due by: the node's clock, or
// the virtual clock's last reading.
func (c *clockRole) now() time.Time {
	if c.virtual() {
		return c.vnow
	}
	return c.n.now()
}

// sync reads the virtual clock, and reports whether it moved.
func (c *clockRole) sync(ctx context.Context) (bool, error) {
	t, ok, err := c.n.cfg.Virtual(ctx)
	if err != nil || !ok || !t.After(c.vnow) {
		return false, err
	}
	c.vnow = t
	return true, nil
}

func newClock(n *node) *clockRole {
	return &clockRole{n: n, version: -1, tasks: map[plannedKey]*planned{}, leases: map[int]Lease{}}
}

// reload reads the definitions again if their version changed, keeping
// the next occurrence of every task whose trigger still yields it.
func (c *clockRole) reload(ctx context.Context) error {
	v, err := c.n.cfg.Schedules.DefinitionsVersion(ctx)
	if err != nil || v == c.version {
		return err
	}
	defs, err := c.n.cfg.Schedules.Definitions(ctx)
	if err != nil {
		return err
	}
	days, err := c.calendars(ctx)
	if err != nil {
		return err
	}
	space, loc := c.n.cfg.Registry.Space(), c.n.cfg.Location
	old := c.tasks
	c.tasks, c.due = make(map[plannedKey]*planned, len(defs)), c.due[:0]
	zones := map[string]*time.Location{}
	var fresh []*planned
	for _, r := range defs {
		d := r.Def
		if !d.HasTimeTrigger() {
			continue
		}
		s, err := calendar.ForTaskWith(d, loc, days)
		if err != nil {
			continue // the director reports it
		}
		tz := taskZone(d, loc, zones)
		floor := r.State.NextFire.Time()
		var ps []*planned
		if parts := space.Scattered(s, tz); parts != nil {
			for _, f := range parts {
				ps = append(ps, &planned{name: d.Name, sched: s, partition: f.Partition(), filter: f, floor: floor, hidx: -1})
			}
		} else {
			spot, ok := space.Spot(s, tz)
			if !ok {
				continue
			}
			ps = append(ps, &planned{name: d.Name, sched: s, partition: space.Partition(spot), floor: floor, hidx: -1})
		}
		for _, p := range ps {
			c.tasks[plannedKey{p.name, p.partition}] = p
			if _, owned := c.leases[p.partition]; !owned {
				continue
			}
			if o := old[plannedKey{p.name, p.partition}]; o != nil && !o.next.IsZero() && !o.rescan {
				if n, found, ok := p.after(o.next.Add(-time.Nanosecond)); ok && found && n.Equal(o.next) {
					p.next = o.next
					heap.Push(&c.due, p)
					continue
				}
			}
			fresh = append(fresh, p)
		}
	}
	c.version = v
	return c.catchUp(ctx, fresh)
}

// taskZone returns the zone a task's calendars are read in: its own, or
// def. Zones loaded are kept in zones.
func taskZone(d *job.Task, def *time.Location, zones map[string]*time.Location) *time.Location {
	if d.Timezone == "" {
		return def
	}
	if l, ok := zones[d.Timezone]; ok {
		return l
	}
	l, err := time.LoadLocation(d.Timezone)
	if err != nil {
		l = def // the calendar compiled, so this does not happen
	}
	zones[d.Timezone] = l
	return l
}

// calendars reads and compiles the named calendars, when the schedules
// hold them; those that do not compile are left out (the director
// reports them).
func (c *clockRole) calendars(ctx context.Context) (calendar.Lookup, error) {
	src, ok := c.n.cfg.Schedules.(CalendarSource)
	if !ok {
		return nil, nil
	}
	cals, err := src.Calendars(ctx)
	if err != nil || len(cals) == 0 {
		return nil, err
	}
	list := make([]*job.Calendar, len(cals))
	for i := range cals {
		list[i] = &cals[i]
	}
	days, _ := calendar.CompileAll(list, nil)
	return func(name string) *calendar.DaySet { return days[name] }, nil
}

// setLeases takes the leases the last heartbeat returned: tasks of
// partitions lost are disarmed, those of partitions gained (or held at a
// new epoch: another node owned them meanwhile) catch up.
func (c *clockRole) setLeases(ctx context.Context, leases []Lease) error {
	next := make(map[int]Lease, len(leases))
	gained := map[int]bool{}
	for _, l := range leases {
		next[l.Partition] = l
		if old, ok := c.leases[l.Partition]; !ok || old.Epoch != l.Epoch {
			gained[l.Partition] = true
		}
	}
	lost := false
	for p := range c.leases {
		if _, ok := next[p]; !ok {
			lost = true
		}
	}
	c.leases = next
	if lost || len(gained) > 0 {
		c.n.log.Info("partitions", "owned", len(next), "gained", len(gained), "lost", lost)
	}
	var fresh []*planned
	for _, p := range c.tasks {
		if _, owned := next[p.partition]; !owned {
			c.disarm(p)
		} else if gained[p.partition] {
			c.disarm(p)
			fresh = append(fresh, p)
		}
	}
	return c.catchUp(ctx, fresh)
}

func (c *clockRole) disarm(p *planned) {
	if p.hidx >= 0 {
		heap.Remove(&c.due, p.hidx)
	}
	p.next, p.rescan = time.Time{}, false
}

// catchUp arms tasks of partitions this node just took (or just loaded)
// from the first occurrence no one handled: the one after the last
// recorded for them, and not before the first the director had not
// handled when the definitions were read. What fell due since then fires
// now, up to the catch-up bound. When that occurrence is older than the
// bound it is recorded anyway, so that the director records it, and
// those up to the bound, missed at once (engine.Fired); the task then
// resumes within the bound. A scattered task's planned does so with its
// partition's occurrences: the last recorded is the task's, whatever its
// partition, since the director takes no occurrence before one it was
// handed.
func (c *clockRole) catchUp(ctx context.Context, fresh []*planned) error {
	if len(fresh) == 0 {
		return nil
	}
	names := make([]string, 0, len(fresh))
	for i, p := range fresh {
		// A scattered task has several planned, next to each other when
		// loaded; a name given twice is harmless.
		if i == 0 || p.name != fresh[i-1].name {
			names = append(names, p.name)
		}
	}
	last, err := c.n.cfg.Registry.Last(ctx, names)
	if err != nil {
		return err
	}
	now := c.now()
	bound := now.Add(-c.n.cfg.Bound)
	stale := map[int][]Fire{}
	for _, p := range fresh {
		// first is the first occurrence no one handled; for a scattered
		// task, an instant none of the partition's are before.
		first := p.floor // zero: the director's state has none
		if l, ok := last[p.name]; ok {
			n, _, ok := p.after(l)
			if !ok {
				continue // it never fires after the last recorded
			}
			if n.After(first) {
				first = n
			}
		}
		if p.filter != nil && !first.IsZero() && first.Before(bound) {
			// The partition's first occurrence from there, if the scan
			// finds it before the bound, is the one recorded late.
			n, found, ok := p.after(first.Add(-time.Nanosecond))
			switch {
			case !ok:
				continue
			case found && n.Before(bound):
				first = n
			default:
				first = time.Time{} // none late: resume within the bound
			}
		}
		from := bound.Add(-time.Nanosecond)
		switch {
		case first.IsZero():
		case first.Before(bound):
			stale[p.partition] = append(stale[p.partition], Fire{Task: p.name, Scheduled: first})
		default:
			from = first.Add(-time.Nanosecond)
		}
		if p.arm(p.after(from)) {
			heap.Push(&c.due, p)
		}
	}
	return c.record(ctx, stale, now)
}

// wake returns when the next occurrence is due; zero if none is armed.
func (c *clockRole) wake() time.Time {
	if len(c.due) == 0 {
		return time.Time{}
	}
	return c.due[0].p.next
}

// maxFires bounds the occurrences a clock node records in one turn of its
// loop: a backlog (after a pause, or when a virtual clock jumps) is
// recorded over several turns, between which the node heartbeats, so that
// it is not found dead for being busy.
const maxFires = 10000

// fire records the occurrences due at or before now, earliest first, up
// to maxFires of them, and arms each task for its next one.
func (c *clockRole) fire(ctx context.Context) error {
	now := c.now()
	fs := map[int][]Fire{}
	for count, scans := 0, 0; len(c.due) > 0 && !c.due[0].p.next.After(now) && count < maxFires && scans < maxFires; {
		p := c.due[0].p
		if p.rescan {
			scans++
		} else {
			fs[p.partition] = append(fs[p.partition], Fire{Task: p.name, Scheduled: p.next})
			count++
		}
		if p.arm(p.after(p.next)) {
			c.due[0].at = p.next.UnixNano()
			heap.Fix(&c.due, 0)
		} else {
			heap.Pop(&c.due)
		}
	}
	return c.record(ctx, fs, now)
}

// record records fires by partition, one statement per partition, in one
// transaction. A partition whose lease is found lost is dropped at once:
// its tasks are disarmed until a heartbeat gives it back.
func (c *clockRole) record(ctx context.Context, byPart map[int][]Fire, now time.Time) error {
	var bs []Batch
	for _, part := range slices.Sorted(maps.Keys(byPart)) {
		if l, ok := c.leases[part]; ok {
			bs = append(bs, Batch{Lease: l, Fires: byPart[part]})
		}
	}
	if len(bs) == 0 {
		return nil
	}
	ns, err := c.n.cfg.Registry.RecordTurn(ctx, c.n.cfg.Node.ID, bs, now)
	if err != nil {
		// Unrecorded fires are found again when the partitions are taken
		// afresh: the node drops its leases (see node.run).
		return err
	}
	for i, n := range ns {
		if n >= 0 {
			c.fired += n
			continue
		}
		part := bs[i].Lease.Partition
		c.n.log.Warn("partition lost: its fires are left to its new owner", "partition", part, "epoch", bs[i].Lease.Epoch, "fires", len(bs[i].Fires))
		delete(c.leases, part)
		for _, p := range c.tasks {
			if p.partition == part {
				c.disarm(p)
			}
		}
	}
	return nil
}

// dropAll forgets every lease: after an error that may have left fires
// unrecorded, or when the node must register again.
func (c *clockRole) dropAll() {
	c.leases = map[int]Lease{}
	for _, p := range c.tasks {
		c.disarm(p)
	}
}
