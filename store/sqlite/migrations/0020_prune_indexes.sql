-- The pruner reads each kind of record oldest first, from an index on the
-- column its horizon is compared with, and stops at the horizon: without
-- one it read every row of the table on every call, to find the few that
-- were old enough. Runs are read in the order of runs_start (a run that
-- ended before the horizon started before it); audit records by audit_stop. The
-- rowid after each column orders the rows of one instant.
CREATE INDEX fires_scheduled ON fires (scheduled, task);
CREATE INDEX alerts_created ON alerts (created);
CREATE INDEX tree_log_at ON tree_log (at);
