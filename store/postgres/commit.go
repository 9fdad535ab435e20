package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/store"
)

// Statements of a commit, each taking whole columns as arrays. Rows that
// one batch writes twice were merged before (see newCommit), so that one
// statement writes what a statement per row would have, in order.
const (
	// lockCommit orders commits: it locks the row every commit writes
	// (last_commit) before anything is numbered. A row lock, not an
	// advisory one, so that Postgres-compatible engines without advisory
	// locks serve as well.
	lockCommit = `SELECT 1 FROM last_commit WHERE id = 1 FOR UPDATE`
	// The journal numbers its entries from one more than the highest
	// stored; the statement returns the highest before them.
	insJournal = `WITH base AS (SELECT coalesce(max(seq), 0) AS seq FROM journal),
		ins AS (INSERT INTO journal (seq, at, kind, body)
			SELECT base.seq + e.n, e.at, e.kind, e.body
			FROM base, unnest($1::bigint[], $2::text[], $3::text[]) WITH ORDINALITY AS e (at, kind, body, n))
		SELECT seq FROM base`
	delTasks = `DELETE FROM tasks WHERE name = ANY($1::text[])`
	upsTasks = `INSERT INTO tasks (name, type, parent, status, def, state)
		SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[])
		ON CONFLICT (name) DO UPDATE SET type = excluded.type, parent = excluded.parent, status = excluded.status,
			def = excluded.def, state = excluded.state`
	// updStates refuses the batch when a task is not stored.
	updStates = `WITH v AS (SELECT * FROM unnest($1::text[], $2::text[], $3::text[]) AS v (name, status, state)),
		u AS (UPDATE tasks t SET status = v.status, state = v.state FROM v WHERE t.name = v.name RETURNING t.name)
		SELECT gnomon_refuse('state of task ' || v.name || ': the task is not stored') FROM v WHERE v.name NOT IN (SELECT name FROM u)`
	// insFires keeps the first fate of an occurrence, but for a backfill
	// of a missed or skipped one (job.Fire.Supersedes).
	insFires = `INSERT INTO fires (task, scheduled, fate, reason, at, run)
		SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::bigint[], $6::bigint[])
		ON CONFLICT (task, scheduled) DO UPDATE SET fate = excluded.fate, reason = excluded.reason, at = excluded.at, run = excluded.run
		WHERE excluded.fate = 'backfilled' AND fires.fate IN ('missed', 'skipped')`
	upsRuns = `INSERT INTO runs (id, task, status, start_at, end_at, exit_code, result, message, bundle_run, trigger, scheduled, data,
			timeperiod, outcome, started_by, ended_by, attempt, retry_of, log_span, params)
		SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::bigint[], $5::bigint[], $6::bigint[], $7::text[], $8::text[],
			$9::bigint[], $10::text[], $11::bigint[], $12::text[], $13::text[], $14::text[], $15::text[], $16::text[], $17::integer[],
			$18::bigint[], $19::text[], $20::text[])
		ON CONFLICT (id) DO UPDATE SET status = excluded.status, end_at = excluded.end_at, exit_code = excluded.exit_code,
			result = excluded.result, message = excluded.message, bundle_run = excluded.bundle_run, data = excluded.data,
			outcome = excluded.outcome, ended_by = excluded.ended_by, log_span = excluded.log_span`
	// linkFires records in the fire of an occurrence that ran the first
	// run of the task with that occurrence.
	linkFires = `UPDATE fires f SET run = r.id
		FROM (SELECT task, scheduled, min(id) AS id FROM unnest($1::bigint[], $2::text[], $3::bigint[]) AS r (id, task, scheduled)
			GROUP BY task, scheduled) r
		WHERE f.task = r.task AND f.scheduled = r.scheduled AND f.fate = 'ran' AND (f.run = 0 OR f.run > r.id)`
	insPart     = `INSERT INTO checkpoint_parts (gen, body) VALUES ($1, $2)`
	setCkpt     = `UPDATE checkpoint SET gen = $1, seq = $2 WHERE id = 1`
	delOldParts = `DELETE FROM checkpoint_parts WHERE gen < $1`
	insAlerts   = `WITH base AS (SELECT coalesce(max(id), 0) AS id FROM alerts),
		ins AS (INSERT INTO alerts (id, task, created, state, next_at, doc)
			SELECT base.id + a.n, a.task, a.created, a.state, a.next_at, a.doc
			FROM base, unnest($1::text[], $2::bigint[], $3::text[], $4::bigint[], $5::text[]) WITH ORDINALITY AS a (task, created, state, next_at, doc, n))
		SELECT id FROM base`
	insAudit = `WITH base AS (SELECT coalesce(max(seq), 0) AS seq FROM audit),
		ins AS (INSERT INTO audit (seq, task, run, launch, stop, result, status, message, data, started_by, ended_by)
			SELECT base.seq + a.n, a.task, a.run, a.launch, a.stop, a.result, a.status, a.message, a.data, a.started_by, a.ended_by
			FROM base, unnest($1::text[], $2::bigint[], $3::bigint[], $4::bigint[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[],
				$10::text[])
				WITH ORDINALITY AS a (task, run, launch, stop, result, status, message, data, started_by, ended_by, n))
		SELECT seq FROM base`
	delTreeFiles = `DELETE FROM tree_files WHERE name = ANY($1::text[])`
	upsTreeFiles = `INSERT INTO tree_files (name, text) SELECT * FROM unnest($1::text[], $2::text[])
		ON CONFLICT (name) DO UPDATE SET text = excluded.text`
	delNodes       = `DELETE FROM tree_nodes WHERE process = $1`
	delNodesBefore = `DELETE FROM tree_nodes WHERE process = $1 AND timeperiod < $2`
	delLog         = `DELETE FROM tree_log WHERE process = $1`
	delLogBefore   = `DELETE FROM tree_log WHERE process = $1 AND timeperiod < $2`
	upsNodes       = `INSERT INTO tree_nodes (process, timeperiod, state, body)
		SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[])
		ON CONFLICT (process, timeperiod) DO UPDATE SET state = excluded.state, body = excluded.body`
	insLog = `INSERT INTO tree_log (seq, process, timeperiod, at, body)
		SELECT (SELECT coalesce(max(seq), 0) FROM tree_log) + l.n, l.process, l.timeperiod, l.at, l.body
		FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::text[]) WITH ORDINALITY AS l (process, timeperiod, at, body, n)`
	// trimLog keeps the newest store.MaxNodeLog entries of each node.
	trimLog = `DELETE FROM tree_log t USING (
			SELECT o.seq FROM unnest($1::text[], $2::bigint[]) AS n (process, timeperiod)
			CROSS JOIN LATERAL (SELECT seq FROM tree_log l WHERE l.process = n.process AND l.timeperiod = n.timeperiod
				ORDER BY seq DESC OFFSET $3) o
		) old WHERE t.seq = old.seq`
	setTreeState = `INSERT INTO tree_state (id, body) VALUES (1, $1) ON CONFLICT (id) DO UPDATE SET body = excluded.body`
	// setLast is the last statement before COMMIT.
	setLast = `UPDATE last_commit SET token = $1, journal = (SELECT coalesce(max(seq), 0) FROM journal),
		alerts = (SELECT coalesce(max(id), 0) FROM alerts), audit = (SELECT coalesce(max(seq), 0) FROM audit) WHERE id = 1`
)

