-- Fires: the fate of every planned occurrence of a time trigger, one row
-- per (task, occurrence), so that an occurrence is handled at most once.
CREATE TABLE fires (
    task      TEXT    NOT NULL,
    scheduled INTEGER NOT NULL,     -- unix nanoseconds, UTC
    fate      TEXT    NOT NULL,     -- ran, skipped or missed
    reason    TEXT    NOT NULL DEFAULT '',
    at        INTEGER NOT NULL,     -- when the fate was decided
    PRIMARY KEY (task, scheduled)
) WITHOUT ROWID;

CREATE INDEX runs_scheduled ON runs (task, scheduled) WHERE scheduled != 0;
