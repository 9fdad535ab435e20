-- +goose Up
-- gnomon's schema on PostgreSQL: the shape of the SQLite schema after its
-- migrations 0001 to 0007, table for table and column for column, so that
-- both stores hold the same values and gnomon migrate copies rows as they
-- are. Two rules carry over from SQLite:
--
--   * Instants are unix nanoseconds in BIGINT, 0 for none: timestamptz
--     keeps microseconds, and a run's start, an event's timestamp or a
--     checkpoint must come back to the nanosecond they went in with.
--   * JSON documents (definitions, states, journal bodies, alerts, nodes)
--     are TEXT, stored byte for byte as the scheduler encoded them; jsonb
--     would reorder keys and respace them. Commit checks journal bodies
--     are JSON before it sends them.
--
-- The journal, alerts, audit trail and node logs are numbered by Commit
-- (one more than the highest stored) in the transaction that writes them,
-- as SQLite numbers rowids, so a rolled-back commit leaves no gap; a
-- sequence would.

CREATE TABLE journal (
    seq  BIGINT PRIMARY KEY,
    at   BIGINT NOT NULL,
    kind TEXT   NOT NULL,
    body TEXT   NOT NULL
);

CREATE TABLE tasks (
    name   TEXT PRIMARY KEY,
    type   TEXT NOT NULL,
    parent TEXT NOT NULL DEFAULT '',
    status TEXT NOT NULL,
    def    TEXT NOT NULL,
    state  TEXT NOT NULL
);

-- Runs: one row per execution (or bundle run); end_at is 0 while it runs.
CREATE TABLE runs (
    id         BIGINT PRIMARY KEY,
    task       TEXT   NOT NULL,
    status     TEXT   NOT NULL,
    start_at   BIGINT NOT NULL,
    end_at     BIGINT NOT NULL DEFAULT 0,
    exit_code  BIGINT NOT NULL DEFAULT 0,
    result     TEXT   NOT NULL DEFAULT '',
    message    TEXT   NOT NULL DEFAULT '',
    bundle_run BIGINT NOT NULL DEFAULT 0,
    trigger    TEXT   NOT NULL DEFAULT '',
    scheduled  BIGINT NOT NULL DEFAULT 0,
    data       TEXT   NOT NULL DEFAULT '',   -- message data, a JSON object, '' when none
    timeperiod TEXT   NOT NULL DEFAULT '',
    outcome    TEXT   NOT NULL DEFAULT ''
);
CREATE INDEX runs_task ON runs (task, id);
CREATE INDEX runs_running ON runs (id) WHERE status = 'running';
CREATE INDEX runs_bundle ON runs (bundle_run) WHERE bundle_run != 0;

-- Fires: the fate of every planned occurrence, the first one kept, and
-- the run it started (0 if none, or not yet).
CREATE TABLE fires (
    task      TEXT   NOT NULL,
    scheduled BIGINT NOT NULL,
    fate      TEXT   NOT NULL,
    reason    TEXT   NOT NULL DEFAULT '',
    at        BIGINT NOT NULL,
    run       BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (task, scheduled)
);

-- The checkpoint of the windows: the current generation and the journal
-- entry it reflects; its parts are rows of checkpoint_parts.
CREATE TABLE checkpoint (
    id  INTEGER PRIMARY KEY CHECK (id = 1),
    gen BIGINT NOT NULL,
    seq BIGINT NOT NULL
);
INSERT INTO checkpoint (id, gen, seq) VALUES (1, 0, 0);

CREATE TABLE checkpoint_parts (
    id   BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,  -- order only: gaps do no harm
    gen  BIGINT NOT NULL,
    body TEXT   NOT NULL
);
CREATE INDEX checkpoint_parts_gen ON checkpoint_parts (gen);

CREATE TABLE alerts (
    id      BIGINT PRIMARY KEY,
    task    TEXT   NOT NULL,
    created BIGINT NOT NULL,
    state   TEXT   NOT NULL,            -- pending, sent, failed
    next_at BIGINT NOT NULL DEFAULT 0,
    doc     TEXT   NOT NULL
);
CREATE INDEX alerts_pending ON alerts (next_at) WHERE state = 'pending';
CREATE INDEX alerts_task ON alerts (task, id);

CREATE TABLE alert_attempts (
    id    BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,  -- order of attempts at one instant
    alert BIGINT NOT NULL REFERENCES alerts (id),
    at    BIGINT NOT NULL,
    error TEXT   NOT NULL DEFAULT ''
);
CREATE INDEX alert_attempts_alert ON alert_attempts (alert, at);

CREATE TABLE audit (
    seq     BIGINT PRIMARY KEY,
    task    TEXT   NOT NULL,
    run     BIGINT NOT NULL,
    launch  BIGINT NOT NULL,
    stop    BIGINT NOT NULL,
    result  TEXT   NOT NULL,
    status  TEXT   NOT NULL,
    message TEXT   NOT NULL DEFAULT '',
    data    TEXT   NOT NULL DEFAULT ''
);

CREATE TABLE cursors (
    name  TEXT PRIMARY KEY,
    value BIGINT NOT NULL
);

CREATE TABLE tree_files (
    name TEXT PRIMARY KEY,
    text TEXT NOT NULL
);

CREATE TABLE tree_nodes (
    process    TEXT   NOT NULL,
    timeperiod BIGINT NOT NULL,           -- YYYYMMDDHH, UTC
    state      TEXT   NOT NULL,
    body       TEXT   NOT NULL,
    PRIMARY KEY (process, timeperiod)
);

-- The event log of each node: the newest 128 entries are kept.
CREATE TABLE tree_log (
    seq        BIGINT PRIMARY KEY,
    process    TEXT   NOT NULL,
    timeperiod BIGINT NOT NULL,
    at         BIGINT NOT NULL,
    body       TEXT   NOT NULL
);
CREATE INDEX tree_log_node ON tree_log (process, timeperiod, seq);

CREATE TABLE tree_state (
    id   INTEGER PRIMARY KEY CHECK (id = 1),
    body TEXT NOT NULL
);

-- PostgreSQL only. The last commit: a token its writer chose, and the
-- highest journal entry, alert and audit record once it was written. A
-- commit whose answer is lost with its connection reads it back to learn
-- whether it landed, and with which numbers.
CREATE TABLE last_commit (
    id      INTEGER PRIMARY KEY CHECK (id = 1),
    token   BIGINT NOT NULL,
    journal BIGINT NOT NULL,
    alerts  BIGINT NOT NULL,
    audit   BIGINT NOT NULL
);
INSERT INTO last_commit (id, token, journal, alerts, audit) VALUES (1, 0, 0, 0, 0);

-- PostgreSQL only. Raises an error with a message: a statement of a
-- commit refuses the whole batch with it (a state of a task not stored).
-- +goose StatementBegin
CREATE FUNCTION gnomon_refuse(message TEXT) RETURNS VOID LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION USING MESSAGE = message, ERRCODE = 'P0002';
END
$$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION gnomon_refuse(TEXT);
DROP TABLE last_commit, tree_state, tree_log, tree_nodes, tree_files, cursors, audit, alert_attempts, alerts,
    checkpoint_parts, checkpoint, fires, runs, tasks, journal;
