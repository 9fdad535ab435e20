package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gnomon-sched/gnomon/api"
	"github.com/gnomon-sched/gnomon/job"
)

// completionCmd generates shell completion scripts that complete gnomon
// and the seed names (schd_def, ...) alike: a seed name calls the binary
// as "schd_def __complete ARGS", which Run turns into "__complete def ARGS".
func completionCmd(env *Env) *cobra.Command {
	c := &cobra.Command{
		Use:   "completion bash|zsh|fish|powershell",
		Short: "print a shell completion script for gnomon and the schd_* names",
		Long: `completion prints a script that completes gnomon and the seed names
schd_def, schd_event, schd_task, schd_status and schd_runs: commands, flags,
event names, task names for -j (and timeperiod processes for runs and
alerts), processes and trees for the node and tree commands, tree files for
export --tree-file, asked of the server (--server, $GNOMON_SERVER, or
http://127.0.0.1:8080; nothing is offered when it does not answer within two
seconds). Load it in the current shell with, for bash:

	source <(gnomon completion bash)

or write it where the shell looks for completions (for bash,
/etc/bash_completion.d/gnomon; for zsh, a file _gnomon in $fpath).`,
		ValidArgs: []string{"bash", "zsh", "fish", "powershell"},
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErr("completion needs one shell: bash, zsh, fish or powershell")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return writeCompletion(env.Stdout, cmd.Root(), args[0])
		},
	}
	return c
}

