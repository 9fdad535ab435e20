package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/gnomon-sched/gnomon/store"
)

// tables are the tables that hold state, for Empty.
var tables = []string{"tasks", "runs", "fires", "journal", "checkpoint_parts", "alerts", "alert_attempts", "audit", "cursors",
	"tree_files", "tree_nodes", "tree_log", "tree_state", "tokens", "calendars"}

// Empty reports whether the database holds nothing of gnomon's.
func (s *Store) Empty(ctx context.Context) (bool, error) {
	for _, t := range tables {
		var some bool
		if err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM `+t+`)`).Scan(&some); err != nil {
			return false, s.failed("empty: "+t, err)
		}
		if some {
			return false, nil
		}
	}
	var gen int64
	if err := s.pool.QueryRow(ctx, `SELECT gen FROM checkpoint WHERE id = 1`).Scan(&gen); err != nil {
		return false, s.failed("empty: checkpoint", err)
	}
	return gen == 0, nil
}

// Import writes a dump into the empty database in one transaction,
// keeping every ID and sequence number. Rows go in with COPY.
func (s *Store) Import(ctx context.Context, d *store.Dump) error {
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, lockCommit); err != nil {
			return err
		}
		snap := d.Snapshot
		copyRows := func(table string, cols []string, n int, row func(i int) ([]any, error)) error {
			if n == 0 {
				return nil
			}
			if _, err := tx.CopyFrom(ctx, pgx.Identifier{table}, cols, pgx.CopyFromSlice(n, row)); err != nil {
				return fmt.Errorf("%s: %w", table, err)
			}
			return nil
		}
		if err := copyRows("tasks", []string{"name", "type", "parent", "status", "def", "state"}, len(snap.Tasks), func(i int) ([]any, error) {
			t := snap.Tasks[i]
			def, err := store.EncodeDef(t.Def)
			if err != nil {
				return nil, err
			}
			state, err := store.EncodeState(&t.State)
			if err != nil {
				return nil, err
			}
			return []any{t.Def.Name, string(t.Def.Type), t.Def.Parent, t.State.Status.String(), string(def), string(state)}, nil
		}); err != nil {
			return err
		}
		if err := copyRows("fires", []string{"task", "scheduled", "fate", "reason", "at", "run"}, len(d.Fires), func(i int) ([]any, error) {
			f := d.Fires[i]
			return []any{f.Task, nanos(f.Scheduled), string(f.Fate), text(f.Reason), nanos(f.At), f.RunID}, nil
		}); err != nil {
			return err
		}
		if err := copyRows("runs", []string{"id", "task", "status", "start_at", "end_at", "exit_code", "result", "message", "bundle_run",
			"trigger", "scheduled", "data", "timeperiod", "outcome", "started_by", "ended_by", "attempt", "retry_of", "log_span", "params"}, len(d.Runs), func(i int) ([]any, error) {
			r := d.Runs[i]
			data, err := dataJSON(r.Data)
			if err != nil {
				return nil, err
			}
			return []any{r.ID, r.Task, r.Status.String(), nanos(r.Start), nanos(r.End), int64(r.ExitCode), string(r.Result), text(r.Message),
				r.BundleRun, r.Trigger, nanos(r.Scheduled), data, r.Timeperiod, r.Outcome, r.By, r.EndedBy, int32(r.Attempt), r.RetryOf, store.EncodeLogSpan(r.Log), store.EncodeParams(r.Params)}, nil
		}); err != nil {
			return err
		}
		if err := copyRows("journal", []string{"seq", "at", "kind", "body"}, len(d.Journal), func(i int) ([]any, error) {
			e := d.Journal[i]
			return []any{e.Seq, nanos(e.At), e.Kind, string(e.Body)}, nil
		}); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, setCkpt, snap.WindowsGen, snap.WindowsSeq); err != nil {
			return err
		}
		if len(snap.Windows) > 0 {
			if _, err := tx.Exec(ctx, insPart, snap.WindowsGen, string(store.AppendCheckpointPart(nil, snap.Windows))); err != nil {
				return err
			}
		}
		// Alerts oldest first, then their attempts, which refer to them.
		alerts := slices.Clone(d.Alerts)
		slices.Reverse(alerts)
		if err := copyRows("alerts", []string{"id", "task", "created", "state", "next_at", "doc"}, len(alerts), func(i int) ([]any, error) {
			a := alerts[i]
			id := a.ID
			a.ID = 0
			doc, err := json.Marshal(a)
			if err != nil {
				return nil, err
			}
			return []any{id, a.Task, nanos(a.Created), string(a.State), nanos(a.NextAt), string(doc)}, nil
		}); err != nil {
			return err
		}
		var attempts [][]any
		for _, a := range alerts {
			for _, at := range d.Attempts[a.ID] {
				attempts = append(attempts, []any{a.ID, nanos(at.At), text(at.Error)})
			}
		}
		if err := copyRows("alert_attempts", []string{"alert", "at", "error"}, len(attempts), func(i int) ([]any, error) {
			return attempts[i], nil
		}); err != nil {
			return err
		}
		if err := copyRows("audit", []string{"seq", "task", "run", "launch", "stop", "result", "status", "message", "data", "started_by", "ended_by"}, len(d.Audit), func(i int) ([]any, error) {
			a := d.Audit[i]
			data, err := dataJSON(a.Data)
			if err != nil {
				return nil, err
			}
			return []any{a.Seq, a.Task, a.RunID, nanos(a.Launch), nanos(a.Stop), string(a.Result), a.Status.String(), text(a.Message), data, a.By, a.EndedBy}, nil
		}); err != nil {
			return err
		}
		names := slices.Sorted(maps.Keys(d.Cursors))
		if err := copyRows("cursors", []string{"name", "value"}, len(names), func(i int) ([]any, error) {
			return []any{encodeName(names[i]), d.Cursors[names[i]]}, nil
		}); err != nil {
			return err
		}
		if err := copyRows("tokens", []string{"id", "name", "role", "scope", "owners", "hash", "rate", "created", "expires", "revoked", "created_by"}, len(d.Tokens), func(i int) ([]any, error) {
			t := d.Tokens[i]
			return []any{t.ID, t.Name, string(t.Role), store.EncodeScope(t.Scope), store.EncodeOwners(t.Owners), t.Hash, t.Rate, nanos(t.Created), nanos(t.Expires), nanos(t.Revoked), t.CreatedBy}, nil
		}); err != nil {
			return err
		}
		t := snap.Trees
		if err := copyRows("tree_files", []string{"name", "text"}, len(t.Files), func(i int) ([]any, error) {
			return []any{t.Files[i].Name, t.Files[i].Text}, nil
		}); err != nil {
			return err
		}
		if err := copyRows("tree_nodes", []string{"process", "timeperiod", "state", "body"}, len(t.Nodes), func(i int) ([]any, error) {
			n := t.Nodes[i]
			return []any{n.Process, n.Timeperiod, n.State, string(n.Body)}, nil
		}); err != nil {
			return err
		}
		if err := copyRows("tree_log", []string{"seq", "process", "timeperiod", "at", "body"}, len(t.Log), func(i int) ([]any, error) {
			e := t.Log[i]
			return []any{int64(i + 1), e.Process, e.Timeperiod, nanos(e.At), string(e.Body)}, nil
		}); err != nil {
			return err
		}
		if t.State != nil {
			if _, err := tx.Exec(ctx, setTreeState, string(t.State)); err != nil {
				return err
			}
		}
		if err := copyRows("calendars", []string{"name", "def"}, len(snap.Calendars), func(i int) ([]any, error) {
			def, err := store.EncodeCalendar(&snap.Calendars[i])
			if err != nil {
				return nil, err
			}
			return []any{snap.Calendars[i].Name, string(def)}, nil
		}); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, setLast, int64(0))
		return err
	})
	if err != nil {
		return s.failed("import", err)
	}
	return nil
}
