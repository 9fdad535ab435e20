package cluster_test

import (
	"context"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/cluster"
	"github.com/gnomon-sched/gnomon/internal/pgtest"
	"github.com/gnomon-sched/gnomon/store/postgres"
)

// The package's tests run on the cluster's registry on PostgreSQL, the
// one the store's migrations create.
func init() { cluster.OpenTestDB = openTestDB }

// testDB is a database of the local test server, opened by the store.
type testDB struct{ st *postgres.Store }

func openTestDB(t testing.TB) cluster.TestDB {
	t.Helper()
	st, err := postgres.Open(context.Background(), pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return testDB{st}
}

func (db testDB) Registry(space cluster.Space, timeout time.Duration) (cluster.Registry, error) {
	return db.st.Cluster(context.Background(), space, timeout)
}

func (db testDB) QueryString(ctx context.Context, sql string) (string, error) {
	var s string
	err := db.st.Pool().QueryRow(ctx, sql).Scan(&s)
	return s, err
}
