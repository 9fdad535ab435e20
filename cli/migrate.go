package cli

import (
	"errors"
	"fmt"
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
and compares the counts. It refuses a target that holds anything. The
source is a data directory (its gnomon.db) or a SQLite file; stop the
server first. Then start it with --db TARGET.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if from == "" || to == "" {
				return usageErr("--from and --to are required")
			}
			path, ok := strings.CutPrefix(from, "sqlite:")
			if !ok {
				return usageErr("--from: %q should be sqlite:DIR or sqlite:FILE", from)
			}
			if fi, err := os.Stat(path); err != nil {
				return usageErr("--from: %v", err)
			} else if fi.IsDir() {
				path = filepath.Join(path, "gnomon.db")
				if _, err := os.Stat(path); err != nil {
					return usageErr("--from: %s holds no gnomon.db", filepath.Dir(path))
				}
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
			counts, err := store.Migrate(ctx, src, dst)
			if errors.Is(err, store.ErrNotEmpty) {
				return usageErr("--to: %v: migrate copies into an empty database only", err)
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
