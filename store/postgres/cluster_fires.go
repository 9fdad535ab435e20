package postgres

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/gnomon-sched/gnomon/cluster"
)

// Record records that node found task's occurrence at scheduled due, at
// now, under its lease: it returns true if the fire is recorded, false if
// this occurrence was recorded already (by this node or a former owner),
// and cluster.ErrFenced if node no longer owns the partition at that epoch.
func (r *Registry) Record(ctx context.Context, node string, l cluster.Lease, f cluster.Fire, now time.Time) (bool, error) {
	n, err := r.RecordAll(ctx, node, l, []cluster.Fire{f}, now)
	return n == 1, err
}

// RecordAll records fires of one partition as Record does, in one
// statement (see RecordTurn): it returns how many were new.
func (r *Registry) RecordAll(ctx context.Context, node string, l cluster.Lease, fs []cluster.Fire, now time.Time) (int, error) {
	n, err := r.RecordTurn(ctx, node, []cluster.Batch{{Lease: l, Fires: fs}}, now)
	if err != nil {
		return 0, err
	}
	if n[0] < 0 {
		return 0, fencedFires(node, l, fs)
	}
	return n[0], nil
}

// RecordTurn records batches of fires, a statement each, in one round
// trip and one transaction: a turn of a clock node's loop costs one
// commit. It returns for each batch how many of its fires were new, or
// -1 when node no longer owns the partition at that epoch (that batch
// changes nothing; the others are recorded). When it returns an error,
// none is recorded.
//
// Each statement reads the lease row under a share lock, so a rebalance
// that moves the partition waits for the turn, and fires that come after
// it see the new epoch: no fire is recorded under a lease already lost.
// The locks are taken in the order of the batches (a clock node's are in
// partition order, as a rebalance's). Each occurrence claims its unique
// (task, scheduled) key; those of a batch that claimed theirs are kept
// together as one row of cluster_fires, under one ID (none when none is
// new).
func (r *Registry) RecordTurn(ctx context.Context, node string, bs []cluster.Batch, now time.Time) ([]int, error) {
	if len(bs) == 0 {
		return nil, nil
	}
	var b pgx.Batch
	for _, x := range bs {
		tasks := make([]string, len(x.Fires))
		scheduled := make([]int64, len(x.Fires))
		for i, f := range x.Fires {
			tasks[i], scheduled[i] = f.Task, f.Scheduled.UnixNano()
		}
		b.Queue(`WITH lease AS (
			SELECT 1 FROM cluster_leases WHERE partition = $3 AND node = $4 AND epoch = $5 FOR SHARE),
		claimed AS (
			INSERT INTO cluster_claims (task, scheduled)
			SELECT f.task, f.scheduled FROM unnest($1::text[], $2::bigint[]) AS f(task, scheduled), lease
			ON CONFLICT (task, scheduled) DO NOTHING RETURNING task, scheduled),
		kept AS (
			INSERT INTO cluster_fires (partition, node, epoch, recorded_at, n, tasks, scheduled)
			SELECT $3, $4, $5, $6, count(*), array_agg(task ORDER BY scheduled, task), array_agg(scheduled ORDER BY scheduled, task)
			FROM claimed HAVING count(*) > 0 RETURNING n)
		SELECT (SELECT count(*) FROM lease), coalesce((SELECT n FROM kept), 0)`,
			tasks, scheduled, x.Lease.Partition, node, x.Lease.Epoch, now.UnixNano())
	}
	// The batch is one implicit transaction, committed after its last
	// statement: a failed statement rolls back those before it.
	res := r.pool.SendBatch(ctx, &b)
	out := make([]int, len(bs))
	for i, x := range bs {
		var held int
		if err := res.QueryRow().Scan(&held, &out[i]); err != nil {
			res.Close()
			return nil, fmt.Errorf("cluster: record %d fires of partition %d: %w", len(x.Fires), x.Lease.Partition, err)
		}
		if held == 0 {
			out[i] = -1
		}
	}
	if err := res.Close(); err != nil {
		return nil, fmt.Errorf("cluster: record fires of %d partitions: %w", len(bs), err)
	}
	return out, nil
}

// fencedFires is the error of fires fs refused under lease l.
func fencedFires(node string, l cluster.Lease, fs []cluster.Fire) error {
	return fmt.Errorf("record %d fires (%s at %s first) by %s under partition %d epoch %d: %w", len(fs),
		fs[0].Task, fs[0].Scheduled.UTC().Format(time.RFC3339Nano), node, l.Partition, l.Epoch, cluster.ErrFenced)
}

// ClockMoved tells the clock nodes that a simulating director moved its
// virtual clock: they read it again at once rather than within a second.
func (r *Registry) ClockMoved(ctx context.Context) error {
	if _, err := r.pool.Exec(ctx, `SELECT pg_notify($1, '')`, cluster.NoticeClock); err != nil {
		return fmt.Errorf("cluster: notify the clock nodes: %w", err)
	}
	return nil
}

