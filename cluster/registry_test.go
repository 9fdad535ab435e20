package cluster

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// t0 is where the tests' clocks start.
var t0 = time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)

// registry opens a fresh database, migrated by the store, and a registry
// on it with a small space.
func registry(t testing.TB, space Space) Registry {
	t.Helper()
	if OpenTestDB == nil {
		t.Fatal("no test database: postgres_test.go sets OpenTestDB")
	}
	db := OpenTestDB(t)
	r, err := db.Registry(space, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	databases.Store(r, db)
	return r
}

// databases are the test databases of the registries registry returned.
var databases sync.Map // Registry → TestDB

func register(t *testing.T, r Registry, id string, at time.Time, roles ...string) {
	t.Helper()
	if err := r.Register(context.Background(), Node{ID: id, Roles: roles, Version: "test"}, at); err != nil {
		t.Fatal(err)
	}
}

// rebalance is director's round at at, as a director node plays it: it
// takes the assignment lease first if it does not hold it and can take it
// (as a director does when it starts), then rebalances at its epoch.
func rebalance(t *testing.T, r Registry, director string, at time.Time) Balance {
	t.Helper()
	b, err := r.Rebalance(context.Background(), director, directorEpoch(t, r, director, at), at, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// directorEpoch returns the epoch at which director holds the assignment
// lease, taking it at at first if it does not hold it and can take it;
// if another director holds it, it returns the holder's epoch.
func directorEpoch(t testing.TB, r Registry, director string, at time.Time) int64 {
	t.Helper()
	ctx := context.Background()
	d, err := r.Director(ctx)
	if err != nil {
		t.Fatal(err)
	}
	holder, epoch := d.ID, d.Epoch
	if holder != director {
		e, err := r.TakeDirector(ctx, Node{ID: director}, at)
		switch {
		case errors.Is(err, ErrOtherDirector):
		case err != nil:
			t.Fatal(err)
		default:
			epoch = e
		}
	}
	return epoch
}

func owned(t *testing.T, r Registry) map[string][]int {
	t.Helper()
	nodes, err := r.Nodes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]int{}
	for _, n := range nodes {
		out[n.ID] = n.Partitions
	}
	return out
}
