package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/gnomon-sched/gnomon/clock"
	"github.com/gnomon-sched/gnomon/job"
)

// Roles a node may combine.
const (
	RoleDirector = "director"
	RoleClock    = "clock"
	RoleWorker   = "worker"
)

// States of a registered node.
const (
	Live     = "live"     // heartbeating, takes partitions and runs
	Draining = "draining" // heartbeating, handing its partitions over
	Dead     = "dead"     // silent past the timeout: its leases were moved
	Left     = "left"     // stopped cleanly
)

// Node is a registered node, as the registry holds it.
type Node struct {
	ID       string   `json:"id"`
	Roles    []string `json:"roles"`
	Address  string   `json:"address,omitempty"`
	Version  string   `json:"version,omitempty"`
	Machines []string `json:"machines,omitempty"`
	// Zone is the name of the time zone the node reads calendars in
	// without a zone of their own (its --timezone): a clock node's must
	// be the director's. "Local" is a host's zone that has no name.
	Zone      string    `json:"zone,omitempty"`
	Started   time.Time `json:"started"`
	Heartbeat time.Time `json:"heartbeat"`
	State     string    `json:"state"`
	// Ended is when the node was found dead or left; zero while it lives.
	Ended time.Time `json:"ended,omitzero"`
	// Partitions are those it owns, in order.
	Partitions []int `json:"partitions"`
}

// Has reports whether the node has a role.
func (n *Node) Has(role string) bool { return slices.Contains(n.Roles, role) }

// Lease is a partition a node owns, at the epoch its fires must carry.
type Lease struct {
	Partition int   `json:"partition"`
	Epoch     int64 `json:"epoch"`
}

// ErrNotRegistered is returned to a node the registry does not count as
// alive (never registered, found dead, or left): it owns nothing and must
// register again.
var ErrNotRegistered = errors.New("the node is not registered as alive")

// ErrSettings is returned to a clock node whose time zone or space of
// minute spots (its size, partitions, and whether it scatters repeaters)
// is not the director's: it would find other occurrences due, or place
// schedules on other partitions. It must be started again
// with the director's flags.
var ErrSettings = errors.New("the node's settings are not the director's")

// Settings are what a director runs with, as it recorded them when it
// took the cluster (cluster_settings); Director is empty until one did.
type Settings struct {
	Director string
	Zone     string
	Space    Space
}

// Check reports, with ErrSettings, how node, running with zone and space,
// differs from the director. A zone without a name ("Local", or none
// recorded) cannot be compared and is not.
func (set Settings) Check(node, zone string, space Space) error {
	if set.Director == "" {
		return nil
	}
	var diffs []string
	differ := func(flag string, mine, theirs any) {
		diffs = append(diffs, fmt.Sprintf("node %s runs with %s %v but the director (%s) with %s %v: start it with the director's %s",
			node, flag, mine, set.Director, flag, theirs, flag))
	}
	if known(zone) && known(set.Zone) && zone != set.Zone {
		differ("--timezone", zone, set.Zone)
	}
	if set.Space.Size != 0 && space.Size != set.Space.Size {
		differ("--space", space.Size, set.Space.Size)
	}
	if set.Space.Partitions != 0 && space.Partitions != set.Space.Partitions {
		differ("--partitions", space.Partitions, set.Space.Partitions)
	}
	if set.Space.Size != 0 && space.Scatter != set.Space.Scatter {
		with := map[bool]string{true: "with", false: "without"}
		diffs = append(diffs, fmt.Sprintf("node %s runs %s --scatter-steps but the director (%s) %s: start it %s --scatter-steps",
			node, with[space.Scatter], set.Director, with[set.Space.Scatter], with[set.Space.Scatter]))
	}
	if len(diffs) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrSettings, strings.Join(diffs, "; "))
}

// known reports whether a zone has a name that can be compared.
func known(zone string) bool { return zone != "" && zone != "Local" }

// ErrOtherDirector is returned to a director that would start while
// another holds the engine: a cluster has one director at a time.
var ErrOtherDirector = errors.New("another director holds the cluster")

