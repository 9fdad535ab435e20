package scheduler

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/store"
	"github.com/gnomon-sched/gnomon/store/sqlite"
)

// A crash after audit lines were written but before the cursors moved past
// them: the restarted writer neither loses nor repeats a record, and drops
// a line the crash cut short.
func TestAuditLogRecoversAfterCrash(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	st, err := sqlite.Open(ctx, filepath.Join(dir, "gnomon.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var recs []job.AuditRecord
	for i := range 4 {
		// Identical records: recovery counts lines, it does not match text.
		recs = append(recs, job.AuditRecord{Task: "a", RunID: int64(i + 1), Launch: t0, Stop: t0, Result: job.ResultNormal, Status: job.Success})
	}
	if err := st.Commit(ctx, &store.Batch{Audit: recs[:1]}); err != nil {
		t.Fatal(err)
	}
	line := recs[0].Line(time.UTC) + "\n"
	first := int64(len(line))
	if err := st.SetCursors(ctx, map[string]int64{auditSeq: 1, auditSize: first}); err != nil {
		t.Fatal(err)
	}
	if err := st.Commit(ctx, &store.Batch{Audit: recs[1:]}); err != nil {
		t.Fatal(err)
	}
	// The file holds record 1 (recorded), records 2 and 3 (written, not
	// recorded) and half of record 4.
	path := filepath.Join(dir, AuditFile)
	if err := os.WriteFile(path, []byte(line+line+line+line[:10]), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := New(ctx, Config{Store: st, Runner: localRunner(t, dir), DataDir: dir, Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	if err := s.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if want := line + line + line + line; string(b) != want {
		t.Errorf("audit.log:\n%q\nwant:\n%q", b, want)
	}
	if seq, _ := st.Cursor(ctx, auditSeq); seq != 4 {
		t.Errorf("cursor %d, want 4", seq)
	}
}