// commit is one batch as statements, ready to send.
type commit struct {
	b     *store.Batch
	q     pgx.Batch
	token int64
	pid   uint32 // the session that sent it, once its answer is lost
	// The statements whose result is the highest number before the rows
	// they write (-1 when not queued).
	journal, alerts, audit int
}

// newCommit encodes a batch as its statements: BEGIN, the lock, the
// fence's check when f is set, the rows and COMMIT.
func newCommit(b *store.Batch, f *fence) (*commit, error) {
	c := &commit{b: b, token: rand.Int64N(1<<62) + 1, journal: -1, alerts: -1, audit: -1}
	q := &c.q
	q.Queue("BEGIN")
	q.Queue(lockCommit)
	if f != nil {
		// Before any row: a refused commit writes nothing, and the lease
		// row stays locked FOR SHARE until COMMIT.
		q.Queue(FenceStatement, f.node, f.epoch)
	}
	if n := len(b.Entries); n > 0 {
		at, kind, body := make([]int64, n), make([]string, n), make([]string, n)
		for i := range b.Entries {
			e := &b.Entries[i]
			at[i], kind[i], body[i] = nanos(e.At), e.Kind, string(e.Body)
		}
		c.journal = q.Len()
		q.Queue(insJournal, at, kind, body)
	}
	if len(b.Deleted) > 0 {
		q.Queue(delTasks, b.Deleted)
	}
	if err := queueTasks(q, b); err != nil {
		return nil, err
	}
	if len(b.Fires) > 0 {
		queueFires(q, b.Fires)
	}
	if len(b.Runs) > 0 {
		if err := queueRuns(q, b.Runs); err != nil {
			return nil, err
		}
	}
	if ck := b.Checkpoint; ck != nil {
		if len(ck.Rows) > 0 {
			q.Queue(insPart, ck.Gen, string(store.AppendCheckpointPart(nil, ck.Rows)))
		}
		if ck.Done {
			q.Queue(setCkpt, ck.Gen, ck.Seq)
			q.Queue(delOldParts, ck.Gen)
		}
	}
	if err := c.queueNotices(); err != nil {
		return nil, err
	}
	queueTrees(q, b.Trees)
	if err := queueCalendars(q, b); err != nil {
		return nil, err
	}
	// Clock nodes read the definitions (and the calendars they name) again
	// when told.
	if len(b.Calendars) > 0 || len(b.DeletedCalendars) > 0 || slices.ContainsFunc(b.Entries, func(e store.Entry) bool { return e.Kind == "define" }) {
		q.Queue(notifyDefined, DefinitionsChannel)
	}
	q.Queue(setLast, c.token)
	q.Queue("COMMIT")
	return c, nil
}

