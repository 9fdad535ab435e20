package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gnomon-sched/gnomon/api"
	"github.com/gnomon-sched/gnomon/calendar"
	"github.com/gnomon-sched/gnomon/engine"
	"github.com/gnomon-sched/gnomon/internal/termsafe"
	"github.com/gnomon-sched/gnomon/periods"
)

// backfillCmd runs the past occurrences of a task over a range, or
// reprocesses the periods of a timeperiod process; cancels a task's
// backfill, or says what remains of it.
func backfillCmd(env *Env, client func() *api.Client) *cobra.Command {
	var (
		from, to, zone      string
		dry, cancel, status bool
		out                 *outputFormat
		parallel            int
		params              []string
	)
	c := &cobra.Command{
		Use:   "backfill NAME --from TIME --to TIME [--dry-run] [--max-parallel N] [-p NAME=VALUE]... [--timezone ZONE] [-o json|yaml] | NAME --cancel | NAME --status",
		Short: "run the past occurrences of a task over a range, each once (or reprocess the periods of a timeperiod process); --cancel, --status",
		Long: `backfill runs the occurrences the time trigger of a task yields from --from to
--to, both included, each as that occurrence: the run's scheduled time (and
its GNOMON_SCHEDULED_TIME) is the occurrence, its trigger "backfill", and
it names who asked. For a configuration, the occurrences are the instants
at which the data events the server stored would have triggered it.

Each occurrence runs once, however often the backfill is asked for: one
that ran or was backfilled already is reported done, one an earlier
backfill still holds pending; one that was missed or skipped runs, and the
fire ledger (gnomon runs --fires) records it backfilled, the reason keeping
what it was. Only occurrences before the server's clock and before the
task's next occurrence are backfilled: later ones are listed as left to the
regular schedule, which runs them itself. The request is durable before
the command returns: a restart of the server goes on with it.

At most --max-parallel backfill runs of the task run at once (default 1),
in occurrence order, and the regular schedule goes first: see "Backfill"
in docs/semantics.md. --dry-run lists what would run and changes
nothing. --cancel drops the occurrences not started yet and kills the
backfill runs in flight (an abort of the task does too); --status lists
what remains.

For a timeperiod process, each finished period of its level in the range is
reprocessed, with the cascade of gnomon node reprocess; periods still
queued or running are left as they are.

TIME is an RFC 3339 instant (2026-03-08T02:00:00Z) or a local date and time
(2026-03-08 02:00; 2026-03-08 is its midnight) in --timezone, or without it
in the server's zone; for a process also a timeperiod key (YYYYMMDDHH, UTC).
Occurrences are shown in --timezone, else in the task's own zone, else in
the server's.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := oneTask(cmd, args, true)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			switch {
			case cancel && status:
				return usageErr("--cancel and --status exclude each other")
			case (cancel || status) && (from != "" || to != "" || dry || cmd.Flags().Changed("max-parallel") || len(params) > 0):
				return usageErr("--cancel and --status take no range, --dry-run, --max-parallel or --param")
			case cancel:
				resp, err := client().CancelBackfill(ctx, name)
				if err != nil {
					return err
				}
				return printBackfill(ctx, env, client(), resp, zone, *out)
			case status:
				st, err := client().BackfillStatus(ctx, name)
				if err != nil {
					return err
				}
				if out.structured() {
					return out.write(env.Stdout, st)
				}
				show, err := showZone(ctx, client(), name, zone)
				if err != nil {
					return err
				}
				writeBackfillStatus(env.Stdout, st, show)
				return nil
			case from == "" || to == "":
				return usageErr("--from and --to are required: the range to backfill, both included")
			case parallel < 1:
				return usageErr("--max-parallel must be at least 1, got %d", parallel)
			}
			values, err := paramValues(params)
			if err != nil {
				return err
			}
			req := api.BackfillRequest{From: from, To: to, MaxParallel: parallel, DryRun: dry, Params: values}
			if zone != "" {
				loc, err := zoneFlag(zone, nil)
				if err != nil {
					return err
				}
				for _, v := range []struct {
					flag string
					val  *string
				}{{"--from", &req.From}, {"--to", &req.To}} {
					t, err := calendar.ParseInstant(*v.val, loc)
					if err != nil {
						if _, kerr := periods.ParseKey(*v.val); kerr == nil {
							continue // a timeperiod key, in UTC
						}
						return usageErr("%s: %v", v.flag, err)
					}
					*v.val = t.UTC().Format(time.RFC3339Nano)
				}
			}
			var resp *api.BackfillResponse
			err = withProgress(ctx, env, "backfill of "+termsafe.String(name), nil, func() (err error) {
				resp, err = client().Backfill(ctx, name, req)
				return err
			})
			if err != nil {
				return err
			}
			return printBackfill(ctx, env, client(), resp, zone, *out)
		},
	}
	f := c.Flags()
	jobFlag(c, "the task (or timeperiod process)")
	f.StringVar(&from, "from", "", "first instant of the range")
	f.StringVar(&to, "to", "", "last instant of the range, included")
	f.BoolVar(&dry, "dry-run", false, "list what the backfill would run, and change nothing")
	f.IntVar(&parallel, "max-parallel", 1, "most backfill runs of the task at once")
	f.BoolVar(&cancel, "cancel", false, "cancel the task's backfill: drop what has not started, kill its runs in flight")
	f.BoolVar(&status, "status", false, "list what remains of the task's backfill")
	f.StringVar(&zone, "timezone", "", "time zone local times are read and occurrences shown in (default: the task's, else the server's)")
	out = addOutput(c, "the server's answer (POST /api/v1/tasks/{name}/backfill, docs/api.md)")
	paramFlag(c, &params)
	return c
}

// showZone returns the zone to show a task's occurrences in: zone, else
// the task's own, else the server's.
func showZone(ctx context.Context, c *api.Client, name, zone string) (*time.Location, error) {
	if zone != "" {
		return zoneFlag(zone, nil)
	}
	if v, err := c.Task(ctx, name); err == nil && v.Task.Timezone != "" {
		if loc, err := time.LoadLocation(v.Task.Timezone); err == nil {
			return loc, nil
		}
	}
	info, err := c.Info(ctx)
	if err != nil {
		return nil, err
	}
	loc, err := time.LoadLocation(info.Timezone)
	if err != nil {
		loc = time.UTC // a zone this host does not know: instants stay exact
	}
	return loc, nil
}

// printBackfill prints what a backfill, its dry run or its cancel did.
func printBackfill(ctx context.Context, env *Env, c *api.Client, resp *api.BackfillResponse, zone string, out outputFormat) error {
	if out.structured() {
		return out.write(env.Stdout, resp)
	}
	if resp.Process {
		writeBackfillPeriods(env.Stdout, resp)
		return nil
	}
	show, err := showZone(ctx, c, resp.Task, zone)
	if err != nil {
		return err
	}
	writeBackfill(env.Stdout, resp, show)
	return nil
}

// backfillActions are the actions as the command line shows them.
var backfillActions = map[engine.BackfillAction]string{
	engine.BackfillQueued:    "queued",
	engine.BackfillDone:      "done",
	engine.BackfillPending:   "pending",
	engine.BackfillScheduled: "scheduled",
	engine.BackfillCanceled:  "canceled",
	engine.BackfillKilled:    "killed",
}

// writeBackfill prints one line per occurrence (its instant in show, what
// the backfill did, the run, why), then the summary.
func writeBackfill(w io.Writer, resp *api.BackfillResponse, show *time.Location) {
	var b strings.Builder
	for _, o := range resp.Occurrences {
		did := engine.BackfillAction(o.Action)
		action := backfillActions[did]
		if action == "" {
			action = termsafe.String(o.Action)
		}
		if resp.DryRun && did == engine.BackfillQueued {
			action = "would run"
		}
		line := fmt.Sprintf("%s %-9s", o.Scheduled.In(show).Format(time.RFC3339), action)
		if o.RunID != 0 && did != engine.BackfillDone {
			line += fmt.Sprintf(" run %d", o.RunID)
		}
		if o.Reason != "" {
			line += " " + termsafe.String(o.Reason)
		}
		fmt.Fprintln(&b, strings.TrimRight(line, " "))
	}
	fmt.Fprintln(&b, termsafe.String(resp.Message))
	fmt.Fprint(w, b.String())
}

// writeBackfillPeriods prints what a backfill of a process did with each
// period, the changes of its cascade, then the summary.
func writeBackfillPeriods(w io.Writer, resp *api.BackfillResponse) {
	for _, p := range resp.Periods {
		what := "left as it is (queued or running)"
		switch {
		case p.Reprocessed && resp.DryRun:
			what = "would be reprocessed"
		case p.Reprocessed:
			what = "reprocessed"
		}
		fmt.Fprintf(w, "%s %s %s: %s\n", termsafe.String(resp.Task), p.Timeperiod, stateName(p.State), what)
	}
	for _, c := range resp.Changed {
		fmt.Fprintf(w, "%s %s %s -> %s\n", termsafe.String(c.Process), c.Timeperiod, stateName(c.From), stateName(c.To))
	}
	fmt.Fprintln(w, termsafe.String(resp.Message))
}

// writeBackfillStatus prints what remains of a task's backfill.
func writeBackfillStatus(w io.Writer, st *api.BackfillStatus, show *time.Location) {
	if len(st.Waiting)+len(st.Running) == 0 {
		fmt.Fprintf(w, "no backfill of %s is under way\n", termsafe.String(st.Task))
		return
	}
	fmt.Fprintf(w, "backfill of %s: %d run(s) in flight, %d occurrence(s) waiting (at most %d at once)\n",
		termsafe.String(st.Task), len(st.Running), len(st.Waiting), max(1, st.MaxParallel))
	for _, r := range st.Running {
		fmt.Fprintf(w, "%s running   run %d since %s\n", r.Scheduled.In(show).Format(time.RFC3339), r.ID, r.Start.In(show).Format(time.RFC3339))
	}
	for _, it := range st.Waiting {
		line := fmt.Sprintf("%s waiting", it.Scheduled.In(show).Format(time.RFC3339))
		if it.By != "" {
			line += " asked by " + termsafe.String(it.By)
		}
		fmt.Fprintln(w, line)
	}
}
