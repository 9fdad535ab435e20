package cli

import (
	"fmt"
	"io"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/gnomon-sched/gnomon/api"
	"github.com/gnomon-sched/gnomon/internal/termsafe"
)

func alertsCmd(env *Env, client func() *api.Client) *cobra.Command {
	var (
		count int
		out   *outputFormat
	)
	c := &cobra.Command{
		Use:   "alerts [NAME] [-n N] [-o json|yaml|wide]",
		Short: "list email alerts, newest first, and what became of each (sent, pending retry, failed)",
		Args:  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := oneTask(cmd, args, false)
			if err != nil {
				return err
			}
			if count < 1 {
				return usageErr("-n must be at least 1, got %d", count)
			}
			alerts, next, more, err := collect(count, func(n int, cursor string) ([]api.AlertView, string, error) {
				res, err := client().ListAlerts(cmd.Context(), name, n, cursor)
				if err != nil {
					return nil, "", err
				}
				return res.Alerts, res.Next, nil
			})
			if err != nil {
				return err
			}
			all := &api.AlertsResponse{Alerts: alerts, Next: next}
			if out.structured() {
				return out.write(env.Stdout, all)
			}
			none := "no alerts yet"
			if name != "" {
				none += " for " + termsafe.String(name)
			}
			writeAlerts(env.Stdout, all, none, timesOf(cmd, env))
			if more {
				fmt.Fprintf(env.Stderr, "more alerts were sent than the %d shown: raise -n to see them\n", count)
			}
			return nil
		},
	}
	jobFlag(c, "only this task's alerts")
	addCount(c, &count, 20, "number of alerts")
	out = addOutput(c, "the server's answer, with every attempt (GET /api/v1/alerts, docs/api.md)")
	return c
}

// writeAlerts prints alerts as a table, or the line none when there are
// none.
func writeAlerts(w io.Writer, res *api.AlertsResponse, none string, tf timeFormat) {
	if len(res.Alerts) == 0 {
		fmt.Fprintln(w, none)
		return
	}
	t := newTable(w, "id", "created", "task", "outcome", "state", "attempts", "to", "next attempt", "last error")
	for _, a := range res.Alerts {
		t.row(strconv.FormatInt(a.ID, 10), tf.at(a.Created), termsafe.String(a.Task), termsafe.String(string(a.Outcome)),
			termsafe.String(string(a.State)), strconv.Itoa(a.Attempts), safeList(a.To, ","), tf.at(a.NextAt), dash(termsafe.String(a.LastError)))
	}
	t.flush()
}

func auditCmd(env *Env, client func() *api.Client) *cobra.Command {
	var (
		after int64
		count int
		out   *outputFormat
	)
	c := &cobra.Command{
		Use:   "audit [--after SEQ] [-n N] [-o json|yaml]",
		Short: "print audit records (NAME : LAUNCH : STOP : RESULT : STATUS[ : by IDENTITY][ : ended by IDENTITY]), oldest first, as audit.log holds them",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if count < 1 {
				return usageErr("-n must be at least 1, got %d", count)
			}
			asJSON := out.structured()
			// Pages are printed as they come; -o json or yaml gathers them in one
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
				return out.write(env.Stdout, all)
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
	addCount(c, &count, 100, "number of records")
	out = addOutput(c, "the server's answer (GET /api/v1/audit, docs/api.md)")
	return c
}
