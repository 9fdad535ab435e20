package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/gnomon-sched/gnomon/cluster"
	"github.com/gnomon-sched/gnomon/job"
)

// Enqueue queues runs for workers, at now, for director, which must hold
// the assignment lease at epoch (see fenced): it returns a *DeposedError,
// having queued nothing, when it does not. A run queued already is left
// as it is, so enqueueing again (after a restart of the director) is
// safe.
func (r *Registry) Enqueue(ctx context.Context, director string, epoch int64, ws []job.Launch, now time.Time) error {
	if len(ws) == 0 {
		return nil
	}
	ids, tasks, launches, machines := make([]int64, len(ws)), make([]string, len(ws)), make([]string, len(ws)), make([]string, len(ws))
	prios, dues := make([]int32, len(ws)), make([]int64, len(ws))
	for i, w := range ws {
		b, err := json.Marshal(w)
		if err != nil {
			return fmt.Errorf("cluster: queue run %d: %w", w.RunID, err)
		}
		ids[i], tasks[i], launches[i], machines[i], prios[i] = w.RunID, w.Task, string(b), w.Machine, int32(w.Priority)
		dues[i] = now.UnixNano()
		if !w.Scheduled.IsZero() && w.Scheduled.Before(now) {
			dues[i] = w.Scheduled.UnixNano()
		}
	}
	err := r.fenced(ctx, director, epoch, nil, `WITH q AS (
			INSERT INTO cluster_runs (run_id, task, launch, machine, priority, due_at)
			SELECT * FROM unnest($1::bigint[], $2::text[], $3::jsonb[], $4::text[], $5::int[], $6::bigint[])
			ON CONFLICT (run_id) DO NOTHING RETURNING 1)
		SELECT pg_notify($7, '') FROM (SELECT count(*) AS n FROM q) c WHERE c.n > 0`,
		ids, tasks, launches, machines, prios, dues, cluster.NoticeQueued)
	if err != nil {
		return directorFailed(fmt.Sprintf("queue %d runs", len(ws)), err)
	}
	return nil
}

// fenced runs sql, one statement, as a transaction of director's that
// first checks that it holds the assignment lease at epoch, all in one
// round trip: the check (FenceStatement, as the director's
// store's commits) reads the lease row FOR SHARE until the statement
// commits, so that a director another took the cluster from, even paused
// in the middle of a write, writes nothing in the cluster's tables once
// the new one holds them (a takeover waits for the write).
// read, when not nil, reads the statement's rows; what it gathers stands
// only if fenced returns nil, the transaction committed. A refused write
// returns a *DeposedError.
func (r *Registry) fenced(ctx context.Context, director string, epoch int64, read func(pgx.Rows) error, sql string, args ...any) error {
	// A batch is one implicit transaction: the check's failure rolls the
	// statement back.
	var b pgx.Batch
	b.Queue(FenceStatement, director, epoch)
	b.Queue(sql, args...)
	res := r.pool.SendBatch(ctx, &b)
	_, err := res.Exec()
	if err == nil {
		var rows pgx.Rows
		if rows, err = res.Query(); err == nil {
			if read != nil {
				err = read(rows)
			}
			rows.Close()
			if err == nil {
				err = rows.Err()
			}
		}
	}
	if cerr := res.Close(); err == nil {
		err = cerr
	}
	if FenceRefused(err) {
		return r.deposed(ctx, director, epoch)
	}
	return err
}

// deposed returns the *DeposedError of director, which held the
// assignment lease at epoch, saying who holds it now.
func (r *Registry) deposed(ctx context.Context, director string, epoch int64) error {
	d := &cluster.DeposedError{Director: director, Held: epoch}
	err := r.pool.QueryRow(ctx, `SELECT node, epoch FROM cluster_leases WHERE partition = $1`, assignment).Scan(&d.Holder, &d.Epoch)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("%w (who holds the cluster now is unknown: %v)", &cluster.DeposedError{Director: director, Held: epoch}, err)
	}
	return d
}

// directorFailed wraps the error of a director's write: a deposed
// director's is its *DeposedError, said as it is; another is the
// database's.
func directorFailed(op string, err error) error {
	if errors.Is(err, cluster.ErrDeposed) {
		return fmt.Errorf("%s: %w", op, err)
	}
	return fmt.Errorf("cluster: %s: %w", op, err)
}

