package scheduler

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/gnomon-sched/gnomon/clock"
	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/store"
)

// AuditFile is the name of the audit log in the data directory.
const AuditFile = "audit.log"

// auditEvery is the longest audit.log lags behind the store, and
// auditSync how often it is synced and its position recorded.
const (
	auditEvery = 100 * time.Millisecond
	auditSync  = 2 * time.Second
)

// Store cursors of the audit log: the last record written, the size of
// the file after it, and when the file was begun (Unix nanoseconds on the
// scheduler's clock; 0 when not known).
const (
	auditSeq   = "audit.log"
	auditSize  = "audit.log size"
	auditBegun = "audit.log begun"
)

// auditKeep is the rotated audit logs kept when AuditRotation.Keep is 0.
const auditKeep = 5

// writeAudit appends the audit records the store holds to audit.log, in
// commit order, at most auditEvery after their commit. Every auditSync it
// syncs the file and then records in the store the last record written and
// the file's size. After a crash, the lines beyond the recorded size are
// records after the recorded one that survived: they are counted and not
// written again, and whatever did not survive is written again.
func (s *Scheduler) writeAudit() {
	defer s.wg.Done()
	path := filepath.Join(s.cfg.DataDir, AuditFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		s.log.Error("audit log not written", "path", path, "err", err)
		return
	}
	defer func() { f.Close() }() // the file open when it returns
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
	begun, err := s.auditBegun(ctx)
	if err != nil {
		s.log.Error("audit log not written", "err", err)
		return
	}
	// reset is set when audit.log was rotated and the store does not
	// know yet: nothing is written to the new file until it does.
	reset := false
	synced, lastSync := cursor, clock.Wall.Now() // the file syncs in real time, even on a virtual clock
	ticker := time.NewTicker(auditSync)
	defer ticker.Stop()
	for {
		stop := false
		select {
		case <-s.auditWake:
			// The records are durable in the store already: the file
			// follows them, at most auditEvery behind, so that a stream
			// of short runs costs one write per interval, not per commit.
			select {
			case <-time.After(auditEvery):
			case <-s.quit:
				stop = true
			}
		case <-ticker.C:
		case <-s.quit:
			stop = true // write what the last batches recorded, then stop
		}
		if reset {
			if err := s.cfg.Store.SetCursors(ctx, map[string]int64{auditSize: 0, auditBegun: begun.UnixNano()}); err != nil {
				s.log.Error("audit log: saving position after rotation", "err", err)
				if stop {
					return
				}
				continue
			}
			reset = false
		}
		for {
			recs, err := s.cfg.Store.Audit(ctx, cursor, 1000)
			if err != nil {
				s.log.Error("audit log: reading records", "err", err)
				break
			}
			if len(recs) > 0 {
				if err := appendLines(f, recs, s.loc()); err != nil {
					s.log.Error("audit log: writing", "path", path, "err", err)
					break
				}
				cursor = recs[len(recs)-1].Seq
			}
			if len(recs) < 1000 {
				break
			}
		}
		if cursor != synced && (stop || clock.Wall.Now().Sub(lastSync) >= auditSync) {
			if err := s.syncAudit(ctx, f, cursor); err != nil {
				s.log.Error("audit log: saving position", "err", err)
			} else {
				synced, lastSync = cursor, clock.Wall.Now()
				if nf, rotated, err := s.rotateAudit(f, path, begun); err != nil {
					s.log.Error("audit log: rotating", "path", path, "err", err)
				} else if rotated {
					f.Close()
					f, begun, reset = nf, s.cfg.Clock.Now(), true
				}
			}
		}
		if stop {
			if reset {
				if err := s.cfg.Store.SetCursors(ctx, map[string]int64{auditSize: 0, auditBegun: begun.UnixNano()}); err != nil {
					s.log.Error("audit log: saving position after rotation", "err", err)
				}
			}
			return
		}
	}
}

