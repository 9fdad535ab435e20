package cli

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gnomon-sched/gnomon"
	"github.com/gnomon-sched/gnomon/store"
)

// migrateCmd copies a stopped server's whole state and history from one
// store to another, empty one.
func migrateCmd(env *Env) *cobra.Command {
	var from, to string
	c := &cobra.Command{
		Use:   "migrate --from sqlite:DIR --to postgres://USER@HOST:PORT/DB",
		Short: "move a stopped server's state and history to another database",
		Long: `migrate copies everything a stopped server keeps (definitions, task states,
runs, fires, the journal, the windows of data configurations, alerts and
their attempts, the audit trail, timeperiod trees) from one database to an
empty one, keeping every ID and sequence number, then reads the copy back
and compares the counts. The source is a data directory (its gnomon.db) or
a SQLite file; it is refused while a server runs on it (migrate takes the
data directory's lock, as a server does): stop the server first. A target
that holds anything is refused, with how to empty it. Then start the server
with --db TARGET.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if from == "" || to == "" {
				return usageErr("--from and --to are required")
			}
			path, ok := strings.CutPrefix(from, "sqlite:")
			if !ok {
				return usageErr("--from: %q should be sqlite:DIR or sqlite:FILE", from)
			}
			fi, err := os.Stat(path)
			if err != nil {
				return usageErr("--from: %v", err)
			}
			dir := filepath.Dir(path)
			if fi.IsDir() {
				dir, path = path, filepath.Join(path, "gnomon.db")
				if _, err := os.Stat(path); err != nil {
					return usageErr("--from: %s holds no gnomon.db", dir)
				}
			}
			// The source's data directory is locked for the copy, as a
			// server locks it: a server running on it is refused here, and
			// none starts on it until the copy is done. A file outside a
			// data directory (no server.lock beside it) is taken as is.
			if _, err := os.Stat(filepath.Join(dir, LockFile)); fi.IsDir() || err == nil {
				lock, err := takeLock(dir)
				var held *heldError
				if errors.As(err, &held) {
					return &exitError{code: ExitRejected, msg: fmt.Sprintf("--from: %s is in use by a running gnomon server (PID %s holds %s): stop it first, "+
						"so that the copy is of a state no one changes, then migrate", dir, held.pid, held.path)}
				}
				if err != nil {
					return err
				}
				defer lock.Close()
			}
			ctx := cmd.Context()
			src, err := gnomon.OpenStore(ctx, "sqlite:"+path, "")
			if err != nil {
				return fmt.Errorf("--from: %w", err)
			}
			defer src.Close()
			dst, err := gnomon.OpenStore(ctx, to, "")
			if err != nil {
				return fmt.Errorf("--to: %w", err)
			}
			defer dst.Close()
			var counts store.Counts
			err = withProgress(ctx, env, "migrate: copying "+from+" and reading the copy back", nil, func() (err error) {
				counts, err = store.Migrate(ctx, src, dst)
				return err
			})
			if errors.Is(err, store.ErrNotEmpty) {
				return &exitError{code: ExitRejected, msg: fmt.Sprintf("--to: %v: migrate copies into an empty database only. Give it a new database "+
					"(createdb -h HOST -U USER NEWDB, then --to postgres://USER@HOST:PORT/NEWDB), or empty this one, which deletes all it holds: "+
					"psql %s -c 'DROP SCHEMA public CASCADE; CREATE SCHEMA public'", err, shellQuote(redacted(to)))}
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(env.Stdout, "copied and verified: %d tasks, %d runs, %d fires, %d journal entries, %d window events, "+
				"%d alerts (%d attempts), %d audit records, %d cursors, %d tree files, %d nodes (%d log entries), %d tokens, %d calendars\n",
				counts.Tasks, counts.Runs, counts.Fires, counts.Journal, counts.Windows, counts.Alerts, counts.Attempts,
				counts.Audit, counts.Cursors, counts.TreeFiles, counts.Nodes, counts.NodeLog, counts.Tokens, counts.Calendars)
			return nil
		},
	}
	c.Flags().StringVar(&from, "from", "", "the source: sqlite:DIR (a data directory) or sqlite:FILE")
	c.Flags().StringVar(&to, "to", "", "the target database: postgres://USER@HOST:PORT/DB (empty)")
	return c
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// redacted is a database URL without its password, for a message.
func redacted(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil || u.User == nil {
		return dsn
	}
	return u.Redacted()
}
