package store

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// Pruner is a store that removes what is older than its retention
// horizons (see docs/operations.md, "Retention"). The scheduler decides
// the horizons and checks them against their floors; the store removes
// only what they name, and never:
//
//   - a journal entry at or after the current checkpoint of the windows,
//     nor the last one (a restart replays the journal after the
//     checkpoint, and numbers the next entry after the last one);
//   - a data event or action entry received at or after Prune.Data (a
//     configuration's backfill replays them);
//   - a run that has not ended, nor the last run of a task (`why` names
//     a failed task's, and the highest ID numbers the next run);
//   - a pending alert, nor the alert of the highest ID;
//   - an audit record above Prune.AuditUpTo (audit.log does not hold it
//     yet), nor the last one;
//   - the last entry of the node logs.
type Pruner interface {
	// Prune removes, in short transactions of at most p.Limit rows of
	// each kind, what p names, and reports how many rows of each kind it
	// removed (with p.DryRun, how many it would remove, and removes
	// nothing). A pass that removed p.Limit rows of some kind may have
	// left more (Pruned.More): call it again.
	Prune(ctx context.Context, p Prune) (Pruned, error)
}

// Prune is one pass of a Pruner: the horizons of each kind of record.
// A zero instant keeps every record of its kind.
type Prune struct {
	// Journal compacts the journal behind the checkpoint: every entry
	// before it goes, but data events and actions received at or after
	// Data.
	Journal bool
	Data    time.Time
	// Runs that ended, fires scheduled, audit records of runs that ended,
	// alerts created and node log entries written before these instants.
	Runs, Fires, Audit, Alerts, NodeLog time.Time
	// AuditUpTo is the last audit record audit.log holds: those after it
	// are kept whatever their age.
	AuditUpTo int64
	// Keep overrides the horizon of runs, fires, audit records and
	// alerts for some tasks.
	Keep []Keep
	// Limit is the most rows of each kind one call removes; 0 means 500.
	Limit int
	// Cursor, when set, is where a pass of several calls is: in each
	// table a call goes on after the last row the call before removed,
	// instead of reading again the old rows kept before it (a task's last
	// run, a pending alert): a pass reads them once.
	Cursor *PruneCursor
	// DryRun counts what would go and removes nothing.
	DryRun bool
}

// Keep is the horizon of one task's runs, fires, audit records and
// alerts: those before Before go; a zero Before keeps them all.
type Keep struct {
	Task   string
	Before time.Time
}

// Pruned counts the rows a pass removed, by kind.
type Pruned struct {
	Journal, Runs, Fires, Audit, Alerts, NodeLog int64
	// More reports that a kind reached the pass's limit: more may be due.
	More bool `json:"-"`
}

// PruneCursor is where a pass of the pruner is in each table (see
// Prune.Cursor); its zero value is the start of a pass.
type PruneCursor struct{ after map[string][]any }

// get returns where the last row removed from a table is in the order
// the table is read in, nil if none or c is nil.
func (c *PruneCursor) get(table string) []any {
	if c == nil {
		return nil
	}
	return c.after[table]
}

// set records where the last row removed from a table is.
func (c *PruneCursor) set(table string, key []any) {
	if c == nil {
		return
	}
	if c.after == nil {
		c.after = map[string][]any{}
	}
	c.after[table] = key
}

// Total is the number of rows removed.
func (p Pruned) Total() int64 {
	return p.Journal + p.Runs + p.Fires + p.Audit + p.Alerts + p.NodeLog
}

// Add adds the counts of q to p.
func (p *Pruned) Add(q Pruned) {
	p.Journal += q.Journal
	p.Runs += q.Runs
	p.Fires += q.Fires
	p.Audit += q.Audit
	p.Alerts += q.Alerts
	p.NodeLog += q.NodeLog
}

// PruneDB is what PruneWith needs of a store's database. Queries use ?
// placeholders. It is a seam between this package and its stores, and may
// change with them.
type PruneDB interface {
	// Int returns the single integer a query returns, ok false for no row.
	Int(ctx context.Context, query string, args ...any) (v int64, ok bool, err error)
	// Keys returns the rows of a query, each the values of its columns,
	// without holding up writers.
	Keys(ctx context.Context, query string, args ...any) ([][]any, error)
	// Exec runs statements in one write transaction.
	Exec(ctx context.Context, stmts []Stmt) error
	// In returns a condition that holds when column col is one of the
	// strings of a JSON array given as its single ? argument: a list of
	// any length in one parameter (SQLite's json_each, PostgreSQL's
	// json_array_elements_text), where one placeholder per value passes
	// the stores' limits (32766 and 65535) at tens of thousands of tasks.
	In(col string) string
	// RunsByStart is the columns of the store's index of runs by start
	// time, the run's ID last: the pruner reads old runs in its order.
	RunsByStart() string
}

// Stmt is one statement with its arguments.
type Stmt struct {
	SQL  string
	Args []any
}

// journalCursor is the cursor below which the journal holds no entry but
// data events and actions (those Prune.Data keeps).
const journalCursor = "prune journal"

// DefaultPruneLimit is Prune.Limit's default.
const DefaultPruneLimit = 500