// Claim claims for worker, at now, up to n queued runs it may run: those
// for no machine or for one of machines, in priority then due order,
// skipping runs other workers are claiming. A worker that is not live
// (draining, found dead, gone) claims nothing.
func (r *Registry) Claim(ctx context.Context, worker string, machines []string, n int, now time.Time) ([]cluster.Claim, error) {
	if machines == nil {
		machines = []string{}
	}
	rows, err := r.pool.Query(ctx, `WITH c AS (
			UPDATE cluster_runs r SET state = 'claimed', worker = $1, attempt = r.attempt + 1, claimed_at = $4
			FROM (SELECT run_id FROM cluster_runs WHERE state = 'queued' AND (machine = '' OR machine = ANY($2))
				AND EXISTS (SELECT 1 FROM cluster_nodes WHERE id = $1 AND state = 'live')
				ORDER BY priority DESC, due_at, run_id LIMIT $3 FOR UPDATE SKIP LOCKED) q
			WHERE r.run_id = q.run_id
			RETURNING r.launch, r.attempt, r.state, r.abort, r.priority, r.due_at, r.run_id)
		SELECT launch, attempt, state, abort FROM c ORDER BY priority DESC, due_at, run_id`, worker, machines, n, now.UnixNano())
	if err != nil {
		return nil, fmt.Errorf("cluster: claim runs for %s: %w", worker, err)
	}
	cs, err := collectClaims(rows)
	if err != nil {
		return nil, fmt.Errorf("cluster: claim runs for %s: %w", worker, err)
	}
	return cs, nil
}

// collectClaims reads rows of (launch, attempt, state, abort).
func collectClaims(rows pgx.Rows) ([]cluster.Claim, error) {
	var out []cluster.Claim
	var launch []byte
	var c cluster.Claim
	_, err := pgx.ForEachRow(rows, []any{&launch, &c.Attempt, &c.State, &c.Abort}, func() error {
		c.Launch = job.Launch{}
		if err := json.Unmarshal(launch, &c.Launch); err != nil {
			return err
		}
		out = append(out, c)
		return nil
	})
	return out, err
}

// MarkStarted records, at now, that worker is about to launch a run it
// claimed: it reports false, having written nothing, when the claim was
// taken back or the run aborted meanwhile (then the run must not start;
// an aborted run is ended as killed).
func (r *Registry) MarkStarted(ctx context.Context, worker string, c cluster.Claim, now time.Time) (bool, error) {
	// One UPDATE, so that an abort committed while it waits for the row
	// is seen: the row is judged again as the abort left it.
	var state string
	err := r.pool.QueryRow(ctx, `UPDATE cluster_runs SET
			state = CASE WHEN abort THEN 'ended' ELSE 'started' END,
			started_at = CASE WHEN abort THEN 0 ELSE $4::bigint END,
			exit_code = CASE WHEN abort THEN -1 ELSE exit_code END,
			result = CASE WHEN abort THEN 'killed' ELSE result END,
			message = CASE WHEN abort THEN 'aborted before it started' ELSE message END,
			ended_at = CASE WHEN abort THEN $4::bigint ELSE ended_at END
		WHERE run_id = $1 AND worker = $2 AND attempt = $3 AND state = 'claimed'
		RETURNING state`,
		c.Launch.RunID, worker, c.Attempt, now.UnixNano()).Scan(&state)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("cluster: start run %d: %w", c.Launch.RunID, err)
	}
	if state == cluster.Ended {
		r.notify(ctx, cluster.NoticeEnded)
	}
	return state == cluster.Started, nil
}

