// Package sqlite is gnomon's embedded store: one SQLite database file in WAL
// mode with synchronous=FULL, through the pure-Go modernc.org/sqlite driver.
package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"modernc.org/sqlite" // also the database/sql driver "sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/gnomon-sched/gnomon/clock"
	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/store"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Store is a store.Store on one SQLite file. Writes go through a single
// connection; reads use a separate pool and never block writers (WAL).
type Store struct {
	w, r *sql.DB
	path string

	stmts map[string]*sql.Stmt // prepared once on the writer, by query
}

var _ store.Store = (*Store)(nil)

// walCheckpoint is the size of the WAL, in pages, at which the writer
// copies it into the database. A page that many commits change between two
// checkpoints is copied once: with changes spread over a large database (a
// trigger writes a task row, an index entry of its run and its fire, each
// somewhere else), SQLite's default of 1000 pages copied nearly every page
// written, and the commit that ran the checkpoint waited for it. 8000 pages
// (32 MiB of WAL) raised event ingest with 10^6 configurations from 0.46
// to 0.51 of the baseline, and its p99 from 13.5 to 5.5 ms; the commit that
// checkpoints waits longer, so the slowest request does (49 to 68 ms).
const walCheckpoint = 8000

// Open opens (creating if needed) the database at path and applies pending
// migrations. A database it creates is readable by its owner only, and so
// are its -wal and -shm files: SQLite gives them the permissions of the
// database file.
func Open(ctx context.Context, path string) (*Store, error) { return open(ctx, path, 0) }