// TakeOver makes node n the cluster's director as reg.TakeDirector does, at
// c's reading (clock.Wall: leases are real time), but never on the strength of an expired lease alone: a lease
// another director holds that has expired is watched for a node timeout
// first, and taken only if it was not renewed meanwhile. A director
// cannot renew while the database is down, so when the database comes
// back its lease has expired although it is alive; it renews at its next
// round, within a fifth of the timeout, and a standby that starts then
// leaves it the cluster instead of deposing it. A dead director is
// replaced a timeout later than its lease says.
func TakeOver(ctx context.Context, reg Leadership, n Node, c clock.Clock, log *slog.Logger) (int64, error) {
	d, err := reg.Director(ctx)
	if err != nil {
		return 0, err
	}
	if d.ID == "" || d.ID == n.ID || !d.Expires.Before(c.Now()) {
		return reg.TakeDirector(ctx, n, c.Now())
	}
	if log != nil {
		log.Info("the director's lease has expired: watching it for a node timeout before taking the cluster over",
			"holder", d.ID, "expired", d.Expires, "timeout", reg.Timeout())
	}
	if !sleep(ctx, reg.Timeout()) {
		return 0, ctx.Err()
	}
	return reg.TakeUnrenewed(ctx, n, c.Now(), d.Expires)
}

// AwaitDirector makes node n the cluster's director as TakeOver does, but
// while another director holds the cluster it waits rather than return
// ErrOtherDirector: it reads the lease every beat, and takes it once its
// holder left, or once it expired and stayed unrenewed for a node
// timeout. Errors of the database are logged and retried. It returns the
// epoch it took the lease at, or ctx's error.
func AwaitDirector(ctx context.Context, reg Leadership, n Node, c clock.Clock, log *slog.Logger) (int64, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var waitingFor string
	for {
		epoch, err := TakeOver(ctx, reg, n, c, log)
		switch {
		case err == nil:
			return epoch, nil
		case ctx.Err() != nil:
			return 0, ctx.Err()
		case errors.Is(err, ErrOtherDirector):
			if d, derr := reg.Director(ctx); derr == nil && d.ID != waitingFor {
				waitingFor = d.ID
				log.Info("standby: another director holds the cluster; this node takes it over when that one dies or leaves",
					"director", d.ID, "epoch", d.Epoch)
			}
		default:
			log.Warn("could not read or take the director's lease: retrying", "err", err)
		}
		if !sleep(ctx, reg.Timeout()/beats) {
			return 0, ctx.Err()
		}
	}
}

// Director is the holder of the assignment lease: the cluster's director.
type Director struct {
	// ID is empty when no director holds the cluster.
	ID      string    `json:"id"`
	Epoch   int64     `json:"epoch"`
	Expires time.Time `json:"expires"`
	// Address is where its API listens, as it registered it.
	Address string `json:"address,omitempty"`
}

// ErrDeposed is reported to a director whose assignment lease another
// director took (it was paused or cut off past the node timeout): its
// store refuses its commits, the registry its writes in the cluster's
// tables, and it stops.
var ErrDeposed = errors.New("deposed: another director took the cluster over")

// DeposedError is the error of a director that no longer holds the
// assignment lease at its epoch: it wraps ErrDeposed, and says who holds
// the lease now.
type DeposedError struct {
	// Holder holds the lease at Epoch; it is empty when no director does
	// (the lease was released).
	Holder string
	Epoch  int64
	// Director is the deposed one, which held the lease at Held.
	Director string
	Held     int64
}

func (e *DeposedError) Error() string {
	holder := e.Holder
	if holder == "" {
		holder = "no director"
	}
	return fmt.Sprintf("%s: %s holds it at epoch %d; this director (%s) held epoch %d", ErrDeposed, holder, e.Epoch, e.Director, e.Held)
}

// Unwrap returns ErrDeposed.
func (e *DeposedError) Unwrap() error { return ErrDeposed }

// Balance is what one rebalance did.
type Balance struct {
	// Leader is false when the director no longer holds the assignment
	// at its epoch: then nothing else was done, and Holder and Epoch say
	// who holds it now (Holder is empty when no director does).
	Leader bool
	Holder string
	Epoch  int64
	// Dead are the nodes found silent past the timeout.
	Dead []string
	// Moves are the partitions that changed hands.
	Moves []Move
}

