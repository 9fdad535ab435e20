-- Where a run's output is in its task's log files (store.EncodeLogSpan:
-- four offsets, comma-separated), '' when not known.
ALTER TABLE runs ADD COLUMN log_span TEXT NOT NULL DEFAULT '';
