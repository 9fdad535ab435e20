package cli

import (
	"fmt"
	"io"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/gnomon-sched/gnomon/api"
	"github.com/gnomon-sched/gnomon/internal/termsafe"
	"github.com/gnomon-sched/gnomon/scheduler"
)

func postEventCmd(env *Env, client func() *api.Client, now func() time.Time) *cobra.Command {
	var (
		typ, resource, ts string
		asJSON            bool
	)
	c := &cobra.Command{
		Use:   "post-event --type T --resource R [--timestamp TS]",
		Short: "send a data event (FILE, TABLE, TIME_BASED) to the server's /events endpoint",
		Long: `post-event sends one data event to /events, as a producer would, and prints
the dependencies it validated and the configurations it triggered.

The timestamp is YYYY-MM-DDThh:mm:ss[.fraction][Z|±hh:mm] (a space may
replace the T; without a zone it is UTC). It defaults to now.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if typ == "" || resource == "" {
				return usageErr("--type and --resource are required")
			}
			// The request is JSON, whose encoder would send a byte that is
			// not UTF-8 as U+FFFD without a word.
			for _, v := range []struct{ flag, value string }{{"--type", typ}, {"--resource", resource}, {"--timestamp", ts}} {
				if !utf8.ValidString(v.value) {
					return usageErr("%s %s is not UTF-8 text", v.flag, termsafe.String(v.value))
				}
			}
			if ts == "" {
				ts = now().UTC().Format(time.RFC3339Nano)
			}
			res, err := client().PostEvent(cmd.Context(), typ, resource, ts)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSONOut(env.Stdout, res)
			}
			writePosted(env.Stdout, res)
			return nil
		},
	}
	c.Flags().StringVar(&typ, "type", "", "event type: FILE, TABLE, TIME_BASED (or TIME_BASED_CRON)")
	c.Flags().StringVar(&resource, "resource", "", "resource id: a file path, a table name, a cron name")
	c.Flags().StringVar(&ts, "timestamp", "", "event timestamp (default now)")
	c.Flags().BoolVar(&asJSON, "json", false, "print the server's answer as JSON")
	return c
}

func writePosted(w io.Writer, res *api.EventsResponse) {
	if len(res.Validated) == 0 {
		fmt.Fprintln(w, "validated: nothing")
	}
	for _, v := range res.Validated {
		fmt.Fprintf(w, "validated: %s %s %s\n", termsafe.String(v.Configuration), termsafe.String(string(v.Type)), termsafe.String(v.Resource))
	}
	if len(res.Triggered) == 0 {
		fmt.Fprintln(w, "triggered: nothing")
	}
	for _, t := range res.Triggered {
		fmt.Fprintf(w, "triggered: %s\n", termsafe.String(t))
	}
}

func eventsCmd(env *Env, client func() *api.Client) *cobra.Command {
	var (
		name   string
		count  int
		asJSON bool
	)
	c := &cobra.Command{
		Use:   "events [-j CONFIGURATION] [-c N]",
		Short: "list the data events the server accepted, newest first, and the configurations that stored them",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if count < 1 {
				return usageErr("-c must be at least 1, got %d", count)
			}
			// Pages are printed as they come; --json gathers them in one
			// answer, whose next goes on where it stops.
			all := &api.ReceivedResponse{Events: []scheduler.Received{}}
			total := 0
			more, err := follow(count, func(n int, cursor string) (int, string, error) {
				res, err := client().ListReceived(cmd.Context(), name, n, cursor)
				if err != nil {
					return 0, "", err
				}
				total += len(res.Events)
				if asJSON {
					all.Events, all.Next = append(all.Events, res.Events...), res.Next
					return len(res.Events), res.Next, nil
				}
				if cursor == "" {
					fmt.Fprintf(env.Stdout, "%-17s %-30s %-10s %s\n", "Received", "Timestamp", "Type", "Resource -> stored by")
				}
				for _, e := range res.Events {
					by := safeList(e.Accepted, ", ")
					if by == "" {
						by = "nothing"
					}
					fmt.Fprintf(env.Stdout, "%-17s %-30s %-10s %s -> %s\n", stamp(e.At), e.TS.UTC().Format(time.RFC3339Nano),
						termsafe.String(string(e.Type)), termsafe.String(e.Resource), by)
				}
				return len(res.Events), res.Next, nil
			})
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSONOut(env.Stdout, all)
			}
			if total == 0 && name != "" {
				fmt.Fprintf(env.Stdout, "no data events stored by %s yet\n", termsafe.String(name))
			} else if total == 0 {
				fmt.Fprintln(env.Stdout, "no data events received yet")
			}
			if more {
				fmt.Fprintf(env.Stderr, "more events were received than the %d shown: raise -c to see them\n", count)
			}
			return nil
		},
	}
	c.Flags().StringVarP(&name, "job", "j", "", "only the events this configuration stored")
	c.Flags().IntVarP(&count, "count", "c", 20, "number of events")
	c.Flags().BoolVar(&asJSON, "json", false, "print the server's answer as JSON")
	return c
}
