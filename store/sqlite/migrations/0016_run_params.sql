-- The parameter values a run was started with (store.EncodeParams: a JSON
-- array of {"name","value"}), '' when none.
ALTER TABLE runs ADD COLUMN params TEXT NOT NULL DEFAULT '';
