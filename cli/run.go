package cli

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/gnomon-sched/gnomon/api"
	"github.com/gnomon-sched/gnomon/defs"
	"github.com/gnomon-sched/gnomon/internal/termsafe"
	"github.com/gnomon-sched/gnomon/job"
)

func runCmd(env *Env, client func() *api.Client) *cobra.Command {
	var (
		tail   int
		follow bool
		out    *outputFormat
	)
	c := &cobra.Command{
		Use:   "run [NAME] ID [--tail N] [--follow] [-o json|yaml]",
		Short: "show one run: how it ended (exit code, result, message), who started it, and the last lines of its output",
		Long: `run shows one run (gnomon runs NAME lists a task's runs, newest first,
with their numbers): its status, exit code, result and message, when and
why it started and ended, and the last --tail lines (default 40) of what it
wrote to the task's out and err logs. The run's number is enough; a task
named (NAME or -j NAME) must be the run's. Reading logs takes the
read:sensitive permission over the task.

With --follow, while the run runs, the lines it writes are printed as they
come (out| and err| before each), until it ends; then how it ended.`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := oneTask(cmd, args[:len(args)-1], false)
			if err != nil {
				return err
			}
			arg := args[len(args)-1]
			id, err := strconv.ParseInt(arg, 10, 64)
			if err != nil || id <= 0 {
				return usageErr("ID must be a run number (gnomon runs NAME lists them), got %q", arg)
			}
			if tail < 0 {
				return usageErr("--tail must be 0 or more, got %d", tail)
			}
			if follow && out.structured() {
				return usageErr("--follow prints lines as they come: it takes no -o %s", *out)
			}
			get := func(ctx context.Context, tail int) (*api.RunResponse, error) {
				if name != "" {
					return client().Run(ctx, name, id, tail)
				}
				return client().RunByID(ctx, id, tail)
			}
			v, err := get(cmd.Context(), tail)
			if err != nil {
				return err
			}
			if out.structured() {
				return out.write(env.Stdout, v)
			}
			tf := timesOf(cmd, env)
			if !follow || v.Run.Done() {
				writeRun(env.Stdout, v, "", tf)
				return nil
			}
			writeRun(env.Stdout, v, "", tf)
			return followRun(cmd.Context(), env.Stdout, v, get, time.Second/2, tf)
		},
	}
	jobFlag(c, "the run's task")
	c.Flags().IntVar(&tail, "tail", api.DefaultTail, "lines of each log to show (0: none)")
	c.Flags().BoolVarP(&follow, "follow", "f", false, "while the run runs, print the lines it writes as they come, until it ends")
	out = addOutput(c, "the run and its log lines as the API answers them (GET /api/v1/runs/{id}, docs/api.md)")
	return c
}

// followTail is the ?tail= of each poll of a followed run: what the
// server holds of each stream (its last 64 KiB).
const followTail = 1 << 20

// followRun prints what a running run writes, polling every interval,
// until it ends; then how it ended. first is the answer already printed:
// the output up to its sizes is not printed again.
func followRun(ctx context.Context, w io.Writer, first *api.RunResponse, get func(context.Context, int) (*api.RunResponse, error),
	interval time.Duration, tf timeFormat) error {
	printed := map[string]int64{}
	pending := map[string]string{} // a line not ended yet, by stream
	for _, s := range first.Logs {
		printed[s.Name] = s.Size
	}
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ticker.C:
		}
		v, err := get(ctx, followTail)
		if err != nil {
			return err
		}
		for _, s := range v.Logs {
			fresh := s.Size - printed[s.Name]
			if s.Problem != "" || fresh <= 0 {
				continue
			}
			printed[s.Name] = s.Size
			text := s.Text
			if fresh < int64(len(text)) {
				text = text[int64(len(text))-fresh:]
			} else if fresh > int64(len(text)) {
				fmt.Fprintf(w, "%s| [%d bytes not shown]\n", s.Name, fresh-int64(len(text)))
				pending[s.Name] = ""
			}
			lines := strings.Split(pending[s.Name]+text, "\n")
			pending[s.Name] = lines[len(lines)-1]
			for _, l := range lines[:len(lines)-1] {
				fmt.Fprintf(w, "%s| %s\n", s.Name, termsafe.String(l))
			}
		}
		if v.Run.Done() {
			for _, name := range []string{"out", "err"} {
				if pending[name] != "" {
					fmt.Fprintf(w, "%s| %s\n", name, termsafe.String(pending[name]))
				}
			}
			r := &v.Run
			fmt.Fprintf(w, "%s\n", termsafe.String(fmt.Sprintf("run %d of %s: %s, ended %s after %s", r.ID, r.Task, runOutcome(r), tf.at(r.End),
				r.End.Sub(r.Start).Round(time.Millisecond))))
			return nil
		}
	}
}

