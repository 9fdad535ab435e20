package cli

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
)

// The grammar every command follows in what it prints (docs/cli.md):
//
//   - -o json|yaml|wide on every command that prints (--json is -o json):
//     json and yaml print the API's answer, field for field; wide prints
//     the table with more columns where a command has them, else the
//     default text;
//   - one table style: a header of capitals, columns two spaces apart
//     (newTable);
//   - one time format: the local time with its zone (timeFormat), in UTC
//     with --utc.
//
// The seed names (schd_status, schd_runs...) keep the seed's tables.

// outputFormat is the value of -o: empty for the default text, or json,
// yaml or wide. A bad value is refused when the flag is parsed.
type outputFormat string

func (o *outputFormat) String() string { return string(*o) }
func (o *outputFormat) Type() string   { return "json|yaml|wide" }
func (o *outputFormat) Set(s string) error {
	switch s {
	case "json", "yaml", "wide":
		*o = outputFormat(s)
		return nil
	}
	return fmt.Errorf("want json, yaml or wide")
}

// jsonAlias is --json: -o json.
type jsonAlias struct{ o *outputFormat }

func (j jsonAlias) String() string { return "false" }
func (j jsonAlias) Type() string   { return "bool" }
func (j jsonAlias) Set(s string) error {
	switch s {
	case "true":
		*j.o = "json"
	case "false":
		if *j.o == "json" {
			*j.o = ""
		}
	default:
		return fmt.Errorf("want true or false")
	}
	return nil
}

// addOutput gives a command -o json|yaml|wide and --json; what says what
// json and yaml print (the API's answer a command shows).
func addOutput(c *cobra.Command, what string) *outputFormat {
	o := new(outputFormat)
	c.Flags().VarP(o, "output", "o", "json or yaml: "+what+"; wide: the table with every column")
	c.Flags().Var(jsonAlias{o}, "json", "the same as -o json")
	c.Flags().Lookup("json").NoOptDefVal = "true"
	return o
}

// structured reports whether the output is json or yaml.
func (o *outputFormat) structured() bool { return *o == "json" || *o == "yaml" }

// write prints v, an answer of the API, as json or yaml.
func (o *outputFormat) write(w io.Writer, v any) error {
	if *o == "yaml" {
		return writeYAML(w, v)
	}
	return writeJSONOut(w, v)
}

// timeLayout is the one format of the times the commands print.
const timeLayout = "2006-01-02 15:04:05 MST"

// timeFormat prints times in one zone: the local one, or UTC with --utc.
type timeFormat struct{ loc *time.Location }

// timesOf is how cmd prints times: in UTC with --utc, else in the zone of
// this machine ($TZ, else /etc/localtime).
func timesOf(cmd *cobra.Command, env *Env) timeFormat {
	if utc, err := cmd.Flags().GetBool("utc"); err == nil && utc {
		return timeFormat{time.UTC}
	}
	return timeFormat{hostZone(env.Getenv)}
}

// at prints t, or - for the zero time.
func (f timeFormat) at(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.In(f.loc).Format(timeLayout)
}

// table is a table in the one style: a header of capitals, then the rows,
// columns two spaces apart; cells are escaped by the caller.
type table struct{ tw *tabwriter.Writer }

// newTable starts a table with its header.
func newTable(w io.Writer, head ...string) *table {
	t := &table{tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)}
	for i := range head {
		head[i] = strings.ToUpper(head[i])
	}
	t.row(head...)
	return t
}

// row adds a row.
func (t *table) row(cells ...string) { fmt.Fprintln(t.tw, strings.Join(cells, "\t")) }

// flush prints the table.
func (t *table) flush() { t.tw.Flush() }

// seedName is the root annotation of a command line called by a seed
// name (schd_status...): the seed's formats.
const seedName = "gnomon.seed-name"

// isSeed reports whether cmd runs under a seed name.
func isSeed(cmd *cobra.Command) bool { return cmd.Root().Annotations[seedName] != "" }

// oneTask takes the task of a command that works on one: -j NAME or a
// positional NAME (args, at most one); required says whether one must be
// given. A positional name is set as -j, so that what reads -j (the
// suggestion of a misspelled name) sees it.
func oneTask(cmd *cobra.Command, args []string, required bool) (string, error) {
	f := cmd.Flags().Lookup("job")
	name := f.Value.String()
	switch {
	case len(args) > 1:
		return "", usageErr("one task at most: %s NAME (or -j NAME), got %s", cmd.CommandPath(), strings.Join(args, " "))
	case len(args) == 1 && name != "" && name != args[0]:
		return "", usageErr("two tasks given, -j %s and %s: give one", name, args[0])
	case len(args) == 1:
		name = args[0]
		if err := cmd.Flags().Set("job", name); err != nil {
			return "", err
		}
	}
	if name == "" && required && isSeed(cmd) {
		return "", usageErr("-j TASK is required")
	}
	if name == "" && required {
		return "", usageErr("a task is needed: %s NAME (or -j NAME)", cmd.CommandPath())
	}
	return name, nil
}
