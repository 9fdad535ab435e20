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
event names, and task names for -j, asked of the server (--server,
$GNOMON_SERVER, or http://127.0.0.1:8080; nothing is offered when it does not
answer within two seconds). Load it in the current shell with, for bash:

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
		ctx, cancel := context.WithTimeout(cmd.Context(), completionTimeout)
		defer cancel()
		names, err := client().Tasks(ctx)
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
}

// completeEvents completes -e with the events a task takes.
func completeEvents(_ *cobra.Command, _ []string, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
	var out []cobra.Completion
	for _, e := range []string{"start", "abort", "freeze", "reset", "green", "red"} {
		if _, ok := job.ParseAction(e); ok && strings.HasPrefix(e, prefix) {
			out = append(out, e)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// registerCompletions completes the -j flag of every command that has one
// with task names, and schd_event's -e with event names.
func registerCompletions(root *cobra.Command, client func() *api.Client) {
	for _, c := range root.Commands() {
		if c.Flags().Lookup("job") != nil {
			c.RegisterFlagCompletionFunc("job", completeTasks(client))
		}
		if c.Name() == "event" {
			c.RegisterFlagCompletionFunc("event", completeEvents)
		}
	}
}
