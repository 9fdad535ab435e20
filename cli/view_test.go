package cli

import (
	"io"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// printsNothingStructured are the commands that take no -o: they print no
// answer of the server (or one that is a document already, as export's
// definition language), or act on this machine alone.
var printsNothingStructured = map[string]bool{
	"gnomon server": true, "gnomon migrate": true, "gnomon links": true, "gnomon completion": true, "gnomon login": true,
	"gnomon event": true, "gnomon export": true, "gnomon context use": true, "gnomon context delete": true,
	"gnomon calendar delete": true, "gnomon cluster drain": true, "gnomon help": true, "gnomon dev smtp-sink": true,
	"gnomon start": true, "gnomon cluster grants": true, "gnomon backup": true, "gnomon restore": true,
}

// TestEveryPrintingCommandTakesOutput walks the command tree: every command
// that prints an answer takes -o json|yaml|wide and --json.
func TestEveryPrintingCommandTakesOutput(t *testing.T) {
	t.Parallel()
	root, _ := newRoot(&Env{Stdout: io.Discard, Stderr: io.Discard, Getenv: func(string) string { return "" }})
	var walk func(c *cobra.Command)
	n := 0
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		path := c.CommandPath()
		if c.HasSubCommands() || !c.Runnable() || printsNothingStructured[path] || strings.HasPrefix(path, "gnomon completion ") {
			return
		}
		n++
		o, j := c.Flags().Lookup("output"), c.Flags().Lookup("json")
		if o == nil || o.Shorthand != "o" || o.Value.Type() != "json|yaml|wide" || j == nil {
			t.Errorf("%s has no -o json|yaml|wide and --json", path)
		}
	}
	walk(root)
	if n < 25 {
		t.Errorf("only %d commands take -o", n)
	}
}

// TestOneTaskGrammar: the task as NAME or -j NAME, on every command that
// takes one, with -n for counts.
func TestOneTaskGrammar(t *testing.T) {
	t.Parallel()
	root, _ := newRoot(&Env{Stdout: io.Discard, Stderr: io.Discard, Getenv: func(string) string { return "" }})
	for _, name := range []string{"status", "task", "why", "event", "runs", "run", "backfill", "export", "forecast", "alerts", "events"} {
		c, _, err := root.Find([]string{name})
		if err != nil || c.Name() != name {
			t.Fatalf("%s: %v", name, err)
		}
		if f := c.Flags().Lookup("job"); f == nil || f.Shorthand != "j" || !strings.Contains(f.Usage, "or give it as NAME") {
			t.Errorf("%s: -j does not say the task may be given as NAME", name)
		}
		if !strings.Contains(c.Use, "NAME") {
			t.Errorf("%s: its use line %q does not show NAME", name, c.Use)
		}
	}
	for _, name := range []string{"runs", "events", "alerts", "audit"} {
		c, _, _ := root.Find([]string{name})
		if f := c.Flags().Lookup("count"); f == nil || f.Shorthand != "n" {
			t.Errorf("%s: no -n/--count", name)
		}
	}
}
