package sqlite

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/store"
)

// TestUpgrade builds the database of an earlier release, by applying the
// migrations up to its last one and writing rows as it wrote them, then
// opens it with this release: every migration since applies, and every
// row reads back. A database a later release migrated further is refused.
func TestUpgrade(t *testing.T) {
	t.Parallel()
	// 4: before checkpoints were stored as parts and the journal lost
	// AUTOINCREMENT; 13: the release before the last migration.
	for _, version := range []int{4, 13} {
		t.Run(fmt.Sprint("from ", version), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			path := filepath.Join(t.TempDir(), "gnomon.db")
			old, err := open(ctx, path, version)
			if err != nil {
				t.Fatal(err)
			}
			t0 := time.Date(2025, 6, 1, 8, 0, 0, 0, time.UTC)
			def, _ := store.EncodeDef(&job.Task{Name: "load", Type: job.Callable, Command: "load.sh", OutLog: "/o", ErrLog: "/e", StartTimes: []job.Clock{480}})
			state, _ := store.EncodeState(&job.State{Status: job.Running, Start: job.At(t0), RunID: 2})
			alert, _ := json.Marshal(job.Alert{Task: "load", Outcome: job.OutcomeFailure, RunID: 1, Created: t0, State: job.AlertSent, To: []string{"ops@example.com"}})
			rows := []string{
				`INSERT INTO journal (seq, at, kind, body) VALUES (1, ?1, 'define', '{"file":"a.def"}'), (2, ?1, 'act', '{"task":"load"}')`,
				`INSERT INTO tasks (name, type, parent, status, def, state) VALUES ('load', 'callable', '', 'running', ?2, ?3)`,
				`INSERT INTO runs (id, task, status, start_at, end_at, exit_code, result, message, trigger, scheduled, data)
					VALUES (1, 'load', 'failure', ?1, ?1 + 60000000000, 2, 'normal', 'disk full', 'schedule', ?1, '{"rows":"3"}'),
					       (2, 'load', 'running', ?1 + 86400000000000, 0, 0, '', '', 'schedule', ?1 + 86400000000000, '')`,
				`INSERT INTO alerts (id, task, created, state, doc) VALUES (1, 'load', ?1, 'sent', ?4)`,
				`INSERT INTO alert_attempts (alert, at, error) VALUES (1, ?1, '')`,
				`INSERT INTO audit (seq, task, run, launch, stop, result, status, message, data) VALUES (1, 'load', 1, ?1, ?1 + 60000000000, 'normal', 'failure', 'disk full', '')`,
				`INSERT INTO cursors (name, value) VALUES ('audit.log', 1)`,
			}
			if version < 5 {
				rows = append(rows, `INSERT INTO validations (gen, task, dep, ts) VALUES (0, 'conf', 'FILE:/in', ?1)`)
			}
			// Before migration 6, a fire's run was found by its occurrence;
			// since, the fire names it.
			if version < 6 {
				rows = append(rows, `INSERT INTO fires (task, scheduled, fate, reason, at) VALUES ('load', ?1, 'ran', '', ?1), ('load', ?1 + 86400000000000, 'ran', '', ?1)`)
			} else {
				rows = append(rows, `INSERT INTO fires (task, scheduled, fate, reason, at, run) VALUES ('load', ?1, 'ran', '', ?1, 1), ('load', ?1 + 86400000000000, 'ran', '', ?1, 2)`)
			}
			for _, q := range rows {
				if _, err := old.w.ExecContext(ctx, q, t0.UnixNano(), string(def), string(state), string(alert)); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			old.Close()

			s, err := Open(ctx, path)
			if err != nil {
				t.Fatal(err)
			}
			snap, err := s.Load(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(snap.Tasks) != 1 || snap.Tasks[0].Def.Command != "load.sh" || len(snap.Active) != 1 || snap.Active[0].ID != 2 || snap.LastRun != 2 {
				t.Errorf("loaded %d tasks, active %+v, last run %d", len(snap.Tasks), snap.Active, snap.LastRun)
			}
			if version < 5 && (len(snap.Windows) != 1 || !snap.Windows[0].TS.Equal(t0)) {
				t.Errorf("windows = %+v, want the one validation", snap.Windows)
			}
			runs, err := s.Runs(ctx, store.RunQuery{Task: "load"})
			if err != nil || len(runs) != 2 || runs[1].Message != "disk full" || runs[1].Data["rows"] != "3" || !runs[1].End.Equal(t0.Add(time.Minute)) {
				t.Errorf("runs = %+v, %v", runs, err)
			}
			fires, err := s.Fires(ctx, store.FireQuery{Task: "load"})
			if err != nil || len(fires) != 2 || fires[1].RunID != 1 || fires[0].RunID != 2 {
				t.Errorf("fires = %+v, %v; want each linked to its run", fires, err)
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
			// The journal reads back, and goes on after its last entry.
			b := &store.Batch{Entries: []store.Entry{{At: t0, Kind: "act", Body: json.RawMessage(`{}`)}}, Audit: []job.AuditRecord{{Task: "load", RunID: 3}}}
			if err := s.Commit(ctx, b); err != nil {
				t.Fatal(err)
			}
			if j, err := s.Journal(ctx, 0, 10); err != nil || len(j) != 3 || j[0].Kind != "define" || b.Entries[0].Seq != 3 || b.Audit[0].Seq != 2 {
				t.Errorf("journal = %+v, %v; new entry %d, audit %d", j, err, b.Entries[0].Seq, b.Audit[0].Seq)
			}

			// A later release's migration: this one refuses to open it.
			if _, err := s.w.ExecContext(ctx, `INSERT INTO schema_migrations (version, applied_at) VALUES (999, 0)`); err != nil {
				t.Fatal(err)
			}
			s.Close()
			_, err = Open(ctx, path)
			if !errors.Is(err, store.ErrNewerSchema) {
				t.Errorf("opening a database of schema version 999: %v, want a refused downgrade", err)
			}
		})
	}
}