// DefinitionsChannel is the LISTEN/NOTIFY channel on which a commit that
// journals definitions notifies, once committed: a cluster's clock nodes
// read the definitions again at once (they poll too).
const DefinitionsChannel = "gnomon_definitions"

const notifyDefined = `SELECT pg_notify($1, '')`

// queueTasks queues the definitions and the states of a batch: the last
// of one task is the one a statement per row would have left.
func queueTasks(q *pgx.Batch, b *store.Batch) error {
	if len(b.Tasks) > 0 {
		tasks := lastOf(b.Tasks, func(r *job.Record) string { return r.Def.Name })
		n := len(tasks)
		name, typ, parent, status, def, state := make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		for i, t := range tasks {
			d, err := store.EncodeDef(t.Def)
			if err != nil {
				return err
			}
			st, err := store.EncodeState(&t.State)
			if err != nil {
				return fmt.Errorf("state of %s: %w", t.Def.Name, err)
			}
			name[i], typ[i], parent[i], status[i], def[i], state[i] = t.Def.Name, string(t.Def.Type), t.Def.Parent, t.State.Status.String(), string(d), string(st)
		}
		q.Queue(upsTasks, name, typ, parent, status, def, state)
	}
	if len(b.States) > 0 {
		states := lastOf(b.States, func(t *store.TaskState) string { return t.Name })
		n := len(states)
		name, status, state := make([]string, n), make([]string, n), make([]string, n)
		for i, t := range states {
			st, err := store.EncodeState(&t.State)
			if err != nil {
				return fmt.Errorf("state of %s: %w", t.Name, err)
			}
			name[i], status[i], state[i] = t.Name, t.State.Status.String(), string(st)
		}
		q.Queue(updStates, name, status, state)
	}
	return nil
}

