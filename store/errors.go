package store

import "errors"

// ErrUnavailable is wrapped by the error of a Commit that did not write
// its batch because the database cannot take it now: the connection is
// lost, the server restarts, the disk is full, the database is read-only.
// The same batch may be committed again later. A store returns it only
// when it knows the batch was not committed: a commit whose outcome it
// cannot learn is not reported unavailable.
var ErrUnavailable = errors.New("database unavailable")
