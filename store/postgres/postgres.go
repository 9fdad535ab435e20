// Package postgres is gnomon's store on PostgreSQL, through pgx and its
// pool: the same contract and the same conformance suite as the embedded
// SQLite store, and the same rows, so that gnomon migrate copies one into
// the other.
//
// # Schema
//
// Open applies the embedded migrations (migrations/*.sql) with goose,
// holding goose's PostgreSQL session lock, so that servers starting
// together on one database do not race. The schema mirrors SQLite's:
// instants are unix nanoseconds in BIGINT and JSON documents are TEXT, kept
// byte for byte.
//
// # Commits
//
// Commit sends a whole batch in one round trip: BEGIN, a lock on the row
// last_commit, one statement per kind of row (arrays through unnest, so a
// group commit of a thousand entries is still one INSERT), and COMMIT.
// The journal, alerts, audit trail and node logs are numbered in the
// transaction, one more than the highest stored, so the numbers have no
// gaps, as in SQLite; the row lock orders two writers on one database. It
// is a row lock, not an advisory lock, as everything the cluster
// coordinates by (leases, claims), so that a Postgres-compatible engine
// without advisory locks can serve; goose's migration lock at start is
// the one advisory lock.
//
// Every commit also writes a token of its own, with the numbers it
// reached, in the row last_commit. When the connection is lost before
// COMMIT's answer arrives, Commit ends the session that carried it and
// reads the row back: the token is its own when the batch landed, and the
// numbers it holds give the entries their Seq. Otherwise the batch did not
// land and Commit says so with store.ErrUnavailable, which the scheduler
// retries. When the database does not answer within two seconds, the
// commit is in doubt: Commit returns store.ErrUnavailable at once, so that
// the scheduler refuses requests rather than holding them, and keeps the
// commit; the next Commit reads the token first, and reports the retried
// batch committed if the first attempt landed.
//
// # Fencing
//
// A cluster's director fences its store (Fence) with the epoch at which
// it holds the cluster's assignment lease: each of its commits then reads
// the lease row FOR SHARE right after the commit lock (migration 00011's
// gnomon_fence) and is refused with store.ErrFenced once another director
// took the lease, writing nothing. A director taking the lease over waits
// for a commit in flight, so every commit is before the takeover or
// refused. A store that is not fenced sends no check.
//
// # Connection URL
//
// Open takes a libpq-style URL, postgres://USER[:PASSWORD]@HOST:PORT/DB,
// with pgx's parameters (sslmode, pool_max_conns, ...). Behind a pooler in
// transaction mode, add default_query_exec_mode=exec: statements are
// otherwise prepared once per connection.
package postgres

import (
	"context"
	"database/sql"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"

	"github.com/gnomon-sched/gnomon/store"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Store is a store.Store on a PostgreSQL database. It is safe for
// concurrent use; Commit calls are serialised by the caller, as the
// contract says. Close releases its connections.
type Store struct {
	pool   *pgxpool.Pool
	url    string // redacted, for errors
	closed atomic.Bool

	// resolveFor is how long a commit whose answer was lost waits for the
	// database to tell whether it landed; doubt is such a commit the
	// database did not tell in time, settled by the next Commit (which
	// the caller serialises).
	resolveFor time.Duration
	doubt      *commit

	// fence, once set (Fence), is the director and epoch every write
	// checks the assignment lease against.
	fence atomic.Pointer[fence]
}

// fence is the assignment lease a fenced store's writes must find held.
type fence struct {
	node  string
	epoch int64
}

var (
	_ store.Store        = (*Store)(nil)
	_ store.Importer     = (*Store)(nil)
	_ store.CursorLister = (*Store)(nil)
	_ store.Fencer       = (*Store)(nil)
)

// migrateLock is the key of goose's session lock (pg_advisory_lock) while
// it migrates, in the key space of one database.
const migrateLock = 0x676e6f6d6f6e01 // "gnomon" 01

// Open connects to the PostgreSQL database at rawURL (which must exist),
// applies the migrations it lacks and returns the store. Errors name the
// URL without its password.
func Open(ctx context.Context, rawURL string) (*Store, error) { return open(ctx, rawURL, 0) }

// open opens the store with the migrations up to version upTo applied, or
// all of them when upTo is 0 (a store short of the last one only serves
// to build a database of an earlier release: tests).
func open(ctx context.Context, rawURL string, upTo int64) (*Store, error) {
	red := redact(rawURL)
	cfg, err := pgxpool.ParseConfig(rawURL)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", red, err)
	}
	if _, ok := cfg.ConnConfig.RuntimeParams["application_name"]; !ok {
		cfg.ConnConfig.RuntimeParams["application_name"] = "gnomon"
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", red, err)
	}
	s := &Store{pool: pool, url: red, resolveFor: 2 * time.Second}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("open %s: connect: %w", red, err)
	}
	if err := s.migrate(ctx, upTo); err != nil {
		pool.Close()
		return nil, fmt.Errorf("open %s: %w", red, err)
	}
	return s, nil
}