// queueFires queues new fates: the first of an occurrence is kept, but
// for a backfill of a missed or skipped one (job.Fire.Supersedes), as one
// statement per fire would leave them. One statement may not write a row
// twice: a batch's fires of one occurrence are merged first.
func queueFires(q *pgx.Batch, fires []job.Fire) {
	type key struct {
		task      string
		scheduled int64
	}
	seen := make(map[key]int, len(fires))
	kept := make([]*job.Fire, 0, len(fires))
	for i := range fires {
		f := &fires[i]
		k := key{f.Task, nanos(f.Scheduled)}
		if j, ok := seen[k]; ok {
			if f.Supersedes(kept[j]) {
				kept[j] = f
			}
			continue
		}
		seen[k] = len(kept)
		kept = append(kept, f)
	}
	n := len(kept)
	task, scheduled, fate, reason, at, run := make([]string, 0, n), make([]int64, 0, n), make([]string, 0, n), make([]string, 0, n), make([]int64, 0, n), make([]int64, 0, n)
	for _, f := range kept {
		task, scheduled, fate, reason = append(task, f.Task), append(scheduled, nanos(f.Scheduled)), append(fate, string(f.Fate)), append(reason, text(f.Reason))
		at, run = append(at, nanos(f.At)), append(run, f.RunID)
	}
	q.Queue(insFires, task, scheduled, fate, reason, at, run)
}

// queueRuns queues runs, inserted or updated, and links them to the fires
// of their occurrences. A run a batch writes twice (started and ended in
// one group commit) is one row: what it was first written with, and the
// fields an update changes from its last.
func queueRuns(q *pgx.Batch, runs []job.Run) error {
	at := make(map[int64]int, len(runs))
	merged := make([]job.Run, 0, len(runs))
	var linkID, linkScheduled []int64
	var linkTask []string
	for _, r := range runs {
		if !r.Scheduled.IsZero() {
			linkID, linkTask, linkScheduled = append(linkID, r.ID), append(linkTask, r.Task), append(linkScheduled, nanos(r.Scheduled))
		}
		i, ok := at[r.ID]
		if !ok {
			at[r.ID] = len(merged)
			merged = append(merged, r)
			continue
		}
		m := &merged[i]
		m.Status, m.End, m.ExitCode, m.Result, m.Message, m.BundleRun, m.Data, m.Outcome = r.Status, r.End, r.ExitCode, r.Result, r.Message, r.BundleRun, r.Data, r.Outcome
		m.EndedBy, m.Log = r.EndedBy, r.Log
	}
	n := len(merged)
	var (
		id, start, end, exit, bundle, scheduled                           = make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n)
		task, status, result, message, trigger, data, timeperiod, outcome = make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		by, endedBy, span, params                                         = make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		attempt, retryOf                                                  = make([]int32, n), make([]int64, n)
	)
	for i, r := range merged {
		d, err := dataJSON(r.Data)
		if err != nil {
			return fmt.Errorf("run %d: data: %w", r.ID, err)
		}
		id[i], task[i], status[i], start[i], end[i], exit[i] = r.ID, r.Task, r.Status.String(), nanos(r.Start), nanos(r.End), int64(r.ExitCode)
		result[i], message[i], bundle[i], trigger[i], scheduled[i], data[i] = string(r.Result), text(r.Message), r.BundleRun, r.Trigger, nanos(r.Scheduled), d
		timeperiod[i], outcome[i], by[i], endedBy[i] = r.Timeperiod, r.Outcome, r.By, r.EndedBy
		attempt[i], retryOf[i], span[i], params[i] = int32(r.Attempt), r.RetryOf, store.EncodeLogSpan(r.Log), store.EncodeParams(r.Params)
	}
	q.Queue(upsRuns, id, task, status, start, end, exit, result, message, bundle, trigger, scheduled, data, timeperiod, outcome, by, endedBy,
		attempt, retryOf, span, params)
	if len(linkID) > 0 {
		q.Queue(linkFires, linkID, linkTask, linkScheduled)
	}
	return nil
}

