package bench

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/gnomon-sched/gnomon/engine"
	"github.com/gnomon-sched/gnomon/eventdep"
)

// PGBase returns the URL of the maintenance database of the PostgreSQL
// server the benchmarks use: GNOMON_BENCH_PG, else the server on
// 127.0.0.1:5432 as user postgres.
func PGBase() string {
	if u := os.Getenv("GNOMON_BENCH_PG"); u != "" {
		return u
	}
	return "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
}

// Database is a database a benchmark created for itself on a PostgreSQL
// server, and drops when it is done.
type Database struct {
	Name string
	URL  string // of the database itself, with base's parameters
	base string
}

// CreateDatabase creates an empty database with a name of its own
// (gnomon_bench_ and random hex) on the server of base, the URL of a
// database there to connect to. It touches nothing else on the server.
func CreateDatabase(ctx context.Context, base string) (*Database, error) {
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		return nil, fmt.Errorf("create database: %w", err)
	}
	defer conn.Close(context.Background())
	var b [6]byte
	rand.Read(b[:])
	name := "gnomon_bench_" + hex.EncodeToString(b[:])
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		return nil, fmt.Errorf("create database %s: %w", name, err)
	}
	u, err := url.Parse(base)
	if err != nil {
		return nil, fmt.Errorf("create database: %w", err)
	}
	u.Path = "/" + name
	return &Database{Name: name, URL: u.String(), base: base}, nil
}

// Drop drops the database, ending the sessions still connected to it.
func (d *Database) Drop() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, d.base)
	if err != nil {
		return fmt.Errorf("drop database %s: %w", d.Name, err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+d.Name+" WITH (FORCE)"); err != nil {
		return fmt.Errorf("drop database %s: %w", d.Name, err)
	}
	return nil
}

// WithParam returns the database's URL with one more query parameter
// (pgx's pool_max_conns, for one).
func (d *Database) WithParam(key, value string) string {
	u, err := url.Parse(d.URL)
	if err != nil {
		return d.URL
	}
	q := u.Query()
	q.Set(key, value)
	u.RawQuery = q.Encode()
	return u.String()
}

// JournalTable is the table the PostgreSQL baselines write: gnomon's own
// journal table (store/postgres, migration 1).
const JournalTable = `CREATE TABLE IF NOT EXISTS journal (
	seq  BIGINT PRIMARY KEY,
	at   BIGINT NOT NULL,
	kind TEXT   NOT NULL,
	body TEXT   NOT NULL
)`

// insertJournal inserts whole columns of journal rows in one statement.
const insertJournal = `INSERT INTO journal (seq, at, kind, body) SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::text[])`

// journalEntry is what gnomon's journal holds for a data event: the
// event and when it was received (as JournalBody).
func journalEntry(ev eventdep.Event, received time.Time) ([]byte, error) {
	return json.Marshal(struct {
		engine.Data
		Received time.Time `json:"received"`
	}{engine.Data{Type: ev.Type, Resource: ev.Resource, At: ev.At}, received.UTC()})
}

// pgRequest is one accepted event waiting for its group's commit.
type pgRequest struct {
	at   int64
	body []byte
	done chan error
}

// groupCommitter writes the events handed to it into the journal table, one
// transaction per group: the events that arrived while the commit before
// was being written. It is the only writer of its table.
type groupCommitter struct {
	pool *pgxpool.Pool
	reqs chan *pgRequest
	stop chan struct{}
	seq  int64
}

func (g *groupCommitter) run() {
	defer close(g.stop)
	var batch []*pgRequest
	for r := range g.reqs {
		batch = append(batch[:0], r)
	more:
		for {
			select {
			case r, ok := <-g.reqs:
				if !ok {
					break more
				}
				batch = append(batch, r)
			default:
				break more
			}
		}
		err := g.commit(batch)
		for _, r := range batch {
			r.done <- err
		}
	}
}

// commit writes a group in one statement, its own transaction, which
// returns once PostgreSQL has flushed the commit (synchronous_commit).
func (g *groupCommitter) commit(batch []*pgRequest) error {
	n := len(batch)
	seq, at, kind, body := make([]int64, n), make([]int64, n), make([]string, n), make([]string, n)
	for i, r := range batch {
		seq[i], at[i], kind[i], body[i] = g.seq+int64(i)+1, r.at, "data", string(r.body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := g.pool.Exec(ctx, insertJournal, seq, at, kind, body); err != nil {
		return err
	}
	g.seq += int64(n)
	return nil
}

// StartNoopPG starts the PostgreSQL baseline on addr: the handler of
// StartNoop, which also writes each event's journal entry into the table
// JournalTable of the database at dbURL (created if missing) and answers
// only once the entry is committed. Concurrent requests share commits: one
// writer commits, in one statement, every entry that arrived during its
// previous commit.
func StartNoopPG(addr, dbURL string) (*NoopServer, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pool, err := pgxpool.New(ctx, dbURL)
	if err != nil {
		return nil, err
	}
	if _, err := pool.Exec(ctx, JournalTable); err != nil {
		pool.Close()
		return nil, err
	}
	var last int64
	if err := pool.QueryRow(ctx, `SELECT coalesce(max(seq), 0) FROM journal`).Scan(&last); err != nil {
		pool.Close()
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		pool.Close()
		return nil, err
	}
	g := &groupCommitter{pool: pool, reqs: make(chan *pgRequest, 1024), stop: make(chan struct{}), seq: last}
	go g.run()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		received := time.Now()
		var buf bytes.Buffer
		buf.ReadFrom(http.MaxBytesReader(w, r.Body, 1<<20))
		ev, err := eventdep.DecodeEvent(buf.Bytes())
		if err != nil {
			w.WriteHeader(http.StatusUnprocessableEntity)
			return
		}
		entry, err := journalEntry(ev, received)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		req := &pgRequest{at: received.UnixNano(), body: entry, done: make(chan error, 1)}
		g.reqs <- req
		if err := <-req.done; err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusAccepted)
		json.NewEncoder(w).Encode(map[string]any{"triggered": []string{}, "validated": []map[string]string{
			{"configuration": "C", "type": string(ev.Type), "resourceId": ev.Resource}}})
	})
	s := &NoopServer{URL: "http://" + ln.Addr().String() + "/events", srv: &http.Server{Handler: h}}
	s.done = func() {
		close(g.reqs) // no handler is left to send
		<-g.stop
		pool.Close()
	}
	go s.srv.Serve(ln)
	return s, nil
}

// BackendCPU returns the CPU time (user and system) that the server
// processes of the sessions connected to the database name have used, read
// from /proc: it works when the PostgreSQL server runs on this machine,
// and is 0 otherwise. conn is a session on another database of the server.
func BackendCPU(ctx context.Context, conn *pgx.Conn, name string) (time.Duration, error) {
	rows, err := conn.Query(ctx, `SELECT pid FROM pg_stat_activity WHERE datname = $1`, name)
	if err != nil {
		return 0, err
	}
	pids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		return 0, err
	}
	var total time.Duration
	for _, pid := range pids {
		total += ProcessCPU(int(pid))
	}
	return total, nil
}

// ProcessCPU reads the user and system CPU time a process has used, 0 if
// it cannot.
func ProcessCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// Fields after the command name, which is in parentheses.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	s, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+s) * time.Second / 100 // clock ticks at USER_HZ = 100
}

// ReachPG reports whether the server of base answers within a few
// seconds, and if not why.
func ReachPG(base string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		return err
	}
	return conn.Close(ctx)
}
