// Package store defines how gnomon keeps its journal and state. Two
// implementations exist: store/sqlite, the embedded default (one file),
// and store/postgres (a PostgreSQL database). Every implementation must
// pass the conformance suite in store/storetest, and hold the same values
// as the others, so that gnomon migrate copies one store into another.
//
// The interface is owned by gnomon and may change between versions.
package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/gnomon-sched/gnomon/auth"
	"github.com/gnomon-sched/gnomon/job"
)

// Store is durable storage for the journal, task state and run history.
// Implementations are safe for concurrent use; Commit calls are serialised
// by the caller.
type Store interface {
	// Load returns every task, the runs that have not ended and the highest
	// run id ever stored.
	Load(ctx context.Context) (*Snapshot, error)
	// Commit writes a batch in one durable transaction: all of it or none.
	// It assigns each entry's Seq, each alert's ID and each audit record's
	// Seq, in batch order, following the highest stored without a gap: a
	// batch that fails uses no number. A row the batch writes twice (a
	// run started and ended in one group commit) ends as if each write
	// were applied in turn. An entry whose body is not JSON fails the
	// whole batch. It keeps nothing of the batch once it returns: the
	// caller reuses its buffers.
	Commit(ctx context.Context, b *Batch) error
	// Runs returns run history, newest first.
	Runs(ctx context.Context, q RunQuery) ([]job.Run, error)
	// RunPage returns a page of the history of every task's runs, in the
	// order of RunKey: the latest start first.
	RunPage(ctx context.Context, q RunPageQuery) ([]job.Run, error)
	// RunTasks returns the names of the tasks that have runs q selects
	// (its Older, Newer and Limit aside), in name order: what ran in a
	// range, without reading every run.
	RunTasks(ctx context.Context, q RunPageQuery) ([]string, error)
	// RunsAbout returns about how many runs started in [from, to), from
	// the index of start times alone, whatever the range holds (a seek at
	// each bound, and a sort of the runs that started at the bound's
	// instant): the number of the first run, in start order, that started
	// at or after to less that of the first at or after from (a bound no
	// run started after counts as the next number). It is exact when runs
	// are numbered in the order they start, as the engine numbers them.
	RunsAbout(ctx context.Context, from, to time.Time) (int64, error)
	// RunCounts counts the runs in the statuses q names that started in
	// its range, by status and by step from its start, from an index
	// alone: what the overview's chart of outcomes draws.
	RunCounts(ctx context.Context, q RunCountQuery) ([]RunCount, error)
	// Fires returns the recorded fates of occurrences, newest first, with
	// the run each one started when there is one.
	Fires(ctx context.Context, q FireQuery) ([]job.Fire, error)
	// Journal returns journal entries with a sequence number above after,
	// oldest first, at most limit of them.
	Journal(ctx context.Context, after int64, limit int) ([]Entry, error)
	// JournalBefore returns journal entries of one kind (of every kind
	// when kind is empty) with a sequence number below before (0: from the
	// last), newest first, at most limit of them.
	JournalBefore(ctx context.Context, kind string, before int64, limit int) ([]Entry, error)
	// Alerts returns alerts, newest first.
	Alerts(ctx context.Context, q AlertQuery) ([]job.Alert, error)
	// PendingAlerts returns the pending alerts whose next attempt is due at
	// or before now, oldest first, at most limit of them.
	PendingAlerts(ctx context.Context, now time.Time, limit int) ([]job.Alert, error)
	// RecordAttempt records one attempt at sending alert a, and a's
	// delivery fields as they are after it (State, Attempts, LastError,
	// NextAt, SentAt), in one transaction.
	RecordAttempt(ctx context.Context, a *job.Alert, at job.Attempt) error
	// Attempts returns the attempts at sending an alert, oldest first.
	Attempts(ctx context.Context, alert int64) ([]job.Attempt, error)
	// Audit returns audit records with a sequence number above after,
	// oldest first, at most limit of them.
	Audit(ctx context.Context, after int64, limit int) ([]job.AuditRecord, error)
	// AuditPage returns a page of audit records, newest first.
	AuditPage(ctx context.Context, q AuditQuery) ([]job.AuditRecord, error)
	// Cursor returns a named position (0 if never set); SetCursors sets
	// several in one transaction, and forgets those it sets to 0.
	Cursor(ctx context.Context, name string) (int64, error)
	SetCursors(ctx context.Context, values map[string]int64) error
	Tokens
	// Close releases the store.
	Close() error
}

