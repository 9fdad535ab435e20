package scheduler

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
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
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
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

// auditClock is a clock the audit tests move by hand.
type auditClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *auditClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *auditClock) set(t time.Time) {
	c.mu.Lock()
	c.now = t
	c.mu.Unlock()
}

// auditSetup is a store in dir, and a function that commits audit
// records of runs from..to, returning their lines.
func auditSetup(t *testing.T) (store.Store, string, func(from, to int) string) {
	t.Helper()
	dir := t.TempDir()
	st, err := sqlite.Open(context.Background(), filepath.Join(dir, "gnomon.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	commit := func(from, to int) string {
		var recs []job.AuditRecord
		var lines strings.Builder
		for i := from; i <= to; i++ {
			r := job.AuditRecord{Task: "a", RunID: int64(i), Launch: t0, Stop: t0, Result: job.ResultNormal, Status: job.Success}
			recs = append(recs, r)
			lines.WriteString(r.Line(time.UTC) + "\n")
		}
		if err := st.Commit(context.Background(), &store.Batch{Audit: recs}); err != nil {
			t.Fatal(err)
		}
		return lines.String()
	}
	return st, dir, commit
}

// runAudit starts a scheduler on st and stops it: its audit writer writes
// what the store holds, records its position, and rotates.
func runAudit(t *testing.T, st store.Store, dir string, clock Clock, rot job.LogRotation) {
	t.Helper()
	ctx := context.Background()
	s, err := New(ctx, Config{Store: st, Runner: localRunner(t, dir), DataDir: dir, Location: time.UTC, Clock: clock, AuditRotation: rot})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := s.Stop(ctx); err != nil {
		t.Fatal(err)
	}
}

func readAudit(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(b)
}

// TestAuditLogRotation: audit.log rotates by size and by age on the
// scheduler's clock, right after its position is recorded, keeping Keep
// files; every record is in exactly one file, and the recorded position
// is the new file's.
func TestAuditLogRotation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, dir, commit := auditSetup(t)
	clock := &auditClock{now: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}
	line := int64(len(commit(1, 2)) / 2)
	rot := job.LogRotation{Size: 3 * line, Age: job.Duration(24 * time.Hour), Keep: 2}
	runAudit(t, st, dir, clock, rot)
	first := readAudit(t, dir, AuditFile)
	if strings.Count(first, "\n") != 2 || readAudit(t, dir, AuditFile+".1") != "" {
		t.Fatalf("after 2 records (under the size): audit.log = %q, audit.log.1 = %q", first, readAudit(t, dir, AuditFile+".1"))
	}
	// Over the size: rotated.
	second := commit(3, 4)
	runAudit(t, st, dir, clock, rot)
	if got, old := readAudit(t, dir, AuditFile), readAudit(t, dir, AuditFile+".1"); got != "" || old != first+second {
		t.Fatalf("after 4 records: audit.log = %q, audit.log.1 = %q", got, old)
	}
	if size, _ := st.Cursor(ctx, auditSize); size != 0 {
		t.Errorf("position after rotation = %d, want 0", size)
	}
	// Under the size, not yet a day: not rotated; a day later: rotated.
	third := commit(5, 5)
	clock.set(clock.Now().Add(23 * time.Hour))
	runAudit(t, st, dir, clock, rot)
	if got := readAudit(t, dir, AuditFile); got != third {
		t.Fatalf("audit.log = %q, want %q", got, third)
	}
	fourth := commit(6, 6)
	clock.set(clock.Now().Add(time.Hour))
	runAudit(t, st, dir, clock, rot)
	if got, old, older := readAudit(t, dir, AuditFile), readAudit(t, dir, AuditFile+".1"), readAudit(t, dir, AuditFile+".2"); got != "" || old != third+fourth || older != first+second {
		t.Fatalf("after a day: audit.log = %q, .1 = %q, .2 = %q", got, old, older)
	}
	// Two kept: the oldest goes at the next rotation.
	fifth := commit(7, 9)
	runAudit(t, st, dir, clock, rot)
	if old, older := readAudit(t, dir, AuditFile+".1"), readAudit(t, dir, AuditFile+".2"); old != fifth || older != third+fourth {
		t.Errorf(".1 = %q, .2 = %q", old, older)
	}
	if _, err := os.Stat(filepath.Join(dir, AuditFile+".3")); err == nil {
		t.Error("a third rotated audit log is kept")
	}
	if seq, _ := st.Cursor(ctx, auditSeq); seq != 9 {
		t.Errorf("cursor %d, want 9", seq)
	}
}

// TestAuditLogCopyTruncate: logrotate's copytruncate empties audit.log
// while the server writes it; the writer goes on appending from the start
// of the emptied file, and its recorded position follows.
func TestAuditLogCopyTruncate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, dir, commit := auditSetup(t)
	s, err := New(ctx, Config{Store: st, Runner: localRunner(t, dir), DataDir: dir, Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer s.Stop(ctx)
	path := filepath.Join(dir, AuditFile)
	waitFor := func(want string) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			if readAudit(t, dir, AuditFile) == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("audit.log = %q, want %q", readAudit(t, dir, AuditFile), want)
			}
		}
	}
	first := commit(1, 3)
	waitFor(first)
	// copytruncate: copy, then empty the file in place.
	if err := os.WriteFile(path+".1", []byte(first), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	second := commit(4, 5)
	waitFor(second)
	if err := s.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if got := readAudit(t, dir, AuditFile); got != second {
		t.Errorf("audit.log after stop = %q, want %q", got, second)
	}
	if size, _ := st.Cursor(ctx, auditSize); size != int64(len(second)) {
		t.Errorf("recorded position %d, want %d (the emptied file's size)", size, len(second))
	}
}
