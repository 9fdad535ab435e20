package cli

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/gnomon-sched/gnomon/api"
	"github.com/gnomon-sched/gnomon/defs"
	"github.com/gnomon-sched/gnomon/internal/termsafe"
	"github.com/gnomon-sched/gnomon/job"
)

func runCmd(env *Env, client func() *api.Client) *cobra.Command {
	var (
		name   string
		tail   int
		asJSON bool
	)
	c := &cobra.Command{
		Use:   "run -j TASK ID [--tail N] [--json]",
		Short: "show one run: how it ended (exit code, result, message), who started it, and the last lines of its output",
		Long: `run shows one run of a task (gnomon runs -j TASK lists them, newest
first, with their numbers): its status, exit code, result and message,
when and why it started and ended, and the last --tail lines (default 40)
of what it wrote to the task's out and err logs. Reading logs takes the
read:sensitive permission over the task.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := requireJob(name); err != nil {
				return err
			}
			id, err := strconv.ParseInt(args[0], 10, 64)
			if err != nil || id <= 0 {
				return usageErr("ID must be a run number (gnomon runs -j %s lists them), got %q", name, args[0])
			}
			if tail < 0 {
				return usageErr("--tail must be 0 or more, got %d", tail)
			}
			v, err := client().Run(cmd.Context(), name, id, tail)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSONOut(env.Stdout, v)
			}
			writeRun(env.Stdout, v, "")
			return nil
		},
	}
	c.Flags().StringVarP(&name, "job", "j", "", "task name")
	c.Flags().IntVar(&tail, "tail", api.DefaultTail, "lines of each log to show (0: none)")
	c.Flags().BoolVar(&asJSON, "json", false, "print the run as JSON")
	return c
}

// writeRun prints a run, each line after indent: how it ended, when and
// why it ran, then the end of each log.
func writeRun(w io.Writer, v *api.RunResponse, indent string) {
	r := &v.Run
	line := func(format string, args ...any) {
		fmt.Fprintf(w, "%s%s\n", indent, termsafe.String(fmt.Sprintf(format, args...)))
	}
	line("run %d of %s: %s", r.ID, r.Task, runOutcome(r))
	started := "started " + r.Start.Format(time.RFC3339)
	if r.Trigger != "" {
		started += " by " + r.Trigger
	}
	if !r.Scheduled.IsZero() {
		started += " for the occurrence of " + r.Scheduled.Format(time.RFC3339)
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
		ended := fmt.Sprintf("ended %s after %s", r.End.Format(time.RFC3339), r.End.Sub(r.Start).Round(time.Millisecond))
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

// writeWideRuns prints runs as a table with their numbers and how each
// ended; a bundle run's children follow it, indented.
func writeWideRuns(w io.Writer, runs []api.RunView) {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	// A column for the parameters when a run has some.
	params := false
	for i := range runs {
		params = params || len(runs[i].Params) > 0
		for j := range runs[i].Children {
			params = params || len(runs[i].Children[j].Params) > 0
		}
	}
	head := "ID\tTask Name\tStart Time\tEnd Time\tStatus\tExit\tResult\tMessage"
	if params {
		head += "\tParameters"
	}
	fmt.Fprintln(tw, head)
	row := func(r *job.Run, indent string) {
		exit, end := "", ""
		if r.Done() {
			exit, end = strconv.Itoa(r.ExitCode), stamp(r.End)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s", r.ID, indent+termsafe.String(r.Task), stamp(r.Start), end, r.Status,
			exit, r.Result, termsafe.String(r.Message))
		if params {
			fmt.Fprintf(tw, "\t%s", termsafe.String(defs.FormatVars(r.Params)))
		}
		fmt.Fprintln(tw)
	}
	for i := range runs {
		row(&runs[i].Run, "")
		for j := range runs[i].Children {
			row(&runs[i].Children[j], " ")
		}
	}
	tw.Flush()
}
