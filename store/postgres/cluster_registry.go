package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/gnomon-sched/gnomon/cluster"
)

// Registry is a cluster's coordination in its PostgreSQL database
// (cluster.Registry): nodes and heartbeats, partition leases, fenced
// fires, the moves of partitions and the target channel of runs, in the
// tables the store's migrations create. It is safe for concurrent use.
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
	space cluster.Space
	// timeout is how long a node may stay silent before it is dead.
	timeout time.Duration
}

var _ cluster.Registry = (*Registry)(nil)

// Cluster returns the registry of the cluster whose tables the store's
// migrations created in its database, for a space of partitions, with
// nodes dead after timeout of silence: the cluster's view of the store
// (see NewRegistry).
func (s *Store) Cluster(ctx context.Context, space cluster.Space, timeout time.Duration) (cluster.Registry, error) {
	r, err := NewRegistry(ctx, s.pool, space, timeout)
	if err != nil {
		return nil, err
	}
	return r, nil
}

// inTx runs fn in a transaction that PostgreSQL ends, releasing its row
// locks, should the node stall inside it for longer than a node may be
// silent (idle_in_transaction_session_timeout, set for this transaction
// only; PostgreSQL then closes the session, and the pool opens another):
// a node frozen with a node or lease row locked (a paused VM, a SIGSTOP)
// would otherwise hold up the director that finds it dead, and every
// takeover of its leases, until it resumes.
func (r *Registry) inTx(ctx context.Context, fn func(pgx.Tx) error) error {
	return pgx.BeginFunc(ctx, r.pool, func(tx pgx.Tx) error {
		ms := max(r.timeout, time.Second).Milliseconds()
		if _, err := tx.Exec(ctx, `SELECT set_config('idle_in_transaction_session_timeout', $1, true)`, strconv.FormatInt(ms, 10)); err != nil {
			return err
		}
		return fn(tx)
	})
}

// assignment is the lease that says which director may move partitions.
const assignment = -1