// auditBegun returns when audit.log was begun, on the scheduler's clock:
// as recorded, else now (recorded), for a file begun before it was.
func (s *Scheduler) auditBegun(ctx context.Context) (time.Time, error) {
	v, err := s.cfg.Store.Cursor(ctx, auditBegun)
	if err != nil || v != 0 {
		return time.Unix(0, v), err
	}
	now := s.cfg.Clock.Now()
	return now, s.cfg.Store.SetCursors(ctx, map[string]int64{auditBegun: now.UnixNano()})
}

// rotateAudit rotates audit.log when AuditRotation makes it due: f, open
// on path, holds Size bytes or more, or was begun Age ago or more. It is
// called only once the store records that f holds every line written (its
// position): audit.log becomes audit.log.1, audit.log.1 audit.log.2, and
// so on up to Keep, the older ones removed, and a new audit.log is opened.
// The caller records the new file's position (size 0) before it writes
// to it: a crash before that finds the new file no larger than the
// position recorded, and appends after what it holds.
func (s *Scheduler) rotateAudit(f *os.File, path string, begun time.Time) (*os.File, bool, error) {
	r := s.cfg.AuditRotation
	st, err := f.Stat()
	if err != nil || st.Size() == 0 {
		return nil, false, err
	}
	due := r.Size > 0 && st.Size() >= r.Size || r.Age > 0 && s.cfg.Clock.Now().Sub(begun) >= time.Duration(r.Age)
	if !due {
		return nil, false, nil
	}
	keep := r.Keep
	if keep <= 0 {
		keep = auditKeep
	}
	name := func(n int) string { return path + "." + strconv.Itoa(n) }
	for n := keep; ; n++ {
		err := os.Remove(name(n))
		if errors.Is(err, fs.ErrNotExist) && n > keep {
			break
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, false, err
		}
	}
	for n := keep - 1; n >= 1; n-- {
		if err := os.Rename(name(n), name(n+1)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, false, err
		}
	}
	if err := os.Rename(path, name(1)); err != nil {
		return nil, false, err
	}
	nf, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		// Back where it was: the writer goes on with the file it has.
		return nil, false, errors.Join(err, os.Rename(name(1), path))
	}
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		d.Sync()
		d.Close()
	}
	return nf, true, nil
}

// syncAudit syncs the file, then records that it holds every record up to
// seq, and its size.
func (s *Scheduler) syncAudit(ctx context.Context, f *os.File, seq int64) error {
	if err := f.Sync(); err != nil {
		return err
	}
	st, err := f.Stat()
	if err != nil {
		return err
	}
	return s.cfg.Store.SetCursors(ctx, map[string]int64{auditSeq: seq, auditSize: st.Size()})
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

// appendLines writes records as lines.
func appendLines(f *os.File, recs []job.AuditRecord, loc *time.Location) error {
	w := bufio.NewWriter(f)
	for _, r := range recs {
		w.WriteString(r.Line(loc))
		w.WriteByte('\n')
	}
	return w.Flush()
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

// Restored readies a store restored from a backup for a server on
// dataDir: audit.log goes on after the lines it holds. When the file is
// there (the directory the backup was taken from), the records the backup
// holds are taken as written: the file got them before or after the
// backup, and lines of runs after the backup stay, as what happened. When
// it is not, it is written again from the first record the store holds.
func Restored(ctx context.Context, st store.Store, dataDir string) error {
	size, last := int64(0), int64(0)
	if fi, err := os.Stat(filepath.Join(dataDir, AuditFile)); err == nil {
		size = fi.Size()
		cursor, err := st.Cursor(ctx, auditSeq)
		if err != nil {
			return err
		}
		for last = cursor; ; {
			recs, err := st.Audit(ctx, last, 10_000)
			if err != nil {
				return err
			}
			if len(recs) == 0 {
				break
			}
			last = recs[len(recs)-1].Seq
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return st.SetCursors(ctx, map[string]int64{auditSeq: last, auditSize: size})
}
