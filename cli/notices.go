package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gnomon-sched/gnomon/api"
)

func alertsCmd(env *Env, client func() *api.Client) *cobra.Command {
	var (
		name   string
		count  int
		asJSON bool
	)
	c := &cobra.Command{
		Use:   "alerts [-j TASK] [-c N]",
		Short: "list email alerts, newest first, and what became of each (sent, pending retry, failed)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if count < 1 {
				return usageErr("-c must be at least 1, got %d", count)
			}
			res, err := client().Alerts(cmd.Context(), name, count)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSONOut(env.Stdout, res)
			}
			none := "no alerts yet"
			if name != "" {
				none += " for " + name
			}
			writeAlerts(env.Stdout, res, none)
			return nil
		},
	}
	c.Flags().StringVarP(&name, "job", "j", "", "only this task's alerts")
	c.Flags().IntVarP(&count, "count", "c", 20, "number of alerts")
	c.Flags().BoolVar(&asJSON, "json", false, "print the server's answer as JSON, with every attempt")
	return c
}

// writeAlerts prints alerts under a header, and the line none when there
// are none.
func writeAlerts(w io.Writer, res *api.AlertsResponse, none string) {
	fmt.Fprintf(w, "%-6s %-17s %-20s %-11s %-8s %-8s %s\n", "Id", "Created", "Task", "Outcome", "State", "Attempts", "To")
	if len(res.Alerts) == 0 {
		fmt.Fprintln(w, none)
	}
	for _, a := range res.Alerts {
		fmt.Fprintf(w, "%-6d %-17s %-20s %-11s %-8s %-8d %s\n", a.ID, stamp(a.Created), a.Task, a.Outcome, a.State, a.Attempts, strings.Join(a.To, ","))
		if a.LastError != "" {
			fmt.Fprintf(w, "       last error: %s\n", a.LastError)
		}
		if !a.NextAt.IsZero() {
			fmt.Fprintf(w, "       next attempt: %s\n", stamp(a.NextAt))
		}
	}
}

func auditCmd(env *Env, client func() *api.Client) *cobra.Command {
	var (
		after  int64
		count  int
		asJSON bool
	)
	c := &cobra.Command{
		Use:   "audit [--after SEQ] [-c N]",
		Short: "print audit records (NAME : LAUNCH : STOP : RESULT : STATUS), oldest first, as audit.log holds them",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if count < 1 {
				return usageErr("-c must be at least 1, got %d", count)
			}
			res, err := client().Audit(cmd.Context(), after, count)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSONOut(env.Stdout, res)
			}
			// The lines are audit.log's, without a header.
			if len(res.Records) == 0 && after > 0 {
				fmt.Fprintf(env.Stdout, "no audit records after %d\n", after)
			} else if len(res.Records) == 0 {
				fmt.Fprintln(env.Stdout, "no audit records yet")
			}
			for _, r := range res.Records {
				fmt.Fprintln(env.Stdout, r.Line)
			}
			return nil
		},
	}
	c.Flags().Int64Var(&after, "after", 0, "only records after this sequence number")
	c.Flags().IntVarP(&count, "count", "c", 100, "number of records")
	c.Flags().BoolVar(&asJSON, "json", false, "print the server's answer as JSON")
	return c
}
