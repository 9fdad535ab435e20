// Package periods is the pure core of timeperiod trees (seed 003): the
// tree files, the timeperiod keys, and the state machine that decides
// which period of which process runs next. Like the engine it makes
// decisions and nothing else: Forest.Apply takes one event and the current
// instant and returns the changes and the effects to perform as plain
// data. It does no I/O, starts no goroutines, never reads the clock and
// walks maps only in sorted order, so a journal of events replayed with
// their instants rebuilds the same state, run IDs included.
//
// The semantics are those of spec/timeperiods.md; the rule numbers below
// (rule 1 to rule 16) are the rows of its state-machine table.
//
// # Model
//
// A tree is a vertical of aggregation: one to four levels, coarsest first,
// each with a distinct qualifier (yearly, monthly, daily, hourly; levels
// may be skipped, a yearly level over a daily one). Each level is a
// process: a name unique among all processes and jobs, and what handles
// its periods: a shell command, a registered Go function, or neither, in
// which case an external worker does the work and reports the outcome. A
// tree may depend on other trees (dependentOn, acyclic, across files).
//
// A node is one period of one process: (process, timeperiod). It has a
// state, a count of failures, at most one outstanding run, and an event
// log of its last MaxLog changes, newest first. A run is one attempt at a
// node: requested, then running, then processed, noop, failed or
// canceled; the forest keeps only each node's outstanding run, and the
// Runs of every Output are the history a store keeps by run ID.
//
// Nodes are built by the clock: a tree's bottom level has a node for
// every period from the tree's startTimeperiod to the current period, and
// each coarser level the periods that contain them. New nodes are embryo.
//
// # Timeperiod keys
//
// A Key is ten digits YYYYMMDDHH with the fields finer than its qualifier
// zero: hour 2024031514, day 2024031500, month 2024030000, year
// 2024000000. Keys are UTC; a display may convert, the keys never do, so
// there are no daylight-saving gaps or repeats. Qualifier methods give a
// period's bounds ([Start, End), half-open), the next and previous period,
// the periods of a finer qualifier it holds (Children), and the period
// containing an instant (KeyAt). Cast turns a finer key into the coarser
// period containing it, as an operator's "2024031514" names a day.
//
// # Tree files
//
// A tree file is JSON:
//
//	{"settings": {"startTimeperiod": "2024010100", "lagMinutes": 5, "maxFailures": 3, "timezone": "UTC"},
//	 "trees": [
//	   {"name": "site", "dependentOn": [],
//	    "levels": [
//	      {"process": "site_daily", "qualifier": "daily", "blocking": "children"},
//	      {"process": "site_hourly", "qualifier": "hourly", "command": "aggregate.sh"}]},
//	   {"name": "client", "dependentOn": ["site"], "settings": {"lagMinutes": 10},
//	    "levels": [
//	      {"process": "client_daily", "qualifier": "daily", "stateMachine": "continuous",
//	       "every": "15m", "function": "client_rollup"}]}]}
//
// The file's settings are defaults for its trees; a tree's own settings
// override them. startTimeperiod (an hourly key) has no default; lagMinutes
// defaults to 5, maxFailures to 3, and timezone may only be "UTC". A level
// has a process and a qualifier; stateMachine is discrete (the default)
// or continuous; blocking is normal (the default), children or
// dependencies; command and function are exclusive. every, a Go duration
// in whole seconds from 1s to 24h, is the tick of a continuous level
// (default one minute); a discrete level has none, for its periods run
// when they are due. A level may send email when a run ends, as a task's
// alert_on and alert_to do: alertOn lists the outcomes, "success" or
// "failure", and alertTo the addresses (user@host), each non-empty and
// without repeats, and one goes with the other.
//
// Parse reads a file strictly: an unknown key anywhere, a repeated key, a
// wrong type or value, a duplicate qualifier, tree or process, levels out
// of order, an unknown or cyclic dependency, a name taken by another job
// (Options.NameTakenFunc): each is a Problem naming the file, the line and
// the JSON path, and Parse reports them all, sorted by path. Format writes
// a file back in a canonical layout; Parse(Format(f)) equals f.
//
// # The forest
//
// A Forest holds the definitions and every node. Its events are Define
// (apply a file: its trees are added or replace the file's previous ones,
// and trees the file no longer has are removed with their nodes; the file
// comes parsed and checked, as a plan made with Others, and the forest
// checks only what its state tells) and
// Remove (one tree), Tick (the clock moved), ContinuousTick (tick
// continuous levels now), RunStarted and RunResult (from whoever runs the
// work), Skip, Reprocess and Backfill (operators; Backfill reprocesses the
// finished nodes of a range of periods) and Restart (after a restart). Each
// Apply first builds the nodes up to the current period, then performs the
// event, then settles: it applies the rules to the nodes the changes
// concern until nothing changes.
//
// The Output lists the changes (with the rule and the cause of each), the
// effects to perform in order (StartRun, CancelRun), the runs created or
// updated, the event-log entries written, and the nodes to store. NextWake
// is the earliest instant at which a Tick has something to do: the caller
// arms one timer for it, and polls nothing.
//
// Run IDs come from Config.NextRunIDFunc, or from the forest's own counter
// when it is nil; either way they must repeat on a replay.
//
// # States
//
// embryo (waiting; shown as "queued"), in_progress (running, or awaiting
// its final run), final_run (its last run outstanding) are active;
// processed, noop and skipped are finished. Finished states are terminal
// except through reprocess.
//
// A discrete node starts when it is its process's earliest active node
// (one process advances strictly in key order), its gate is open and it is
// due: strictly after its end plus the lag (rule 1). A run that returns
// processed or noop finishes it if it is then finalizable: closed, its
// children and counterparts finished (rule 5). Otherwise it awaits, with
// no run (rule 6), and gets one final run once it becomes finalizable
// (rule 7), whose outcome finishes it (rule 9).
//
// A continuous node starts as soon as it is its process's earliest active
// node and its gate is open, even while its period is open (rule 2),
// straight to its final run if it is finalizable already (rule 3). While
// its period is open, each tick of the level runs it again (rule 8: one
// run per tick at most, missed ticks count once); once finalizable it
// gets its final run (rule 7). Ticks fall on multiples of every since the
// Unix epoch, so they survive a restart.
//
// A failed run is retried at once while the node has failed at most
// maxFailures times (rule 10); the failure after that skips the node and
// propagates (rule 11). A canceled run skips the node and propagates (rule
// 12). An active node whose period has closed and whose children are all
// skipped is skipped and propagates (rule 13).
//
// # Gates
//
// The counterparts of a node are the nodes of the same qualifier and
// timeperiod in the trees its tree depends on; its dependants, those in
// the trees that depend on its tree. A tree without a level of that
// qualifier, or without that period (it starts later), does not constrain
// the node.
//
// normal starts without precondition; the node still finalizes only once
// its children and counterparts are finished. children starts only when
// every child and every counterpart is finished. dependencies starts only
// when every counterpart is processed or noop, skips the node when one is
// skipped (rule 4), and otherwise waits, holding back the later periods of
// its process.
//
// # Cascades
//
// Skipping a node (an operator's Skip, rule 14, or rules 4, 11, 12 and 13)
// skips it if active, canceling its run, and recurses into its children and
// its dependants, whatever their blocking kind, with a visited set. It
// never goes up: a parent follows by rule 13 once its own period has
// closed. An operator's skip of a finished node changes it not, but still
// propagates (rule 15). A skipped child counts as finished, so its parent
// may still be processed.
//
// Reprocessing a node (rule 16) sets it back to embryo unless it is embryo
// already, with no failures and its run canceled, then reprocesses its
// parent up to the top, then its dependants, each with their parents, with
// a visited set. Children and the trees it depends on are never touched.
// The rules then redo everything bottom-up. Reprocessing a parent whose
// children are all skipped is undone by rule 13: reprocess a child to
// revive it.
//
// Cascades visit the nodes they reach and nothing else: nodes are indexed
// by process and key, and a parent keeps counts of its finished and
// skipped children, so no rule scans a level.
//
// With DryRun, Skip and Reprocess list the changes their cascade would
// make and change nothing; the settle that would follow (a parent skipped
// by rule 13, the next periods started) is not in the list, and a dry run
// neither moves the clock nor builds nodes.
//
// # Durability
//
// Every Output names the nodes it created or changed (Nodes), the log
// entries it wrote (Log), the runs it created or updated (Runs), the nodes
// it dropped (Dropped) and the trees it defined or removed; a store writes
// them with the event's journal entry in one transaction. Snapshot returns
// the whole state as plain structs that encode as JSON, and Restore loads
// one into an empty forest; a restored forest answers later events exactly
// as the original. After a restart, apply Restart: it requests every
// outstanding run again with its ID, so workers must be idempotent per
// (process, timeperiod). A result for a run that is no longer its node's
// current run is ignored.
//
// # Where this differs from the reference
//
// The reference is the Synergy Scheduler. Where it is sound the behaviour
// is the same; these are the deliberate differences, each for a reason:
//
//   - Failures are counted, not timed: a failed run is retried at once and
//     the failure after maxFailures skips the node, where the reference's
//     garbage collector retries an invalid unit of work for up to 48 hours.
//     Decisions stay deterministic and testable, with no hidden timers.
//   - A discrete node that is not finalizable awaits, then gets one final
//     run, where the reference starts a new unit of work every tick: the
//     same end state with far fewer runs, and the final run is sure to see
//     complete inputs.
//   - Reprocess resets nodes to embryo and lets the rules start them, where
//     the reference sets them in progress and fires at once, even for
//     parents still blocked (which could finalize a parent on a run made
//     before its child was redone). There is one way to start work, and no
//     stale finalization.
//   - A canceled run skips its node with the usual cascade, where the
//     reference skips the node alone: one rule for every skip, and no
//     regular dependant left waiting on a skipped counterpart.
//   - The blocking kind belongs to a level (the reference's process), not
//     to each dependency edge; the seed needs no more.
//
// # Decisions the semantics leave open
//
//   - A counterpart before the start of its tree does not exist and does
//     not constrain.
//   - Skipping a period that has not closed skips the children that exist;
//     children built later start as usual.
//   - A Define replaces the trees of its file and removes those the file no
//     longer has; a tree that another file depends on cannot be dropped or
//     removed. A redefined level keeps its nodes when its process stays in
//     the same tree with the same qualifier; a start moved later drops the
//     nodes before it, a start moved earlier adds embryo nodes.
//   - Levels may be listed in any order in a file; Parse orders them
//     coarsest first. A discrete level takes no every.
//   - Time given to Apply never goes back: an earlier instant counts as the
//     latest one seen.
//   - Config.MaxPeriods refuses a new tree whose start lies so far back
//     that it would build more periods than that at once.
//
// Not implemented: the optional time_grouping, and "at" times as a
// continuous level's trigger (only every).
package periods
