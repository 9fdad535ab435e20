package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gnomon-sched/gnomon/api"
	"github.com/gnomon-sched/gnomon/calendar"
	"github.com/gnomon-sched/gnomon/defs"
	"github.com/gnomon-sched/gnomon/internal/termsafe"
)

// hostZone returns the host's time zone under its IANA name when it can be
// found ($TZ, then the /etc/localtime link), so that it prints as a name
// rather than "Local".
func hostZone(getenv func(string) string) *time.Location {
	if tz := strings.TrimPrefix(getenv("TZ"), ":"); tz != "" {
		if l, err := time.LoadLocation(tz); err == nil {
			return l
		}
	}
	if target, err := os.Readlink("/etc/localtime"); err == nil {
		if _, name, ok := strings.Cut(filepath.ToSlash(target), "zoneinfo/"); ok {
			if l, err := time.LoadLocation(name); err == nil {
				return l
			}
		}
	}
	return time.Local
}

// zoneFlag resolves a --timezone value, empty meaning the host's zone.
func zoneFlag(name string, getenv func(string) string) (*time.Location, error) {
	if name == "" {
		return hostZone(getenv), nil
	}
	l, err := time.LoadLocation(name)
	if err != nil || name == "Local" {
		return nil, usageErr("--timezone: unknown time zone %q (want an IANA name such as Europe/Paris)", name)
	}
	return l, nil
}