// Unrecorded returns those of fs for whose task no occurrence from the
// one given to by is recorded: the occurrences a simulating director
// still waits for.
func (r *Registry) Unrecorded(ctx context.Context, fs []cluster.Fire, by time.Time) ([]cluster.Fire, error) {
	tasks := make([]string, len(fs))
	scheduled := make([]int64, len(fs))
	for i, f := range fs {
		tasks[i], scheduled[i] = f.Task, f.Scheduled.UnixNano()
	}
	rows, err := r.pool.Query(ctx, `SELECT d.task, d.scheduled FROM unnest($1::text[], $2::bigint[]) AS d(task, scheduled)
		WHERE NOT EXISTS (SELECT 1 FROM cluster_claims c WHERE c.task = d.task AND c.scheduled BETWEEN d.scheduled AND $3)
		ORDER BY d.scheduled, d.task`, tasks, scheduled, by.UnixNano())
	if err != nil {
		return nil, fmt.Errorf("cluster: unrecorded fires: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (cluster.Fire, error) {
		var f cluster.Fire
		var ns int64
		err := row.Scan(&f.Task, &ns)
		f.Scheduled = time.Unix(0, ns).UTC()
		return f, err
	})
	if err != nil {
		return nil, fmt.Errorf("cluster: unrecorded fires: %w", err)
	}
	return out, nil
}