// NewRegistry returns the registry of the cluster whose tables the store's
// migrations created in pool's database, for a space of partitions, with
// nodes dead after timeout of silence. It creates the lease rows the space
// needs.
func NewRegistry(ctx context.Context, pool *pgxpool.Pool, space cluster.Space, timeout time.Duration) (*Registry, error) {
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
func (r *Registry) Space() cluster.Space { return r.space }

// Timeout returns how long a node may stay silent before it is dead.
func (r *Registry) Timeout() time.Duration { return r.timeout }

// Register records a node as alive at now, with its roles, address,
// version, machines, zone and the registry's space; a node registering
// again (after a restart, or after it was found dead) starts afresh and
// owns nothing until the next rebalance. A clock node whose zone or space
// is not the director's (as the last director to take the cluster
// recorded them) is refused with ErrSettings, naming the flag to fix, and
// so is a standby director (cluster.Config.Standby), which would impose its own
// on taking the cluster over. The director's own are those it recorded:
// they are not checked (a director that another took the cluster from
// stops by its epoch).
func (r *Registry) Register(ctx context.Context, n cluster.Node, now time.Time) error {
	if n.ID == "" || strings.ContainsAny(n.ID, ", \t\n") {
		return fmt.Errorf("node id %q: should be a non-empty name without spaces or commas", n.ID)
	}
	for _, role := range n.Roles {
		if role != cluster.RoleDirector && role != cluster.RoleClock && role != cluster.RoleWorker {
			return fmt.Errorf("role %q: should be director, clock or worker", role)
		}
	}
	err := r.inTx(ctx, func(tx pgx.Tx) error {
		if n.Has(cluster.RoleClock) || n.Has(cluster.RoleDirector) {
			var set cluster.Settings
			if err := tx.QueryRow(ctx, `SELECT director, zone, space, partitions, scatter FROM cluster_settings WHERE id = 1`).
				Scan(&set.Director, &set.Zone, &set.Space.Size, &set.Space.Partitions, &set.Space.Scatter); err != nil {
				return err
			}
			if !n.Has(cluster.RoleDirector) || set.Director != n.ID {
				if err := set.Check(n.ID, n.Zone, r.space); err != nil {
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
	if errors.Is(err, cluster.ErrSettings) {
		return fmt.Errorf("register %s: %w", n.ID, err)
	}
	if err != nil {
		return fmt.Errorf("cluster: register %s: %w", n.ID, err)
	}
	return nil
}

// Heartbeat records that node id is alive at now, extends its leases and
// returns them. It returns ErrNotRegistered to a node that must register
// again, and ErrSettings to a clock node whose zone or space is not the
// director's (which it registered before the director recorded them, or
// another director took the cluster over with other settings).
func (r *Registry) Heartbeat(ctx context.Context, id string, now time.Time) ([]cluster.Lease, error) {
	var leases []cluster.Lease
	err := r.inTx(ctx, func(tx pgx.Tx) error {
		// The heartbeat reads the director's settings too: a clock node
		// that registered before the director recorded them, or under a
		// director that ran with others, learns it differs.
		var roles string
		var mine, set cluster.Settings
		err := tx.QueryRow(ctx, `UPDATE cluster_nodes n SET heartbeat_at = $2 FROM cluster_settings c
			WHERE n.id = $1 AND n.state IN ('live', 'draining') AND c.id = 1
			RETURNING n.roles, n.zone, n.space, n.partitions, n.scatter, c.director, c.zone, c.space, c.partitions, c.scatter`, id, now.UnixNano()).
			Scan(&roles, &mine.Zone, &mine.Space.Size, &mine.Space.Partitions, &mine.Space.Scatter,
				&set.Director, &set.Zone, &set.Space.Size, &set.Space.Partitions, &set.Space.Scatter)
		if errors.Is(err, pgx.ErrNoRows) {
			return cluster.ErrNotRegistered
		}
		if err != nil {
			return err
		}
		if rs := strings.Split(roles, ","); slices.Contains(rs, cluster.RoleClock) && !slices.Contains(rs, cluster.RoleDirector) && mine.Space.Size != 0 {
			if err := set.Check(id, mine.Zone, mine.Space); err != nil {
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
		leases, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (cluster.Lease, error) {
			var l cluster.Lease
			err := row.Scan(&l.Partition, &l.Epoch)
			return l, err
		})
		return err
	})
	if err != nil {
		if errors.Is(err, cluster.ErrNotRegistered) || errors.Is(err, cluster.ErrSettings) {
			return nil, fmt.Errorf("heartbeat of %s: %w", id, err)
		}
		return nil, fmt.Errorf("cluster: heartbeat of %s: %w", id, err)
	}
	slices.SortFunc(leases, func(a, b cluster.Lease) int { return a.Partition - b.Partition })
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
		return fmt.Errorf("drain %s: %w", id, cluster.ErrNotRegistered)
	}
	return nil
}

// State returns the state of node id: live, draining, dead or left.
func (r *Registry) State(ctx context.Context, id string) (string, error) {
	var state string
	err := r.pool.QueryRow(ctx, `SELECT state FROM cluster_nodes WHERE id = $1`, id).Scan(&state)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", fmt.Errorf("node %s: %w", id, cluster.ErrNotRegistered)
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
	return r.inTx(ctx, func(tx pgx.Tx) error {
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
func (r *Registry) TakeDirector(ctx context.Context, n cluster.Node, now time.Time) (int64, error) {
	return r.takeDirector(ctx, n, now, 0)
}

// TakeUnrenewed is TakeDirector, except that a lease another director
// holds is taken only if it still expires at watched: it was not renewed
// since it was read (cluster.TakeOver). The zero time takes it as
// TakeDirector does.
func (r *Registry) TakeUnrenewed(ctx context.Context, n cluster.Node, now, watched time.Time) (int64, error) {
	if watched.IsZero() {
		return r.takeDirector(ctx, n, now, 0)
	}
	return r.takeDirector(ctx, n, now, watched.UnixNano())
}

// takeDirector is TakeDirector; when watched is not zero, a lease another
// director holds is taken only if it still expires at watched.
func (r *Registry) takeDirector(ctx context.Context, n cluster.Node, now time.Time, watched int64) (int64, error) {
	var holder string
	var expires, epoch int64
	err := r.inTx(ctx, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `SELECT node, expires_at FROM cluster_leases WHERE partition = $1 FOR UPDATE`, assignment).Scan(&holder, &expires); err != nil {
			return err
		}
		other := holder != n.ID && holder != ""
		if other && (expires >= now.UnixNano() || watched != 0 && expires != watched) {
			return cluster.ErrOtherDirector
		}
		if err := tx.QueryRow(ctx, `UPDATE cluster_leases SET epoch = epoch + 1, node = $1, expires_at = $2 WHERE partition = $3 RETURNING epoch`,
			n.ID, now.Add(r.timeout).UnixNano(), assignment).Scan(&epoch); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `UPDATE cluster_settings SET director = $1, epoch = $2, zone = $3, space = $4, partitions = $5, scatter = $6 WHERE id = 1`,
			n.ID, epoch, n.Zone, r.space.Size, r.space.Partitions, r.space.Scatter)
		return err
	})
	if errors.Is(err, cluster.ErrOtherDirector) {
		return 0, fmt.Errorf("%w: %s, until %s at the latest (a cluster runs one director; send operator commands to it)",
			err, holder, time.Unix(0, expires).UTC().Format(time.RFC3339))
	}
	if err != nil {
		return 0, fmt.Errorf("cluster: take the director's lease: %w", err)
	}
	return epoch, nil
}

// Director returns the cluster's director, as its lease says.
func (r *Registry) Director(ctx context.Context) (cluster.Director, error) {
	var d cluster.Director
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

// judges reports whether a director watching the cluster since watched
// may, at now, judge a node's silence or absence: only once the watch
// lasted a timeout (see Rebalance).
func (r *Registry) judges(now, watched time.Time) bool {
	return watched.Before(now.Add(-r.timeout))
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
// break (see the cluster's node.heartbeat): a node is found dead only when it was silent
// for the timeout within the watch. An outage of the database silences
// every node, and the director with them; once it is over, each has a
// timeout to heartbeat again before it is judged, rather than all being
// found dead, and their runs lost, at the director's first round. The
// zero time is a watch that never broke.
func (r *Registry) Rebalance(ctx context.Context, director string, epoch int64, now, watched time.Time) (cluster.Balance, error) {
	var b cluster.Balance
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
		return cluster.Balance{}, fmt.Errorf("cluster: rebalance: %w", err)
	}
	if tag.RowsAffected() == 0 {
		if err := holder(r.pool); err != nil {
			return cluster.Balance{}, fmt.Errorf("cluster: rebalance: %w", err)
		}
		return b, nil
	}
	err = r.inTx(ctx, func(tx pgx.Tx) error {
		b = cluster.Balance{}
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
			if slices.Contains(strings.Split(roles, ","), cluster.RoleClock) {
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
		_, b.Moves = cluster.AssignSpace(r.space, clocks, current)
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
		return cluster.Balance{}, fmt.Errorf("cluster: rebalance: %w", err)
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
func moveReason(m cluster.Move, states map[string]string) string {
	switch {
	case m.From == "":
		return "unowned"
	case m.To == "":
		return "no live clock node"
	case states[m.From] == cluster.Dead:
		return "node " + m.From + " died"
	case states[m.From] == cluster.Draining:
		return "node " + m.From + " drains"
	case states[m.From] == cluster.Left:
		return "node " + m.From + " left"
	}
	return "rebalance"
}