// pruneKind is one table a pass prunes by age.
type pruneKind struct {
	n     *int64
	table string
	// order is the columns of an index of the table whose first is the
	// age, or a column no greater than it (a run starts before it ends):
	// a call reads the rows oldest first and stops at the horizon, never
	// reading the rows it keeps for their age. Its last columns are key,
	// the columns that identify a row.
	order, key string
	age        string // the column compared with the horizon
	before     time.Time
	// guard is what a row must also satisfy, whatever its age.
	guard string
	args  []any
	// task is set for the tables whose rows are a task's (Keep applies).
	task bool
	// pre deletes what refers to the rows, given as %s the condition
	// on the rows' keys.
	pre string
}

// PruneWith carries out Pruner.Prune on db, with the SQL both stores
// understand.
func PruneWith(ctx context.Context, db PruneDB, p Prune) (Pruned, error) {
	var out Pruned
	if p.Limit <= 0 {
		p.Limit = DefaultPruneLimit
	}
	if p.Journal {
		if err := pruneJournal(ctx, db, p, &out); err != nil {
			return out, fmt.Errorf("prune journal: %w", err)
		}
	}
	kinds := []pruneKind{
		{n: &out.Runs, table: "runs", order: db.RunsByStart(), key: "id", age: "end_at", before: p.Runs, task: true,
			guard: "end_at != 0 AND EXISTS (SELECT 1 FROM runs n WHERE n.task = runs.task AND n.id > runs.id)"},
		{n: &out.Fires, table: "fires", order: "scheduled, task", key: "scheduled, task", age: "scheduled", before: p.Fires, task: true},
		{n: &out.Audit, table: "audit", order: "stop, seq", key: "seq", age: "stop", before: p.Audit, task: true,
			guard: "seq <= ? AND seq < (SELECT max(seq) FROM audit)", args: []any{p.AuditUpTo}},
		{n: &out.Alerts, table: "alerts", order: "created, id", key: "id", age: "created", before: p.Alerts, task: true,
			guard: "state != 'pending' AND id < (SELECT max(id) FROM alerts)", pre: "DELETE FROM alert_attempts WHERE alert IN (SELECT id FROM alerts WHERE %s)"},
		{n: &out.NodeLog, table: "tree_log", order: "at, seq", key: "seq", age: "at", before: p.NodeLog,
			guard: "seq < (SELECT max(seq) FROM tree_log)"},
	}
	for _, k := range kinds {
		more, err := k.prune(ctx, db, p)
		if err != nil {
			return out, fmt.Errorf("prune %s: %w", k.table, err)
		}
		out.More = out.More || more
	}
	return out, nil
}

// prune removes up to p.Limit rows of the kind, those of tasks with a
// horizon of their own by it, the others by the kind's.
func (k pruneKind) prune(ctx context.Context, db PruneDB, p Prune) (more bool, err error) {
	type sel struct {
		where  string
		args   []any
		before time.Time
	}
	var sels []sel
	if !k.before.IsZero() {
		s := sel{before: k.before}
		if k.task && len(p.Keep) > 0 {
			tasks := make([]string, len(p.Keep))
			for i, kp := range p.Keep {
				tasks[i] = kp.Task
			}
			s.where, s.args = " AND NOT "+db.In("task"), []any{jsonList(tasks)}
		}
		sels = append(sels, s)
	}
	if k.task {
		// The tasks of one horizon in one statement: as many as there
		// are horizons, few however many tasks have one.
		groups := map[int64][]string{}
		for _, kp := range p.Keep {
			if !kp.Before.IsZero() {
				groups[kp.Before.UnixNano()] = append(groups[kp.Before.UnixNano()], kp.Task)
			}
		}
		for _, before := range slices.Sorted(maps.Keys(groups)) {
			sels = append(sels, sel{where: " AND " + db.In("task"), args: []any{jsonList(groups[before])}, before: time.Unix(0, before)})
		}
	}
	left := p.Limit
	// With one selection, the rows are read in order from where the call
	// before stopped.
	after := p.Cursor.get(k.table)
	if len(sels) != 1 {
		after = nil
	}
	first, _, _ := strings.Cut(k.order, ",")
	for _, s := range sels {
		where := k.age + " < ?" + s.where
		args := append([]any{s.before.UnixNano()}, s.args...)
		if first != k.age {
			// What the index is read by: its rows stop before the horizon.
			where = first + " < ? AND " + where
			args = append([]any{s.before.UnixNano()}, args...)
		}
		if k.guard != "" {
			where += " AND " + k.guard
			args = append(args, k.args...)
		}
		if after != nil && !p.DryRun {
			where += " AND (" + k.order + ") > (" + strings.TrimSuffix(strings.Repeat("?, ", len(after)), ", ") + ")"
			args = append(args, after...)
		}
		if p.DryRun {
			n, _, err := db.Int(ctx, "SELECT count(*) FROM "+k.table+" WHERE "+where, args...)
			if err != nil {
				return false, err
			}
			*k.n += n
			continue
		}
		rows, err := db.Keys(ctx, "SELECT "+k.order+" FROM "+k.table+" WHERE "+where+" ORDER BY "+k.order+" LIMIT ?", append(args, left)...)
		if err != nil {
			return false, err
		}
		keys := make([][]any, len(rows))
		for i, r := range rows {
			keys[i] = r[len(r)-len(strings.Split(k.key, ", ")):]
		}
		if err := k.remove(ctx, db, keys, nil); err != nil {
			return false, err
		}
		*k.n += int64(len(keys))
		if left -= len(keys); left == 0 {
			if len(sels) == 1 {
				p.Cursor.set(k.table, rows[len(rows)-1])
			}
			return true, nil
		}
	}
	return false, nil
}