// queueNotices queues a batch's alerts and audit records, numbered in the
// transaction.
func (c *commit) queueNotices() error {
	q, b := &c.q, c.b
	if n := len(b.Alerts); n > 0 {
		task, created, state, next, doc := make([]string, n), make([]int64, n), make([]string, n), make([]int64, n), make([]string, n)
		for i := range b.Alerts {
			a := &b.Alerts[i]
			a.ID = 0 // the document does not hold it
			d, err := json.Marshal(a)
			if err != nil {
				return fmt.Errorf("alert of %s: %w", a.Task, err)
			}
			task[i], created[i], state[i], next[i], doc[i] = a.Task, nanos(a.Created), string(a.State), nanos(a.NextAt), string(d)
		}
		c.alerts = q.Len()
		q.Queue(insAlerts, task, created, state, next, doc)
	}
	if n := len(b.Audit); n > 0 {
		task, run, launch, stop, result, status, message, data, by, endedBy := make([]string, n), make([]int64, n), make([]int64, n), make([]int64, n),
			make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		for i := range b.Audit {
			a := &b.Audit[i]
			d, err := dataJSON(a.Data)
			if err != nil {
				return fmt.Errorf("audit of %s: %w", a.Task, err)
			}
			task[i], run[i], launch[i], stop[i] = a.Task, a.RunID, nanos(a.Launch), nanos(a.Stop)
			result[i], status[i], message[i], data[i], by[i], endedBy[i] = string(a.Result), a.Status.String(), text(a.Message), d, a.By, a.EndedBy
		}
		c.audit = q.Len()
		q.Queue(insAudit, task, run, launch, stop, result, status, message, data, by, endedBy)
	}
	return nil
}

// queueTrees queues what a batch writes of the timeperiod trees: files,
// dropped nodes, then nodes and log entries, trimming each node's log to
// its newest store.MaxNodeLog entries.
func queueTrees(q *pgx.Batch, t *store.Trees) {
	if t.Empty() {
		return
	}
	if len(t.DeletedFiles) > 0 {
		q.Queue(delTreeFiles, t.DeletedFiles)
	}
	if len(t.Files) > 0 {
		files := lastOf(t.Files, func(f *store.TreeFile) string { return f.Name })
		name, text := make([]string, len(files)), make([]string, len(files))
		for i, f := range files {
			name[i], text[i] = f.Name, f.Text
		}
		q.Queue(upsTreeFiles, name, text)
	}
	for _, d := range t.Dropped {
		if d.Before != 0 {
			q.Queue(delNodesBefore, d.Process, d.Before)
			q.Queue(delLogBefore, d.Process, d.Before)
		} else {
			q.Queue(delNodes, d.Process)
			q.Queue(delLog, d.Process)
		}
	}
	type node struct {
		process    string
		timeperiod int64
	}
	if len(t.Nodes) > 0 {
		nodes := lastOf(t.Nodes, func(n *store.NodeRow) node { return node{n.Process, n.Timeperiod} })
		k := len(nodes)
		process, timeperiod, state, body := make([]string, k), make([]int64, k), make([]string, k), make([]string, k)
		for i, n := range nodes {
			process[i], timeperiod[i], state[i], body[i] = n.Process, n.Timeperiod, n.State, string(n.Body)
		}
		q.Queue(upsNodes, process, timeperiod, state, body)
	}
	if k := len(t.Log); k > 0 {
		process, timeperiod, at, body := make([]string, k), make([]int64, k), make([]int64, k), make([]string, k)
		touched := map[node]bool{}
		var tProcess []string
		var tTimeperiod []int64
		for i, e := range t.Log {
			process[i], timeperiod[i], at[i], body[i] = e.Process, e.Timeperiod, nanos(e.At), string(e.Body)
			if n := (node{e.Process, e.Timeperiod}); !touched[n] {
				touched[n] = true
				tProcess, tTimeperiod = append(tProcess, n.process), append(tTimeperiod, n.timeperiod)
			}
		}
		q.Queue(insLog, process, timeperiod, at, body)
		q.Queue(trimLog, tProcess, tTimeperiod, store.MaxNodeLog)
	}
	if t.State != nil {
		q.Queue(setTreeState, string(t.State))
	}
}