// Fence makes every later write of the journal and the state (Commit,
// SetCursors, RecordAttempt) conditional on node holding the cluster's
// assignment lease (partition -1 of cluster_leases) at epoch: each checks
// it in its own transaction, holding the lease row FOR SHARE until it
// commits, so that a director taking the lease over waits for it, and
// each fails with store.ErrFenced once the lease moved. A cluster's
// director calls it once it took the lease, before its engine commits;
// a store that is not fenced (one server) checks nothing.
func (s *Store) Fence(node string, epoch int64) {
	s.fence.Store(&fence{node: node, epoch: epoch})
}

// FenceStatement is the check of a fenced write (see migration 00011),
// with the director's node and epoch as arguments: it raises an error
// FenceRefused recognizes unless the director holds the cluster's
// assignment lease at that epoch. The director's store and its writes in
// the cluster's tables share it.
const FenceStatement = `SELECT gnomon_fence($1, $2)`

// fencedCode is the SQLSTATE gnomon_fence raises.
const fencedCode = "GNF01"

// FenceRefused reports whether err is, or wraps, FenceStatement's
// refusal.
func FenceRefused(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == fencedCode
}

// fenced returns err as store.ErrFenced when it is gnomon_fence's
// refusal, with the holder it names, and as it is otherwise.
func fenced(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == fencedCode {
		return fmt.Errorf("%w: %s", store.ErrFenced, pe.Message)
	}
	return err
}

// Pool returns the store's connection pool, for the cluster's
// coordination tables, which its migrations create.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// migrate applies the embedded migrations not yet applied, up to version
// upTo (0: all), under goose's session lock: a server that finds the lock
// taken polls it every second, for up to five minutes, and then finds
// nothing left to do. It refuses a database that a later release migrated
// further: a downgrade.
func (s *Store) migrate(ctx context.Context, upTo int64) error {
	db := stdlib.OpenDBFromPool(s.pool) // closing it leaves the pool open
	defer db.Close()
	p, err := migrator(db)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	var stored int64
	err = s.pool.QueryRow(ctx, `SELECT coalesce(max(version_id), 0) FROM goose_db_version WHERE is_applied`).Scan(&stored)
	if err != nil && !isUndefinedTable(err) {
		return fmt.Errorf("migrate: %w", err)
	}
	sources := p.ListSources()
	if err := store.CheckSchema(int(stored), int(sources[len(sources)-1].Version)); err != nil {
		return err
	}
	if upTo != 0 {
		_, err = p.UpTo(ctx, upTo)
	} else {
		_, err = p.Up(ctx)
	}
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	return nil
}

// isUndefinedTable reports whether err is PostgreSQL's error for a table
// that does not exist (a database never migrated).
func isUndefinedTable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "42P01"
}

// migrator returns goose's provider of the embedded migrations on db,
// under the session lock.
func migrator(db *sql.DB) (*goose.Provider, error) {
	locker, err := lock.NewPostgresSessionLocker(lock.WithLockID(migrateLock), lock.WithLockTimeout(1, 300))
	if err != nil {
		return nil, err
	}
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return nil, err
	}
	return goose.NewProvider(goose.DialectPostgres, db, sub, goose.WithSessionLocker(locker), goose.WithDisableGlobalRegistry(true))
}

// redact hides the password of a database URL.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}

// Close releases the connections. Calls after the first do nothing.
func (s *Store) Close() error {
	if s.closed.CompareAndSwap(false, true) {
		s.pool.Close()
	}
	return nil
}

// failed wraps the error of an operation: store.ErrClosed after Close.
func (s *Store) failed(op string, err error) error {
	if s.closed.Load() {
		return fmt.Errorf("%s: %w", op, store.ErrClosed)
	}
	return fmt.Errorf("%s: %w", op, err)
}

func nanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromNanos(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

// text returns a free text (a run's message, a fire's reason, an error)
// as a TEXT column can hold it: PostgreSQL takes neither NUL nor invalid
// UTF-8, which become U+FFFD, as the API's JSON shows them anyway.
func text(s string) string {
	if utf8.ValidString(s) && strings.IndexByte(s, 0) < 0 {
		return s
	}
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}

// dataJSON encodes message data as a column holds it: empty when none.
func dataJSON(d map[string]string) (string, error) {
	if len(d) == 0 {
		return "", nil
	}
	b, err := json.Marshal(d)
	return string(b), err
}

// dataOf decodes the message data of a column.
func dataOf(s string) (map[string]string, error) {
	if s == "" {
		return nil, nil
	}
	var d map[string]string
	err := json.Unmarshal([]byte(s), &d)
	return d, err
}
