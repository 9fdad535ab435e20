package job

import "time"

// TriggerBackfill is the trigger of a run that a backfill started: it ran
// a past occurrence of its task (Run.Scheduled), asked for by Run.By.
const TriggerBackfill = "backfill"

// FateBackfilled is the fate of an occurrence a backfill ran after its
// instant had passed. It replaces a missed or skipped fate in the fire
// ledger (the reason then says what the occurrence was before), and no
// other: an occurrence that ran, or was backfilled, is never run again.
const FateBackfilled Fate = "backfilled"

// Supersedes reports whether fire f replaces old, a fire of the same
// occurrence recorded before it, in the fire ledger: a backfill replaces
// a missed or skipped occurrence. Otherwise the first fate is kept.
func (f *Fire) Supersedes(old *Fire) bool {
	return f.Fate == FateBackfilled && (old.Fate == FateMissed || old.Fate == FateSkipped)
}

// Backfill is what remains of the backfills of one task: the occurrences
// still to run, and the backfill runs that were killed and have not ended
// yet. It is part of the task's state, so that a backfill goes on after a
// restart.
type Backfill struct {
	// MaxParallel is the most backfill runs of the task at once (at least
	// 1): that of the latest backfill asked for.
	MaxParallel int `json:"max_parallel"`
	// Queue holds the occurrences not started yet, in order.
	Queue []BackfillItem `json:"queue,omitempty"`
	// Killed are the backfill runs a cancel killed, until they end: they
	// end aborted.
	Killed []int64 `json:"killed,omitempty"`
}

// BackfillItem is one occurrence a backfill is to run.
type BackfillItem struct {
	Scheduled time.Time `json:"scheduled"`
	// By names the identity that asked for the backfill (see Run.By).
	By string `json:"by,omitempty"`
	// Params are the parameter values the backfill gave (see Run.Params).
	Params []Var `json:"params,omitempty"`
	// Was is what the fire ledger recorded of the occurrence before, if
	// anything: its fate and reason ("missed: ..."), kept in the reason
	// of its backfilled fire.
	Was string `json:"was,omitempty"`
	// Attempt and RetryOf, for a retry of a failed backfill run under the
	// task's n_retrys: its number (1 for the first) and the first run of
	// the occurrence. Due is when it may start: the retry's wait.
	Attempt int       `json:"attempt,omitempty"`
	RetryOf int64     `json:"retry_of,omitempty"`
	Due     time.Time `json:"due,omitzero"`
}

// Empty reports whether nothing remains of the backfills.
func (b *Backfill) Empty() bool { return b == nil || (len(b.Queue) == 0 && len(b.Killed) == 0) }
