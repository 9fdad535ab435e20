package cluster

import (
	"context"
	"errors"
	"fmt"
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
	ID        string    `json:"id"`
	Roles     []string  `json:"roles"`
	Address   string    `json:"address,omitempty"`
	Version   string    `json:"version,omitempty"`
	Machines  []string  `json:"machines,omitempty"`
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
// version and machines; a node registering again (after a restart, or
// after it was found dead) starts afresh and owns nothing until the next
// rebalance.
func (r *Registry) Register(ctx context.Context, n Node, now time.Time) error {
	if n.ID == "" || strings.ContainsAny(n.ID, ", \t\n") {
		return fmt.Errorf("node id %q: should be a non-empty name without spaces or commas", n.ID)
	}
	for _, role := range n.Roles {
		if role != RoleDirector && role != RoleClock && role != RoleWorker {
			return fmt.Errorf("role %q: should be director, clock or worker", role)
		}
	}
	_, err := r.pool.Exec(ctx, `INSERT INTO cluster_nodes (id, roles, address, version, machines, started_at, heartbeat_at, state)
		VALUES ($1, $2, $3, $4, $5, $6, $6, 'live')
		ON CONFLICT (id) DO UPDATE SET roles = $2, address = $3, version = $4, machines = $5,
			started_at = $6, heartbeat_at = $6, state = 'live', ended_at = 0`,
		n.ID, strings.Join(n.Roles, ","), n.Address, n.Version, strings.Join(n.Machines, ","), now.UnixNano())
	if err != nil {
		return fmt.Errorf("cluster: register %s: %w", n.ID, err)
	}
	return nil
}

// Heartbeat records that node id is alive at now, extends its leases and
// returns them. It returns ErrNotRegistered to a node that must register
// again.
func (r *Registry) Heartbeat(ctx context.Context, id string, now time.Time) ([]Lease, error) {
	var leases []Lease
	err := pgx.BeginFunc(ctx, r.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE cluster_nodes SET heartbeat_at = $2 WHERE id = $1 AND state IN ('live', 'draining')`, id, now.UnixNano())
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return ErrNotRegistered
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
		if errors.Is(err, ErrNotRegistered) {
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
// recorded) for the next rebalance to hand out.
func (r *Registry) Leave(ctx context.Context, id string, now time.Time) error {
	return pgx.BeginFunc(ctx, r.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `UPDATE cluster_nodes SET state = 'left', ended_at = $2 WHERE id = $1`, id, now.UnixNano()); err != nil {
			return fmt.Errorf("cluster: leave %s: %w", id, err)
		}
		if err := release(ctx, tx, id, now, "the node left"); err != nil {
			return fmt.Errorf("cluster: leave %s: %w", id, err)
		}
		// Another director may start at once.
		if _, err := tx.Exec(ctx, `UPDATE cluster_leases SET node = '', expires_at = 0 WHERE partition = $1 AND node = $2`, assignment, id); err != nil {
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

// TakeDirector makes node id the cluster's director at now, by taking
// the assignment lease: it returns ErrOtherDirector, naming the holder,
// while another director holds it and its lease has not expired. A
// director takes it before its engine starts, and keeps it by
// rebalancing; it gives it up when it leaves, or after the node timeout
// when it dies.
func (r *Registry) TakeDirector(ctx context.Context, id string, now time.Time) error {
	var holder string
	var expires int64
	err := pgx.BeginFunc(ctx, r.pool, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `SELECT node, expires_at FROM cluster_leases WHERE partition = $1 FOR UPDATE`, assignment).Scan(&holder, &expires); err != nil {
			return err
		}
		if holder != id && holder != "" && expires >= now.UnixNano() {
			return ErrOtherDirector
		}
		_, err := tx.Exec(ctx, `UPDATE cluster_leases SET epoch = epoch + (node <> $1)::int, node = $1, expires_at = $2 WHERE partition = $3`,
			id, now.Add(r.timeout).UnixNano(), assignment)
		return err
	})
	if errors.Is(err, ErrOtherDirector) {
		return fmt.Errorf("%w: %s, until %s at the latest (a cluster runs one director; send operator commands to it)",
			err, holder, time.Unix(0, expires).UTC().Format(time.RFC3339))
	}
	if err != nil {
		return fmt.Errorf("cluster: take the director's lease: %w", err)
	}
	return nil
}

// Balance is what one rebalance did.
type Balance struct {
	// Leader is false when another director holds the assignment: then
	// nothing else was done.
	Leader bool
	// Dead are the nodes found silent past the timeout.
	Dead []string
	// Moves are the partitions that changed hands.
	Moves []Move
}

// Rebalance is the assignment director's round, at now: if director holds
// the assignment lease (or it is free or expired, and director takes it),
// it marks dead the nodes silent past the timeout, releases their leases,
// and assigns every partition evenly to the live clock nodes, moving as
// few as it can. All of it is one transaction.
func (r *Registry) Rebalance(ctx context.Context, director string, now time.Time) (Balance, error) {
	var b Balance
	err := pgx.BeginFunc(ctx, r.pool, func(tx pgx.Tx) error {
		b = Balance{}
		tag, err := tx.Exec(ctx, `UPDATE cluster_leases SET epoch = epoch + (node <> $1)::int, node = $1, expires_at = $3
			WHERE partition = $4 AND (node = $1 OR node = '' OR expires_at < $2)`,
			director, now.UnixNano(), now.Add(r.timeout).UnixNano(), assignment)
		if err != nil || tag.RowsAffected() == 0 {
			return err
		}
		b.Leader = true
		rows, err := tx.Query(ctx, `UPDATE cluster_nodes SET state = 'dead', ended_at = $1
			WHERE state IN ('live', 'draining') AND heartbeat_at < $2 RETURNING id`, now.UnixNano(), now.Add(-r.timeout).UnixNano())
		if err != nil {
			return err
		}
		if b.Dead, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
			return err
		}
		slices.Sort(b.Dead)
		var clocks []string
		rows, err = tx.Query(ctx, `SELECT id, roles FROM cluster_nodes WHERE state = 'live'`)
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
