package postgres

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/gnomon-sched/gnomon/cluster"
)

// keepTakenFiles is how long a file version the director took stays in
// cluster_files: one found again meanwhile (by another worker on a
// shared disk) is not recorded again.
const keepTakenFiles = 24 * time.Hour

// FileFound records a file version a worker's watcher found, and notifies
// NoticeFiles: false, having recorded nothing, when the version (task,
// path, version) was recorded already.
func (r *Registry) FileFound(ctx context.Context, f cluster.FoundFile) (bool, error) {
	var n int
	err := r.pool.QueryRow(ctx, `WITH i AS (
			INSERT INTO cluster_files (task, path, version, node, found_at) VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (task, path, version) DO NOTHING RETURNING 1)
		SELECT count(*) FROM i, LATERAL (SELECT pg_notify($6, '')) n`,
		f.Task, f.Path, f.Version, f.Node, f.FoundAt.UnixNano(), cluster.NoticeFiles).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("cluster: record file %s of %s: %w", f.Path, f.Task, err)
	}
	return n > 0, nil
}

// FilesFound returns up to limit file versions not taken yet, oldest
// first.
func (r *Registry) FilesFound(ctx context.Context, limit int) ([]cluster.FoundFile, error) {
	rows, err := r.pool.Query(ctx, `SELECT id, task, path, version, node, found_at FROM cluster_files
		WHERE taken_at IS NULL ORDER BY id LIMIT $1`, limit)
	if err != nil {
		return nil, fmt.Errorf("cluster: files found: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (cluster.FoundFile, error) {
		var f cluster.FoundFile
		var at int64
		err := row.Scan(&f.ID, &f.Task, &f.Path, &f.Version, &f.Node, &at)
		f.FoundAt = time.Unix(0, at)
		return f, err
	})
	if err != nil {
		return nil, fmt.Errorf("cluster: files found: %w", err)
	}
	return out, nil
}

// FilesTaken marks file versions taken, at now, for director at epoch
// (fenced), and deletes those taken more than keepTakenFiles ago.
func (r *Registry) FilesTaken(ctx context.Context, director string, epoch int64, ids []int64, now time.Time) error {
	if len(ids) == 0 {
		return nil
	}
	err := r.fenced(ctx, director, epoch, nil, `WITH t AS (
			UPDATE cluster_files SET taken_at = $2 WHERE id = ANY($1) AND taken_at IS NULL RETURNING 1),
		d AS (DELETE FROM cluster_files WHERE taken_at < $3 RETURNING 1)
		SELECT (SELECT count(*) FROM t), (SELECT count(*) FROM d)`,
		ids, now.UnixNano(), now.Add(-keepTakenFiles).UnixNano())
	if err != nil {
		return directorFailed(fmt.Sprintf("mark %d files taken", len(ids)), err)
	}
	return nil
}

// WatchMemory returns what node's file watchers remember under name (0
// when nothing). Names are stored as the cursors' are (encodeName).
func (r *Registry) WatchMemory(ctx context.Context, node, name string) (int64, error) {
	var v int64
	err := r.pool.QueryRow(ctx, `SELECT value FROM cluster_watch_memory WHERE node = $1 AND name = $2`, node, encodeName(name)).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("cluster: watch memory of %s: %w", node, err)
	}
	return v, nil
}

// SetWatchMemory sets what node's file watchers remember, in one
// transaction: a value of 0 forgets a name.
func (r *Registry) SetWatchMemory(ctx context.Context, node string, values map[string]int64) error {
	if len(values) == 0 {
		return nil
	}
	var set, drop []string
	var vals []int64
	for _, k := range slices.Sorted(maps.Keys(values)) {
		if v := values[k]; v == 0 {
			drop = append(drop, k)
		} else {
			set, vals = append(set, k), append(vals, v)
		}
	}
	var b pgx.Batch
	if len(drop) > 0 {
		b.Queue(`DELETE FROM cluster_watch_memory WHERE node = $1 AND name = ANY($2)`, node, encodeNames(drop))
	}
	if len(set) > 0 {
		b.Queue(`INSERT INTO cluster_watch_memory (node, name, value) SELECT $1, * FROM unnest($2::text[], $3::bigint[])
			ON CONFLICT (node, name) DO UPDATE SET value = excluded.value`, node, encodeNames(set), vals)
	}
	if err := r.pool.SendBatch(ctx, &b).Close(); err != nil {
		return fmt.Errorf("cluster: watch memory of %s: %w", node, err)
	}
	return nil
}
