package store

import "errors"

// ErrUnavailable is wrapped by the error of a Commit that did not write
// its batch, or cannot tell yet whether it did, because the database
// cannot take it now: the connection is lost, the server restarts, the
// disk is full, the database is read-only. The caller commits the same
// batch again later, and nothing else before it: a store whose last
// commit is in doubt settles it first, and reports the retried batch
// committed if the first attempt landed, so that it is written exactly
// once.
var ErrUnavailable = errors.New("database unavailable")
