package gnomon

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/gnomon-sched/gnomon/executor"
	"github.com/gnomon-sched/gnomon/store/sqlite"
)

// BackupFunc is the built-in function that backs the scheduler's SQLite
// database up, so that backups are scheduled like any task:
//
//	insert_task: backup
//	type: callable
//	function: gnomon_backup
//	params: dir=/srv/backups/gnomon, keep=14
//	cron: 30 2 * * *
//
// Each run writes a consistent snapshot (as gnomon backup does, by
// VACUUM INTO, while the scheduler goes on) to DIR/gnomon-TIME.db, TIME
// being the occurrence the run is for (else the scheduler's clock), in
// UTC, then removes the oldest backups of DIR beyond keep (default 7).
// The directory is made (0700) if missing. On PostgreSQL the run fails
// with a message pointing to pg_dump. Registering the name replaces it.
const BackupFunc = "gnomon_backup"

// DefaultBackupKeep is how many backups gnomon_backup keeps without a
// keep parameter.
const DefaultBackupKeep = 7

// backupPrefix and backupSuffix frame the backups gnomon_backup writes and
// removes: nothing else in the directory is touched.
const (
	backupPrefix = "gnomon-"
	backupSuffix = ".db"
	backupTime   = "20060102T150405Z"
)

// backupFunc is the function BackupFunc.
func (s *Scheduler) backupFunc(ctx context.Context, c *executor.Call) error {
	r := &Run{c: c}
	dir, _ := r.Param("dir")
	if dir == "" || !filepath.IsAbs(dir) {
		return fmt.Errorf("%s: params: dir=%q should be the absolute path of the directory backups go to (params: dir=/srv/backups/gnomon, keep=7)", BackupFunc, dir)
	}
	keep := DefaultBackupKeep
	if v, ok := r.Param("keep"); ok && v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return fmt.Errorf("%s: params: keep=%q should be how many backups are kept, at least 1", BackupFunc, v)
		}
		keep = n
	}
	db, ok := s.store.(*sqlite.Store)
	if !ok {
		return fmt.Errorf("%s: the database is not SQLite: back PostgreSQL up with pg_dump, or its own point-in-time recovery (docs/operations.md, \"Backup and restore\")", BackupFunc)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("%s: %w", BackupFunc, err)
	}
	at := c.Scheduled
	if at.IsZero() {
		at = s.Now()
	}
	to := filepath.Join(dir, backupPrefix+at.UTC().Format(backupTime)+backupSuffix)
	if err := sqlite.Backup(ctx, db.Path(), to); err != nil {
		return fmt.Errorf("%s: %w", BackupFunc, err)
	}
	fi, err := os.Stat(to)
	if err != nil {
		return fmt.Errorf("%s: %w", BackupFunc, err)
	}
	r.Logf("backed up %s to %s: %d bytes", db.Path(), to, fi.Size())
	removed, err := pruneBackups(dir, keep)
	for _, name := range removed {
		r.Logf("removed %s (keep=%d)", name, keep)
	}
	if err != nil {
		return fmt.Errorf("%s: removing old backups: %w", BackupFunc, err)
	}
	c.SetStatus(fmt.Sprintf("backed up to %s (%d bytes)", to, fi.Size()))
	return nil
}

// pruneBackups removes the oldest backups of dir beyond keep (their names
// sort by time) and returns their paths.
func pruneBackups(dir string, keep int) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range ents {
		n := e.Name()
		if e.Type().IsRegular() && strings.HasPrefix(n, backupPrefix) && strings.HasSuffix(n, backupSuffix) {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	var removed []string
	var errs []error
	for _, n := range names[:max(len(names)-keep, 0)] {
		p := filepath.Join(dir, n)
		if err := os.Remove(p); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, p)
	}
	return removed, errors.Join(errs...)
}
