-- Validations: data events stored because they validated a dependency of a
-- configuration (seed 000), until they can no longer count.
CREATE TABLE validations (
    task     TEXT    NOT NULL,
    dep      TEXT    NOT NULL,      -- the dependency: "TYPE:resource"
    ts       INTEGER NOT NULL,      -- the event's timestamp, unix nanoseconds
    resource TEXT    NOT NULL,      -- the event's resource
    received INTEGER NOT NULL,      -- when it was accepted
    PRIMARY KEY (task, dep, ts, resource)
) WITHOUT ROWID;
