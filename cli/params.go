package cli

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/gnomon-sched/gnomon/api"
	"github.com/gnomon-sched/gnomon/job"
)

// paramFlag adds -p/--param NAME=VALUE, repeatable, to c: parameter values
// for the runs it starts. The values are read by paramValues.
func paramFlag(c *cobra.Command, dst *[]string) {
	c.Flags().StringArrayVarP(dst, "param", "p", nil,
		"a parameter value for the run, NAME=VALUE (repeat for more): NAME is one the task declares in params")
}

// paramValues reads the values of --param, by name; nil for none.
func paramValues(flags []string) (map[string]string, error) {
	if len(flags) == 0 {
		return nil, nil
	}
	out := make(map[string]string, len(flags))
	for _, f := range flags {
		name, value, ok := strings.Cut(f, "=")
		if !ok || name == "" {
			return nil, usageErr("--param %q: write NAME=VALUE, as in -p region=eu", f)
		}
		if _, dup := out[name]; dup {
			return nil, usageErr("--param %s given more than once", name)
		}
		out[name] = value
	}
	return out, nil
}

// startCmd starts a task, as gnomon event -e start does, with parameter
// values.
func startCmd(env *Env, client func() *api.Client) *cobra.Command {
	var params []string
	c := &cobra.Command{
		Use:   "start NAME [-p NAME=VALUE]...",
		Short: "start a task now, with parameter values (gnomon event NAME -e start -p ...)",
		Long: `start starts a task now, as gnomon event -e start does: its run bypasses
the task's condition. -p NAME=VALUE, repeated, gives the run a value for a
parameter the task declares (params: in its definition); the others take
their defaults. The command reads each parameter as an environment variable
of its name, and the run records the values given (gnomon run ID).`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := oneTask(cmd, args, true)
			if err != nil {
				return err
			}
			values, err := paramValues(params)
			if err != nil {
				return err
			}
			return client().EventParams(cmd.Context(), name, string(job.ActStart), values)
		},
	}
	jobFlag(c, "the task")
	paramFlag(c, &params)
	return c
}
