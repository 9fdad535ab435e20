package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
)

// Backup writes a consistent copy of the database at path to the new file
// to, while a server goes on using the database: VACUUM INTO reads it in
// one read transaction, which in WAL mode holds no writer up, and writes a
// compact database of its own (to.partial until it is complete and
// synced, then renamed). It refuses a file to that exists.
func Backup(ctx context.Context, path, to string) error {
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	if _, err := os.Lstat(to); err == nil {
		return fmt.Errorf("backup: %s exists: give a new file", to)
	}
	partial := to + ".partial"
	os.Remove(partial) // an interrupted backup's
	q := url.Values{"mode": {"ro"}, "_pragma": {"busy_timeout(10000)"}}
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, `VACUUM INTO ?`, partial); err != nil {
		os.Remove(partial)
		return fmt.Errorf("backup %s: %w", path, err)
	}
	if err := syncFile(partial); err != nil {
		os.Remove(partial)
		return fmt.Errorf("backup: %w", err)
	}
	if err := os.Rename(partial, to); err != nil {
		os.Remove(partial)
		return fmt.Errorf("backup: %w", err)
	}
	return syncDir(filepath.Dir(to))
}

// Restore copies the backup from (a file Backup wrote) to path, which must
// not exist, and returns the store on it, migrated to this release: the
// copy is checked and migrated as path.partial, then renamed.
func Restore(ctx context.Context, from, path string) (*Store, error) {
	if _, err := os.Lstat(path); err == nil {
		return nil, fmt.Errorf("restore: %s exists: restore into a data directory without a database, or move it away first", path)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("restore: %w", err)
	}
	partial := path + ".partial"
	for _, f := range []string{partial, partial + "-wal", partial + "-shm"} {
		os.Remove(f)
	}
	if err := copyFile(from, partial); err != nil {
		return nil, fmt.Errorf("restore: %w", err)
	}
	s, err := Open(ctx, partial)
	if err == nil {
		var check string
		if err = s.w.QueryRowContext(ctx, `PRAGMA quick_check`).Scan(&check); err == nil && check != "ok" {
			err = fmt.Errorf("%s is damaged: %s", from, check)
		}
		if err == nil {
			// The copy goes whole into the database file: the WAL is
			// checkpointed and truncated before the file moves.
			_, err = s.w.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`)
		}
		s.Close()
	}
	if err == nil {
		err = os.Rename(partial, path)
	}
	if err != nil {
		for _, f := range []string{partial, partial + "-wal", partial + "-shm"} {
			os.Remove(f)
		}
		return nil, fmt.Errorf("restore %s: %w", from, err)
	}
	os.Remove(partial + "-wal")
	os.Remove(partial + "-shm")
	if err := syncDir(filepath.Dir(path)); err != nil {
		return nil, fmt.Errorf("restore: %w", err)
	}
	return Open(ctx, path)
}

// copyFile copies from to a new file to, readable by its owner only, and
// syncs it.
func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func syncFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
