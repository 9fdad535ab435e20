-- +goose Up
-- Where a run's output is in its task's log files (store.EncodeLogSpan:
-- four offsets, comma-separated), '' when not known, as in SQLite's
-- migration 0013.
ALTER TABLE runs ADD COLUMN log_span TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE runs DROP COLUMN log_span;
