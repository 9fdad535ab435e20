-- Timeperiod trees (seed 003). The scheduler encodes nodes and log entries;
-- the store keys them by process and timeperiod.
CREATE TABLE tree_files (
    name TEXT PRIMARY KEY,
    text TEXT NOT NULL              -- the tree file, as gnomon formats it
);

CREATE TABLE tree_nodes (
    process    TEXT    NOT NULL,
    timeperiod INTEGER NOT NULL,    -- YYYYMMDDHH, UTC
    state      TEXT    NOT NULL,
    body       TEXT    NOT NULL,    -- JSON
    PRIMARY KEY (process, timeperiod)
) WITHOUT ROWID;

-- The event log of each node: the newest 128 entries are kept.
CREATE TABLE tree_log (
    seq        INTEGER PRIMARY KEY,
    process    TEXT    NOT NULL,
    timeperiod INTEGER NOT NULL,
    at         INTEGER NOT NULL,    -- unix nanoseconds, UTC
    body       TEXT    NOT NULL     -- JSON
);
CREATE INDEX tree_log_node ON tree_log (process, timeperiod, seq);

-- Forest-wide state: its clock and the next ticks of continuous levels.
CREATE TABLE tree_state (
    id   INTEGER PRIMARY KEY CHECK (id = 1),
    body TEXT NOT NULL              -- JSON
);

-- A timeperiod process's run names its period and how it ended.
ALTER TABLE runs ADD COLUMN timeperiod TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN outcome TEXT NOT NULL DEFAULT '';
