-- A checkpoint of the windows is stored as parts, one row per commit that
-- wrote it, instead of one row per accepted event: a part is one statement
-- to write and one to delete, where a row per event cost one of each per
-- event. A part's body is a JSON array of {"task", "dep", "ts": [...]}, the
-- timestamps in unix nanoseconds.
CREATE TABLE checkpoint_parts (
    id   INTEGER PRIMARY KEY,
    gen  INTEGER NOT NULL,
    body TEXT    NOT NULL
);
CREATE INDEX checkpoint_parts_gen ON checkpoint_parts (gen);

-- The current checkpoint moves over as one part.
INSERT INTO checkpoint_parts (gen, body)
SELECT gen, json_group_array(json_object('task', task, 'dep', dep, 'ts', json(ts)))
FROM (
    SELECT gen, task, dep, json_group_array(ts) AS ts
    FROM (SELECT gen, task, dep, ts FROM validations
          WHERE gen = (SELECT gen FROM checkpoint WHERE id = 1)
          ORDER BY task, dep, ts)
    GROUP BY gen, task, dep
)
GROUP BY gen;

DROP TABLE validations;