// remove deletes the rows of these keys, and runs more in the same
// transaction.
func (k pruneKind) remove(ctx context.Context, db PruneDB, keys [][]any, more []Stmt) error {
	if len(keys) == 0 {
		if len(more) == 0 {
			return nil
		}
		return db.Exec(ctx, more)
	}
	// One column: key IN (?, ...); more: (c1 = ? AND c2 = ?) OR ...,
	// which both stores type from the columns (VALUES lists they do not).
	cols := strings.Split(k.key, ", ")
	var b strings.Builder
	args := make([]any, 0, len(keys)*len(cols))
	for i, key := range keys {
		switch {
		case len(cols) == 1 && i > 0:
			b.WriteString(", ")
		case len(cols) > 1 && i > 0:
			b.WriteString(" OR ")
		}
		if len(cols) == 1 {
			b.WriteString("?")
		} else {
			b.WriteString("(" + strings.Join(cols, " = ? AND ") + " = ?)")
		}
		args = append(args, key...)
	}
	where := b.String()
	if len(cols) == 1 {
		where = k.key + " IN (" + where + ")"
	}
	var stmts []Stmt
	if k.pre != "" {
		stmts = append(stmts, Stmt{SQL: fmt.Sprintf(k.pre, where), Args: args})
	}
	stmts = append(stmts, Stmt{SQL: "DELETE FROM " + k.table + " WHERE " + where, Args: args})
	return db.Exec(ctx, append(stmts, more...))
}

// jsonList is a list of strings as the JSON array PruneDB.In reads.
func jsonList(v []string) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic("store: a list of strings does not encode: " + err.Error())
	}
	return string(b)
}

// pruneJournal removes the entries before the checkpoint: all of those
// before the first data event or action received at or after p.Data, then
// the others, from a cursor below which only data events and actions are
// left.
func pruneJournal(ctx context.Context, db PruneDB, p Prune, out *Pruned) error {
	ckpt, _, err := db.Int(ctx, `SELECT seq FROM checkpoint WHERE id = 1`)
	if err != nil {
		return err
	}
	bound := int64(0) // entries below it go, whatever their kind
	if !p.Data.IsZero() {
		bound = ckpt
		first, ok, err := db.Int(ctx, `SELECT seq FROM journal WHERE seq < ? AND at >= ? ORDER BY seq LIMIT 1`, ckpt, p.Data.UnixNano())
		if err != nil {
			return err
		}
		if ok {
			bound = first
		}
	}
	cursor, _, err := db.Int(ctx, `SELECT value FROM cursors WHERE name = ?`, journalCursor)
	if err != nil {
		return err
	}
	from := max(cursor, bound-1) // other kinds go after it
	const others = ` AND kind NOT IN ('data', 'act')`
	if p.DryRun {
		old, _, err := db.Int(ctx, `SELECT count(*) FROM journal WHERE seq < ?`, bound)
		if err != nil {
			return err
		}
		rest, _, err := db.Int(ctx, `SELECT count(*) FROM journal WHERE seq > ? AND seq < ?`+others, from, ckpt)
		out.Journal = old + rest
		return err
	}
	j := pruneKind{table: "journal", key: "seq"}
	keys, err := db.Keys(ctx, `SELECT seq FROM journal WHERE seq < ? ORDER BY seq LIMIT ?`, bound, p.Limit)
	if err != nil {
		return err
	}
	if err := j.remove(ctx, db, keys, nil); err != nil {
		return err
	}
	out.Journal += int64(len(keys))
	if len(keys) == p.Limit {
		out.More = true
		return nil
	}
	keys, err = db.Keys(ctx, `SELECT seq FROM journal WHERE seq > ? AND seq < ?`+others+` ORDER BY seq LIMIT ?`, from, ckpt, p.Limit)
	if err != nil {
		return err
	}
	next := max(ckpt-1, from)
	if len(keys) == p.Limit {
		next, out.More = asInt(keys[len(keys)-1][0]), true
	}
	var more []Stmt
	if next != cursor {
		more = []Stmt{{SQL: `INSERT INTO cursors (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value`,
			Args: []any{journalCursor, next}}}
	}
	out.Journal += int64(len(keys))
	return j.remove(ctx, db, keys, more)
}

// asInt returns an integer column's value as the drivers scan it.
func asInt(v any) int64 {
	switch v := v.(type) {
	case int64:
		return v
	case int32:
		return int64(v)
	case int:
		return int64(v)
	}
	panic(fmt.Sprintf("prune: a key of type %T", v))
}
