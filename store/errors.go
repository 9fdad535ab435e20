package store

import (
	"errors"
	"fmt"
)

// ErrUnavailable is wrapped by the error of a Commit that did not write
// its batch, or cannot tell yet whether it did, because the database
// cannot take it now: the connection is lost, the server restarts, the
// disk is full, the database is read-only. The caller commits the same
// batch again later, and nothing else before it: a store whose last
// commit is in doubt settles it first, and reports the retried batch
// committed if the first attempt landed, so that it is written exactly
// once.
var ErrUnavailable = errors.New("database unavailable")

// ErrFenced is wrapped by the error of a write refused because the
// store is fenced (Fencer) and another director took the cluster's
// assignment lease since: nothing of the write was stored, and no later
// write of this director will be. It is not ErrUnavailable: retrying
// cannot succeed, and the director stops.
var ErrFenced = errors.New("fenced")

// Fencer is a store that a cluster's director can fence: once Fence is
// called, every write of the journal and the state (Commit, SetCursors,
// RecordAttempt) is stored only while node still holds the cluster's
// assignment lease at epoch, checked in the write's own transaction, and
// fails with ErrFenced otherwise. The director fences its store after it
// takes the lease and before its engine's first commit; a store of one
// server is never fenced.
type Fencer interface {
	Fence(node string, epoch int64)
}

// ErrNewerSchema is the error of opening a database that a later release
// of gnomon migrated past the migrations this one knows: a downgrade,
// which is refused, since this release cannot know what the later one
// changed.
var ErrNewerSchema = errors.New("downgrade refused")

// CheckSchema refuses a database at schema version stored, above latest,
// the last migration this release knows.
func CheckSchema(stored, latest int) error {
	if stored <= latest {
		return nil
	}
	return fmt.Errorf("%w: the database is at schema version %d, which a later release of gnomon wrote; this one knows versions up to %d. Run that release, or restore a backup taken before the upgrade (docs/operations.md, \"Upgrades\")",
		ErrNewerSchema, stored, latest)
}