// writeRun prints a run, each line after indent: how it ended, when and
// why it ran, then the end of each log.
func writeRun(w io.Writer, v *api.RunResponse, indent string, tf timeFormat) {
	r := &v.Run
	line := func(format string, args ...any) {
		fmt.Fprintf(w, "%s%s\n", indent, termsafe.String(fmt.Sprintf(format, args...)))
	}
	line("run %d of %s: %s", r.ID, r.Task, runOutcome(r))
	started := "started " + tf.at(r.Start)
	if r.Trigger != "" {
		started += " by " + r.Trigger
	}
	if !r.Scheduled.IsZero() {
		started += " for the occurrence of " + tf.at(r.Scheduled)
	}
	if r.By != "" {
		started += ", asked by " + r.By
	}
	if r.Attempt > 0 {
		started += fmt.Sprintf(", retry %d of run %d", r.Attempt, r.RetryOf)
	}
	line("%s", started)
	if len(r.Params) > 0 {
		line("parameters: %s", defs.FormatVars(r.Params))
	}
	if !r.End.IsZero() {
		ended := fmt.Sprintf("ended %s after %s", tf.at(r.End), r.End.Sub(r.Start).Round(time.Millisecond))
		if r.EndedBy != "" {
			ended += ", ended by " + r.EndedBy
		}
		line("%s", ended)
	}
	for _, s := range v.Logs {
		head := fmt.Sprintf("%s log", s.Name)
		if s.Path != "" {
			head += " " + s.Path
		}
		switch {
		case s.Problem != "":
			line("%s: %s", head, s.Problem)
			continue
		case s.Text == "":
			line("%s: nothing written", head)
			continue
		case s.More:
			head += ", its last lines"
		}
		line("%s:", head)
		for _, l := range strings.Split(strings.TrimSuffix(s.Text, "\n"), "\n") {
			line("  %s", l)
		}
	}
}

// runOutcome says how a run ended, or that it runs.
func runOutcome(r *job.Run) string {
	if !r.Done() {
		return "running"
	}
	s := fmt.Sprintf("%s, exit code %d", r.Status, r.ExitCode)
	if r.Result != "" && r.Result != job.ResultNormal {
		s += ", " + string(r.Result)
	}
	if r.Message != "" && r.Message != fmt.Sprintf("exit status %d", r.ExitCode) {
		s += ": " + r.Message // the shell's "exit status N" says no more than the code
	}
	return s
}

// messageWidth is the most of a run's message the runs table shows
// without -o wide.
const messageWidth = 60

// writeRunsTable prints runs as gnomon runs does: each run's number, task,
// start and end, status, exit code and message, a bundle run's children
// after it, indented; the timeperiod and outcome of a timeperiod
// process's runs when there are some. wide adds the result, what started
// the run, who asked for it and who ended it, and does not shorten
// messages, and the values of the parameters runs were given, when some
// were.
func writeRunsTable(w io.Writer, runs []api.RunView, wide bool, tf timeFormat) {
	periods := slices.ContainsFunc(runs, func(r api.RunView) bool { return r.Timeperiod != "" })
	params := wide && slices.ContainsFunc(runs, func(r api.RunView) bool {
		return len(r.Params) > 0 || slices.ContainsFunc(r.Children, func(c job.Run) bool { return len(c.Params) > 0 })
	})
	head := []string{"id", "task", "start", "end", "status", "exit"}
	if periods {
		head = append(head, "timeperiod", "outcome")
	}
	if wide {
		head = append(head, "result", "trigger", "by", "ended by")
	}
	if params {
		head = append(head, "parameters")
	}
	t := newTable(w, append(head, "message")...)
	row := func(r *job.Run, indent string, bundle bool) {
		exit := "-" // a bundle's run runs no command
		if r.Done() && !bundle {
			exit = strconv.Itoa(r.ExitCode)
		}
		cells := []string{strconv.FormatInt(r.ID, 10), indent + runName(r, tf), tf.at(r.Start), tf.at(r.End), r.Status.String(), exit}
		if periods {
			cells = append(cells, dash(termsafe.String(r.Timeperiod)), dash(termsafe.String(r.Outcome)))
		}
		msg := dash(termsafe.String(r.Message))
		if wide {
			cells = append(cells, dash(string(r.Result)), dash(termsafe.String(r.Trigger)), dash(termsafe.String(r.By)), dash(termsafe.String(r.EndedBy)))
		} else if n := utf8.RuneCountInString(msg); n > messageWidth {
			msg = string([]rune(msg)[:messageWidth-1]) + "…"
		}
		if params {
			cells = append(cells, dash(termsafe.String(defs.FormatVars(r.Params))))
		}
		t.row(append(cells, msg)...)
	}
	for i := range runs {
		row(&runs[i].Run, "", len(runs[i].Children) > 0)
		for j := range runs[i].Children {
			row(&runs[i].Children[j], " ", false)
		}
	}
	t.flush()
}

// runName is a run's task, with the occurrence a backfill run ran for and
// the number of a retry.
func runName(r *job.Run, tf timeFormat) string {
	name := termsafe.String(r.Task)
	var tags []string
	if r.Trigger == job.TriggerBackfill {
		tags = append(tags, "backfill of "+tf.at(r.Scheduled))
	}
	if r.Attempt > 0 {
		tags = append(tags, fmt.Sprintf("retry %d", r.Attempt))
	}
	if len(tags) > 0 {
		name += " [" + strings.Join(tags, ", ") + "]"
	}
	return name
}

// dash is s, or - when it is empty: a cell of a table is never blank.
func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
