package gnomon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/gnomon-sched/gnomon/clock"
	"github.com/gnomon-sched/gnomon/cluster"
	"github.com/gnomon-sched/gnomon/engine"
	"github.com/gnomon-sched/gnomon/executor"
	"github.com/gnomon-sched/gnomon/scheduler"
	"github.com/gnomon-sched/gnomon/store/postgres"
)

// Cluster makes a gnomon on PostgreSQL a node of a cluster: nodes that
// share the database, where clock nodes find the time triggers due, each
// for the partitions of the schedules it owns, and a director holds the
// engine (see package cluster and docs/cluster.md).
type Cluster struct {
	// Node names this node in the cluster: letters, digits and . _ - :
	// (a hostname, say), at most 100; empty means HOST-PID.
	Node string
	// Roles are those it plays: director, clock, worker. A Scheduler
	// (New) is a director; RunNode runs a node without one.
	Roles []string
	// Address is where its API listens, for the record.
	Address string
	// Version is the version it runs, for the record.
	Version string
	// Machines are the machine names its workers serve.
	Machines []string
	// Timeout is how long a node may be silent before it is found dead
	// and its partitions move; zero means 5 s.
	Timeout time.Duration
	// Space is the space of minute spots, its partitions, and whether it
	// scatters the repeaters' occurrences over the regular spots (every
	// clock node must run with the director's); a zero size and zero
	// partitions mean those of cluster.DefaultSpace.
	Space cluster.Space
	// Simulated makes a node that is not a director (RunNode) follow the
	// virtual clock of a director that simulates (Config.SimulateFrom):
	// its clock role fires by the reading the director saves in the store
	// at each step of its clock, not by the system's clock. Every other
	// node of a simulating cluster needs it, and no node of a real one.
	Simulated bool
}

// storeClock reads the virtual clock of a simulating director where it
// saves it, in the store.
func storeClock(st Store) func(context.Context) (time.Time, bool, error) {
	return func(ctx context.Context) (time.Time, bool, error) {
		ns, err := st.Cursor(ctx, scheduler.ClockCursor)
		if err != nil || ns == 0 {
			return time.Time{}, false, err
		}
		return time.Unix(0, ns), true, nil
	}
}

// fetchWait bounds how long a simulating director waits for the clock
// nodes to record the occurrences due at a step of its clock: a clock
// node reads the clock when told it moved, and reads changed definitions
// before it fires; a partition whose owner died moves within the node
// timeout.
const fetchWait = time.Minute

// fetch is how a simulating director has the clock nodes find the
// occurrences due by now, its virtual clock's reading, which the
// scheduler saved in the store (scheduler.Config.Fetch): it tells them the
// clock moved, waits until they recorded each of due (or a later
// occurrence of its task, by now), and hands what they recorded to the
// engine at once, as a single server hands it the occurrences due at an
// instant.
func (s *Scheduler) fetch(ctx context.Context, now time.Time, due []engine.ClockFire) error {
	reg := s.node.Registry
	if err := reg.ClockMoved(ctx); err != nil {
		return err
	}
	want := make([]cluster.Fire, len(due))
	for i, d := range due {
		want[i] = cluster.Fire{Task: d.Task, Scheduled: d.Scheduled}
	}
	deadline := clock.Wall.Now().Add(fetchWait)
	for {
		missing, err := reg.Unrecorded(ctx, want, now)
		if err != nil {
			return err
		}
		if len(missing) == 0 {
			break
		}
		if clock.Wall.Now().After(deadline) {
			return fmt.Errorf("no clock node recorded %s at %s within %s: a live clock node must own its partition, and every node of a simulating cluster follow its clock (Cluster.Simulated, gnomon server --simulated)",
				missing[0].Task, missing[0].Scheduled.UTC().Format(time.RFC3339Nano), fetchWait)
		}
		wait := time.NewTimer(5 * time.Millisecond)
		select {
		case <-ctx.Done():
			wait.Stop()
			return ctx.Err()
		case <-wait.C:
		}
		want = missing
	}
	_, err := s.feed.Poll(ctx)
	return err
}

// validNodeName reports whether name may name a node: it is recorded
// with the runs the node ran (store.EncodeLogSpan), in the journal and
// in the cluster's tables.
func validNodeName(name string) bool {
	if name == "" || len(name) > 100 {
		return false
	}
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', strings.ContainsRune("._-:", r):
		default:
			return false
		}
	}
	return true
}

// clusterStore is a store that can hold a cluster (PostgreSQL's): it
// returns the cluster's view of itself, the registry in its tables, and
// holds the definitions clock nodes read.
type clusterStore interface {
	cluster.Schedules
	Cluster(ctx context.Context, space cluster.Space, timeout time.Duration) (cluster.Registry, error)
}