// seedList returns the seed names, sorted.
func seedList() []string {
	names := make([]string, 0, len(seedNames))
	for n := range seedNames {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// writeCompletion writes cobra's script for shell, registered for the
// seed names as well as the root command's.
func writeCompletion(w io.Writer, root *cobra.Command, shell string) error {
	var b bytes.Buffer
	name := root.Name()
	seeds := strings.Join(seedList(), " ")
	switch shell {
	case "bash":
		if err := root.GenBashCompletionV2(&b, true); err != nil {
			return err
		}
		fmt.Fprintf(&b, `
# The seed names are links to the same binary.
if [[ $(type -t compopt) = "builtin" ]]; then
    complete -o default -F __start_%[1]s %[2]s
else
    complete -o default -o nospace -F __start_%[1]s %[2]s
fi
`, name, seeds)
	case "zsh":
		var z bytes.Buffer
		if err := root.GenZshCompletion(&z); err != nil {
			return err
		}
		// The first line tells compinit which commands the file completes.
		script := strings.Replace(z.String(), "#compdef "+name+"\n", "#compdef "+name+" "+seeds+"\n", 1)
		b.WriteString(script)
		fmt.Fprintf(&b, "\n# The seed names are links to the same binary.\ncompdef _%s %s\n", name, seeds)
	case "fish":
		if err := root.GenFishCompletion(&b, true); err != nil {
			return err
		}
		// Repeat for each seed name the lines that register the program.
		var extra strings.Builder
		for _, seed := range seedList() {
			for line := range strings.Lines(b.String()) {
				if strings.HasPrefix(line, "complete ") && strings.Contains(line, " -c "+name+" ") {
					extra.WriteString(strings.Replace(line, " -c "+name+" ", " -c "+seed+" ", 1))
				}
			}
		}
		b.WriteString("\n# The seed names are links to the same binary.\n" + extra.String())
	case "powershell":
		if err := root.GenPowerShellCompletionWithDesc(&b); err != nil {
			return err
		}
		b.WriteString("\n# The seed names are links to the same binary.\n")
		for _, seed := range seedList() {
			fmt.Fprintf(&b, "Register-ArgumentCompleter -CommandName '%s' -ScriptBlock ${__%sCompleterBlock}\n", seed, name)
		}
	default:
		return usageErr("completion: unknown shell %q (want bash, zsh, fish or powershell)", shell)
	}
	_, err := w.Write(b.Bytes())
	return err
}

// completionTimeout bounds the request for task names while completing.
const completionTimeout = 2 * time.Second

// completeTasks completes a -j flag with the names of the server's tasks.
// It offers nothing, quietly, when the server does not answer.
func completeTasks(client func() *api.Client) cobra.CompletionFunc {
	return func(cmd *cobra.Command, _ []string, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return completeNames(cmd, func(ctx context.Context) ([]string, error) { return client().Tasks(ctx) }, prefix)
	}
}

// completeNames completes with names that list returns, quietly offering
// nothing when the server does not answer.
func completeNames(cmd *cobra.Command, list func(ctx context.Context) ([]string, error), prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
	ctx, cancel := context.WithTimeout(cmd.Context(), completionTimeout)
	defer cancel()
	names, err := list(ctx)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []cobra.Completion
	for _, n := range names {
		if strings.HasPrefix(n, prefix) {
			out = append(out, n)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// treeNames lists the names of the server's trees and, with processes,
// those of their processes instead.
func treeNames(ctx context.Context, c *api.Client, processes bool) ([]string, error) {
	resp, err := c.Trees(ctx)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, t := range resp.Trees {
		if !processes {
			names = append(names, t.Name)
			continue
		}
		for _, l := range t.Levels {
			names = append(names, l.Process)
		}
	}
	slices.Sort(names)
	return names, nil
}

// completeProcesses completes the first argument of the node commands
// with the names of the server's timeperiod processes.
func completeProcesses(client func() *api.Client) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return completeNames(cmd, func(ctx context.Context) ([]string, error) { return treeNames(ctx, client(), true) }, prefix)
	}
}

// completeTrees completes the argument of tree show with tree names.
func completeTrees(client func() *api.Client) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return completeNames(cmd, func(ctx context.Context) ([]string, error) { return treeNames(ctx, client(), false) }, prefix)
	}
}

// completeHistory completes runs -j with the names of tasks and of
// timeperiod processes: both have runs.
func completeHistory(client func() *api.Client) cobra.CompletionFunc {
	return func(cmd *cobra.Command, _ []string, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return completeNames(cmd, func(ctx context.Context) ([]string, error) {
			names, err := client().Tasks(ctx)
			if err != nil {
				return nil, err
			}
			if procs, err := treeNames(ctx, client(), true); err == nil {
				names = append(names, procs...)
				slices.Sort(names)
			}
			return names, nil
		}, prefix)
	}
}

// completeTreeFiles completes export --tree-file with the files that
// define the server's trees.
func completeTreeFiles(client func() *api.Client) cobra.CompletionFunc {
	return func(cmd *cobra.Command, _ []string, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return completeNames(cmd, func(ctx context.Context) ([]string, error) {
			resp, err := client().Trees(ctx)
			if err != nil {
				return nil, err
			}
			var files []string
			for _, t := range resp.Trees {
				if !slices.Contains(files, t.File) {
					files = append(files, t.File)
				}
			}
			slices.Sort(files)
			return files, nil
		}, prefix)
	}
}

// completeEvents completes -e with the events a task takes.
func completeEvents(_ *cobra.Command, _ []string, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
	var out []cobra.Completion
	for _, e := range eventNames {
		if _, ok := job.ParseAction(e); ok && strings.HasPrefix(e, prefix) {
			out = append(out, e)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// registerCompletions completes the -j flag of every command that has one
// with task names (runs, alerts and backfill: with process names too),
// export's --tree-file with tree files, and schd_event's -e with event
// names. The node and tree commands register their own.
func registerCompletions(root *cobra.Command, client func() *api.Client) {
	for _, c := range root.Commands() {
		switch {
		case c.Name() == "runs" || c.Name() == "alerts" || c.Name() == "backfill":
			c.RegisterFlagCompletionFunc("job", completeHistory(client))
		case c.Flags().Lookup("job") != nil:
			c.RegisterFlagCompletionFunc("job", completeTasks(client))
		}
		// The task given as a positional NAME.
		if c.Flags().Lookup("job") != nil && c.ValidArgsFunction == nil && c.Name() != "run" {
			complete := completeTasks(client)
			if c.Name() == "runs" || c.Name() == "alerts" || c.Name() == "backfill" {
				complete = completeHistory(client)
			}
			c.ValidArgsFunction = func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
				if len(args) > 0 || cmd.Flags().Changed("job") {
					return nil, cobra.ShellCompDirectiveNoFileComp
				}
				return complete(cmd, args, toComplete)
			}
		}
		if c.Name() == "export" {
			c.RegisterFlagCompletionFunc("tree-file", completeTreeFiles(client))
		}
		if c.Name() == "event" {
			c.RegisterFlagCompletionFunc("event", completeEvents)
		}
	}
}