// open opens the database at path with the migrations up to version upTo
// applied, or all of them when upTo is 0. A store short of the last
// migration only serves to build a database of an earlier release
// (tests): its statements are not prepared.
func open(ctx context.Context, path string, upTo int) (*Store, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	f.Close()
	q := url.Values{}
	for _, p := range []string{"journal_mode(WAL)", "synchronous(FULL)", "busy_timeout(10000)", "foreign_keys(1)"} {
		q.Add("_pragma", p)
	}
	dsn := "file:" + path + "?" + q.Encode()
	// The writer checkpoints the WAL into the database when it holds
	// walCheckpoint pages, in the commit that crosses it.
	w, err := sql.Open("sqlite", dsn+"&_txlock=immediate&"+url.Values{"_pragma": {fmt.Sprintf("wal_autocheckpoint(%d)", walCheckpoint)}}.Encode())
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	r, err := sql.Open("sqlite", dsn+"&"+url.Values{"_pragma": {"query_only(1)"}}.Encode())
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	r.SetMaxOpenConns(4)
	s := &Store{w: w, r: r, path: path}
	if err := s.autoVacuum(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if err := s.migrate(ctx, upTo); err != nil {
		s.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if upTo != 0 {
		return s, nil
	}
	if err := s.prepareAll(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return s, nil
}

// autoVacuum has a database being created give back the pages pruning
// frees (store.Pruner), a few at a time (incremental_vacuum): the mode can
// only be set before the first table is. A database created before keeps
// its free pages and reuses them; VACUUM, with the server stopped, turns
// the mode on (docs/operations.md).
func (s *Store) autoVacuum(ctx context.Context) error {
	var n int
	if err := s.w.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master`).Scan(&n); err != nil || n > 0 {
		return err
	}
	_, err := s.w.ExecContext(ctx, `PRAGMA auto_vacuum = INCREMENTAL`)
	return err
}

// migrate applies the embedded migrations not yet recorded, up to version
// upTo (0: all), each in its own transaction, in version order. It
// refuses a database that a later release migrated further: a downgrade.
func (s *Store) migrate(ctx context.Context, upTo int) error {
	if _, err := s.w.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)`); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	files, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return err
	}
	slices.Sort(files)
	versions := make([]int, len(files))
	for i, f := range files {
		if versions[i], err = strconv.Atoi(strings.SplitN(strings.TrimPrefix(f, "migrations/"), "_", 2)[0]); err != nil {
			return fmt.Errorf("migrate: bad file name %s", f)
		}
	}
	var stored int
	if err := s.w.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&stored); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if err := store.CheckSchema(stored, versions[len(versions)-1]); err != nil {
		return err
	}
	for i, f := range files {
		base, v := strings.TrimPrefix(f, "migrations/"), versions[i]
		if upTo != 0 && v > upTo {
			break
		}
		var n int
		if err := s.w.QueryRowContext(ctx, `SELECT count(*) FROM schema_migrations WHERE version = ?`, v).Scan(&n); err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		if n > 0 {
			continue
		}
		body, err := migrations.ReadFile(f)
		if err != nil {
			return err
		}
		tx, err := s.w.BeginTx(ctx, nil)
		if err != nil {
			return fmt.Errorf("migrate %s: %w", base, err)
		}
		if _, err := tx.ExecContext(ctx, string(body)); err != nil {
			tx.Rollback()
			return fmt.Errorf("migrate %s: %w", base, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)`, v, clock.Wall.Now().UnixNano()); err != nil { // the database's own history, in real time
			tx.Rollback()
			return fmt.Errorf("migrate %s: %w", base, err)
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("migrate %s: %w", base, err)
		}
	}
	return nil
}

// Close closes both connection pools.
func (s *Store) Close() error {
	for _, st := range s.stmts {
		st.Close()
	}
	return errors.Join(s.w.Close(), s.r.Close())
}

// Path returns the path of the database file, as Open was given it.
func (s *Store) Path() string { return s.path }

// prepare returns a statement of the writer, prepared once when the store
// opened, for use in tx.
func (s *Store) prepare(ctx context.Context, tx *sql.Tx, query string) (*sql.Stmt, error) {
	st, ok := s.stmts[query]
	if !ok {
		// Not one of the statements prepared at open: the writer's only
		// connection is the transaction's, so prepare it there.
		return tx.PrepareContext(ctx, query)
	}
	return tx.StmtContext(ctx, st), nil
}

// Statements of the commit path, prepared when the store opens.
const (
	insJournal = `INSERT INTO journal (at, kind, body) VALUES (?, ?, ?)`
	upsTask    = `INSERT INTO tasks (name, type, parent, status, def, state) VALUES (?, ?, ?, ?, ?, ?)
			ON CONFLICT (name) DO UPDATE SET type = excluded.type, parent = excluded.parent, status = excluded.status,
			def = excluded.def, state = excluded.state`
	updState = `UPDATE tasks SET status = ?, state = ? WHERE name = ?`
	upsRun   = `INSERT INTO runs (id, task, status, start_at, end_at, exit_code, result, message, bundle_run, trigger, scheduled, data,
			timeperiod, outcome, started_by, ended_by, attempt, retry_of, log_span, params)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (id) DO UPDATE SET status = excluded.status, end_at = excluded.end_at, exit_code = excluded.exit_code,
			result = excluded.result, message = excluded.message, bundle_run = excluded.bundle_run, data = excluded.data,
			outcome = excluded.outcome, ended_by = excluded.ended_by, log_span = excluded.log_span`
	// insFire keeps the first fate of an occurrence, but for a backfill
	// of a missed or skipped one (job.Fire.Supersedes).
	insFire = `INSERT INTO fires (task, scheduled, fate, reason, at, run) VALUES (?, ?, ?, ?, ?, ?)
			ON CONFLICT (task, scheduled) DO UPDATE SET fate = excluded.fate, reason = excluded.reason, at = excluded.at, run = excluded.run
			WHERE excluded.fate = 'backfilled' AND fires.fate IN ('missed', 'skipped')`
	// linkFire records the run an occurrence started in its fire: the
	// first run of the task with that occurrence (runs of one batch come
	// in no particular order).
	linkFire = `UPDATE fires SET run = ?1 WHERE task = ?2 AND scheduled = ?3 AND fate = 'ran' AND (run = 0 OR run > ?1)`
	insPart  = `INSERT INTO checkpoint_parts (gen, body) VALUES (?, ?)`
	insAlert = `INSERT INTO alerts (task, created, state, next_at, doc) VALUES (?, ?, ?, ?, ?)`
	insAudit = `INSERT INTO audit (task, run, launch, stop, result, status, message, data, started_by, ended_by)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
)

func (s *Store) prepareAll(ctx context.Context) error {
	s.stmts = map[string]*sql.Stmt{}
	for _, q := range []string{insJournal, upsTask, updState, upsRun, insFire, linkFire, insPart, insAlert, insAudit} {
		st, err := s.w.PrepareContext(ctx, q)
		if err != nil {
			return err
		}
		s.stmts[q] = st
	}
	return nil
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

// unavailable marks the errors after which the same commit may succeed
// later: a full disk, a read-only file, an I/O error, a lock held too long.
// A failed commit of SQLite writes nothing, so none is ambiguous.
func unavailable(err error) error {
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_FULL, sqlite3.SQLITE_READONLY, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_BUSY, sqlite3.SQLITE_CANTOPEN:
			return fmt.Errorf("%w: %w", store.ErrUnavailable, err)
		}
	}
	return err
}

// Commit writes the batch in one IMMEDIATE transaction.
func (s *Store) Commit(ctx context.Context, b *store.Batch) (err error) {
	if b.Empty() {
		return nil
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	defer func() {
		if err != nil {
			tx.Rollback()
			err = fmt.Errorf("commit: %w", unavailable(err))
		}
	}()
	if len(b.Entries) > 0 {
		st, err := s.prepare(ctx, tx, insJournal)
		if err != nil {
			return err
		}
		defer st.Close()
		for i := range b.Entries {
			e := &b.Entries[i]
			if !json.Valid(e.Body) {
				return fmt.Errorf("journal entry %d (%s): body is not JSON", i, e.Kind)
			}
			res, err := st.ExecContext(ctx, nanos(e.At), e.Kind, string(e.Body))
			if err != nil {
				return err
			}
			if e.Seq, err = res.LastInsertId(); err != nil {
				return err
			}
		}
	}
	for _, name := range b.Deleted {
		if _, err := tx.ExecContext(ctx, `DELETE FROM tasks WHERE name = ?`, name); err != nil {
			return err
		}
	}
	if len(b.Tasks) > 0 {
		st, err := s.prepare(ctx, tx, upsTask)
		if err != nil {
			return err
		}
		defer st.Close()
		for _, t := range b.Tasks {
			def, err := store.EncodeDef(t.Def)
			if err != nil {
				return err
			}
			state, err := store.EncodeState(&t.State)
			if err != nil {
				return err
			}
			if _, err := st.ExecContext(ctx, t.Def.Name, string(t.Def.Type), t.Def.Parent, t.State.Status.String(), string(def), string(state)); err != nil {
				return err
			}
		}
	}
	if len(b.States) > 0 {
		st, err := s.prepare(ctx, tx, updState)
		if err != nil {
			return err
		}
		defer st.Close()
		for _, t := range b.States {
			state, err := store.EncodeState(&t.State)
			if err != nil {
				return err
			}
			res, err := st.ExecContext(ctx, t.State.Status.String(), string(state), t.Name)
			if err != nil {
				return err
			}
			if n, err := res.RowsAffected(); err != nil {
				return err
			} else if n != 1 {
				return fmt.Errorf("state of task %s: the task is not stored", t.Name)
			}
		}
	}
	// Fires before runs: a run links itself to the fire of its
	// occurrence, which may be in the same batch.
	if len(b.Fires) > 0 {
		st, err := s.prepare(ctx, tx, insFire)
		if err != nil {
			return err
		}
		defer st.Close()
		for _, f := range b.Fires {
			if _, err := st.ExecContext(ctx, f.Task, nanos(f.Scheduled), string(f.Fate), f.Reason, nanos(f.At), f.RunID); err != nil {
				return err
			}
		}
	}
	if len(b.Runs) > 0 {
		st, err := s.prepare(ctx, tx, upsRun)
		if err != nil {
			return err
		}
		defer st.Close()
		link, err := s.prepare(ctx, tx, linkFire)
		if err != nil {
			return err
		}
		defer link.Close()
		for _, r := range b.Runs {
			data, err := dataJSON(r.Data)
			if err != nil {
				return err
			}
			if _, err := st.ExecContext(ctx, r.ID, r.Task, r.Status.String(), nanos(r.Start), nanos(r.End), r.ExitCode,
				string(r.Result), r.Message, r.BundleRun, r.Trigger, nanos(r.Scheduled), data, r.Timeperiod, r.Outcome, r.By, r.EndedBy,
				r.Attempt, r.RetryOf, store.EncodeLogSpan(r.Log), store.EncodeParams(r.Params)); err != nil {
				return err
			}
			if !r.Scheduled.IsZero() {
				if _, err := link.ExecContext(ctx, r.ID, r.Task, nanos(r.Scheduled)); err != nil {
					return err
				}
			}
		}
	}
	if err := s.commitCheckpoint(ctx, tx, b.Checkpoint); err != nil {
		return err
	}
	if err := s.commitNotices(ctx, tx, b); err != nil {
		return err
	}
	if err := s.commitTrees(ctx, tx, b.Trees); err != nil {
		return err
	}
	if err := s.commitCalendars(ctx, tx, b); err != nil {
		return err
	}
	return tx.Commit()
}

// commitCheckpoint writes part of a checkpoint, as one row.
func (s *Store) commitCheckpoint(ctx context.Context, tx *sql.Tx, c *store.Checkpoint) error {
	if c == nil {
		return nil
	}
	if len(c.Rows) > 0 {
		ins, err := s.prepare(ctx, tx, insPart)
		if err != nil {
			return err
		}
		if _, err := ins.ExecContext(ctx, c.Gen, string(store.AppendCheckpointPart(nil, c.Rows))); err != nil {
			return err
		}
	}
	if !c.Done {
		return nil
	}
	if _, err := tx.ExecContext(ctx, `UPDATE checkpoint SET gen = ?, seq = ? WHERE id = 1`, c.Gen, c.Seq); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `DELETE FROM checkpoint_parts WHERE gen < ?`, c.Gen)
	return err
}

// Fires returns recorded occurrences, newest first.
func (s *Store) Fires(ctx context.Context, q store.FireQuery) ([]job.Fire, error) {
	query := `SELECT f.task, f.scheduled, f.fate, f.reason, f.at, f.run FROM fires f WHERE true`
	var args []any
	if q.Task != "" {
		query += ` AND f.task = ?`
		args = append(args, q.Task)
	}
	if !q.From.IsZero() {
		query += ` AND f.scheduled >= ?`
		args = append(args, q.From.UnixNano())
	}
	if !q.To.IsZero() {
		query += ` AND f.scheduled < ?`
		args = append(args, q.To.UnixNano())
	}
	query += ` ORDER BY f.scheduled DESC, f.task`
	if q.Limit > 0 {
		query += ` LIMIT ?`
		args = append(args, q.Limit)
	}
	rows, err := s.r.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("fires: %w", err)
	}
	defer rows.Close()
	var out []job.Fire
	for rows.Next() {
		var (
			f             job.Fire
			fate          string
			scheduled, at int64
		)
		if err := rows.Scan(&f.Task, &scheduled, &fate, &f.Reason, &at, &f.RunID); err != nil {
			return nil, fmt.Errorf("fires: %w", err)
		}
		f.Fate, f.Scheduled, f.At = job.Fate(fate), fromNanos(scheduled), fromNanos(at)
		out = append(out, f)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("fires: %w", err)
	}
	return out, nil
}

