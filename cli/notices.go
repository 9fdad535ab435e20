package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/gnomon-sched/gnomon/api"
	"github.com/gnomon-sched/gnomon/internal/termsafe"
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
			all := &api.AlertsResponse{Alerts: []api.AlertView{}}
			more, err := follow(count, func(n int, cursor string) (int, string, error) {
				res, err := client().ListAlerts(cmd.Context(), name, n, cursor)
				if err != nil {
					return 0, "", err
				}
				all.Alerts, all.Next = append(all.Alerts, res.Alerts...), res.Next
				return len(res.Alerts), res.Next, nil
			})
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSONOut(env.Stdout, all)
			}
			none := "no alerts yet"
			if name != "" {
				none += " for " + name
			}
			writeAlerts(env.Stdout, all, none)
			if more {
				fmt.Fprintf(env.Stderr, "more alerts were sent than the %d shown: raise -c to see them\n", count)
			}
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
		fmt.Fprintf(w, "%-6d %-17s %-20s %-11s %-8s %-8d %s\n", a.ID, stamp(a.Created), termsafe.String(a.Task), termsafe.String(string(a.Outcome)),
			termsafe.String(string(a.State)), a.Attempts, safeList(a.To, ","))
		if a.LastError != "" {
			fmt.Fprintf(w, "       last error: %s\n", termsafe.String(a.LastError))
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
		Short: "print audit records (NAME : LAUNCH : STOP : RESULT : STATUS[ : by IDENTITY][ : ended by IDENTITY]), oldest first, as audit.log holds them",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if count < 1 {
				return usageErr("-c must be at least 1, got %d", count)
			}
			// Pages are printed as they come; --json gathers them in one
			// answer, whose next goes on where it stops.
			all := &api.AuditResponse{Records: []api.AuditView{}}
			total, last := 0, after
			more, err := follow(count, func(n int, cursor string) (int, string, error) {
				res, err := client().ListAudit(cmd.Context(), after, n, cursor)
				if err != nil {
					return 0, "", err
				}
				total += len(res.Records)
				if asJSON {
					all.Records, all.Next = append(all.Records, res.Records...), res.Next
					return len(res.Records), res.Next, nil
				}
				// The lines are audit.log's, without a header.
				for _, r := range res.Records {
					fmt.Fprintln(env.Stdout, termsafe.String(r.Line))
					last = r.Seq
				}
				return len(res.Records), res.Next, nil
			})
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSONOut(env.Stdout, all)
			}
			if total == 0 && after > 0 {
				fmt.Fprintf(env.Stdout, "no audit records after %d\n", after)
			} else if total == 0 {
				fmt.Fprintln(env.Stdout, "no audit records yet")
			}
			if more {
				fmt.Fprintf(env.Stderr, "more audit records follow: gnomon audit --after %d\n", last)
			}
			return nil
		},
	}
	c.Flags().Int64Var(&after, "after", 0, "only records after this sequence number")
	c.Flags().IntVarP(&count, "count", "c", 100, "number of records")
	c.Flags().BoolVar(&asJSON, "json", false, "print the server's answer as JSON")
	return c
}
