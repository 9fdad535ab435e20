package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/internal/pgtest"
	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/store"
)

// TestUpgrade builds the database of an earlier release, by applying the
// migrations up to its last one and writing rows as it wrote them, then
// opens it with this release: every migration since applies, and every
// row reads back. A database a later release migrated further is refused.
func TestUpgrade(t *testing.T) {
	t.Parallel()
	// 1: the first schema; 13: the release before the last migration.
	for _, version := range []int64{1, 13} {
		t.Run(fmt.Sprint("from ", version), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			url := pgtest.URL(t)
			old, err := open(ctx, url, version)
			if err != nil {
				t.Fatal(err)
			}
			t0 := time.Date(2025, 6, 1, 8, 0, 0, 0, time.UTC).UnixNano()
			day := int64(24 * time.Hour)
			def, _ := store.EncodeDef(&job.Task{Name: "load", Type: job.Callable, Command: "load.sh", OutLog: "/o", ErrLog: "/e", StartTimes: []job.Clock{480}})
			state, _ := store.EncodeState(&job.State{Status: job.Running, Start: job.At(time.Unix(0, t0)), RunID: 2})
			alert, _ := json.Marshal(job.Alert{Task: "load", Outcome: job.OutcomeFailure, RunID: 1, Created: time.Unix(0, t0).UTC(), State: job.AlertSent, To: []string{"ops@example.com"}})
			for _, q := range []struct {
				sql  string
				args []any
			}{
				{`INSERT INTO journal (seq, at, kind, body) VALUES (1, $1, 'define', '{"file":"a.def"}'), (2, $1, 'act', '{"task":"load"}')`, []any{t0}},
				{`INSERT INTO tasks (name, type, parent, status, def, state) VALUES ('load', 'callable', '', 'running', $1, $2)`, []any{string(def), string(state)}},
				{`INSERT INTO runs (id, task, status, start_at, end_at, exit_code, result, message, trigger, scheduled, data)
					VALUES (1, 'load', 'failure', $1, $2, 2, 'normal', 'disk full', 'schedule', $1, '{"rows":"3"}'),
					       (2, 'load', 'running', $3, 0, 0, '', '', 'schedule', $3, '')`, []any{t0, t0 + int64(time.Minute), t0 + day}},
				{`INSERT INTO fires (task, scheduled, fate, reason, at, run) VALUES ('load', $1, 'ran', '', $1, 1), ('load', $2, 'ran', '', $1, 2)`, []any{t0, t0 + day}},
				{`INSERT INTO alerts (id, task, created, state, doc) VALUES (1, 'load', $1, 'sent', $2)`, []any{t0, string(alert)}},
				{`INSERT INTO alert_attempts (alert, at, error) VALUES (1, $1, '')`, []any{t0}},
				{`INSERT INTO audit (seq, task, run, launch, stop, result, status, message, data) VALUES (1, 'load', 1, $1, $2, 'normal', 'failure', 'disk full', '')`, []any{t0, t0 + int64(time.Minute)}},
				{`INSERT INTO checkpoint_parts (gen, body) VALUES (0, $1)`, []any{string(store.AppendCheckpointPart(nil, []job.Validation{{Task: "conf", Dep: "FILE:/in", TS: time.Unix(0, t0).UTC()}}))}},
				{`INSERT INTO cursors (name, value) VALUES ('audit.log', 1)`, nil},
				{`UPDATE last_commit SET journal = 2, alerts = 1, audit = 1`, nil},
			} {
				if _, err := old.pool.Exec(ctx, q.sql, q.args...); err != nil {
					t.Fatalf("%s: %v", q.sql, err)
				}
			}
			old.Close()

			s, err := Open(ctx, url)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			snap, err := s.Load(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(snap.Tasks) != 1 || snap.Tasks[0].Def.Command != "load.sh" || len(snap.Active) != 1 || snap.Active[0].ID != 2 || snap.LastRun != 2 {
				t.Errorf("loaded %d tasks, active %+v, last run %d", len(snap.Tasks), snap.Active, snap.LastRun)
			}
			if len(snap.Windows) != 1 || snap.Windows[0].TS.UnixNano() != t0 {
				t.Errorf("windows = %+v, want the checkpoint's one", snap.Windows)
			}
			runs, err := s.Runs(ctx, store.RunQuery{Task: "load"})
			if err != nil || len(runs) != 2 || runs[1].Message != "disk full" || runs[1].Data["rows"] != "3" || runs[1].End.UnixNano() != t0+int64(time.Minute) {
				t.Errorf("runs = %+v, %v", runs, err)
			}
			fires, err := s.Fires(ctx, store.FireQuery{Task: "load"})
			if err != nil || len(fires) != 2 || fires[1].RunID != 1 || fires[0].RunID != 2 {
				t.Errorf("fires = %+v, %v", fires, err)
			}
			if as, err := s.Alerts(ctx, store.AlertQuery{}); err != nil || len(as) != 1 || as[0].To[0] != "ops@example.com" {
				t.Errorf("alerts = %+v, %v", as, err)
			}
			if at, err := s.Attempts(ctx, 1); err != nil || len(at) != 1 {
				t.Errorf("attempts = %+v, %v", at, err)
			}
			if recs, err := s.Audit(ctx, 0, 10); err != nil || len(recs) != 1 || recs[0].Message != "disk full" {
				t.Errorf("audit = %+v, %v", recs, err)
			}
			b := &store.Batch{Entries: []store.Entry{{At: time.Unix(0, t0), Kind: "act", Body: json.RawMessage(`{}`)}}, Audit: []job.AuditRecord{{Task: "load", RunID: 3}}}
			if err := s.Commit(ctx, b); err != nil {
				t.Fatal(err)
			}
			if j, err := s.Journal(ctx, 0, 10); err != nil || len(j) != 3 || j[0].Kind != "define" || b.Entries[0].Seq != 3 || b.Audit[0].Seq != 2 {
				t.Errorf("journal = %+v, %v; new entry %d, audit %d", j, err, b.Entries[0].Seq, b.Audit[0].Seq)
			}

			// A later release's migration: this one refuses to open it.
			if _, err := s.pool.Exec(ctx, `INSERT INTO goose_db_version (version_id, is_applied) VALUES (999, true)`); err != nil {
				t.Fatal(err)
			}
			_, err = Open(ctx, url)
			if !errors.Is(err, store.ErrNewerSchema) {
				t.Errorf("opening a database of schema version 999: %v, want a refused downgrade", err)
			}
		})
	}
}