// Registry is a cluster's coordination in its database: nodes and
// heartbeats, partition leases, fenced fires, the moves of partitions,
// and the target channel of runs. The store the nodes share implements
// it (store/postgres: Store.Cluster); each part of a node reads it
// through the smaller interface below that it needs. Implementations are
// safe for concurrent use.
//
// Safety does not depend on clocks: a fire is recorded only under the
// partition's current owner and epoch, and the epoch grows whenever the
// owner changes, so a node that lost a partition (paused, cut off, found
// dead) can never record a fire for it again, and two nodes can never
// both record one occurrence. Clocks decide liveness only: the instants
// the registry is given (each node's injected clock) say when a node has
// been silent too long.
//
// The interface is the seam between package cluster and its store: it is
// not stable, and grows as the cluster does.
type Registry interface {
	Membership
	Leadership
	Rounds
	Recorder
	FireSource
	Queue
	Channel
	Operations
	Simulation
	Files
	// Record records one fire as RecordTurn does: it returns true if
	// the fire is recorded, false if this occurrence was recorded
	// already, and ErrFenced if node no longer owns the partition at
	// that epoch.
	Record(ctx context.Context, node string, l Lease, f Fire, now time.Time) (bool, error)
	// RecordAll records fires of one partition as Record does, in one
	// statement: it returns how many were new.
	RecordAll(ctx context.Context, node string, l Lease, fs []Fire, now time.Time) (int, error)
	// Nodes returns every registered node with the partitions it owns,
	// in id order.
	Nodes(ctx context.Context) ([]Node, error)
	// Moves returns the latest limit moves, newest first.
	Moves(ctx context.Context, limit int) ([]MoveRecord, error)
}

// Listener wakes a sleeper at notices.
type Listener interface {
	// Listen signals wake (without blocking) at each notice on channels
	// (NoticeQueued, NoticeEnded, NoticeClock, Config.DefinitionsChannel),
	// until ctx is done. A notice only wakes a sleeper early: every
	// reader also polls, so that a notice lost costs a poll.
	Listen(ctx context.Context, wake chan<- struct{}, channels ...string)
}

// Membership is how a node takes part in the cluster: it registers,
// heartbeats to keep its leases, and leaves.
type Membership interface {
	Listener
	// Space returns the registry's space of partitions.
	Space() Space
	// Timeout returns how long a node may stay silent before it is dead.
	Timeout() time.Duration
	// Register records a node as alive at now, with its roles, address,
	// version, machines, zone and the registry's space; a node
	// registering again starts afresh and owns nothing until the next
	// rebalance. A clock node or a standby director whose zone or space
	// is not the director's is refused with ErrSettings, naming the flag
	// to fix.
	Register(ctx context.Context, n Node, now time.Time) error
	// Heartbeat records that node id is alive at now, extends its leases
	// and returns them, in partition order. It returns ErrNotRegistered
	// to a node that must register again, and ErrSettings to a clock node
	// whose zone or space is not the director's.
	Heartbeat(ctx context.Context, id string, now time.Time) ([]Lease, error)
	// State returns the state of node id: live, draining, dead or left.
	State(ctx context.Context, id string) (string, error)
	// Leave records that a node stopped cleanly at now: it releases its
	// leases for the next rebalance to hand out, and, for a director at
	// epoch (other nodes give 0), the assignment lease if it still holds
	// it at that epoch.
	Leave(ctx context.Context, id string, epoch int64, now time.Time) error
}

// Leadership is the director's lease: who holds the cluster, and the
// taking of it.
type Leadership interface {
	// Timeout returns how long a node may stay silent before it is dead.
	Timeout() time.Duration
	// Director returns the cluster's director, as its lease says.
	Director(ctx context.Context) (Director, error)
	// TakeDirector makes node n the cluster's director at now, by taking
	// the assignment lease, and returns the epoch it holds it at: it
	// returns ErrOtherDirector, naming the holder, while another director
	// holds it and its lease has not expired. The epoch moves on at every
	// take, by the same node too. It records n's zone and the registry's
	// space as the settings every clock node must run with.
	TakeDirector(ctx context.Context, n Node, now time.Time) (int64, error)
	// TakeUnrenewed is TakeDirector, except that a lease another
	// director holds is taken only if it still expires at expires: it
	// was not renewed since it was read (see TakeOver).
	TakeUnrenewed(ctx context.Context, n Node, now, expires time.Time) (int64, error)
}

// Rounds are a director's rounds, each fenced by the epoch at which it
// holds the assignment lease.
type Rounds interface {
	// Rebalance renews director's assignment lease at epoch, marks dead
	// the nodes silent past the timeout within the director's watch
	// (since watched; the zero time is a watch that never broke),
	// releases their leases, and assigns every partition evenly to the
	// live clock nodes, moving as few as it can (AssignSpace). A director
	// that lost the lease changes nothing: the Balance says who holds it.
	Rebalance(ctx context.Context, director string, epoch int64, now, watched time.Time) (Balance, error)
	// Reclaim takes back, at now, the runs held by workers found dead or
	// gone (left more than a node timeout ago, within the watch): a run
	// never started is queued again, an aborted one ends killed, one that
	// started ends lost. A director that no longer holds the lease at
	// epoch gets a *DeposedError, and nothing is taken back.
	Reclaim(ctx context.Context, director string, epoch int64, now, watched time.Time) (Reclaimed, error)
}

