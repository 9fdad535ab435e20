-- Fewer pages per commit. Every table and index a commit touches costs at
-- least one page written to the WAL, so:
--
-- A fire records the run it started, written when the run is: the index
-- runs_scheduled, which served only to find that run, goes.
ALTER TABLE fires ADD COLUMN run INTEGER NOT NULL DEFAULT 0;  -- the run started, 0 if none (yet)
UPDATE fires SET run = coalesce((SELECT min(r.id) FROM runs r WHERE r.task = fires.task AND r.scheduled = fires.scheduled), 0)
WHERE fate = 'ran';
DROP INDEX runs_scheduled;

-- The journal and the audit trail number their rows without AUTOINCREMENT,
-- which rewrote sqlite_sequence in every commit. Rows are never deleted
-- from either, so a new row's number is still one more than the last
-- one's, as before.
CREATE TABLE journal_new (
    seq  INTEGER PRIMARY KEY,
    at   INTEGER NOT NULL,          -- unix nanoseconds, UTC
    kind TEXT    NOT NULL,
    body TEXT    NOT NULL           -- JSON
);
INSERT INTO journal_new (seq, at, kind, body) SELECT seq, at, kind, body FROM journal;
DROP TABLE journal;
ALTER TABLE journal_new RENAME TO journal;

CREATE TABLE audit_new (
    seq     INTEGER PRIMARY KEY,
    task    TEXT    NOT NULL,
    run     INTEGER NOT NULL,
    launch  INTEGER NOT NULL,
    stop    INTEGER NOT NULL,
    result  TEXT    NOT NULL,
    status  TEXT    NOT NULL,
    message TEXT    NOT NULL DEFAULT '',
    data    TEXT    NOT NULL DEFAULT ''  -- message data, a JSON object
);
INSERT INTO audit_new (seq, task, run, launch, stop, result, status, message, data)
SELECT seq, task, run, launch, stop, result, status, message, data FROM audit;
DROP TABLE audit;
ALTER TABLE audit_new RENAME TO audit;

DELETE FROM sqlite_sequence WHERE name IN ('journal', 'audit');
