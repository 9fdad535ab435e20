package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"time"

	"github.com/gnomon-sched/gnomon/clock"
)

// Config configures a node of a cluster.
type Config struct {
	// Registry is the cluster's coordination, in the store the nodes
	// share (store/postgres: Store.Cluster). Required.
	Registry Registry
	// Node is this node: its ID (unique in the cluster), roles, address,
	// version and machines.
	Node Node
	// Clock is the node's clock; nil means clock.System. It decides
	// when occurrences are due (unless Virtual is set) and is recorded in
	// heartbeats and fires. A director that simulates passes clock.Wall,
	// since liveness is never virtual, and sets Virtual.
	Clock clock.Clock
	// Virtual, when set, is the virtual clock of a cluster whose director
	// simulates (see docs/cluster.md): it returns the reading the
	// director saved, and false while there is none. The clock role then
	// finds occurrences due by that reading and stamps its fires with it,
	// reading it whenever the director says it moved (ClockMoved) and
	// every second; until there is a reading it takes no partition. Clock
	// still decides liveness: heartbeats, leases and claims stay on it. A
	// director with Virtual takes fires in only when asked (Feed.Poll, at
	// each step of its clock), so that it hands its engine every
	// occurrence due at an instant at once, as a single server does.
	Virtual func(ctx context.Context) (time.Time, bool, error)
	// Logger defaults to discarding.
	Logger *slog.Logger

	// Schedules are the definitions a clock node reads. Required with
	// the clock role.
	Schedules Schedules
	// Location is the default time zone of calendars, as the director's
	// engine has it; nil means UTC.
	Location *time.Location
	// DefinitionsChannel is the channel on which the store notifies
	// (LISTEN/NOTIFY) that definitions changed: the clock role reads them
	// again at once rather than within definitionsPoll. Empty: it polls
	// only.
	DefinitionsChannel string
	// Bound is the catch-up bound: how late an occurrence may be found
	// and still fire (the director's misfire grace). Zero means a minute.
	Bound time.Duration

	// Fires takes the fires clock nodes record, for the director's
	// engine. Required with the director role.
	Fires FireSink
	// Files hands the director's engine the file versions the watchers
	// of workers found (see files.go). Optional: without it, the director
	// takes none in.
	Files FileSink
	// Gone records, for the director, that nodes were found dead or
	// left, and what became of the runs their workers held. Optional.
	Gone func(ctx context.Context, g Gone) error
	// Epoch is the epoch at which a director holds the assignment lease
	// (TakeOver's, or Registry.TakeDirector's): it rebalances, takes back
	// the runs of workers gone, and leaves at it, and its dispatch
	// (NewDispatch) writes at it. Zero for other nodes.
	Epoch int64
	// Deposed is called, for a director, once it finds that another
	// director took the assignment lease from it (it was paused or cut
	// off past the node timeout): its fenced store refuses its commits by
	// then, and the registry its writes in the cluster's tables, and the
	// callback stops its engine. The node stops too, and Run returns err
	// (a *DeposedError, which wraps ErrDeposed). The node and the
	// dispatch may each call it, from their goroutines. Optional.
	Deposed func(err error)
	// Standby makes a node with the director role a standby: another
	// director holds the cluster, and this node plays only its other
	// roles while it waits to take the cluster over (AwaitDirector). It
	// registers with the director role, so that the cluster's status
	// shows it, and its settings are checked against the director's as a
	// clock node's are.
	Standby bool

	// Executor runs the runs a worker claims. Required with the worker
	// role. A worker with Schedules and machines also runs the file
	// watchers of the tasks that name them.
	Executor Executor
	// Slots is the most runs a worker runs at once; zero means 10.
	Slots int
}

// Gone is a node found dead, or whose runs were taken back after it left,
// for the journal.
type Gone struct {
	Node string `json:"node"`
	// State is dead or left.
	State string    `json:"state"`
	At    time.Time `json:"at"`
	// Requeued are the runs it claimed and never started, queued again;
	// Lost those it had started, recorded lost.
	Requeued []int64 `json:"requeued,omitempty"`
	Lost     []int64 `json:"lost,omitempty"`
}

// beats is how many heartbeats a node sends in a node timeout: a lease
// is renewed at a fifth of its life.
const beats = 5

// definitionsPoll is how often a clock node looks for changed definitions.
const definitionsPoll = time.Second