// AlertQuery selects alerts.
type AlertQuery struct {
	Task  string // empty means every task
	Limit int    // 0 means no limit
	// Before, when set, selects the alerts with an ID below it: the next
	// page after the alert of that ID.
	Before int64
}

// Snapshot is the state Load returns.
type Snapshot struct {
	Tasks   []job.Record
	Active  []*job.Run
	LastRun int64
	// Windows is the current checkpoint of the events configurations
	// have accepted, as of journal entry WindowsSeq, in no particular
	// order; WindowsGen is its generation.
	Windows    []job.Validation
	WindowsSeq int64
	WindowsGen int64
	// Trees is the state of the timeperiod trees.
	Trees TreeSnapshot
	// Calendars are the named calendars, by name.
	Calendars []job.Calendar
}

// Batch is what one group commit writes.
type Batch struct {
	Entries []Entry
	Tasks   []job.Record // inserted or updated, definition and state
	// States are new states of tasks whose definition is unchanged (and
	// already stored).
	States  []TaskState
	Deleted []string
	Runs    []job.Run // inserted or updated
	// Fires are new fates of occurrences. An occurrence already recorded
	// keeps its first fate, except that a backfilled one replaces a missed
	// or skipped one (job.Fire.Supersedes), reason, instant and run
	// included.
	Fires []job.Fire
	// Checkpoint writes part of a checkpoint of the windows, if not nil.
	Checkpoint *Checkpoint
	// Alerts are new alerts; Commit assigns their ID.
	Alerts []job.Alert
	// Audit are new audit records; Commit assigns their Seq.
	Audit []job.AuditRecord
	// Trees writes the timeperiod trees, if not nil.
	Trees *Trees
	// Calendars are named calendars inserted or updated, and
	// DeletedCalendars the names of those deleted (before Calendars are
	// written).
	Calendars        []job.Calendar
	DeletedCalendars []string
}

// TaskState is the state of one stored task.
type TaskState struct {
	Name  string
	State job.State
}

// Checkpoint is one part of a checkpoint of the events configurations
// have accepted. A checkpoint is written in parts, as rows of a new
// generation; the last part (Done) makes the generation current as of
// journal entry Seq and deletes the previous one.
type Checkpoint struct {
	Gen  int64
	Rows []job.Validation // Task, Dep and TS
	Done bool
	Seq  int64
}

// Empty reports whether the batch writes nothing.
func (b *Batch) Empty() bool {
	return len(b.Entries) == 0 && len(b.Tasks) == 0 && len(b.States) == 0 && len(b.Deleted) == 0 && len(b.Runs) == 0 && len(b.Fires) == 0 && b.Checkpoint == nil &&
		len(b.Alerts) == 0 && len(b.Audit) == 0 && b.Trees.Empty() && len(b.Calendars) == 0 && len(b.DeletedCalendars) == 0
}

// Entry is one journaled event.
type Entry struct {
	Seq  int64           `json:"seq"` // assigned by the store
	At   time.Time       `json:"at"`
	Kind string          `json:"kind"`
	Body json.RawMessage `json:"body"`
}

// RunQuery selects run history.
type RunQuery struct {
	Task string // empty means every task (only with BundleRun)
	// Limit is the most runs returned; 0 means no limit.
	Limit int
	// From and To bound the start time: From <= start < To, when set.
	From, To time.Time
	// BundleRun selects the runs that belonged to one bundle run.
	BundleRun int64
	// Done leaves out runs that have not ended.
	Done bool
	// Before, when set, selects the runs with an ID below it: the next
	// page after the run of that ID.
	Before int64
}

// RunPageQuery selects a page of the run history of every task. Each
// filter given narrows the selection; the runs come newest first (see
// RunKey), those of a page after Older, or with Newer the Limit runs just
// before it in that order, still newest first.
type RunPageQuery struct {
	// Tasks selects the runs of these tasks; empty means every task.
	Tasks []string
	// Statuses selects the runs in one of these statuses; empty means any.
	Statuses []job.Status
	// From and To bound the start time: From <= start < To, when set.
	From, To time.Time
	// EndFrom, when set, selects the runs that had not ended before it:
	// those that ended at or after it, and those still running.
	EndFrom time.Time
	// Older selects the runs after it in the order: the next page.
	Older *RunKey
	// Newer selects the runs before it in the order: the page before.
	Newer *RunKey
	// Limit is the most runs returned; 0 means no limit.
	Limit int
	// ByTook orders the runs by how long they took, the longest first,
	// and runs that took as long by ID, the highest first; runs that have
	// not ended are left out. Older and Newer are then places in that
	// order (RunKey.Took and ID).
	ByTook bool
}

