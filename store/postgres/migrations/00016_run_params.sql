-- +goose Up
-- The parameter values a run was started with (store.EncodeParams: a JSON
-- array of {"name","value"}), '' when none, as in SQLite's migration 0016.
ALTER TABLE runs ADD COLUMN params TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE runs DROP COLUMN params;
