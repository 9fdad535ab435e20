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

func postEventCmd(env *Env, client func() *api.Client) *cobra.Command {
	var (
		typ, resource, ts string
		out               *outputFormat
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
				ts = env.Clock.Now().UTC().Format(time.RFC3339Nano)
			}
			res, err := client().PostEvent(cmd.Context(), typ, resource, ts)
			if err != nil {
				return err
			}
			if out.structured() {
				return out.write(env.Stdout, res)
			}
			writePosted(env.Stdout, res)
			return nil
		},
	}
	c.Flags().StringVar(&typ, "type", "", "event type: FILE, TABLE, TIME_BASED (or TIME_BASED_CRON)")
	c.Flags().StringVar(&resource, "resource", "", "resource id: a file path, a table name, a cron name")
	c.Flags().StringVar(&ts, "timestamp", "", "event timestamp (default now)")
	out = addOutput(c, "the server's answer (POST /events, docs/api.md)")
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
		count int
		out   *outputFormat
	)
	c := &cobra.Command{
		Use:   "events [NAME] [-n N] [-o json|yaml|wide]",
		Short: "list the data events the server accepted, newest first, and the configurations that stored them",
		Args:  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := oneTask(cmd, args, false)
			if err != nil {
				return err
			}
			if count < 1 {
				return usageErr("-n must be at least 1, got %d", count)
			}
			events, next, more, err := collect(count, func(n int, cursor string) ([]scheduler.Received, string, error) {
				res, err := client().ListReceived(cmd.Context(), name, n, cursor)
				if err != nil {
					return nil, "", err
				}
				return res.Events, res.Next, nil
			})
			if err != nil {
				return err
			}
			all := &api.ReceivedResponse{Events: events, Next: next}
			if out.structured() {
				return out.write(env.Stdout, all)
			}
			switch {
			case len(all.Events) == 0 && name != "":
				fmt.Fprintf(env.Stdout, "no data events stored by %s yet\n", termsafe.String(name))
			case len(all.Events) == 0:
				fmt.Fprintln(env.Stdout, "no data events received yet")
			default:
				tf := timesOf(cmd, env)
				t := newTable(env.Stdout, "received", "timestamp", "type", "resource", "stored by")
				for _, e := range all.Events {
					by := safeList(e.Accepted, ", ")
					if by == "" {
						by = "nothing"
					}
					t.row(tf.at(e.At), tf.at(e.TS), termsafe.String(string(e.Type)), termsafe.String(e.Resource), by)
				}
				t.flush()
			}
			if more {
				fmt.Fprintf(env.Stderr, "more events were received than the %d shown: raise -n to see them\n", count)
			}
			return nil
		},
	}
	jobFlag(c, "only the events this configuration stored")
	addCount(c, &count, 20, "number of events")
	out = addOutput(c, "the server's answer (GET /api/v1/events, docs/api.md)")
	return c
}
