package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime/pprof"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/gnomon-sched/gnomon/internal/bench"
	"github.com/gnomon-sched/gnomon/store/postgres"
)

// The benchmarks that take -store postgres run gnomon, and their
// baseline, each on a database of its own that the benchmark creates on
// the server of -pg and drops when it is done: they touch no other data
// there. Their pools stay small: gnomon's is pgx's default (4 connections
// on 2 cores), a baseline's 1 or 2.

// storeFlags declares -store and -pg on fs.
func storeFlags(fs *flag.FlagSet) (st, pg *string) {
	st = fs.String("store", "sqlite", "gnomon's store: sqlite, or postgres (each side on a fresh database of the -pg server, dropped afterwards)")
	pg = fs.String("pg", bench.PGBase(), "PostgreSQL server for -store postgres: the URL of an existing database there to connect to (default $GNOMON_BENCH_PG)")
	return st, pg
}

func checkStore(st string) error {
	if st != "sqlite" && st != "postgres" {
		return fmt.Errorf("-store: %q is neither sqlite nor postgres", st)
	}
	return nil
}

// pgVersion names the server of base, for the header of a benchmark.
func pgVersion(base string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		return "PostgreSQL: " + err.Error()
	}
	defer conn.Close(context.Background())
	var v, sync, method string
	if err := conn.QueryRow(ctx, `SELECT current_setting('server_version'), current_setting('synchronous_commit'), current_setting('wal_sync_method')`).Scan(&v, &sync, &method); err != nil {
		return "PostgreSQL: " + err.Error()
	}
	return fmt.Sprintf("PostgreSQL %s (synchronous_commit=%s, wal_sync_method=%s)", v, sync, method)
}

// freshDB creates a database for one side of a benchmark; drop drops it,
// saying so on stderr when it cannot.
func freshDB(base string) (db *bench.Database, drop func(), err error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	db, err = bench.CreateDatabase(ctx, base)
	if err != nil {
		return nil, nil, err
	}
	return db, func() {
		if err := db.Drop(); err != nil {
			fmt.Fprintln(os.Stderr, "WARNING", err)
		}
	}, nil
}

// eventsPG is the events benchmark at n configurations with gnomon on
// PostgreSQL: gnomon server --db on a fresh database, against the
// baseline that commits every event by groups to a fresh database of its
// own (noop -db).
func eventsPG(bin, self, base string, n, conns int, dur time.Duration, rounds int) error {
	gdb, dropG, err := freshDB(base)
	if err != nil {
		return err
	}
	defer dropG()
	bdb, dropB, err := freshDB(base)
	if err != nil {
		return err
	}
	defer dropB()
	ctx := context.Background()
	monitor, err := pgx.Connect(ctx, base)
	if err != nil {
		return err
	}
	defer monitor.Close(ctx)
	b, err := startProcess(self, []string{"noop", "-db", bdb.WithParam("pool_max_conns", "2")}, "")
	if err != nil {
		return err
	}
	defer b.stop()
	return eventsWith(bin, ingestSides{base: b, args: []string{"--db", gdb.URL}, gdb: gdb.Name, bdb: bdb.Name, monitor: monitor}, n, conns, dur, rounds)
}

// commitsPG is the journal-commits benchmark on PostgreSQL: the scheduler
// on the PostgreSQL store against raw pgx inserts (COPY) of the same
// journal rows into the same table, 100 rows a commit, each side on a
// fresh database in each round.
func commitsPG(base string, dur time.Duration, rounds, clients int) error {
	fmt.Printf("\n## journal commits on PostgreSQL: data events accepted per second (%d clients, %s per run)\n", clients, dur)
	fmt.Printf("# %s; baseline: raw pgx, one COPY of 100 rows a commit\n", pgVersion(base))
	var raw, g spread
	for range rounds {
		r, err := rawCommitsPG(base, dur)
		if err != nil {
			return err
		}
		raw = append(raw, r)
		s, err := schedCommitsPG(base, dur, clients)
		if err != nil {
			return err
		}
		g = append(g, s)
	}
	line("accepted events/s", "/s", raw, g)
	return nil
}

// rawCommitsPG copies journal rows into the table 100 to a commit for d,
// each commit one COPY, and returns the rows per second. (COPY was the
// fastest of the ways to send 100 rows on the machine of BENCHMARKS.md:
// one INSERT of unnest arrays or of 100 VALUES rows was 3-8 % slower, and a
// pipeline of 100 single-row INSERTs 40 % slower.)
func rawCommitsPG(base string, d time.Duration) (float64, error) {
	db, drop, err := freshDB(base)
	if err != nil {
		return 0, err
	}
	defer drop()
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, db.WithParam("pool_max_conns", "1"))
	if err != nil {
		return 0, err
	}
	defer pool.Close()
	if _, err := pool.Exec(ctx, bench.JournalTable); err != nil {
		return 0, err
	}
	const per = 100
	seq, at, kind, body := make([]int64, per), make([]int64, per), make([]string, per), make([]string, per)
	n := 0
	start := time.Now()
	for time.Since(start) < d {
		for i := range per {
			seq[i], at[i], kind[i], body[i] = int64(n+1), time.Now().UnixNano(), "data", string(bench.JournalBody(int64(n), 3))
			n++
		}
		rows := pgx.CopyFromSlice(per, func(i int) ([]any, error) { return []any{seq[i], at[i], kind[i], body[i]}, nil })
		if _, err := pool.CopyFrom(ctx, pgx.Identifier{"journal"}, []string{"seq", "at", "kind", "body"}, rows); err != nil {
			return 0, err
		}
	}
	return float64(n) / time.Since(start).Seconds(), nil
}

// schedCommitsPG is schedCommits on the PostgreSQL store.
func schedCommitsPG(base string, d time.Duration, clients int) (float64, error) {
	db, drop, err := freshDB(base)
	if err != nil {
		return 0, err
	}
	defer drop()
	dir, err := os.MkdirTemp("", "gnomon-bench-sched-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	st, err := postgres.Open(context.Background(), db.URL)
	if err != nil {
		return 0, err
	}
	defer st.Close()
	if profiling != nil {
		pprof.StartCPUProfile(profiling)
		defer pprof.StopCPUProfile()
	}
	return bench.SchedulerPosts(st, dir, d, clients)
}