// clusterConfig checks c against the store and returns the node's
// configuration, with its registry.
func clusterConfig(ctx context.Context, c *Cluster, st Store, loc *time.Location) (cluster.Config, error) {
	cs, ok := st.(clusterStore)
	if !ok {
		return cluster.Config{}, errors.New("a cluster needs its store on PostgreSQL (--db postgres://...)")
	}
	if err := cluster.CheckRoles(c.Roles); err != nil {
		return cluster.Config{}, err
	}
	if c.Node == "" {
		host, _ := os.Hostname()
		c.Node = fmt.Sprintf("%s-%d", host, os.Getpid())
	}
	if !validNodeName(c.Node) {
		return cluster.Config{}, fmt.Errorf("node name %q: a node's name is letters, digits and . _ - : (at most 100), as the runs it ran record it", c.Node)
	}
	if c.Timeout <= 0 {
		c.Timeout = 5 * time.Second
	}
	if c.Space.Size == 0 && c.Space.Partitions == 0 {
		c.Space.Size, c.Space.Partitions = cluster.DefaultSpace.Size, cluster.DefaultSpace.Partitions
	}
	reg, err := cs.Cluster(ctx, c.Space, c.Timeout)
	if err != nil {
		return cluster.Config{}, err
	}
	return cluster.Config{
		Registry: reg, Schedules: cs, Location: loc, DefinitionsChannel: postgres.DefinitionsChannel,
		Node: cluster.Node{ID: c.Node, Roles: c.Roles, Address: c.Address, Version: c.Version, Machines: c.Machines, Zone: loc.String()},
	}, nil
}

// RunNode runs a node of a cluster that is not a director (a clock node,
// a worker) until ctx is done, on the store cfg.DB names, which must be
// PostgreSQL. It needs no data directory of its own.
func RunNode(ctx context.Context, cfg Config) error {
	if cfg.Cluster == nil {
		return errors.New("gnomon: RunNode needs Config.Cluster")
	}
	st := cfg.Store
	if st == nil {
		var err error
		if st, err = OpenStore(ctx, cfg.DB, cfg.DataDir); err != nil {
			return fmt.Errorf("gnomon: %w", err)
		}
		defer st.Close()
	}
	cc, err := nodeConfig(ctx, cfg, st)
	if err != nil {
		return fmt.Errorf("gnomon: %w", err)
	}
	m := cluster.NewMember(cc)
	if err := m.Start(ctx); err != nil {
		return fmt.Errorf("gnomon: %w", err)
	}
	select {
	case <-ctx.Done():
	case <-m.Done():
	}
	return m.Stop(context.Background())
}

// nodeConfig returns the configuration of a node that does not direct
// the cluster, on st: its registry, and its worker's executor when it has
// the role.
func nodeConfig(ctx context.Context, cfg Config, st Store) (cluster.Config, error) {
	cc, err := clusterConfig(ctx, cfg.Cluster, st, orLocal(cfg.Location))
	if err != nil {
		return cc, err
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	cc.Logger, cc.Slots = cfg.Logger, cfg.Workers
	if !cfg.SimulateFrom.IsZero() {
		return cc, errors.New("a node that is not a director follows the director's virtual clock (Cluster.Simulated); only the director takes Config.SimulateFrom, and it has no standby")
	}
	if cfg.Cluster.Simulated {
		cc.Virtual = storeClock(st)
	}
	if cc.Node.Has(cluster.RoleWorker) {
		if cfg.DataDir == "" {
			return cc, errors.New("a worker needs Config.DataDir for the files of its runs")
		}
		if cfg.KillGrace <= 0 {
			cfg.KillGrace = 10 * time.Second
		}
		// Only the built-in function: Go functions run on the workers of
		// the program that registers them (a Scheduler with the worker
		// role).
		funcs := func(name string) executor.Func {
			if name == engine.BuiltinLog {
				return logFunc(cc.Logger)
			}
			return nil
		}
		if err := makeDataDir(cfg.DataDir, cfg.Logger); err != nil {
			return cc, err
		}
		var logs *executor.LogFiles
		if _, logs, err = logFiles(cfg, st); err != nil {
			return cc, err
		}
		if cc.Executor, err = localRunner(cfg, logs, clock.System{}, funcs); err != nil {
			return cc, err
		}
	}
	return cc, nil
}

// A Standby is a cluster's director that another director keeps from
// starting (New returns an error that wraps cluster.ErrOtherDirector):
// it waits to take the cluster over, playing meanwhile the node's other
// roles (a standby's worker knows only the built-in log function, as
// RunNode's do). The cluster's status shows it as a standby.
type Standby struct {
	cfg Config
	cc  cluster.Config
}

// NewStandby returns the standby of the director cfg describes, on the
// store cfg.Store (or cfg.DB), which must be PostgreSQL.
func NewStandby(ctx context.Context, cfg Config) (*Standby, error) {
	if cfg.Cluster == nil || !slices.Contains(cfg.Cluster.Roles, cluster.RoleDirector) {
		return nil, errors.New("gnomon: a standby is a director of a cluster: Config.Cluster with the director role")
	}
	if cfg.Store == nil {
		var err error
		if cfg.Store, err = OpenStore(ctx, cfg.DB, cfg.DataDir); err != nil {
			return nil, fmt.Errorf("gnomon: %w", err)
		}
	}
	cc, err := nodeConfig(ctx, cfg, cfg.Store)
	if err != nil {
		cfg.Store.Close()
		return nil, fmt.Errorf("gnomon: %w", err)
	}
	cc.Standby = true
	return &Standby{cfg: cfg, cc: cc}, nil
}

// Director returns the director the standby waits on (none when its ID
// is empty).
func (sb *Standby) Director(ctx context.Context) (cluster.Director, error) {
	return sb.cc.Registry.Director(ctx)
}

// Wait plays the node's other roles until it takes the cluster over:
// once its director left, or its lease expired and stayed unrenewed for a
// node timeout (cluster.AwaitDirector). It then stops those
// roles as a stopped node does (commands go on, and the director's own
// worker takes them up under the same node name) and returns the
// Scheduler that directs the cluster, assembled as New does, not
// started. It returns no Scheduler and no error when ctx is done or the
// node was drained first, and an error when the node cannot go on (its
// settings are not the director's); the store is closed then.
func (sb *Standby) Wait(ctx context.Context) (*Scheduler, error) {
	m := cluster.NewMember(sb.cc)
	if err := m.Start(ctx); err != nil {
		sb.cfg.Store.Close()
		if ctx.Err() != nil {
			return nil, nil
		}
		return nil, fmt.Errorf("gnomon: %w", err)
	}
	// The wait for the director ends with ctx, or when the node stops by
	// itself.
	nctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-m.Done():
			cancel()
		case <-nctx.Done():
		}
	}()
	_, err := cluster.AwaitDirector(nctx, sb.cc.Registry, sb.cc.Node, clock.Wall, sb.cfg.Logger)
	cancel()
	nerr := m.Stop(context.Background())
	if err != nil {
		sb.cfg.Store.Close()
		if nerr != nil {
			return nil, fmt.Errorf("gnomon: %w", nerr)
		}
		return nil, nil
	}
	if nerr != nil {
		sb.cfg.Logger.Warn("the standby's node stopped as it took the cluster over", "err", nerr)
	}
	sb.cfg.Logger.Info("taking the cluster over", "node", sb.cc.Node.ID)
	// New takes the lease this node now holds again, at the next epoch.
	return New(sb.cfg)
}

