-- The journal: every accepted event, in order.
CREATE TABLE journal (
    seq  INTEGER PRIMARY KEY AUTOINCREMENT,
    at   INTEGER NOT NULL,          -- unix nanoseconds, UTC
    kind TEXT    NOT NULL,
    body TEXT    NOT NULL           -- JSON
);

-- Tasks: the definition and the current state, both as JSON documents,
-- with the columns queries need.
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
    id         INTEGER PRIMARY KEY,
    task       TEXT    NOT NULL,
    status     TEXT    NOT NULL,
    start_at   INTEGER NOT NULL,
    end_at     INTEGER NOT NULL DEFAULT 0,
    exit_code  INTEGER NOT NULL DEFAULT 0,
    result     TEXT    NOT NULL DEFAULT '',
    message    TEXT    NOT NULL DEFAULT '',
    bundle_run INTEGER NOT NULL DEFAULT 0,
    trigger    TEXT    NOT NULL DEFAULT '',
    scheduled  INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX runs_task ON runs (task, id);
CREATE INDEX runs_active ON runs (end_at) WHERE end_at = 0;
CREATE INDEX runs_bundle ON runs (bundle_run) WHERE bundle_run != 0;