// lastOf returns rows with one row for each key, the last one, at the
// place of the first.
func lastOf[T any, K comparable](rows []T, key func(*T) K) []T {
	at := make(map[K]int, len(rows))
	var out []T
	for i := range rows {
		k := key(&rows[i])
		if j, ok := at[k]; ok {
			if out == nil { // the first repeat: copy what came before
				out = append(make([]T, 0, len(rows)), rows[:i]...)
			}
			out[j] = rows[i]
			continue
		}
		at[k] = len(at)
		if out != nil {
			out = append(out, rows[i])
		}
	}
	if out == nil {
		return rows
	}
	return out
}

// number gives the batch's entries, alerts and audit records their
// numbers, from the highest stored before each.
func (c *commit) number(journal, alerts, audit int64) {
	for i := range c.b.Entries {
		c.b.Entries[i].Seq = journal + int64(i) + 1
	}
	for i := range c.b.Alerts {
		c.b.Alerts[i].ID = alerts + int64(i) + 1
	}
	for i := range c.b.Audit {
		c.b.Audit[i].Seq = audit + int64(i) + 1
	}
}

// Commit writes the batch in one transaction, sent in one round trip.
func (s *Store) Commit(ctx context.Context, b *store.Batch) error {
	if b.Empty() {
		return nil
	}
	for i := range b.Entries {
		if !json.Valid(b.Entries[i].Body) {
			return fmt.Errorf("commit: journal entry %d (%s): body is not JSON", i, b.Entries[i].Kind)
		}
	}
	if s.closed.Load() {
		return fmt.Errorf("commit: %w", store.ErrClosed)
	}
	if d := s.doubt; d != nil {
		// The last commit's answer was lost and the database could not
		// say then whether it landed: ask again before anything else.
		landed, err := s.settle(ctx, d)
		if err != nil {
			return fmt.Errorf("commit: %w: the previous commit is still in doubt: %w", store.ErrUnavailable, err)
		}
		s.doubt = nil
		if landed && d.b == b {
			return nil // the retried batch is the one that landed
		}
		if landed {
			return fmt.Errorf("commit: a batch in doubt landed, and another batch was committed instead of retrying it")
		}
	}
	c, err := newCommit(b, s.fence.Load())
	if err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	conn, err := s.pool.Acquire(ctx)
	if err != nil { // nothing sent
		if s.closed.Load() {
			return fmt.Errorf("commit: %w", store.ErrClosed)
		}
		return fmt.Errorf("commit: %w: %w", store.ErrUnavailable, err)
	}
	pid := conn.Conn().PgConn().PID()
	committed, err := c.send(ctx, conn)
	if committed {
		conn.Release()
		return nil
	}
	var pe *pgconn.PgError
	switch {
	case errors.As(err, &pe) && !connectionLost(pe):
		// The server refused a statement: the transaction is void.
		if conn.Conn().PgConn().TxStatus() != 'I' && !conn.Conn().IsClosed() {
			conn.Exec(context.WithoutCancel(ctx), "ROLLBACK") // or the pool drops the connection
		}
		conn.Release()
		if cannotTakeNow(pe) {
			return fmt.Errorf("commit: %w: %w", store.ErrUnavailable, err)
		}
		return fmt.Errorf("commit: %w", fenced(err))
	case pgconn.SafeToRetry(err): // nothing reached the server
		conn.Release()
		return fmt.Errorf("commit: %w: %w", store.ErrUnavailable, err)
	}
	conn.Release() // lost: the pool drops it
	return s.resolve(ctx, pid, c, err)
}

// send sends the statements and reads their answers. It reports whether
// COMMIT succeeded.
func (c *commit) send(ctx context.Context, conn *pgxpool.Conn) (committed bool, err error) {
	br := conn.SendBatch(ctx, &c.q)
	var journal, alerts, audit int64
	n := c.q.Len()
	for i := range n {
		switch i {
		case c.journal:
			err = br.QueryRow().Scan(&journal)
		case c.alerts:
			err = br.QueryRow().Scan(&alerts)
		case c.audit:
			err = br.QueryRow().Scan(&audit)
		default:
			_, err = br.Exec()
		}
		if err != nil {
			br.Close()
			return false, err
		}
	}
	br.Close() // COMMIT answered: whatever comes after does not matter
	c.number(journal, alerts, audit)
	return true, nil
}

