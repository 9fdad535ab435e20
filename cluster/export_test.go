package cluster

import (
	"context"
	"testing"
	"time"
)

// TestDB is a fresh database of a test's own, migrated by the store, on
// which the package's tests run registries. The tests of package cluster
// cannot import the store themselves (store/postgres imports cluster):
// postgres_test.go, of package cluster_test, sets OpenTestDB when the
// test binary starts.
type TestDB interface {
	// Registry returns a registry on the database, for a space of
	// partitions and a node timeout.
	Registry(space Space, timeout time.Duration) (Registry, error)
	// QueryString runs sql, which returns one row of one text value.
	QueryString(ctx context.Context, sql string) (string, error)
}

// OpenTestDB opens a TestDB for t, closed when t ends.
var OpenTestDB func(t testing.TB) TestDB