// End records the outcome of a run worker started, under its attempt,
// with where the run wrote in its task's log files, as the worker's
// executor measured them on its machine (e.Log, if known: it is kept
// naming worker): it reports false, having written nothing, when the
// claim was taken back (the run was recorded lost while the worker was
// silent).
func (r *Registry) End(ctx context.Context, worker string, attempt int, e job.Exit) (bool, error) {
	var data, span []byte
	var err error
	if len(e.Data) > 0 {
		if data, err = json.Marshal(e.Data); err != nil {
			return false, fmt.Errorf("cluster: end run %d: %w", e.RunID, err)
		}
	}
	if e.Log != nil {
		s := *e.Log
		s.Node = worker
		if span, err = json.Marshal(s); err != nil {
			return false, fmt.Errorf("cluster: end run %d: %w", e.RunID, err)
		}
	}
	tag, err := r.pool.Exec(ctx, `UPDATE cluster_runs SET state = 'ended', exit_code = $4, result = $5, message = $6, data = $7,
			ended_at = $8, log = $9
		WHERE run_id = $1 AND worker = $2 AND attempt = $3 AND state = 'started'`,
		e.RunID, worker, attempt, e.Code, string(e.Result), e.Message, data, e.End.UnixNano(), span)
	if err != nil {
		return false, fmt.Errorf("cluster: end run %d: %w", e.RunID, err)
	}
	if tag.RowsAffected() == 0 {
		return false, nil
	}
	r.notify(ctx, cluster.NoticeEnded)
	return true, nil
}

// notify wakes the listeners of a channel; a notice lost is made up for
// by their polling.
func (r *Registry) notify(ctx context.Context, channel string) {
	_, _ = r.pool.Exec(ctx, `SELECT pg_notify($1, '')`, channel)
}

// Held returns the runs worker holds (claimed or started), with their
// abort marks.
func (r *Registry) Held(ctx context.Context, worker string) ([]cluster.Claim, error) {
	rows, err := r.pool.Query(ctx, `SELECT launch, attempt, state, abort FROM cluster_runs
		WHERE worker = $1 AND state IN ('claimed', 'started') ORDER BY run_id`, worker)
	if err != nil {
		return nil, fmt.Errorf("cluster: runs of %s: %w", worker, err)
	}
	cs, err := collectClaims(rows)
	if err != nil {
		return nil, fmt.Errorf("cluster: runs of %s: %w", worker, err)
	}
	return cs, nil
}

// Requeue puts back in the queue a run worker claimed and did not start.
func (r *Registry) Requeue(ctx context.Context, worker string, c cluster.Claim) error {
	_, err := r.pool.Exec(ctx, `WITH q AS (
			UPDATE cluster_runs SET state = 'queued', worker = '', claimed_at = 0
			WHERE run_id = $1 AND worker = $2 AND attempt = $3 AND state = 'claimed' RETURNING 1)
		SELECT pg_notify($4, '') FROM q`, c.Launch.RunID, worker, c.Attempt, cluster.NoticeQueued)
	if err != nil {
		return fmt.Errorf("cluster: queue run %d again: %w", c.Launch.RunID, err)
	}
	return nil
}

// Abort marks a run aborted, for director at epoch (as Enqueue), for its
// worker to kill it; a run still queued is ended at once, as killed
// before it started.
func (r *Registry) Abort(ctx context.Context, director string, epoch int64, run int64, now time.Time) error {
	// One UPDATE, not one per state: a claim committed while it waits for
	// the row makes it judge the row again, as claimed.
	err := r.fenced(ctx, director, epoch, nil, `WITH a AS (
			UPDATE cluster_runs SET abort = true,
				state = CASE WHEN state = 'queued' THEN 'ended' ELSE state END,
				exit_code = CASE WHEN state = 'queued' THEN -1 ELSE exit_code END,
				result = CASE WHEN state = 'queued' THEN 'killed' ELSE result END,
				message = CASE WHEN state = 'queued' THEN 'aborted before a worker took it' ELSE message END,
				ended_at = CASE WHEN state = 'queued' THEN $2 ELSE ended_at END
			WHERE run_id = $1 AND state <> 'ended' RETURNING 1)
		SELECT pg_notify($3, ''), pg_notify($4, '') FROM a`, run, now.UnixNano(), cluster.NoticeQueued, cluster.NoticeEnded)
	if err != nil {
		return directorFailed(fmt.Sprintf("abort run %d", run), err)
	}
	return nil
}

// Outcomes returns the outcomes of those of runs that ended, each with
// where it wrote in its task's log files when its worker reported it.
func (r *Registry) Outcomes(ctx context.Context, runs []int64) ([]job.Exit, error) {
	return r.outcomes(ctx, `WHERE run_id = ANY($1) AND state = 'ended'`, runs)
}