// Load reads every task and the runs still running.
func (s *Store) Load(ctx context.Context) (*store.Snapshot, error) {
	snap := &store.Snapshot{}
	var err error
	if snap.Tasks, err = s.loadTasks(ctx); err != nil {
		return nil, err
	}
	active, err := s.queryRuns(ctx, s.w, `SELECT `+runColumns+` FROM runs WHERE status = 'running' ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("load runs: %w", err)
	}
	for i := range active {
		snap.Active = append(snap.Active, &active[i])
	}
	if err := s.w.QueryRowContext(ctx, `SELECT coalesce(max(id), 0) FROM runs`).Scan(&snap.LastRun); err != nil {
		return nil, fmt.Errorf("load runs: %w", err)
	}
	if err := s.loadWindows(ctx, snap); err != nil {
		return nil, fmt.Errorf("load checkpoint: %w", err)
	}
	if err := s.loadTrees(ctx, &snap.Trees); err != nil {
		return nil, fmt.Errorf("load trees: %w", err)
	}
	if snap.Calendars, err = s.loadCalendars(ctx); err != nil {
		return nil, fmt.Errorf("load calendars: %w", err)
	}
	return snap, nil
}

// loadTasks reads every task in table order (no index lookups) and
// decodes them with a store.TaskDecoder.
func (s *Store) loadTasks(ctx context.Context) ([]job.Record, error) {
	var n int
	if err := s.w.QueryRowContext(ctx, `SELECT count(*) FROM tasks`).Scan(&n); err != nil {
		return nil, fmt.Errorf("load tasks: %w", err)
	}
	d := store.NewTaskDecoder(n)
	err := func() error {
		rows, err := s.w.QueryContext(ctx, `SELECT def, state FROM tasks`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var def, state []byte
			if err := rows.Scan(&def, &state); err != nil {
				return err
			}
			if err := d.Add(def, state); err != nil {
				return err
			}
		}
		return rows.Err()
	}()
	recs, derr := d.Wait()
	if err = errors.Join(err, derr); err != nil {
		return nil, fmt.Errorf("load tasks: %w", err)
	}
	return recs, nil
}

const runColumns = `id, task, status, start_at, end_at, exit_code, result, message, bundle_run, trigger, scheduled, data, timeperiod, outcome,
	started_by, ended_by, attempt, retry_of, log_span, params`

type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func (s *Store) queryRuns(ctx context.Context, db querier, query string, args ...any) ([]job.Run, error) {
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []job.Run
	for rows.Next() {
		var (
			r                     job.Run
			status, result        string
			start, end, scheduled int64
			data, span, params    string
		)
		if err := rows.Scan(&r.ID, &r.Task, &status, &start, &end, &r.ExitCode, &result, &r.Message, &r.BundleRun, &r.Trigger, &scheduled, &data,
			&r.Timeperiod, &r.Outcome, &r.By, &r.EndedBy, &r.Attempt, &r.RetryOf, &span, &params); err != nil {
			return nil, err
		}
		if r.Params, err = store.DecodeParams(params); err != nil {
			return nil, fmt.Errorf("run %d: %w", r.ID, err)
		}
		if r.Log, err = store.DecodeLogSpan(span); err != nil {
			return nil, fmt.Errorf("run %d: %w", r.ID, err)
		}
		if data != "" {
			if err := json.Unmarshal([]byte(data), &r.Data); err != nil {
				return nil, fmt.Errorf("run %d: data: %w", r.ID, err)
			}
		}
		if r.Status, err = job.ParseStatus(status); err != nil {
			return nil, err
		}
		r.Result = job.Result(result)
		r.Start, r.End, r.Scheduled = fromNanos(start), fromNanos(end), fromNanos(scheduled)
		out = append(out, r)
	}
	return out, rows.Err()
}

// Runs returns run history, newest first.
func (s *Store) Runs(ctx context.Context, q store.RunQuery) ([]job.Run, error) {
	query := `SELECT ` + runColumns + ` FROM runs WHERE true`
	var args []any
	if q.Task != "" {
		query += ` AND task = ?`
		args = append(args, q.Task)
	}
	if q.BundleRun != 0 {
		// bundle_run != 0 lets the partial index runs_bundle serve it.
		query += ` AND bundle_run = ? AND bundle_run != 0`
		args = append(args, q.BundleRun)
	}
	if q.Done {
		query += ` AND status != 'running'`
	}
	if q.Before > 0 {
		query += ` AND id < ?`
		args = append(args, q.Before)
	}
	if !q.From.IsZero() {
		query += ` AND start_at >= ?`
		args = append(args, q.From.UnixNano())
	}
	if !q.To.IsZero() {
		query += ` AND start_at < ?`
		args = append(args, q.To.UnixNano())
	}
	query += ` ORDER BY id DESC`
	if q.Limit > 0 {
		query += ` LIMIT ?`
		args = append(args, q.Limit)
	}
	runs, err := s.queryRuns(ctx, s.r, query, args...)
	if err != nil {
		return nil, fmt.Errorf("runs of %s: %w", q.Task, err)
	}
	return runs, nil
}

// JournalBefore returns entries of one kind (or of every kind) before a
// sequence number, newest first.
func (s *Store) JournalBefore(ctx context.Context, kind string, before int64, limit int) ([]store.Entry, error) {
	if limit <= 0 {
		limit = 1000
	}
	if before <= 0 {
		before = math.MaxInt64
	}
	query, args := `SELECT seq, at, kind, body FROM journal WHERE seq < ? AND kind = ? ORDER BY seq DESC LIMIT ?`, []any{before, kind, limit}
	if kind == "" {
		query, args = `SELECT seq, at, kind, body FROM journal WHERE seq < ? ORDER BY seq DESC LIMIT ?`, []any{before, limit}
	}
	rows, err := s.r.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	return scanEntries(rows)
}

func scanEntries(rows *sql.Rows) ([]store.Entry, error) {
	defer rows.Close()
	var out []store.Entry
	for rows.Next() {
		var (
			e    store.Entry
			at   int64
			body string
		)
		if err := rows.Scan(&e.Seq, &at, &e.Kind, &body); err != nil {
			return nil, fmt.Errorf("journal: %w", err)
		}
		e.At, e.Body = fromNanos(at), json.RawMessage(body)
		out = append(out, e)
	}
	return out, rows.Err()
}

// Journal returns entries after a sequence number, oldest first.
func (s *Store) Journal(ctx context.Context, after int64, limit int) ([]store.Entry, error) {
	if limit <= 0 {
		limit = 1000
	}
	rows, err := s.r.QueryContext(ctx, `SELECT seq, at, kind, body FROM journal WHERE seq > ? ORDER BY seq LIMIT ?`, after, limit)
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	return scanEntries(rows)
}

// loadWindows reads the current checkpoint, after deleting the parts of a
// checkpoint that a stop interrupted.
func (s *Store) loadWindows(ctx context.Context, snap *store.Snapshot) error {
	if err := s.w.QueryRowContext(ctx, `SELECT gen, seq FROM checkpoint WHERE id = 1`).Scan(&snap.WindowsGen, &snap.WindowsSeq); err != nil {
		return err
	}
	if _, err := s.w.ExecContext(ctx, `DELETE FROM checkpoint_parts WHERE gen != ?`, snap.WindowsGen); err != nil {
		return err
	}
	rows, err := s.w.QueryContext(ctx, `SELECT id, body FROM checkpoint_parts WHERE gen = ? ORDER BY id`, snap.WindowsGen)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			id   int64
			body []byte
			err  error
		)
		if err := rows.Scan(&id, &body); err != nil {
			return err
		}
		if snap.Windows, err = store.DecodeCheckpointPart(snap.Windows, body); err != nil {
			return fmt.Errorf("checkpoint part %d: %w", id, err)
		}
	}
	return rows.Err()
}
