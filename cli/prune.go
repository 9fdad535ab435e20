package cli

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/gnomon-sched/gnomon/api"
	"github.com/gnomon-sched/gnomon/scheduler"
)

// pruneCmd runs a pass of the server's pruner now, or says what one would
// remove.
func pruneCmd(env *Env, client func() *api.Client) *cobra.Command {
	var (
		dry bool
		out *outputFormat
	)
	c := &cobra.Command{
		Use:   "prune [--dry-run] [-o json|yaml]",
		Short: "remove now what is older than the server's retention horizons (--dry-run: count what would go)",
		Long: `prune runs a pass of the server's pruner at once, as the server does every
10 minutes: the records older than their kind's horizon (server --retention,
a task's or group's keep_history) go, in short batches that never hold the
scheduler up, and never one a restart, a backfill, a data window, a retry
or audit.log still needs. It prints the horizons and the rows removed, by
kind. --dry-run counts what would go and removes nothing.

See "Retention" in docs/operations.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			res, err := client().Prune(cmd.Context(), dry)
			if err != nil {
				return err
			}
			if out.structured() {
				return out.write(env.Stdout, res)
			}
			verb := "removed"
			if res.DryRun {
				verb = "would remove"
			}
			fmt.Fprintf(env.Stdout, "retention: %s\nas of %s, %s:\n", res.Retention, timesOf(cmd, env).at(res.At), verb)
			tw := tabwriter.NewWriter(env.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
			n := res.Removed
			for _, row := range []struct {
				kind string
				n    int64
			}{{"journal entries", n.Journal}, {"runs", n.Runs}, {"fires", n.Fires}, {"audit records", n.Audit}, {"alerts", n.Alerts}, {"node log entries", n.NodeLog}} {
				fmt.Fprintf(tw, "%d\t  %s\n", row.n, row.kind)
			}
			return tw.Flush()
		},
	}
	c.Flags().BoolVar(&dry, "dry-run", false, "count what would be removed; remove nothing")
	out = addOutput(c, "the server's answer (POST /api/v1/prune, docs/api.md)")
	return c
}

// retentionFlag is server --retention KIND=RETENTION, repeatable: each
// sets one kind's horizon (scheduler.Retention.Set).
type retentionFlag struct{ r *scheduler.Retention }

func (f retentionFlag) String() string {
	if f.r == nil {
		return ""
	}
	return f.r.String()
}

func (f retentionFlag) Set(v string) error { return f.r.Set(v) }

func (retentionFlag) Type() string { return "KIND=RETENTION" }

// retentionUsage is --retention's help.
var retentionUsage = "how long a kind of record is kept, KIND=RETENTION, repeatable: KIND one of " + strings.Join(scheduler.RetentionKinds, ", ") +
	"; RETENTION a number of days, weeks or years (90d, 2w, 7y), a duration (36h) or forever; journal=checkpoint (the default) or journal=forever. Defaults: " +
	scheduler.DefaultRetention.String() + ". Each has a floor (docs/operations.md, \"Retention\")"
