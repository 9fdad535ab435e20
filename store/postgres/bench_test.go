package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/gnomon-sched/gnomon/internal/pgtest"
	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/store"
)

// benchBody is a journal entry's body of a typical size.
var benchBody = json.RawMessage(`{"type":"data","task":"load_orders_eu_0042","dep":"TABLE:warehouse.orders_eu","ts":1772366400123456789,"by":"etl-7"}`)

// BenchmarkCommitJournal commits n journal entries a commit: through the
// store, and as the baseline raw pgx batched inserts in a transaction
// (BEGIN, one pipeline of INSERTs, COMMIT) into the same table.
func BenchmarkCommitJournal(b *testing.B) {
	ctx := context.Background()
	for _, n := range []int{1, 10, 100, 1000} {
		b.Run(fmt.Sprintf("store/%d", n), func(b *testing.B) {
			s := benchStore(b)
			batch := &store.Batch{Entries: make([]store.Entry, n)}
			for i := range batch.Entries {
				batch.Entries[i] = store.Entry{At: t0, Kind: "data", Body: benchBody}
			}
			b.ResetTimer()
			for range b.N {
				if err := s.Commit(ctx, batch); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "entries/s")
		})
		b.Run(fmt.Sprintf("pgx/%d", n), func(b *testing.B) {
			s := benchStore(b)
			seq := int64(0)
			b.ResetTimer()
			for range b.N {
				tx, err := s.pool.Begin(ctx)
				if err != nil {
					b.Fatal(err)
				}
				var q pgx.Batch
				for range n {
					seq++
					q.Queue(`INSERT INTO journal (seq, at, kind, body) VALUES ($1, $2, $3, $4)`, seq, t0.UnixNano(), "data", string(benchBody))
				}
				if err := tx.SendBatch(ctx, &q).Close(); err != nil {
					b.Fatal(err)
				}
				if err := tx.Commit(ctx); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "entries/s")
		})
	}
}

// BenchmarkLoad loads a store of GNOMON_BENCH_TASKS tasks (default 10^5;
// the start-up target is 10^6 in at most 15 s).
func BenchmarkLoad(b *testing.B) {
	ctx := context.Background()
	n := 100_000
	if v, err := strconv.Atoi(os.Getenv("GNOMON_BENCH_TASKS")); err == nil && v > 0 {
		n = v
	}
	s := benchStore(b)
	def := job.Task{Type: job.Callable, Command: "/opt/etl/bin/load --region eu --table orders", OutLog: "/var/log/etl/load.out",
		ErrLog: "/var/log/etl/load.err", Priority: job.Critical, RunDays: 0x3e, StartTimes: []job.Clock{60, 600}, Timezone: "Europe/Paris",
		Extra: &job.Extra{StartDelay: job.Duration(time.Second)}}
	state, err := store.EncodeState(&job.State{Status: job.Success, End: job.At(t0), RunID: 12345})
	if err != nil {
		b.Fatal(err)
	}
	_, err = s.pool.CopyFrom(ctx, pgx.Identifier{"tasks"}, []string{"name", "type", "parent", "status", "def", "state"},
		pgx.CopyFromFunc(func() func() ([]any, error) {
			i := 0
			return func() ([]any, error) {
				if i == n {
					return nil, nil
				}
				i++
				d := def
				d.Name = fmt.Sprintf("load_orders_%07d", i)
				enc, err := store.EncodeDef(&d)
				return []any{d.Name, string(d.Type), "", "success", string(enc), string(state)}, err
			}
		}()))
	if err != nil {
		b.Fatal(err)
	}
	if _, err := s.pool.Exec(ctx, `VACUUM ANALYZE tasks`); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		snap, err := s.Load(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if len(snap.Tasks) != n {
			b.Fatalf("%d tasks loaded, want %d", len(snap.Tasks), n)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/load")
}

func benchStore(b *testing.B) *Store {
	b.Helper()
	s, err := Open(context.Background(), pgtest.URL(b))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}