func forecastCmd(env *Env, client func() *api.Client) *cobra.Command {
	var (
		name, from, to, file, zone string
		out                        *outputFormat
		limit                      int
	)
	c := &cobra.Command{
		Use:   "forecast [NAME] [--from TIME] [--to TIME] [--timezone ZONE] [-f FILE] [-o json|yaml]",
		Short: "list planned fire instants, from the server or offline from a definition file",
		Long: `forecast lists the instants at which time triggers will fire, one line per
fire: the instant in RFC 3339 with its UTC offset, then the task, sorted by
instant then name. Instants are shown in --timezone; without it, in the
task's own zone when one task is asked for (-j) and it has one, else in the
server's zone (with -f: the host's).

TIME is an RFC 3339 instant (2026-03-08T07:00:00Z) or a local date and time
(2026-03-08 02:30) in --timezone, or without it in the server's zone (with
-f: the host's). --from defaults to now and --to to a day later.

With -f the file is read offline: no server is needed, and calendars without
a timezone of their own use --timezone (default the host's zone); the named
calendars the file defines apply (the .ics files it names are read from
beside it).

An occurrence on a day of the task's exclude_calendar is listed marked
"(excluded by calendar NAME: skipped, not run)": the scheduler records it
skipped. Days that are not in a task's run_calendar have no occurrence.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if _, err := oneTask(cmd, args, false); err != nil {
				return err
			}
			if limit < 1 {
				return usageErr("--limit must be at least 1")
			}
			var (
				resp *api.ForecastResponse
				show *time.Location // the zone instants are shown in
				err  error
			)
			if file != "" {
				resp, show, err = offlineForecast(env, file, name, from, to, zone, limit)
			} else {
				resp, show, err = serverForecast(cmd.Context(), client(), name, from, to, zone, limit)
			}
			if err != nil {
				return err
			}
			if out.structured() {
				return out.write(env.Stdout, resp)
			}
			writeForecast(env.Stdout, resp, name, show)
			if resp.Truncated {
				fmt.Fprintf(env.Stderr, "forecast stopped after %d fires; narrow --from/--to or raise --limit\n", len(resp.Fires))
			}
			return nil
		},
	}
	f := c.Flags()
	f.StringVarP(&name, "job", "j", "", "only this task (or give it as NAME)")
	f.StringVar(&from, "from", "", "first instant (default now)")
	f.StringVar(&to, "to", "", "end of the range, excluded (default a day after --from)")
	f.StringVarP(&file, "file", "f", "", "forecast the definitions of this file, offline")
	f.StringVar(&zone, "timezone", "", "time zone instants are shown in and local times are read in; with -f also that of calendars without their own (default: the task's, else the server's or, with -f, the host's)")
	out = addOutput(c, "the fires, instants in UTC, as the API answers (GET /api/v1/forecast, docs/api.md)")
	f.IntVar(&limit, "limit", 10000, "most fires listed")
	return c
}

// writeForecast prints one line per fire, the instant in RFC 3339 in zone
// show, or a line saying that nothing is planned.
func writeForecast(w io.Writer, resp *api.ForecastResponse, name string, show *time.Location) {
	var b strings.Builder
	if len(resp.Fires) == 0 {
		what := "no fires planned"
		if name != "" {
			what += " for " + termsafe.String(name)
		}
		fmt.Fprintf(&b, "%s from %s to %s\n", what, resp.From.In(show).Format(time.RFC3339), resp.To.In(show).Format(time.RFC3339))
	}
	for _, p := range resp.Fires {
		fmt.Fprintf(&b, "%s %s", p.At.In(show).Format(time.RFC3339), termsafe.String(p.Task))
		if p.Excluded != "" {
			fmt.Fprintf(&b, " (excluded by calendar %s: skipped, not run)", termsafe.String(p.Excluded))
		}
		b.WriteByte('\n')
	}
	fmt.Fprint(w, b.String())
}

// serverForecast asks the server for a forecast, and tells the zone to
// show it in: zone, else the task's own, else the server's. Local times in
// from and to are read in zone when it is given (else by the server, in
// its own).
func serverForecast(ctx context.Context, c *api.Client, name, from, to, zone string, limit int) (*api.ForecastResponse, *time.Location, error) {
	var show *time.Location
	if zone != "" {
		loc, err := zoneFlag(zone, nil)
		if err != nil {
			return nil, nil, err
		}
		show = loc
		for _, v := range []*string{&from, &to} {
			if *v == "" {
				continue
			}
			t, err := calendar.ParseInstant(*v, loc)
			if err != nil {
				flag := "--from"
				if v == &to {
					flag = "--to"
				}
				return nil, nil, usageErr("%s: %v", flag, err)
			}
			*v = t.UTC().Format(time.RFC3339Nano)
		}
	}
	resp, err := c.Forecast(ctx, name, from, to, limit)
	if err != nil {
		return nil, nil, err
	}
	if show != nil {
		return resp, show, nil
	}
	if name != "" {
		v, err := c.Task(ctx, name)
		if err != nil {
			return nil, nil, err
		}
		if v.Task.Timezone != "" {
			if loc, err := time.LoadLocation(v.Task.Timezone); err == nil {
				return resp, loc, nil
			}
		}
	}
	info, err := c.Info(ctx)
	if err != nil {
		return nil, nil, err
	}
	loc, err := time.LoadLocation(info.Timezone)
	if err != nil {
		loc = time.UTC // a zone this host does not know: instants stay exact
	}
	return resp, loc, nil
}

// offlineForecast forecasts a definition file without a server, and tells
// the zone to show it in: zone (default the host's), or the task's own
// when one task is asked for and zone is not given.
func offlineForecast(env *Env, file, name, from, to, zone string, limit int) (*api.ForecastResponse, *time.Location, error) {
	loc, err := zoneFlag(zone, env.Getenv)
	if err != nil {
		return nil, nil, err
	}
	start, end, err := forecastRange(from, to, loc, env.Clock.Now())
	if err != nil {
		return nil, nil, err
	}
	res, days, err := offlineDefinitions(file, start, env.Stderr)
	if err != nil {
		return nil, nil, err
	}
	scheds := map[string]calendar.Schedule{}
	for n, t := range res.Tasks {
		if name != "" && n != name {
			continue
		}
		if s, err := calendar.ForTaskWith(t, loc, days); err == nil {
			scheds[n] = s
		}
	}
	t, ok := res.Tasks[name]
	if name != "" && !ok {
		return nil, nil, &exitError{code: ExitRejected, msg: fmt.Sprintf("task %s not found in %s", name, file)}
	}
	show := loc
	if name != "" && zone == "" && t.Timezone != "" {
		if l, err := time.LoadLocation(t.Timezone); err == nil {
			show = l
		}
	}
	fires, more := calendar.Forecast(scheds, start, end, limit)
	if fires == nil {
		fires = []calendar.Planned{}
	}
	return &api.ForecastResponse{From: start, To: end, Fires: fires, Truncated: more}, show, nil
}

func forecastRange(from, to string, loc *time.Location, now time.Time) (time.Time, time.Time, error) {
	start := now.UTC()
	var err error
	if from != "" {
		if start, err = calendar.ParseInstant(from, loc); err != nil {
			return start, start, usageErr("--from: %v", err)
		}
	}
	end := start.Add(24 * time.Hour)
	if to != "" {
		if end, err = calendar.ParseInstant(to, loc); err != nil {
			return start, end, usageErr("--to: %v", err)
		}
	}
	if end.Before(start) {
		return start, end, usageErr("--to is before --from")
	}
	return start, end, nil
}

// rejected turns definition errors into the rejected exit code, one line
// per problem.
func rejected(err error) error {
	var errs defs.Errors
	if !errors.As(err, &errs) || len(errs) == 0 {
		return &exitError{code: ExitRejected, msg: err.Error()}
	}
	lines := make([]string, len(errs))
	for i, e := range errs {
		lines[i] = e.Error()
	}
	return &api.Error{Status: 422, Message: "definitions rejected", Errors: lines}
}

func clockCmd(env *Env, client func() *api.Client) *cobra.Command {
	var (
		tick bool
		out  *outputFormat
	)
	c := &cobra.Command{
		Use:   "clock [--tick]",
		Short: "print the server's clock; move a simulating server's clock",
		Long: `clock prints the server's clock. With --tick, on a server started with
--simulate-from, it first runs a tick of every continuous timeperiod level,
as if their schedule had come, without moving the clock.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var (
				r   *api.ClockResponse
				err error
			)
			if tick {
				r, err = treeTick(cmd.Context(), client(), api.ClockRequest{Tick: true})
			} else {
				r, err = client().Clock(cmd.Context())
			}
			if err != nil {
				return err
			}
			return printClock(cmd, env, r, *out)
		},
	}
	c.Flags().BoolVar(&tick, "tick", false, "tick the continuous timeperiod levels of a simulating server now")
	out = addOutput(c, "the server's clock (GET /api/v1/clock, docs/api.md)")
	var (
		to      string
		advTick bool
		advOut  *outputFormat
	)
	adv := &cobra.Command{
		Use:   "advance --to TIME",
		Short: "move the virtual clock of a server started with --simulate-from",
		Long: `advance moves the virtual clock of a server started with --simulate-from to
TIME (RFC 3339, or a local date and time in the server's zone). Every
occurrence due on the way fires in order and its commands run for real; the
command returns once the server has settled at TIME. With --tick, every
continuous timeperiod level then runs a tick at TIME.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if to == "" {
				return usageErr("--to TIME is required")
			}
			if advTick {
				r, err := treeTick(cmd.Context(), client(), api.ClockRequest{To: to, Tick: true})
				if err != nil {
					return err
				}
				return printClock(cmd, env, r, *advOut)
			}
			var r *api.ClockResponse
			err := withProgress(cmd.Context(), env, "clock advance", func(ctx context.Context) string {
				c, err := client().Clock(ctx)
				if err != nil {
					return ""
				}
				return fmt.Sprintf("the virtual clock reads %s, on its way to %s", timesOf(cmd, env).at(c.Now), to)
			}, func() (err error) {
				r, err = client().Advance(cmd.Context(), to)
				return err
			})
			var ae *api.Error
			if errors.As(err, &ae) && ae.Status == http.StatusConflict && strings.Contains(ae.Message, "virtual clock") {
				return errors.New("the clock can only be moved on a server started with --simulate-from")
			}
			if err != nil {
				return err
			}
			return printClock(cmd, env, r, *advOut)
		},
	}
	adv.Flags().StringVar(&to, "to", "", "the instant to move to")
	adv.Flags().BoolVar(&advTick, "tick", false, "then tick the continuous timeperiod levels")
	advOut = addOutput(adv, "the server's clock once it has settled (POST /api/v1/clock, docs/api.md)")
	c.AddCommand(adv)
	return c
}

// printClock prints a server's clock and whether it is simulated.
func printClock(cmd *cobra.Command, env *Env, r *api.ClockResponse, out outputFormat) error {
	if out.structured() {
		return out.write(env.Stdout, r)
	}
	kind := "real"
	if r.Simulated {
		kind = "simulated"
	}
	fmt.Fprintf(env.Stdout, "%s (%s)\n", timesOf(cmd, env).at(r.Now), kind)
	return nil
}
