-- Message data reported by function runs (a JSON object, '' when none).
ALTER TABLE runs ADD COLUMN data TEXT NOT NULL DEFAULT '';

-- Email alerts (seed 004): written in the same transaction as the outcome
-- that asks for them, then sent by the notifier, which records every
-- attempt. The alert document is JSON; the columns are what the sender and
-- the listings query.
CREATE TABLE alerts (
    id       INTEGER PRIMARY KEY AUTOINCREMENT,
    task     TEXT    NOT NULL,
    created  INTEGER NOT NULL,
    state    TEXT    NOT NULL,           -- pending, sent, failed
    next_at  INTEGER NOT NULL DEFAULT 0, -- when a pending alert is tried next
    doc      TEXT    NOT NULL
);
CREATE INDEX alerts_pending ON alerts (next_at) WHERE state = 'pending';
CREATE INDEX alerts_task ON alerts (task, id);

CREATE TABLE alert_attempts (
    alert INTEGER NOT NULL REFERENCES alerts (id),
    at    INTEGER NOT NULL,
    error TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX alert_attempts_alert ON alert_attempts (alert, at);

-- The audit trail: one record per ended run, in the order the ends were
-- committed. audit.log in the data directory is written from it.
CREATE TABLE audit (
    seq     INTEGER PRIMARY KEY AUTOINCREMENT,
    task    TEXT    NOT NULL,
    run     INTEGER NOT NULL,
    launch  INTEGER NOT NULL,
    stop    INTEGER NOT NULL,
    result  TEXT    NOT NULL,
    status  TEXT    NOT NULL,
    message TEXT    NOT NULL DEFAULT '',
    data    TEXT    NOT NULL DEFAULT ''  -- message data, a JSON object
);

-- Named positions of readers of the store (the audit.log writer).
CREATE TABLE cursors (
    name  TEXT PRIMARY KEY,
    value INTEGER NOT NULL
);
