package scheduler

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/gnomon-sched/gnomon/job"
)

// AuditFile is the name of the audit log in the data directory.
const AuditFile = "audit.log"

// auditEvery is the longest audit.log lags behind the store.
const auditEvery = 100 * time.Millisecond

// Store cursors of the audit log: the last record written, and the size
// of the file after it.
const (
	auditSeq  = "audit.log"
	auditSize = "audit.log size"
)

// writeAudit appends the audit records the store holds to audit.log, in
// commit order; each write is synced before the cursors move past it.
// After a crash between the two, the lines beyond the recorded size are the
// records after the recorded one: they are counted and not written again.
func (s *Scheduler) writeAudit() {
	defer s.wg.Done()
	path := filepath.Join(s.cfg.DataDir, AuditFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		s.log.Error("audit log not written", "path", path, "err", err)
		return
	}
	defer f.Close()
	ctx := context.Background()
	cursor, err := s.cfg.Store.Cursor(ctx, auditSeq)
	if err == nil {
		var size int64
		if size, err = s.cfg.Store.Cursor(ctx, auditSize); err == nil {
			cursor, err = s.recover(ctx, f, cursor, size)
		}
	}
	if err != nil {
		s.log.Error("audit log not written", "err", err)
		return
	}
	for {
		stop := false
		select {
		case <-s.auditWake:
			// The records are durable in the store already: the file
			// follows them, at most auditEvery behind, so that a stream
			// of short runs costs one write and sync per interval rather
			// than per commit.
			select {
			case <-time.After(auditEvery):
			case <-s.quit:
				stop = true
			}
		case <-s.quit:
			stop = true // write what the last batches recorded, then stop
		}
		for {
			recs, err := s.cfg.Store.Audit(ctx, cursor, 1000)
			if err != nil {
				s.log.Error("audit log: reading records", "err", err)
				break
			}
			if len(recs) == 0 {
				break
			}
			size, err := appendLines(f, recs, s.loc())
			if err != nil {
				s.log.Error("audit log: writing", "path", path, "err", err)
				break
			}
			cursor = recs[len(recs)-1].Seq
			if err := s.cfg.Store.SetCursors(ctx, map[string]int64{auditSeq: cursor, auditSize: size}); err != nil {
				s.log.Error("audit log: saving position", "err", err)
			}
		}
		if stop {
			return
		}
	}
}

// recover returns the last record the file holds: the cursor, moved past
// the lines written beyond size.
func (s *Scheduler) recover(ctx context.Context, f *os.File, cursor, size int64) (int64, error) {
	st, err := f.Stat()
	if err != nil || st.Size() <= size {
		return cursor, err // nothing beyond (or the file was truncated: append)
	}
	extra := make([]byte, st.Size()-size)
	if _, err := f.ReadAt(extra, size); err != nil && err != io.EOF {
		return 0, err
	}
	// A line cut short by the crash is dropped; its record is written again.
	if cut := bytes.LastIndexByte(extra, '\n') + 1; cut < len(extra) {
		if err := f.Truncate(size + int64(cut)); err != nil {
			return 0, err
		}
		extra = extra[:cut]
	}
	n := bytes.Count(extra, []byte("\n"))
	if n == 0 {
		return cursor, nil
	}
	recs, err := s.cfg.Store.Audit(ctx, cursor, n)
	if err != nil || len(recs) == 0 {
		return cursor, err
	}
	s.log.Info("audit log: lines written before a stop were recorded", "lines", len(recs))
	return recs[len(recs)-1].Seq, nil
}

func (s *Scheduler) loc() *time.Location {
	if s.cfg.Location != nil {
		return s.cfg.Location
	}
	return time.UTC
}

// appendLines writes records as lines, syncs and returns the file's size.
func appendLines(f *os.File, recs []job.AuditRecord, loc *time.Location) (int64, error) {
	w := bufio.NewWriter(f)
	for _, r := range recs {
		w.WriteString(r.Line(loc))
		w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		return 0, err
	}
	if err := f.Sync(); err != nil {
		return 0, err
	}
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

func (s *Scheduler) wakeAudit() {
	select {
	case s.auditWake <- struct{}{}:
	default:
	}
}

// auditOf returns the audit records of the runs a batch ended, in order of
// end, then id.
func auditOf(runs map[int64]job.Run) []job.AuditRecord {
	var out []job.AuditRecord
	for _, r := range runs {
		if r.Done() {
			out = append(out, job.AuditOf(&r))
		}
	}
	slices.SortFunc(out, func(a, b job.AuditRecord) int {
		if c := a.Stop.Compare(b.Stop); c != 0 {
			return c
		}
		return int(a.RunID - b.RunID)
	})
	return out
}