// RunCountQuery selects the runs RunCounts counts.
type RunCountQuery struct {
	// From and To bound the start time: From <= start < To. Both are
	// required.
	From, To time.Time
	// Step is the width of each count's span of start times, from From;
	// 0 counts the whole range as one.
	Step time.Duration
	// Statuses are the statuses counted: at least one.
	Statuses []job.Status
}

// Valid reports what is wrong with a query of counts, nil if nothing.
func (q RunCountQuery) Valid() error {
	switch {
	case q.From.IsZero() || q.To.IsZero() || !q.From.Before(q.To):
		return fmt.Errorf("run counts: give a range, From before To")
	case q.Step < 0:
		return fmt.Errorf("run counts: the step %s is negative: give 0 or more", q.Step)
	case len(q.Statuses) == 0:
		return fmt.Errorf("run counts: give the statuses to count")
	}
	return nil
}

// StepNanos is the width of a count's span in nanoseconds: Step, or the
// whole range.
func (q RunCountQuery) StepNanos() int64 {
	if q.Step == 0 {
		return int64(q.To.Sub(q.From))
	}
	return int64(q.Step)
}

// RunCount is how many runs in one status started in one step of a
// RunCountQuery's range: the Step-th from its start (from 0).
type RunCount struct {
	Step   int
	Status job.Status
	Runs   int
}

// RunKey is a run's place in the history of every task: runs are ordered
// by start time, the latest first, and runs that started at the same
// instant by ID, the highest first.
type RunKey struct {
	Start time.Time
	ID    int64
	// Took is how long an ended run took: its place in the order of
	// RunPageQuery.ByTook.
	Took time.Duration
}

// Key returns the place of a run in the history of every task, and in
// the order of how long the runs took.
func Key(r job.Run) RunKey {
	k := RunKey{Start: r.Start, ID: r.ID}
	if !r.End.IsZero() {
		k.Took = r.End.Sub(r.Start)
	}
	return k
}

// Value returns the key's value of the order of q, beside the ID: the
// start in nanoseconds, or with ByTook how long the run took.
func (k RunKey) Value(q RunPageQuery) int64 {
	if q.ByTook {
		return int64(k.Took)
	}
	return k.Start.UnixNano()
}

// AuditQuery selects a page of audit records, newest first (highest
// sequence number first).
type AuditQuery struct {
	Task string // empty means every task
	// Tasks selects the records of these tasks; empty means every task.
	// With Task, a record is of both.
	Tasks []string
	// Statuses selects the records of runs that ended in one of these
	// statuses; empty means any.
	Statuses []job.Status
	// From and To bound the time the run stopped: From <= Stop < To,
	// when set.
	From, To time.Time
	// Before selects the records numbered below it: the next page.
	Before int64
	// After selects the Limit records numbered just above it: the page
	// before, still newest first.
	After int64
	// Limit is the most records returned; 0 means no limit.
	Limit int
}

// FireQuery selects recorded occurrences.
type FireQuery struct {
	Task string // empty means every task
	// From and To bound the occurrence: From <= scheduled < To, when set.
	From, To time.Time
	// Limit is the most fires returned; 0 means no limit.
	Limit int
}

// ErrClosed is returned by a store after Close.
var ErrClosed = errors.New("store closed")

// Tokens is the part of a store that keeps API tokens (package auth).
type Tokens interface {
	// Tokens returns every token, revoked and expired ones included,
	// oldest first.
	Tokens(ctx context.Context) ([]auth.Token, error)
	// AddToken stores a new token. It fails with ErrConflict when a token
	// that is not revoked has the same name.
	AddToken(ctx context.Context, t auth.Token) error
	// RevokeToken marks a token revoked at at. It fails with ErrNoToken
	// when no token that is not revoked has that ID.
	RevokeToken(ctx context.Context, id string, at time.Time) error
}

// ErrConflict is the error of a write that would break a uniqueness rule.
var ErrConflict = errors.New("conflict")

// ErrNoToken is the error of a revocation of a token that is not there.
var ErrNoToken = errors.New("no such token")
