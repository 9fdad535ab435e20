package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
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

// Registry is a cluster's coordination in its PostgreSQL database: nodes
// and heartbeats, partition leases, fenced fires and the moves of
// partitions. It is safe for concurrent use.
//
// Safety does not depend on clocks: a fire is recorded only under the
// partition's current owner and epoch, and the epoch grows whenever the
// owner changes, so a node that lost a partition (paused, cut off, found
// dead) can never record a fire for it again, and two nodes can never
// both record one occurrence. Clocks decide liveness only: the instants
// the registry is given (each node's injected clock) say when a node has
// been silent too long.
type Registry struct {
	pool  *pgxpool.Pool
	space Space
	// timeout is how long a node may stay silent before it is dead.
	timeout time.Duration
}

// assignment is the lease that says which director may move partitions.
const assignment = -1

// NewRegistry returns the registry of the cluster whose tables the store's
// migrations created in pool's database, for a space of partitions, with
// nodes dead after timeout of silence. It creates the lease rows the space
// needs.
func NewRegistry(ctx context.Context, pool *pgxpool.Pool, space Space, timeout time.Duration) (*Registry, error) {
	if err := space.Check(); err != nil {
		return nil, err
	}
	if timeout <= 0 {
		return nil, fmt.Errorf("node timeout %s: should be positive", timeout)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO cluster_leases (partition) SELECT generate_series(-1, $1::int - 1) ON CONFLICT DO NOTHING`, space.Count()); err != nil {
		return nil, fmt.Errorf("cluster: leases: %w", err)
	}
	return &Registry{pool: pool, space: space, timeout: timeout}, nil
}

// Space returns the registry's space of partitions.
func (r *Registry) Space() Space { return r.space }

// Register records a node as alive at now, with its roles, address,
// version, machines, zone and the registry's space; a node registering
// again (after a restart, or after it was found dead) starts afresh and
// owns nothing until the next rebalance. A clock node whose zone or space
// is not the director's (as the last director to take the cluster
// recorded them) is refused with ErrSettings, naming the flag to fix, and
// so is a standby director (Config.Standby), which would impose its own
// on taking the cluster over. The director's own are those it recorded:
// they are not checked (a director that another took the cluster from
// stops by its epoch).
func (r *Registry) Register(ctx context.Context, n Node, now time.Time) error {
	if n.ID == "" || strings.ContainsAny(n.ID, ", \t\n") {
		return fmt.Errorf("node id %q: should be a non-empty name without spaces or commas", n.ID)
	}
	for _, role := range n.Roles {
		if role != RoleDirector && role != RoleClock && role != RoleWorker {
			return fmt.Errorf("role %q: should be director, clock or worker", role)
		}
	}
	err := pgx.BeginFunc(ctx, r.pool, func(tx pgx.Tx) error {
		if n.Has(RoleClock) || n.Has(RoleDirector) {
			var set settings
			if err := tx.QueryRow(ctx, `SELECT director, zone, space, partitions, scatter FROM cluster_settings WHERE id = 1`).
				Scan(&set.director, &set.zone, &set.space.Size, &set.space.Partitions, &set.space.Scatter); err != nil {
				return err
			}
			if !n.Has(RoleDirector) || set.director != n.ID {
				if err := set.check(n.ID, n.Zone, r.space); err != nil {
					return err
				}
			}
		}
		_, err := tx.Exec(ctx, `INSERT INTO cluster_nodes (id, roles, address, version, machines, started_at, heartbeat_at, state, zone, space, partitions, scatter)
			VALUES ($1, $2, $3, $4, $5, $6, $6, 'live', $7, $8, $9, $10)
			ON CONFLICT (id) DO UPDATE SET roles = $2, address = $3, version = $4, machines = $5,
				started_at = $6, heartbeat_at = $6, state = 'live', ended_at = 0, zone = $7, space = $8, partitions = $9, scatter = $10`,
			n.ID, strings.Join(n.Roles, ","), n.Address, n.Version, strings.Join(n.Machines, ","), now.UnixNano(),
			n.Zone, r.space.Size, r.space.Partitions, r.space.Scatter)
		return err
	})
	if errors.Is(err, ErrSettings) {
		return fmt.Errorf("register %s: %w", n.ID, err)
	}
	if err != nil {
		return fmt.Errorf("cluster: register %s: %w", n.ID, err)
	}
	return nil
}

// ErrSettings is returned to a clock node whose time zone or space of
// minute spots (its size, partitions, and whether it scatters repeaters)
// is not the director's: it would find other occurrences due, or place
// schedules on other partitions. It must be started again
// with the director's flags.
var ErrSettings = errors.New("the node's settings are not the director's")

// settings are what a director runs with, as it recorded them when it
// took the cluster (cluster_settings); director is empty until one did.
type settings struct {
	director string
	zone     string
	space    Space
}

// check reports, with ErrSettings, how node, running with zone and space,
// differs from the director. A zone without a name ("Local", or none
// recorded) cannot be compared and is not.
func (set settings) check(node, zone string, space Space) error {
	if set.director == "" {
		return nil
	}
	var diffs []string
	differ := func(flag string, mine, theirs any) {
		diffs = append(diffs, fmt.Sprintf("node %s runs with %s %v but the director (%s) with %s %v: start it with the director's %s",
			node, flag, mine, set.director, flag, theirs, flag))
	}
	if known(zone) && known(set.zone) && zone != set.zone {
		differ("--timezone", zone, set.zone)
	}
	if set.space.Size != 0 && space.Size != set.space.Size {
		differ("--space", space.Size, set.space.Size)
	}
	if set.space.Partitions != 0 && space.Partitions != set.space.Partitions {
		differ("--partitions", space.Partitions, set.space.Partitions)
	}
	if set.space.Size != 0 && space.Scatter != set.space.Scatter {
		with := map[bool]string{true: "with", false: "without"}
		diffs = append(diffs, fmt.Sprintf("node %s runs %s --scatter-steps but the director (%s) %s: start it %s --scatter-steps",
			node, with[space.Scatter], set.director, with[set.space.Scatter], with[set.space.Scatter]))
	}
	if len(diffs) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrSettings, strings.Join(diffs, "; "))
}

// known reports whether a zone has a name that can be compared.
func known(zone string) bool { return zone != "" && zone != "Local" }

// Heartbeat records that node id is alive at now, extends its leases and
// returns them. It returns ErrNotRegistered to a node that must register
// again, and ErrSettings to a clock node whose zone or space is not the
// director's (which it registered before the director recorded them, or
// another director took the cluster over with other settings).
func (r *Registry) Heartbeat(ctx context.Context, id string, now time.Time) ([]Lease, error) {
	var leases []Lease
	err := pgx.BeginFunc(ctx, r.pool, func(tx pgx.Tx) error {
		// The heartbeat reads the director's settings too: a clock node
		// that registered before the director recorded them, or under a
		// director that ran with others, learns it differs.
		var roles string
		var mine, set settings
		err := tx.QueryRow(ctx, `UPDATE cluster_nodes n SET heartbeat_at = $2 FROM cluster_settings c
			WHERE n.id = $1 AND n.state IN ('live', 'draining') AND c.id = 1
			RETURNING n.roles, n.zone, n.space, n.partitions, n.scatter, c.director, c.zone, c.space, c.partitions, c.scatter`, id, now.UnixNano()).
			Scan(&roles, &mine.zone, &mine.space.Size, &mine.space.Partitions, &mine.space.Scatter,
				&set.director, &set.zone, &set.space.Size, &set.space.Partitions, &set.space.Scatter)
		if errors.Is(err, pgx.ErrNoRows) {
			return ErrNotRegistered
		}
		if err != nil {
			return err
		}
		if rs := strings.Split(roles, ","); slices.Contains(rs, RoleClock) && !slices.Contains(rs, RoleDirector) && mine.space.Size != 0 {
			if err := set.check(id, mine.zone, mine.space); err != nil {
				return err
			}
		}
		// Lease rows are locked in partition order, as Rebalance locks
		// them, so that the two never deadlock.
		rows, err := tx.Query(ctx, `UPDATE cluster_leases SET expires_at = $2 WHERE partition IN (
				SELECT partition FROM cluster_leases WHERE node = $1 AND partition >= 0 ORDER BY partition FOR UPDATE)
			RETURNING partition, epoch`,
			id, now.Add(r.timeout).UnixNano())
		if err != nil {
			return err
		}
		leases, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (Lease, error) {
			var l Lease
			err := row.Scan(&l.Partition, &l.Epoch)
			return l, err
		})
		return err
	})
	if err != nil {
		if errors.Is(err, ErrNotRegistered) || errors.Is(err, ErrSettings) {
			return nil, fmt.Errorf("heartbeat of %s: %w", id, err)
		}
		return nil, fmt.Errorf("cluster: heartbeat of %s: %w", id, err)
	}
	slices.SortFunc(leases, func(a, b Lease) int { return a.Partition - b.Partition })
	return leases, nil
}

// Drain marks a node draining: the next rebalance hands its partitions to
// the live nodes, and it takes no new ones.
func (r *Registry) Drain(ctx context.Context, id string) error {
	tag, err := r.pool.Exec(ctx, `UPDATE cluster_nodes SET state = 'draining' WHERE id = $1 AND state IN ('live', 'draining')`, id)
	if err != nil {
		return fmt.Errorf("cluster: drain %s: %w", id, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("drain %s: %w", id, ErrNotRegistered)
	}
	return nil
}

// State returns the state of node id: live, draining, dead or left.
func (r *Registry) State(ctx context.Context, id string) (string, error) {
	var state string
	err := r.pool.QueryRow(ctx, `SELECT state FROM cluster_nodes WHERE id = $1`, id).Scan(&state)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", fmt.Errorf("node %s: %w", id, ErrNotRegistered)
	}
	if err != nil {
		return "", fmt.Errorf("cluster: state of %s: %w", id, err)
	}
	return state, nil
}

// Leave records that a node stopped cleanly at now: it releases its
// leases (the epochs move on, so nothing it still has in flight can be
// recorded) for the next rebalance to hand out. A director gives its
// epoch, the one TakeDirector returned (other nodes give 0): it releases
// the assignment lease only if it still holds it at that epoch, so that
// a director that lost the lease never frees it from under the new
// holder.
func (r *Registry) Leave(ctx context.Context, id string, epoch int64, now time.Time) error {
	return pgx.BeginFunc(ctx, r.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `UPDATE cluster_nodes SET state = 'left', ended_at = $2 WHERE id = $1`, id, now.UnixNano()); err != nil {
			return fmt.Errorf("cluster: leave %s: %w", id, err)
		}
		if err := release(ctx, tx, id, now, "the node left"); err != nil {
			return fmt.Errorf("cluster: leave %s: %w", id, err)
		}
		// Another director may start at once.
		if _, err := tx.Exec(ctx, `UPDATE cluster_leases SET node = '', expires_at = 0 WHERE partition = $1 AND node = $2 AND epoch = $3`,
			assignment, id, epoch); err != nil {
			return fmt.Errorf("cluster: leave %s: %w", id, err)
		}
		return nil
	})
}

// release takes every lease of node away from it, each to no one at the
// next epoch, and records the moves.
func release(ctx context.Context, tx pgx.Tx, node string, now time.Time, reason string) error {
	_, err := tx.Exec(ctx, `WITH freed AS (
			UPDATE cluster_leases SET node = '', epoch = epoch + 1, expires_at = 0
			WHERE node = $1 AND partition >= 0 RETURNING partition, epoch)
		INSERT INTO cluster_moves (at, partition, from_node, to_node, epoch, reason)
		SELECT $2, partition, $1, '', epoch, $3 FROM freed`, node, now.UnixNano(), reason)
	return err
}

// ErrOtherDirector is returned to a director that would start while
// another holds the engine: a cluster has one director at a time.
var ErrOtherDirector = errors.New("another director holds the cluster")

// TakeDirector makes node n the cluster's director at now, by taking the
// assignment lease, and returns the epoch it holds it at: it returns
// ErrOtherDirector, naming the holder, while another director holds it
// and its lease has not expired. The epoch moves on at every take, by the
// same node too (a director restarted under its name takes it back at
// once, and a paused process of the former one is fenced off by the
// epoch). It records n's zone and the registry's space as the settings
// every clock node must run with. A director takes the lease before its
// engine starts, and keeps it by rebalancing at its epoch; it gives it up
// when it leaves, or after the node timeout when it dies.
func (r *Registry) TakeDirector(ctx context.Context, n Node, now time.Time) (int64, error) {
	return r.takeDirector(ctx, n, now, 0)
}

// takeDirector is TakeDirector; when watched is not zero, a lease another
// director holds is taken only if it still expires at watched: it was not
// renewed since it was read.
func (r *Registry) takeDirector(ctx context.Context, n Node, now time.Time, watched int64) (int64, error) {
	var holder string
	var expires, epoch int64
	err := pgx.BeginFunc(ctx, r.pool, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `SELECT node, expires_at FROM cluster_leases WHERE partition = $1 FOR UPDATE`, assignment).Scan(&holder, &expires); err != nil {
			return err
		}
		other := holder != n.ID && holder != ""
		if other && (expires >= now.UnixNano() || watched != 0 && expires != watched) {
			return ErrOtherDirector
		}
		if err := tx.QueryRow(ctx, `UPDATE cluster_leases SET epoch = epoch + 1, node = $1, expires_at = $2 WHERE partition = $3 RETURNING epoch`,
			n.ID, now.Add(r.timeout).UnixNano(), assignment).Scan(&epoch); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `UPDATE cluster_settings SET director = $1, epoch = $2, zone = $3, space = $4, partitions = $5, scatter = $6 WHERE id = 1`,
			n.ID, epoch, n.Zone, r.space.Size, r.space.Partitions, r.space.Scatter)
		return err
	})
	if errors.Is(err, ErrOtherDirector) {
		return 0, fmt.Errorf("%w: %s, until %s at the latest (a cluster runs one director; send operator commands to it)",
			err, holder, time.Unix(0, expires).UTC().Format(time.RFC3339))
	}
	if err != nil {
		return 0, fmt.Errorf("cluster: take the director's lease: %w", err)
	}
	return epoch, nil
}

// TakeOver makes node n the cluster's director as TakeDirector does, at
// now(), but never on the strength of an expired lease alone: a lease
// another director holds that has expired is watched for a node timeout
// first, and taken only if it was not renewed meanwhile. A director
// cannot renew while the database is down, so when the database comes
// back its lease has expired although it is alive; it renews at its next
// round, within a fifth of the timeout, and a standby that starts then
// leaves it the cluster instead of deposing it. A dead director is
// replaced a timeout later than its lease says.
func (r *Registry) TakeOver(ctx context.Context, n Node, now func() time.Time, log *slog.Logger) (int64, error) {
	d, err := r.Director(ctx)
	if err != nil {
		return 0, err
	}
	if d.ID == "" || d.ID == n.ID || !d.Expires.Before(now()) {
		return r.TakeDirector(ctx, n, now())
	}
	if log != nil {
		log.Info("the director's lease has expired: watching it for a node timeout before taking the cluster over",
			"holder", d.ID, "expired", d.Expires, "timeout", r.timeout)
	}
	if !sleep(ctx, r.timeout) {
		return 0, ctx.Err()
	}
	return r.takeDirector(ctx, n, now(), d.Expires.UnixNano())
}

// AwaitDirector makes node n the cluster's director as TakeOver does, but
// while another director holds the cluster it waits rather than return
// ErrOtherDirector: it reads the lease every beat, and takes it once its
// holder left, or once it expired and stayed unrenewed for a node
// timeout. Errors of the database are logged and retried. It returns the
// epoch it took the lease at, or ctx's error.
func (r *Registry) AwaitDirector(ctx context.Context, n Node, now func() time.Time, log *slog.Logger) (int64, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var waitingFor string
	for {
		epoch, err := r.TakeOver(ctx, n, now, log)
		switch {
		case err == nil:
			return epoch, nil
		case ctx.Err() != nil:
			return 0, ctx.Err()
		case errors.Is(err, ErrOtherDirector):
			if d, derr := r.Director(ctx); derr == nil && d.ID != waitingFor {
				waitingFor = d.ID
				log.Info("standby: another director holds the cluster; this node takes it over when that one dies or leaves",
					"director", d.ID, "epoch", d.Epoch)
			}
		default:
			log.Warn("could not read or take the director's lease: retrying", "err", err)
		}
		if !sleep(ctx, r.timeout/beats) {
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

// Director returns the cluster's director, as its lease says.
func (r *Registry) Director(ctx context.Context) (Director, error) {
	var d Director
	var expires int64
	err := r.pool.QueryRow(ctx, `SELECT l.node, l.epoch, l.expires_at, coalesce(n.address, '')
		FROM cluster_leases l LEFT JOIN cluster_nodes n ON n.id = l.node WHERE l.partition = $1`, assignment).
		Scan(&d.ID, &d.Epoch, &expires, &d.Address)
	if err != nil {
		return d, fmt.Errorf("cluster: read the director's lease: %w", err)
	}
	d.Expires = time.Unix(0, expires).UTC()
	return d, nil
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

// judges reports whether a director watching the cluster since watched
// may, at now, judge a node's silence or absence: only once the watch
// lasted a timeout (see Rebalance).
func (r *Registry) judges(now, watched time.Time) bool {
	return watched.Before(now.Add(-r.timeout))
}

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

// Rebalance is the assignment director's round, at now: if director
// still holds the assignment lease at epoch (the one TakeDirector
// returned), expired or not, it renews it, marks dead the nodes silent
// past the timeout, releases their leases, and assigns every partition
// evenly to the live clock nodes, moving as few as it can: the renewal is
// a statement of its own, the rest one transaction that holds the lease
// FOR SHARE at epoch. A director that lost the lease changes nothing: the
// Balance says who holds it (a director never takes the lease here; only
// TakeDirector does, before its engine starts).
//
// watched is since when the director has watched the cluster without a
// break (see node.heartbeat): a node is found dead only when it was silent
// for the timeout within the watch. An outage of the database silences
// every node, and the director with them; once it is over, each has a
// timeout to heartbeat again before it is judged, rather than all being
// found dead, and their runs lost, at the director's first round. The
// zero time is a watch that never broke.
func (r *Registry) Rebalance(ctx context.Context, director string, epoch int64, now, watched time.Time) (Balance, error) {
	var b Balance
	holder := func(q interface {
		QueryRow(context.Context, string, ...any) pgx.Row
	}) error {
		return q.QueryRow(ctx, `SELECT node, epoch FROM cluster_leases WHERE partition = $1`, assignment).Scan(&b.Holder, &b.Epoch)
	}
	// The renewal is a transaction of its own: the lease row is locked
	// for an update only for that statement, since the director's fenced
	// commits read it FOR SHARE and would wait for the whole round.
	tag, err := r.pool.Exec(ctx, `UPDATE cluster_leases SET expires_at = $3 WHERE partition = $4 AND node = $1 AND epoch = $2`,
		director, epoch, now.Add(r.timeout).UnixNano(), assignment)
	if err != nil {
		return Balance{}, fmt.Errorf("cluster: rebalance: %w", err)
	}
	if tag.RowsAffected() == 0 {
		if err := holder(r.pool); err != nil {
			return Balance{}, fmt.Errorf("cluster: rebalance: %w", err)
		}
		return b, nil
	}
	err = pgx.BeginFunc(ctx, r.pool, func(tx pgx.Tx) error {
		b = Balance{}
		// The round holds the lease FOR SHARE, as a commit does: a
		// takeover waits for it, and one that came first leaves no row.
		var held int
		err := tx.QueryRow(ctx, `SELECT 1 FROM cluster_leases WHERE partition = $1 AND node = $2 AND epoch = $3 FOR SHARE`,
			assignment, director, epoch).Scan(&held)
		if errors.Is(err, pgx.ErrNoRows) {
			return holder(tx)
		}
		if err != nil {
			return err
		}
		b.Leader = true
		if r.judges(now, watched) {
			rows, err := tx.Query(ctx, `UPDATE cluster_nodes SET state = 'dead', ended_at = $1
				WHERE state IN ('live', 'draining') AND heartbeat_at < $2 RETURNING id`, now.UnixNano(), now.Add(-r.timeout).UnixNano())
			if err != nil {
				return err
			}
			if b.Dead, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
				return err
			}
			slices.Sort(b.Dead)
		}
		var clocks []string
		rows, err := tx.Query(ctx, `SELECT id, roles FROM cluster_nodes WHERE state = 'live'`)
		if err != nil {
			return err
		}
		var id, roles string
		if _, err := pgx.ForEachRow(rows, []any{&id, &roles}, func() error {
			if slices.Contains(strings.Split(roles, ","), RoleClock) {
				clocks = append(clocks, id)
			}
			return nil
		}); err != nil {
			return err
		}
		rows, err = tx.Query(ctx, `SELECT partition, node FROM cluster_leases WHERE partition >= 0 AND partition < $1 ORDER BY partition FOR UPDATE`, r.space.Count())
		if err != nil {
			return err
		}
		current := map[int]string{}
		var p int
		var node string
		if _, err := pgx.ForEachRow(rows, []any{&p, &node}, func() error {
			if node != "" {
				current[p] = node
			}
			return nil
		}); err != nil {
			return err
		}
		_, b.Moves = AssignSpace(r.space, clocks, current)
		states, err := r.states(ctx, tx)
		if err != nil {
			return err
		}
		for _, m := range b.Moves {
			var epoch int64
			if err := tx.QueryRow(ctx, `UPDATE cluster_leases SET node = $2, epoch = epoch + 1, expires_at = $3 WHERE partition = $1 RETURNING epoch`,
				m.Partition, m.To, now.Add(r.timeout).UnixNano()).Scan(&epoch); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `INSERT INTO cluster_moves (at, partition, from_node, to_node, epoch, reason) VALUES ($1, $2, $3, $4, $5, $6)`,
				now.UnixNano(), m.Partition, m.From, m.To, epoch, moveReason(m, states)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return Balance{}, fmt.Errorf("cluster: rebalance: %w", err)
	}
	return b, nil
}

// states returns the state of every registered node.
func (r *Registry) states(ctx context.Context, tx pgx.Tx) (map[string]string, error) {
	rows, err := tx.Query(ctx, `SELECT id, state FROM cluster_nodes`)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	var id, state string
	_, err = pgx.ForEachRow(rows, []any{&id, &state}, func() error {
		out[id] = state
		return nil
	})
	return out, err
}

// moveReason says why a partition moved, for the record.
func moveReason(m Move, states map[string]string) string {
	switch {
	case m.From == "":
		return "unowned"
	case m.To == "":
		return "no live clock node"
	case states[m.From] == Dead:
		return "node " + m.From + " died"
	case states[m.From] == Draining:
		return "node " + m.From + " drains"
	case states[m.From] == Left:
		return "node " + m.From + " left"
	}
	return "rebalance"
}
