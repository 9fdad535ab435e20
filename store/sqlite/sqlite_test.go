package sqlite

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/gnomon-sched/gnomon/store"
	"github.com/gnomon-sched/gnomon/store/storetest"
)

func TestConformance(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) (store.Store, func() store.Store) {
		path := filepath.Join(t.TempDir(), "gnomon.db")
		open := func() store.Store {
			s, err := Open(context.Background(), path)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		}
		return open(), open
	})
}

func TestMigrationsIdempotent(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "gnomon.db")
	for range 2 {
		s, err := Open(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		var v int
		if err := s.r.QueryRow(`SELECT max(version) FROM schema_migrations`).Scan(&v); err != nil || v != 4 {
			t.Fatalf("schema version %d, %v", v, err)
		}
		s.Close()
	}
}
