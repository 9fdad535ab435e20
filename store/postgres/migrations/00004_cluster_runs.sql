-- +goose Up
-- The target channel of a cluster (package cluster): the runs the
-- director's engine started, for workers to claim and execute. A run is
-- queued, then claimed by a worker (attempt grows by one at each claim,
-- and a worker's writes name the attempt it holds, so one whose claim was
-- taken back can write nothing), then started just before its command
-- launches, then ended with its outcome; the director takes the outcome in
-- and deletes the row once the end is durable in its
-- own tables. Instants are unix nanoseconds.
CREATE TABLE cluster_runs (
    run_id     BIGINT PRIMARY KEY,
    task       TEXT NOT NULL,
    -- The launch (job.Launch) as JSON: command, logs, occurrence.
    launch     JSONB NOT NULL,
    -- '' runs on any worker; else only on a worker that serves it.
    machine    TEXT NOT NULL DEFAULT '',
    priority   INTEGER NOT NULL DEFAULT 0,
    due_at     BIGINT NOT NULL,
    state      TEXT NOT NULL DEFAULT 'queued',
    worker     TEXT NOT NULL DEFAULT '',
    attempt    INTEGER NOT NULL DEFAULT 0,
    claimed_at BIGINT NOT NULL DEFAULT 0,
    started_at BIGINT NOT NULL DEFAULT 0,
    -- Set when the director aborts the run: its worker kills it.
    abort      BOOLEAN NOT NULL DEFAULT false,
    exit_code  INTEGER NOT NULL DEFAULT 0,
    result     TEXT NOT NULL DEFAULT '',
    message    TEXT NOT NULL DEFAULT '',
    data       JSONB,
    ended_at   BIGINT NOT NULL DEFAULT 0
);

-- Claims take the queued runs in priority, then due order.
CREATE INDEX cluster_runs_queued ON cluster_runs (priority DESC, due_at, run_id) WHERE state = 'queued';
-- A worker's own runs, and the runs of a worker found dead.
CREATE INDEX cluster_runs_worker ON cluster_runs (worker) WHERE state IN ('claimed', 'started');

-- +goose Down
DROP TABLE cluster_runs;
