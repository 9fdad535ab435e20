package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gnomon-sched/gnomon/api"
	"github.com/gnomon-sched/gnomon/engine"
	"github.com/gnomon-sched/gnomon/internal/termsafe"
)

// whyCmd explains why a task is not running, from the engine's own state,
// and with --at what became of one of its occurrences.
func whyCmd(env *Env, client func() *api.Client) *cobra.Command {
	var (
		at  string
		out *outputFormat
	)
	c := &cobra.Command{
		Use:   "why NAME [--at TIME] [-o json|yaml]",
		Short: "say why a task is not running now (the condition clauses that do not hold, recursively; frozen; a worker slot; its next trigger), and with --at what became of its occurrence then",
		Args:  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := oneTask(cmd, args, true)
			if err != nil {
				return err
			}
			v, err := client().Why(cmd.Context(), name, at)
			if err != nil {
				return err
			}
			if out.structured() {
				return out.write(env.Stdout, v)
			}
			// Instants in the one format of the command line (local, or
			// --utc), as every other command prints them.
			times := timesOf(cmd, env)
			text := func(s string) string { return termsafe.String(engine.FormatInstants(s, times.at)) }
			if v.Occurrence != "" {
				fmt.Fprintln(env.Stdout, text(v.Occurrence))
			}
			for _, r := range v.Reasons {
				fmt.Fprintf(env.Stdout, "%s%s\n", strings.Repeat("  ", r.Depth), text(r.Text))
			}
			if v.Failed != nil {
				writeRun(env.Stdout, v.Failed, "  ", times)
			}
			return nil
		},
	}
	jobFlag(c, "the task")
	c.Flags().StringVar(&at, "at", "", "an occurrence: RFC 3339, or a local date and time in the server's zone (YYYY-MM-DD HH:MM)")
	out = addOutput(c, "the answer as the API gives it (GET /api/v1/tasks/{name}/why, docs/api.md)")
	return c
}