// Ended returns the outcome of every run in the channel that ended, as
// Outcomes does: at a director's start, those its workers recorded while
// no director took them in.
func (r *Registry) Ended(ctx context.Context) ([]job.Exit, error) {
	return r.outcomes(ctx, `WHERE state = 'ended'`)
}

// outcomes returns the outcomes of the runs in cluster_runs that where
// selects, which must have ended.
func (r *Registry) outcomes(ctx context.Context, where string, args ...any) ([]job.Exit, error) {
	rows, err := r.pool.Query(ctx, `SELECT run_id, exit_code, result, message, data, ended_at, log FROM cluster_runs `+where, args...)
	if err != nil {
		return nil, fmt.Errorf("cluster: outcomes of runs: %w", err)
	}
	var out []job.Exit
	var e job.Exit
	var result string
	var data, span []byte
	var end int64
	_, err = pgx.ForEachRow(rows, []any{&e.RunID, &e.Code, &result, &e.Message, &data, &end, &span}, func() error {
		e.Result, e.End, e.Data, e.Log = job.Result(result), time.Unix(0, end).UTC(), nil, nil
		if len(data) > 0 {
			if err := json.Unmarshal(data, &e.Data); err != nil {
				return err
			}
		}
		if len(span) > 0 {
			e.Log = &job.LogSpan{}
			if err := json.Unmarshal(span, e.Log); err != nil {
				return err
			}
		}
		out = append(out, e)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("cluster: outcomes of runs: %w", err)
	}
	return out, nil
}

// Delete removes runs whose outcome director, at epoch (as Enqueue), has
// made durable.
func (r *Registry) Delete(ctx context.Context, director string, epoch int64, runs []int64) error {
	err := r.fenced(ctx, director, epoch, nil, `DELETE FROM cluster_runs WHERE run_id = ANY($1)`, runs)
	if err != nil {
		return directorFailed(fmt.Sprintf("delete %d runs", len(runs)), err)
	}
	return nil
}

// DeleteExcept removes every run but those in keep, for director at
// epoch (as Enqueue): at a director's start, the runs its engine no
// longer has in flight.
func (r *Registry) DeleteExcept(ctx context.Context, director string, epoch int64, keep []int64) error {
	err := r.fenced(ctx, director, epoch, nil, `DELETE FROM cluster_runs WHERE NOT run_id = ANY($1)`, keep)
	if err != nil {
		return directorFailed("delete runs", err)
	}
	return nil
}

// Reclaim takes back, at now, for director at epoch (as Enqueue: a
// *DeposedError, and nothing taken back, when it no longer holds the
// lease at epoch), the runs held by workers that were found dead, or
// that left more than a node timeout ago (one restarting within the
// timeout takes its runs up again): a run never started is queued again,
// an aborted one ends killed, and one whose command started ends lost.
// All of it is one statement, after the fence's check. As Rebalance
// judges silence, it judges absence only within the director's watch
// (watched): a worker that left has a timeout of the watch to come back.
func (r *Registry) Reclaim(ctx context.Context, director string, epoch int64, now, watched time.Time) (cluster.Reclaimed, error) {
	var rc cluster.Reclaimed
	requeued := false
	left := now.Add(-r.timeout).UnixNano() // workers that left before are gone
	if !r.judges(now, watched) {
		left = math.MinInt64
	}
	err := r.fenced(ctx, director, epoch, func(rows pgx.Rows) error {
		var t cluster.Taken
		_, err := pgx.ForEachRow(rows, []any{&t.Run, &t.Worker, &t.State, &t.Lost}, func() error {
			rc.Runs = append(rc.Runs, t)
			requeued = requeued || !t.Lost
			return nil
		})
		return err
	}, `WITH gone AS (
			SELECT id, state FROM cluster_nodes WHERE state = 'dead' OR (state = 'left' AND ended_at < $2)),
		requeued AS (
			UPDATE cluster_runs r SET state = 'queued', worker = '', claimed_at = 0 FROM gone g
			WHERE r.worker = g.id AND r.state = 'claimed' AND NOT r.abort
			RETURNING r.run_id, g.id, g.state, false),
		ended AS (
			UPDATE cluster_runs r SET state = 'ended', exit_code = -1,
				result = CASE WHEN r.state = 'claimed' THEN 'killed' ELSE 'lost' END,
				message = CASE WHEN r.state = 'claimed' THEN 'aborted before it started'
					WHEN g.state = 'dead' THEN 'run lost: worker ' || r.worker || ' stopped answering while it ran'
					ELSE 'run lost: worker ' || r.worker || ' stopped while it ran and did not come back' END,
				ended_at = $1
			FROM gone g
			WHERE r.worker = g.id AND r.state IN ('claimed', 'started') AND (r.abort OR r.state = 'started')
			RETURNING r.run_id, g.id, g.state, true)
		SELECT * FROM requeued UNION ALL SELECT * FROM ended ORDER BY 1`,
		now.UnixNano(), left)
	if err != nil {
		return cluster.Reclaimed{}, directorFailed("take back the runs of workers gone", err)
	}
	if requeued {
		r.notify(ctx, cluster.NoticeQueued)
	}
	if len(rc.Runs) > 0 {
		r.notify(ctx, cluster.NoticeEnded)
	}
	return rc, nil
}

// runs returns the state of the target channel, given the nodes.
func (r *Registry) runs(ctx context.Context, nodes []cluster.Node) (cluster.Runs, error) {
	out := cluster.Runs{Held: map[string]int{}, Waiting: []cluster.Waiting{}}
	rows, err := r.pool.Query(ctx, `SELECT worker, count(*) FROM cluster_runs WHERE state IN ('queued', 'claimed', 'started') GROUP BY worker`)
	if err != nil {
		return out, fmt.Errorf("cluster: status of runs: %w", err)
	}
	var worker string
	var n int
	if _, err := pgx.ForEachRow(rows, []any{&worker, &n}, func() error {
		if worker == "" {
			out.Queued = n
		} else {
			out.Held[worker] = n
		}
		return nil
	}); err != nil {
		return out, fmt.Errorf("cluster: status of runs: %w", err)
	}
	served := []string{}
	for _, n := range nodes {
		if n.State == cluster.Live && n.Has(cluster.RoleWorker) {
			served = append(served, n.Machines...)
		}
	}
	rows, err = r.pool.Query(ctx, `SELECT run_id, task, machine, due_at FROM cluster_runs
		WHERE state = 'queued' AND machine <> '' AND NOT machine = ANY($1) ORDER BY due_at, run_id LIMIT 100`, served)
	if err != nil {
		return out, fmt.Errorf("cluster: status of runs: %w", err)
	}
	var w cluster.Waiting
	var since int64
	if _, err := pgx.ForEachRow(rows, []any{&w.Run, &w.Task, &w.Machine, &since}, func() error {
		w.Since = time.Unix(0, since).UTC()
		out.Waiting = append(out.Waiting, w)
		return nil
	}); err != nil {
		return out, fmt.Errorf("cluster: status of runs: %w", err)
	}
	return out, nil
}

// Listen holds a connection that listens on channels and signals wake
// (without blocking) at each notice, until ctx is done. A lost
// connection is made again after a pause; meanwhile polling carries on.
func (r *Registry) Listen(ctx context.Context, wake chan<- struct{}, channels ...string) {
	for ctx.Err() == nil {
		r.listenOnce(ctx, wake, channels)
		if !pause(ctx, time.Second) {
			return
		}
	}
}

// listenOnce listens on one connection until it fails or ctx is done.
func (r *Registry) listenOnce(ctx context.Context, wake chan<- struct{}, channels []string) {
	pooled, err := r.pool.Acquire(ctx)
	if err != nil {
		return
	}
	// The connection holds a LISTEN: it goes back to no one else.
	conn := pooled.Hijack()
	defer conn.Close(context.WithoutCancel(ctx))
	for _, ch := range channels {
		if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{ch}.Sanitize()); err != nil {
			return
		}
	}
	for {
		if _, err := conn.WaitForNotification(ctx); err != nil {
			return
		}
		select {
		case wake <- struct{}{}:
		default:
		}
	}
}

// pause waits d, reporting false if ctx ended first.
func pause(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