// node is a running node: one goroutine heartbeats, rebalances (as a
// director) and fires (as a clock), so its state needs no lock.
type node struct {
	cfg    Config
	log    *slog.Logger
	clock  *clockRole
	worker *worker    // runs on a goroutine of its own
	files  *fileWatch // a worker's file watchers, on a goroutine of their own
	// holder is the director that deposed this one, once it was.
	holder string
	// A director's watch of the cluster: since when its rounds have
	// all succeeded (watched), and when the last did (lastRound; zero
	// after one failed).
	watched, lastRound time.Time
}

// runNode runs a node until ctx is done: it registers, heartbeats, and
// plays its roles; on return it leaves the cluster (its leases are
// released at once rather than after the timeout). Errors of the database
// are logged and retried: a node outlives an outage of PostgreSQL, owning
// nothing meanwhile once its leases could have moved. It returns an
// error, and the node stops, when it cannot go on: a clock node whose
// settings are not the director's (ErrSettings), a director deposed by
// another (ErrDeposed; it leaves the cluster only if the new director has
// another name, since under its own name the leases are the new one's).
func runNode(ctx context.Context, cfg Config) error {
	if cfg.Registry == nil {
		return errors.New("cluster: a node needs a registry")
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.System{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Location == nil {
		cfg.Location = time.UTC
	}
	if cfg.Bound <= 0 {
		cfg.Bound = time.Minute
	}
	if cfg.Node.Zone == "" {
		cfg.Node.Zone = cfg.Location.String()
	}
	n := &node{cfg: cfg, log: cfg.Logger.With("node", cfg.Node.ID)}
	// The node's goroutines stop when it does, be it by ctx or because it
	// cannot go on.
	parent := ctx
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	if cfg.Node.Has(RoleClock) {
		if cfg.Schedules == nil {
			return errors.New("cluster: a clock node needs its schedules")
		}
		n.clock = newClock(n)
	}
	if cfg.Node.Has(RoleWorker) {
		if cfg.Executor == nil {
			return errors.New("cluster: a worker needs an executor")
		}
		n.worker = newWorker(n)
		wctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		defer func() { cancel(); <-done }()
		go func() {
			defer close(done)
			n.worker.run(wctx)
		}()
	}
	if cfg.Node.Has(RoleWorker) && cfg.Schedules != nil && len(cfg.Node.Machines) > 0 {
		n.files = newFileWatch(n)
		fctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		defer func() { cancel(); <-done }()
		go func() {
			defer close(done)
			n.files.run(fctx)
		}()
	}
	if cfg.directs() && cfg.Files != nil {
		done := make(chan struct{})
		defer func() { <-done }()
		go func() {
			defer close(done)
			TakeFiles(ctx, cfg.Registry, cfg.Node.ID, cfg.Epoch, cfg.Files, cfg.Clock, n.log)
		}()
	}
	if cfg.directs() && cfg.Virtual == nil {
		if cfg.Fires == nil {
			return errors.New("cluster: a director needs a sink for fires")
		}
		feed := NewFeed(cfg.Registry, cfg.Node.ID, cfg.Epoch, cfg.Fires, cfg.Clock, n.log)
		done := make(chan struct{})
		defer func() { <-done }()
		go func() {
			defer close(done)
			feed.run(ctx)
		}()
	}
	// The clock reads the definitions and the virtual clock again as
	// soon as it is told they changed.
	var changed chan struct{}
	if n.clock != nil {
		changed = make(chan struct{}, 1)
		var channels []string
		if cfg.DefinitionsChannel != "" {
			channels = append(channels, cfg.DefinitionsChannel)
		}
		if cfg.Virtual != nil {
			channels = append(channels, NoticeClock)
		}
		if len(channels) > 0 {
			lctx, cancel := context.WithCancel(ctx)
			done := make(chan struct{})
			defer func() { cancel(); <-done }()
			go func() {
				defer close(done)
				cfg.Registry.Listen(lctx, changed, channels...)
			}()
		}
	}
	defer func() {
		if n.holder == cfg.Node.ID {
			return // a new process under this name holds it all now
		}
		lctx, cancel := context.WithTimeout(context.WithoutCancel(parent), 5*time.Second)
		defer cancel()
		if err := cfg.Registry.Leave(lctx, cfg.Node.ID, cfg.Epoch, n.now()); err != nil {
			n.log.Warn("could not leave the cluster: its leases move when the timeout has passed", "err", err)
		}
	}()
	err := n.run(ctx, changed)
	stop()
	return err
}

func (n *node) now() time.Time { return n.cfg.Clock.Now() }

// directs reports whether the node is the cluster's director: it has the
// role and is no standby.
func (c *Config) directs() bool { return c.Node.Has(RoleDirector) && !c.Standby }

// run is the node's loop; changed signals that the definitions changed
// or the director moved the virtual clock (nil without the clock role).
// It returns nil when ctx is done or the node was drained, and an error
// when it cannot go on.
func (n *node) run(ctx context.Context, changed <-chan struct{}) error {
	reg := n.cfg.Registry
	beat := reg.Timeout() / beats
	registered := false
	var nextBeat, nextPoll time.Time
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		woken := false
		select {
		case <-ctx.Done():
			return nil
		case <-timer.C:
		case <-changed:
			woken = true
		}
		now := n.now()
		if c := n.clock; c != nil && c.virtual() {
			// The reading first: the definitions read after it hold
			// every change made before the director moved the clock.
			advanced, err := c.sync(ctx)
			if err != nil {
				n.log.Warn("could not read the virtual clock", "err", err)
			}
			woken = woken || advanced
		}
		if !now.Before(nextBeat) {
			nextBeat = now.Add(beat)
			var drained bool
			var err error
			registered, drained, err = n.heartbeat(ctx, registered)
			if err != nil {
				return err
			}
			if drained {
				n.log.Info("drained: the node owns no partitions and leaves the cluster")
				return nil
			}
		}
		if c := n.clock; c != nil && registered {
			if !now.Before(nextPoll) || woken {
				nextPoll = now.Add(definitionsPoll)
				if err := c.reload(ctx); err != nil {
					n.log.Warn("could not read the definitions", "err", err)
				}
			}
			if w := c.wake(); !w.IsZero() && !w.After(c.now()) {
				if err := c.fire(ctx); err != nil && ctx.Err() == nil {
					n.log.Warn("fires not recorded: the partitions are taken afresh at the next heartbeat", "err", err)
					c.dropAll()
				}
			}
		}
		next := nextBeat
		if c := n.clock; c != nil {
			next = earliest(next, nextPoll)
			switch w := c.wake(); {
			case w.IsZero():
			case !c.virtual():
				next = earliest(next, w)
			case !w.After(c.now()):
				next = n.now() // the rest of a backlog
			}
		}
		timer.Reset(max(next.Sub(n.now()), 0))
	}
}

// heartbeat registers (again) if needed, heartbeats, hands the leases to
// the clock and, as a director, rebalances. It reports whether the node
// is registered, and whether it was drained: it is draining and owns
// nothing any more (a director is never drained: it holds the engine
// until it is stopped). It returns an error when the node cannot go on:
// its settings are not the director's, or it was a director and another
// took the cluster over.
func (n *node) heartbeat(ctx context.Context, registered bool) (bool, bool, error) {
	reg := n.cfg.Registry
	if !registered {
		err := reg.Register(ctx, n.cfg.Node, n.now())
		if errors.Is(err, ErrSettings) {
			n.log.Error("refused by the cluster", "err", err)
			return false, false, err
		}
		if err != nil {
			n.log.Warn("could not register", "err", err)
			return false, false, nil
		}
		n.log.Info("registered", "roles", n.cfg.Node.Roles)
	}
	leases, err := reg.Heartbeat(ctx, n.cfg.Node.ID, n.now())
	if errors.Is(err, ErrSettings) {
		n.log.Error("refused by the cluster", "err", err)
		return true, false, err
	}
	if errors.Is(err, ErrNotRegistered) {
		n.log.Warn("found dead by the cluster: registering again")
		if n.clock != nil {
			n.clock.dropAll()
		}
		return false, false, nil
	}
	if err != nil {
		n.log.Warn("heartbeat failed", "err", err)
		n.lastRound = time.Time{}
		return true, false, nil
	}
	if n.cfg.directs() {
		// A round that failed, or one late by more than a timeout (the
		// director was stalled), breaks the watch: the nodes' silence
		// meanwhile is not theirs to answer for.
		now := n.now()
		if n.lastRound.IsZero() || now.Sub(n.lastRound) > reg.Timeout() {
			n.watched = now
		}
		b, err := reg.Rebalance(ctx, n.cfg.Node.ID, n.cfg.Epoch, now, n.watched)
		switch {
		case err != nil:
			n.lastRound, n.watched = time.Time{}, now
			n.log.Warn("rebalance failed", "err", err)
		case !b.Leader:
			return true, false, n.deposed(&DeposedError{Holder: b.Holder, Epoch: b.Epoch, Director: n.cfg.Node.ID, Held: n.cfg.Epoch})
		default:
			n.lastRound = now
		}
		for _, d := range b.Dead {
			n.log.Warn("node found dead: its partitions move", "dead", d)
		}
		// A takeover between the rebalance and the reclaim: the reclaim
		// is refused, and the director stops as when the rebalance finds
		// it deposed.
		if d := n.reclaim(ctx, b.Dead); d != nil {
			return true, false, n.deposed(d)
		}
		moved := map[[2]string]int{}
		for _, m := range b.Moves {
			moved[[2]string{m.From, m.To}]++
		}
		for ft, k := range moved {
			n.log.Info("partitions moved", "from", ft[0], "to", ft[1], "partitions", k)
		}
		if len(b.Moves) > 0 {
			// Take what this node was just given without waiting a beat.
			if leases, err = reg.Heartbeat(ctx, n.cfg.Node.ID, n.now()); err != nil {
				return true, false, nil
			}
		}
	}
	if n.clock != nil && n.clock.ready() {
		if err := n.clock.setLeases(ctx, leases); err != nil {
			n.log.Warn("could not catch up on new partitions: they are taken afresh at the next heartbeat", "err", err)
			n.clock.dropAll()
		}
	}
	if len(leases) == 0 && !n.cfg.directs() && (n.worker == nil || n.worker.running() == 0) {
		if state, err := reg.State(ctx, n.cfg.Node.ID); err == nil && state == Draining {
			return true, true, nil
		}
	}
	return true, false, nil
}

// deposed reports that another director took the assignment lease from
// this one, as d says: the node stops, and so does the engine
// (Config.Deposed).
func (n *node) deposed(d *DeposedError) error {
	n.log.Error("another director took the cluster over: this director stops", "holder", d.Holder, "epoch", d.Epoch, "held", d.Held)
	n.holder = d.Holder
	if n.clock != nil {
		n.clock.dropAll()
	}
	if n.cfg.Deposed != nil {
		n.cfg.Deposed(d)
	}
	return d
}

// reclaim takes back the runs of workers gone, and records in the
// journal the nodes found dead and what became of the runs. When the
// director no longer holds the assignment lease at its epoch it changes
// and journals nothing, and returns who deposed it; else nil.
func (n *node) reclaim(ctx context.Context, dead []string) *DeposedError {
	now := n.now()
	rc, err := n.cfg.Registry.Reclaim(ctx, n.cfg.Node.ID, n.cfg.Epoch, now, n.watched)
	var d *DeposedError
	if errors.As(err, &d) {
		return d
	}
	if err != nil {
		n.log.Warn("could not take back the runs of workers gone: retrying at the next heartbeat", "err", err)
	}
	gone := map[string]*Gone{}
	for _, d := range dead {
		gone[d] = &Gone{Node: d, State: Dead, At: now}
	}
	for _, r := range rc.Runs {
		g := gone[r.Worker]
		if g == nil {
			g = &Gone{Node: r.Worker, State: r.State, At: now}
			gone[r.Worker] = g
		}
		if r.Lost {
			g.Lost = append(g.Lost, r.Run)
		} else {
			g.Requeued = append(g.Requeued, r.Run)
		}
	}
	for _, id := range slices.Sorted(maps.Keys(gone)) {
		g := gone[id]
		if len(g.Requeued)+len(g.Lost) > 0 {
			n.log.Warn("runs taken back from a worker gone", "worker", id, "requeued", len(g.Requeued), "lost", len(g.Lost))
		}
		if n.cfg.Gone != nil {
			if err := n.cfg.Gone(ctx, *g); err != nil {
				n.log.Warn("node gone not journaled", "node", id, "err", err)
			}
		}
	}
	return nil
}

func earliest(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// CheckRoles reports roles that are not director, clock or worker, or
// none at all.
func CheckRoles(roles []string) error {
	if len(roles) == 0 {
		return errors.New("a node needs at least one role: director, clock or worker")
	}
	for _, r := range roles {
		if !slices.Contains([]string{RoleDirector, RoleClock, RoleWorker}, r) {
			return fmt.Errorf("role %q: should be director, clock or worker", r)
		}
	}
	return nil
}