// Last returns, for each of tasks, the latest occurrence recorded: where a
// new owner of a partition resumes.
func (r *Registry) Last(ctx context.Context, tasks []string) (map[string]time.Time, error) {
	rows, err := r.pool.Query(ctx, `SELECT task, max(scheduled) FROM cluster_claims WHERE task = ANY($1) GROUP BY task`, tasks)
	if err != nil {
		return nil, fmt.Errorf("cluster: last fires: %w", err)
	}
	out := map[string]time.Time{}
	var task string
	var ns int64
	_, err = pgx.ForEachRow(rows, []any{&task, &ns}, func() error {
		out[task] = time.Unix(0, ns).UTC()
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("cluster: last fires: %w", err)
	}
	return out, nil
}

// Prune deletes the fires up to ID upTo recorded before before, with
// their keys, for director at epoch (as Enqueue: a *DeposedError, and
// nothing deleted, when it no longer holds the assignment lease at
// epoch): the director took them in. A task's next fire after a move then
// starts from the occurrence the director's state says it has not
// handled.
func (r *Registry) Prune(ctx context.Context, director string, epoch int64, upTo int64, before time.Time) error {
	err := r.fenced(ctx, director, epoch, nil, `WITH gone AS (
			DELETE FROM cluster_fires WHERE id <= $1 AND recorded_at < $2 RETURNING tasks, scheduled)
		DELETE FROM cluster_claims c USING gone, unnest(gone.tasks, gone.scheduled) AS g(task, scheduled)
		WHERE c.task = g.task AND c.scheduled = g.scheduled`, upTo, before.UnixNano())
	if err != nil {
		return directorFailed("prune fires", err)
	}
	return nil
}

// Fires returns the fires recorded after ID after, oldest first: those of
// whole statements, as many as it takes to hold limit fires (fewer when
// fewer are recorded; more when the last statement holds more). It is
// how the director takes them in.
func (r *Registry) Fires(ctx context.Context, after int64, limit int) ([]cluster.Recorded, error) {
	// Every statement holds a fire: limit statements are enough, of
	// which those that start before the limit-th fire are read whole.
	return r.fires(ctx, `SELECT id, partition, node, epoch, recorded_at, tasks, scheduled FROM (
			SELECT id, partition, node, epoch, recorded_at, tasks, scheduled, sum(n) OVER (ORDER BY id) - n AS before
			FROM (SELECT * FROM cluster_fires WHERE id > $1 ORDER BY id LIMIT $2) f) f
		WHERE before < $2 ORDER BY id`, after, limit)
}

// FiresByID returns the fires of the statements of those IDs that exist,
// in ID order.
func (r *Registry) FiresByID(ctx context.Context, ids []int64) ([]cluster.Recorded, error) {
	return r.fires(ctx, `SELECT id, partition, node, epoch, recorded_at, tasks, scheduled FROM cluster_fires
		WHERE id = ANY($1) ORDER BY id`, ids)
}

func (r *Registry) fires(ctx context.Context, sql string, args ...any) ([]cluster.Recorded, error) {
	rows, err := r.pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("cluster: fires: %w", err)
	}
	var (
		out       []cluster.Recorded
		st        cluster.Recorded
		at        int64
		tasks     []string
		scheduled []int64
	)
	_, err = pgx.ForEachRow(rows, []any{&st.ID, &st.Partition, &st.Node, &st.Epoch, &at, &tasks, &scheduled}, func() error {
		if len(tasks) != len(scheduled) {
			return fmt.Errorf("statement %d holds %d tasks and %d occurrences", st.ID, len(tasks), len(scheduled))
		}
		st.At = time.Unix(0, at).UTC()
		for i, task := range tasks {
			f := st
			f.Task, f.Scheduled = task, time.Unix(0, scheduled[i]).UTC()
			out = append(out, f)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("cluster: fires: %w", err)
	}
	return out, nil
}

// Nodes returns every registered node with the partitions it owns, in id
// order.
func (r *Registry) Nodes(ctx context.Context) ([]cluster.Node, error) {
	rows, err := r.pool.Query(ctx, `SELECT n.id, n.roles, n.address, n.version, n.machines, n.zone, n.started_at, n.heartbeat_at, n.state, n.ended_at,
			coalesce(array_agg(l.partition ORDER BY l.partition) FILTER (WHERE l.partition IS NOT NULL), '{}')
		FROM cluster_nodes n LEFT JOIN cluster_leases l ON l.node = n.id AND l.partition >= 0
		GROUP BY n.id ORDER BY n.id`)
	if err != nil {
		return nil, fmt.Errorf("cluster: nodes: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (cluster.Node, error) {
		var n cluster.Node
		var roles, machines string
		var started, beat, ended int64
		var parts []int32
		if err := row.Scan(&n.ID, &roles, &n.Address, &n.Version, &machines, &n.Zone, &started, &beat, &n.State, &ended, &parts); err != nil {
			return n, err
		}
		n.Roles, n.Machines = split(roles), split(machines)
		n.Started, n.Heartbeat = time.Unix(0, started).UTC(), time.Unix(0, beat).UTC()
		if ended != 0 {
			n.Ended = time.Unix(0, ended).UTC()
		}
		n.Partitions = make([]int, len(parts))
		for i, p := range parts {
			n.Partitions[i] = int(p)
		}
		return n, nil
	})
	if err != nil {
		return nil, fmt.Errorf("cluster: nodes: %w", err)
	}
	return out, nil
}

// Moves returns the latest limit moves, newest first.
func (r *Registry) Moves(ctx context.Context, limit int) ([]cluster.MoveRecord, error) {
	rows, err := r.pool.Query(ctx, `SELECT at, partition, from_node, to_node, epoch, reason FROM cluster_moves ORDER BY id DESC LIMIT $1`, limit)
	if err != nil {
		return nil, fmt.Errorf("cluster: moves: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (cluster.MoveRecord, error) {
		var m cluster.MoveRecord
		var at int64
		err := row.Scan(&at, &m.Partition, &m.From, &m.To, &m.Epoch, &m.Reason)
		m.At = time.Unix(0, at).UTC()
		return m, err
	})
	if err != nil {
		return nil, fmt.Errorf("cluster: moves: %w", err)
	}
	return out, nil
}

// split reads a stored comma list.
func split(s string) []string {
	if s == "" {
		return nil
	}
	out := strings.Split(s, ",")
	slices.Sort(out)
	return out
}

// Status returns the cluster's status at now.
func (r *Registry) Status(ctx context.Context, now time.Time) (cluster.Status, error) {
	st := cluster.Status{Space: r.space, Timeout: cluster.Duration(r.timeout), FiresByNode: map[string]int{}}
	var err error
	if st.Director, err = r.Director(ctx); err != nil {
		return st, err
	}
	if st.Nodes, err = r.Nodes(ctx); err != nil {
		return st, err
	}
	if st.Moves, err = r.Moves(ctx, 20); err != nil {
		return st, err
	}
	rows, err := r.pool.Query(ctx, `SELECT l.partition, l.node, l.epoch, coalesce(f.n, 0)
		FROM cluster_leases l LEFT JOIN (
			SELECT partition, sum(n) AS n FROM cluster_fires WHERE recorded_at >= $1 GROUP BY partition) f
		ON f.partition = l.partition
		WHERE l.partition >= 0 AND l.partition < $2 ORDER BY l.partition`, now.Add(-time.Hour).UnixNano(), r.space.Count())
	if err != nil {
		return st, fmt.Errorf("cluster: status: %w", err)
	}
	var l cluster.Load
	if _, err := pgx.ForEachRow(rows, []any{&l.Partition, &l.Node, &l.Epoch, &l.Fires}, func() error {
		l.Name = r.space.PartitionName(l.Partition)
		st.Partitions = append(st.Partitions, l)
		return nil
	}); err != nil {
		return st, fmt.Errorf("cluster: status: %w", err)
	}
	rows, err = r.pool.Query(ctx, `SELECT node, sum(n) FROM cluster_fires WHERE recorded_at >= $1 GROUP BY node`, now.Add(-time.Hour).UnixNano())
	if err != nil {
		return st, fmt.Errorf("cluster: status: %w", err)
	}
	var node string
	var n int
	if _, err := pgx.ForEachRow(rows, []any{&node, &n}, func() error {
		st.FiresByNode[node] = n
		return nil
	}); err != nil {
		return st, fmt.Errorf("cluster: status: %w", err)
	}
	st.Runs, err = r.runs(ctx, st.Nodes)
	return st, err
}