// Recorder is where a clock node records the fires it finds due.
type Recorder interface {
	// Space returns the registry's space of partitions.
	Space() Space
	// RecordTurn records batches of fires, a statement each, in one
	// transaction: it returns for each batch how many of its fires were
	// new, or -1 when node no longer owns the partition at that epoch
	// (that batch changes nothing; the others are recorded). When it
	// returns an error, none is recorded.
	RecordTurn(ctx context.Context, node string, bs []Batch, now time.Time) ([]int, error)
	// Last returns, for each of tasks, the latest occurrence recorded:
	// where a new owner of a partition resumes.
	Last(ctx context.Context, tasks []string) (map[string]time.Time, error)
}

// FireSource is where a director's Feed takes the fires in.
type FireSource interface {
	// Fires returns the fires recorded after ID after, oldest first:
	// those of whole statements, as many as it takes to hold limit fires.
	Fires(ctx context.Context, after int64, limit int) ([]Recorded, error)
	// FiresByID returns the fires of the statements of those IDs that
	// exist, in ID order.
	FiresByID(ctx context.Context, ids []int64) ([]Recorded, error)
	// Prune deletes the fires up to ID upTo recorded before before, with
	// their keys, for director at epoch (a *DeposedError, and nothing
	// deleted, when it no longer holds the assignment lease at epoch).
	Prune(ctx context.Context, director string, epoch int64, upTo int64, before time.Time) error
}

// Queue is the target channel as a worker uses it.
type Queue interface {
	Listener
	// Claim claims for worker, at now, up to n queued runs it may run:
	// those for no machine or for one of machines, in priority then due
	// order. A worker that is not live claims nothing.
	Claim(ctx context.Context, worker string, machines []string, n int, now time.Time) ([]Claim, error)
	// MarkStarted records, at now, that worker is about to launch a run
	// it claimed: false, having written nothing, when the claim was taken
	// back or the run aborted meanwhile.
	MarkStarted(ctx context.Context, worker string, c Claim, now time.Time) (bool, error)
	// End records the outcome of a run worker started, under its
	// attempt: false, having written nothing, when the claim was taken
	// back.
	End(ctx context.Context, worker string, attempt int, e job.Exit) (bool, error)
	// Held returns the runs worker holds (claimed or started), with
	// their abort marks.
	Held(ctx context.Context, worker string) ([]Claim, error)
	// Requeue puts back in the queue a run worker claimed and did not
	// start.
	Requeue(ctx context.Context, worker string, c Claim) error
}

// Channel is the target channel as the director's Dispatch uses it. Its
// writes are fenced: a director that no longer holds the assignment
// lease at epoch gets a *DeposedError, and nothing is written.
type Channel interface {
	Listener
	// Enqueue queues runs for workers, at now; a run queued already is
	// left as it is.
	Enqueue(ctx context.Context, director string, epoch int64, ws []job.Launch, now time.Time) error
	// Abort marks a run aborted, for its worker to kill it; a run still
	// queued is ended at once, as killed before it started.
	Abort(ctx context.Context, director string, epoch int64, run int64, now time.Time) error
	// Delete removes runs whose outcome the director made durable.
	Delete(ctx context.Context, director string, epoch int64, runs []int64) error
	// DeleteExcept removes every run but those in keep.
	DeleteExcept(ctx context.Context, director string, epoch int64, keep []int64) error
	// Outcomes returns the outcomes of those of runs that ended.
	Outcomes(ctx context.Context, runs []int64) ([]job.Exit, error)
	// Ended returns the outcome of every run in the channel that ended.
	Ended(ctx context.Context) ([]job.Exit, error)
}

// Operations are the cluster as an operator sees and drives it.
type Operations interface {
	// Status returns the cluster's status at now.
	Status(ctx context.Context, now time.Time) (Status, error)
	// Drain marks a node draining: the next rebalance hands its
	// partitions to the live nodes, and it takes no new ones.
	Drain(ctx context.Context, id string) error
}

// Simulation is what a simulating director asks of the clock nodes.
type Simulation interface {
	// ClockMoved tells the clock nodes that the director moved its
	// virtual clock: they read it again at once rather than within a
	// second.
	ClockMoved(ctx context.Context) error
	// Unrecorded returns those of fs for whose task no occurrence from
	// the one given to by is recorded.
	Unrecorded(ctx context.Context, fs []Fire, by time.Time) ([]Fire, error)
}
