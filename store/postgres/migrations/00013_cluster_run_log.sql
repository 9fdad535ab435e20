-- +goose Up
-- Where a run a cluster's worker executed wrote its output in its task's
-- log files (job.LogSpan as JSON, naming the worker), measured by the
-- worker and written with the outcome; NULL when not known (a run lost,
-- or aborted before it started). The director stores it on the run, as a
-- single server stores the span its runner measured.
ALTER TABLE cluster_runs ADD COLUMN log JSONB;

-- +goose Down
ALTER TABLE cluster_runs DROP COLUMN log;