// nodeGone journals that a node of the cluster was found dead or left.
func (s *Scheduler) nodeGone(ctx context.Context, g cluster.Gone) error {
	return s.sched.Submit(ctx, engine.NodeGone{Node: g.Node, State: g.State, At: g.At, Requeued: g.Requeued, Lost: g.Lost})
}

func orLocal(loc *time.Location) *time.Location {
	if loc == nil {
		return time.Local
	}
	return loc
}

// fireSink hands the fires of clock nodes to the director's engine.
type fireSink struct{ s *Scheduler }

// firesCursor names the store's cursor of the fires taken in.
const firesCursor = "cluster.fires"

func (f fireSink) Take(ctx context.Context, rs []cluster.Recorded) error {
	fs := make([]engine.ClockFire, 0, len(rs))
	var now time.Time
	if f.s.feed != nil {
		now = f.s.sched.Now()
	}
	for _, r := range rs {
		if !now.IsZero() && r.Scheduled.After(now) {
			// A node on the system's clock: its fires would skip the
			// simulation forward.
			f.s.cfg.Logger.Warn("fire ahead of the virtual clock dropped: every node of a simulating cluster needs --simulated",
				"task", r.Task, "scheduled", r.Scheduled, "node", r.Node)
			continue
		}
		fs = append(fs, engine.ClockFire{Task: r.Task, Scheduled: r.Scheduled, At: r.At, Node: r.Node})
	}
	return f.s.sched.Submit(ctx, engine.Fired{Fires: fs})
}

func (f fireSink) Cursor(ctx context.Context) (int64, error) {
	return f.s.store.Cursor(ctx, firesCursor)
}

func (f fireSink) SetCursor(ctx context.Context, id int64) error {
	return f.s.store.SetCursors(ctx, map[string]int64{firesCursor: id})
}

// handFile hands a file version a worker's watcher found to the
// director's engine (cluster.Config.Files).
func (s *Scheduler) handFile(ctx context.Context, f cluster.FoundFile) error {
	err := s.sched.HandFile(ctx, f.Task, f.Path)
	if errors.Is(err, scheduler.ErrNotWatching) {
		return fmt.Errorf("%w: %s", cluster.ErrNotWatching, f.Task)
	}
	return err
}

// clusterOps is the cluster as the API operates it.
type clusterOps struct {
	reg   cluster.Operations
	clock clock.Clock // the scheduler's
}

func (c clusterOps) Status(ctx context.Context) (cluster.Status, error) {
	return c.reg.Status(ctx, c.clock.Now())
}

func (c clusterOps) Drain(ctx context.Context, node string) error { return c.reg.Drain(ctx, node) }
