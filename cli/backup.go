package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gnomon-sched/gnomon/clock"
	"github.com/gnomon-sched/gnomon/scheduler"
	"github.com/gnomon-sched/gnomon/store/sqlite"
)

// sqlitePath returns the SQLite file of a server: --db sqlite:PATH (or a
// bare path), else DATA/gnomon.db. A PostgreSQL --db is refused with what
// to use instead.
func sqlitePath(db, data, what string) (string, error) {
	switch {
	case strings.HasPrefix(db, "postgres://"), strings.HasPrefix(db, "postgresql://"):
		return "", usageErr("--db: a PostgreSQL database is %s with pg_dump and pg_restore, or with its own point-in-time recovery (docs/operations.md, \"Backup and restore\")", what)
	case db != "":
		return strings.TrimPrefix(db, "sqlite:"), nil
	}
	return filepath.Join(data, "gnomon.db"), nil
}

// backupCmd copies the database of a server, running or not, to a file.
func backupCmd(env *Env, dataDir func() string) *cobra.Command {
	var to, db string
	c := &cobra.Command{
		Use:   "backup [--to] FILE [--db sqlite:PATH]",
		Short: "copy the SQLite database of a server, running or not, to a new file: a consistent snapshot",
		Long: `backup writes a consistent snapshot of the server's SQLite database (DATA/gnomon.db,
or --db) to FILE, which must not exist, while the server goes on: SQLite's
VACUUM INTO reads the database in one read transaction, which holds no
commit up, and writes a compact copy. Run it on the server's machine, as
the server's user. gnomon restore brings a server back from it.

Scheduled backups are a task like any other, through the built-in
function gnomon_backup, which keeps the newest KEEP backups of DIR:

    insert_task: backup
    type: callable
    function: gnomon_backup
    params: dir=/srv/backups/gnomon, keep=14
    cron: 30 2 * * *

A PostgreSQL database is backed up with pg_dump (docs/operations.md).`,
		Args:        cobra.MaximumNArgs(1),
		Annotations: map[string]string{noClient: "yes"},
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case len(args) == 1 && to != "":
				return usageErr("give the backup file once: FILE or --to FILE")
			case len(args) == 1:
				to = args[0]
			case to == "":
				return usageErr("the backup file is required: gnomon backup FILE")
			}
			path, err := sqlitePath(db, dataDir(), "backed up")
			if err != nil {
				return err
			}
			start := clock.Wall.Now()
			if err := sqlite.Backup(cmd.Context(), path, to); err != nil {
				return err
			}
			fi, err := os.Stat(to)
			if err != nil {
				return err
			}
			fmt.Fprintf(env.Stdout, "backed up %s to %s: %d bytes in %s\n", path, to, fi.Size(), clock.Wall.Now().Sub(start).Round(time.Millisecond))
			return nil
		},
	}
	c.Flags().StringVar(&to, "to", "", "the backup file to write (it must not exist)")
	c.Flags().StringVar(&db, "db", "", "the server's database, sqlite:PATH (default DATA/gnomon.db)")
	return c
}

// restoreCmd brings a server's data directory back from a backup.
func restoreCmd(env *Env, dataDir func() string) *cobra.Command {
	var from, db string
	c := &cobra.Command{
		Use:   "restore --from FILE [--data DIR] [--db sqlite:PATH]",
		Short: "bring a stopped server's database back from a backup gnomon backup wrote",
		Long: `restore copies a backup gnomon backup wrote into the data directory (DATA/gnomon.db,
or --db), which must not hold a database: move a damaged one away first.
The server must be stopped: restore takes the data directory's lock. The
copy is checked and migrated to this release before it takes the
database's place.

When the server starts on it, it takes up where the backup left off:

  - a run in flight at the backup ends as its supervisor recorded it when
    DATA/runs still has its files, and is recorded lost (result "lost")
    otherwise;
  - the occurrences due since the backup are a downtime: each is run or
    recorded missed by its task's policy, once;
  - audit.log goes on after the lines it holds (written again from the
    records the backup holds when the file is gone).

Runs after the backup are numbered from the backup's last run on, as the
lost ones were.`,
		Args:        cobra.NoArgs,
		Annotations: map[string]string{noClient: "yes"},
		RunE: func(cmd *cobra.Command, _ []string) error {
			if from == "" {
				return usageErr("--from FILE is required: the backup to restore")
			}
			dir := dataDir()
			path, err := sqlitePath(db, dir, "restored")
			if err != nil {
				return err
			}
			lock, err := lockData(dir)
			if err != nil {
				return err
			}
			defer lock.Close()
			ctx := cmd.Context()
			st, err := sqlite.Restore(ctx, from, path)
			if err != nil {
				return err
			}
			defer st.Close()
			if err := scheduler.Restored(ctx, st, dir); err != nil {
				return fmt.Errorf("restore: audit log: %w", err)
			}
			snap, err := st.Load(ctx)
			if err != nil {
				return fmt.Errorf("restore: %w", err)
			}
			asOf := "no journal entry"
			if last, err := st.JournalBefore(ctx, "", 0, 1); err == nil && len(last) > 0 {
				asOf = "its last journal entry " + last[0].At.UTC().Format(time.RFC3339)
			}
			fmt.Fprintf(env.Stdout, "restored %s to %s: %d tasks, last run %d, %s; %d run(s) in flight at the backup\n",
				from, path, len(snap.Tasks), snap.LastRun, asOf, len(snap.Active))
			return nil
		},
	}
	c.Flags().StringVar(&from, "from", "", "the backup file to restore")
	c.Flags().StringVar(&db, "db", "", "the server's database, sqlite:PATH (default DATA/gnomon.db)")
	return c
}
