-- +goose Up
-- The history pages: the runs of every task by start time, newest first,
-- of some tasks or in a status; the audit records of a task or a status,
-- newest first. The ID ends each runs index: it orders the runs that
-- started at one instant. runs_start holds the task too, so that the
-- tasks that ran in a range are read from it alone (the timeline).
-- runs_task (task, id) stays: a task's runs by ID.
CREATE INDEX runs_start ON runs (start_at, id) INCLUDE (task);
CREATE INDEX runs_task_start ON runs (task, start_at, id);
CREATE INDEX runs_status_start ON runs (status, start_at, id);
CREATE INDEX audit_task ON audit (task, seq);
CREATE INDEX audit_status ON audit (status, seq);

-- +goose Down
DROP INDEX audit_status;
DROP INDEX audit_task;
DROP INDEX runs_status_start;
DROP INDEX runs_task_start;
DROP INDEX runs_start;