// connectionLost reports whether a server's error ends its session, so
// that what the session did last is not known from it.
func connectionLost(pe *pgconn.PgError) bool {
	return strings.HasPrefix(pe.Code, "08") || strings.HasPrefix(pe.Code, "57P") || pe.Severity == "FATAL" || pe.Severity == "PANIC"
}

// cannotTakeNow reports whether a refused commit may succeed later: the
// disk or memory is full, too many connections, the database is read-only
// or recovering, an I/O error, a conflict with another transaction.
func cannotTakeNow(pe *pgconn.PgError) bool {
	switch {
	case strings.HasPrefix(pe.Code, "53"), // insufficient resources
		strings.HasPrefix(pe.Code, "58"),                           // system error (I/O)
		pe.Code == "25006",                                         // read-only transaction
		pe.Code == "40001", pe.Code == "40P01", pe.Code == "55P03": // serialization, deadlock, lock not available
		return true
	}
	return false
}

// resolve learns whether a commit whose answer was lost landed: it ends
// the session that sent it (until that session is gone it may still
// commit), then reads the last commit's token. It tries until the
// database answers, for up to s.resolveFor. If the database does not
// answer by then the commit is in doubt: resolve returns ErrUnavailable
// and keeps it, and the next Commit settles it first, so that a caller
// who retries the same batch commits it exactly once.
func (s *Store) resolve(ctx context.Context, pid uint32, c *commit, cause error) error {
	c.pid = pid
	rctx, cancel := context.WithTimeout(ctx, s.resolveFor)
	defer cancel()
	landed, err := s.settle(rctx, c)
	switch {
	case err != nil:
		s.doubt = c
		return fmt.Errorf("commit: %w: the connection was lost (%v), and whether the batch landed is not known yet: %w", store.ErrUnavailable, cause, err)
	case !landed:
		return fmt.Errorf("commit: %w: %w", store.ErrUnavailable, cause)
	}
	return nil
}

// settle reads whether commit c, whose answer was lost, landed, and if it
// did numbers its batch's rows. It tries until the database answers or ctx
// is done.
func (s *Store) settle(ctx context.Context, c *commit) (bool, error) {
	for delay := 20 * time.Millisecond; ; delay = min(2*delay, time.Second) {
		token, journal, alerts, audit, err := s.lastCommit(ctx, c.pid)
		switch {
		case err == nil && token == c.token:
			c.number(journal-int64(len(c.b.Entries)), alerts-int64(len(c.b.Alerts)), audit-int64(len(c.b.Audit)))
			return true, nil
		case err == nil:
			return false, nil
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return false, err
		case <-t.C:
		}
	}
}

// lastCommit ends the backend pid, waits until it is gone, and reads the
// row last_commit.
func (s *Store) lastCommit(ctx context.Context, pid uint32) (token, journal, alerts, audit int64, err error) {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return 0, 0, 0, 0, err
	}
	defer conn.Release()
	if conn.Conn().PgConn().PID() != pid {
		const alive = `SELECT count(*) FROM pg_stat_activity WHERE pid = $1 AND datname = current_database() AND usename = current_user`
		for {
			var n int
			if err := conn.QueryRow(ctx, alive, int64(pid)).Scan(&n); err != nil {
				return 0, 0, 0, 0, err
			}
			if n == 0 {
				break
			}
			if _, err := conn.Exec(ctx, `SELECT pg_terminate_backend($1)`, int64(pid)); err != nil {
				return 0, 0, 0, 0, err
			}
			t := time.NewTimer(10 * time.Millisecond)
			select {
			case <-ctx.Done():
				t.Stop()
				return 0, 0, 0, 0, ctx.Err()
			case <-t.C:
			}
		}
	}
	err = conn.QueryRow(ctx, `SELECT token, journal, alerts, audit FROM last_commit WHERE id = 1`).Scan(&token, &journal, &alerts, &audit)
	return token, journal, alerts, audit, err
}
