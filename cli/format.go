package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/gnomon-sched/gnomon/api"
	"github.com/gnomon-sched/gnomon/defs"
	"github.com/gnomon-sched/gnomon/internal/termsafe"
	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/periods"
)

// Every stored string the command line prints (names, resource ids,
// commands, messages, reasons, audit lines) goes through termsafe.String,
// so that a terminal shows a control character, an escape sequence or a
// bidirectional override as an escape (\x1b, \u202e) and never obeys it.
// Tabs and newlines inside a value are escaped too: each value prints on
// its line or in its cell. The --json outputs are encoding/json's, which
// escapes them itself.

// errorLine is the line Run prints for an error: ERROR, then the message,
// escaped. A server's message may quote what it was sent; escaped, it
// prints on its one line and the terminal obeys none of it.
func errorLine(msg string) string { return "ERROR " + termsafe.String(msg) }

// safeList joins strings, each through termsafe.String.
func safeList(items []string, sep string) string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = termsafe.String(it)
	}
	return strings.Join(out, sep)
}

// writeTask prints a definition as schd_task does: a blank line, then
// "Label: value" lines in a fixed order, each only if set; a bundle's
// children follow, each after a blank line and indented by two spaces.
func writeTask(w io.Writer, v *api.TaskView) {
	fmt.Fprintln(w)
	taskLines(w, &v.Task, "")
	if t := v.State.LastExec; !t.IsZero() {
		fmt.Fprintf(w, "LastExecution: %s\n", t.UTC().Format(time.RFC3339Nano))
	}
	for _, d := range v.Stored {
		typ, res := termsafe.String(string(d.Type)), termsafe.String(d.Resource)
		if d.Count == 0 {
			fmt.Fprintf(w, "Stored: %s %s: no events\n", typ, res)
			continue
		}
		noun := "events"
		if d.Count == 1 {
			noun = "event"
		}
		fmt.Fprintf(w, "Stored: %s %s: %d %s, %s to %s\n", typ, res, d.Count, noun,
			d.Oldest.Format(time.RFC3339Nano), d.Newest.Format(time.RFC3339Nano))
	}
	for _, c := range v.Children {
		fmt.Fprintln(w)
		taskLines(w, &c.Task, "  ")
	}
	fmt.Fprintln(w)
}

// taskLines writes the name of a definition, then each attribute it sets
// under its label (see defs.Label), each dependency on its own line.
func taskLines(w io.Writer, t *job.Task, indent string) {
	switch t.Type {
	case job.Group:
		fmt.Fprintf(w, "%sGroup Name: %s\n", indent, termsafe.String(t.Name))
	case job.Resource:
		fmt.Fprintf(w, "%sResource Name: %s\n", indent, termsafe.String(t.Name))
	default:
		fmt.Fprintf(w, "%sTask Name: %s\n", indent, termsafe.String(t.Name))
	}
	for _, kv := range defs.Attrs(t) {
		if kv[0] == "dependencies" {
			for _, d := range t.Extras().Deps {
				fmt.Fprintf(w, "%sDependency: %s %s (life %ds)\n", indent, termsafe.String(string(d.Type)), termsafe.String(d.Resource), d.Life)
			}
			continue
		}
		fmt.Fprintf(w, "%s%s: %s\n", indent, defs.Label(kv[0]), termsafe.String(kv[1]))
	}
}

// Column widths of the status and runs tables.
const (
	wName   = 65
	wTime   = 17
	wStatus = 10
)

// tableLine writes the four columns at their widths, one space apart,
// without trailing blanks.
func tableLine(w io.Writer, name, start, end, status string) {
	line := fmt.Sprintf("%-*s %-*s %-*s %-*s", wName, name, wTime, start, wTime, end, wStatus, status)
	fmt.Fprintln(w, strings.TrimRight(line, " "))
}

func tableHeader(w io.Writer) {
	tableLine(w, "Task Name", "Start Time", "End Time", "Status")
	u := strings.Repeat
	tableLine(w, u("_", wName), u("_", wTime), u("_", wTime), u("_", wStatus))
}

func tableRow(w io.Writer, name string, level int, start, end time.Time, status job.Status) {
	tableLine(w, strings.Repeat(" ", level)+termsafe.String(name), stamp(start), stamp(end), status.String())
}

// stamp renders a time as yyyymmdd HH:MM:SS in the zone it carries (the
// server's), or nothing for the zero time.
func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Format("20060102 15:04:05")
}

// writeStatus prints schd_status: header, underline, one row per task,
// then the notes of writeStatusNotes with times as at prints them.
func writeStatus(w io.Writer, s *api.StatusResponse, at func(time.Time) string) {
	tableHeader(w)
	for _, r := range s.Rows {
		tableRow(w, r.Name, r.Level, r.Start, r.End, r.Status)
	}
	writeStatusNotes(w, s, at)
}

// writeStatusNotes prints what the rows of a status do not hold, below
// its table: what running function runs report, retries, alarms.
func writeStatusNotes(w io.Writer, s *api.StatusResponse, at func(time.Time) string) {
	for _, r := range s.Rows {
		if r.RunningStatus != "" {
			fmt.Fprintf(w, "%s: %s\n", termsafe.String(r.Name), termsafe.String(r.RunningStatus))
		}
		for _, k := range slices.Sorted(maps.Keys(r.Data)) {
			fmt.Fprintf(w, "%s: %s = %s\n", termsafe.String(r.Name), termsafe.String(k), termsafe.String(r.Data[k]))
		}
		switch {
		case !r.RetryAt.IsZero():
			fmt.Fprintf(w, "%s: failed, retry %d of %d at %s\n", termsafe.String(r.Name), r.Attempt, r.Retries, at(r.RetryAt))
		case r.Attempt > 0:
			fmt.Fprintf(w, "%s: retry %d of %d\n", termsafe.String(r.Name), r.Attempt, r.Retries)
		}
		for _, a := range r.Alarms {
			fmt.Fprintf(w, "%s: ALARM %s at %s: %s\n", termsafe.String(r.Name), a.Kind, at(a.At), termsafe.String(a.Message))
		}
		if r.WaitsFor != "" {
			fmt.Fprintf(w, "%s: waits for resource %s (gnomon why -j %[1]s says who holds it)\n", termsafe.String(r.Name), termsafe.String(r.WaitsFor))
		}
	}
}

// wPeriod is the width of the timeperiod column of a process's runs,
// wOutcome that of its outcome column, and wBy that of the By column when
// an Ended by column follows it.
const (
	wPeriod  = 10
	wOutcome = 9
	wBy      = 16
)

// periodLine writes a row of the runs of a timeperiod process: the four
// columns of the seed's table, then the timeperiod and the outcome, then
// who started and ended the run (names, see who).
func periodLine(w io.Writer, name, start, end, status, period, outcome, names string) {
	line := fmt.Sprintf("%-*s %-*s %-*s %-*s %-*s %-*s %s", wName, name, wTime, start, wTime, end, wStatus, status, wPeriod, period,
		wOutcome, outcome, names)
	fmt.Fprintln(w, strings.TrimRight(line, " "))
}

// who renders the last columns of a run's row: who started the run, then
// who ended it when a call did, the first padded to wBy so that the second
// has its column; nothing when no one did either.
func who(by, endedBy string) string {
	if endedBy == "" {
		return by
	}
	return fmt.Sprintf("%-*s %s", wBy, by, endedBy)
}

// runsHeader writes the header of a runs table: the seed's, with the
// timeperiod and outcome columns when the runs are those of a timeperiod
// process, then a By column when a run names the identity that started it
// (an operator's start, a data event's token, a skip or reprocess of
// nodes), and an Ended by column when a run names the identity that ended
// it (an abort, a skip or reprocess that canceled a node's run), so that
// the seed's table is unchanged where no one did.
func runsHeader(w io.Writer, runs []api.RunView) {
	u := strings.Repeat
	head, line := "", ""
	switch {
	case slices.ContainsFunc(runs, named(func(r *job.Run) bool { return r.EndedBy != "" })):
		head, line = who("By", "Ended by"), who(u("_", wBy), u("_", 8))
	case slices.ContainsFunc(runs, named(func(r *job.Run) bool { return r.By != "" })):
		head, line = "By", u("_", 2)
	}
	switch {
	case slices.ContainsFunc(runs, func(r api.RunView) bool { return r.Timeperiod != "" }):
		periodLine(w, "Task Name", "Start Time", "End Time", "Status", "Timeperiod", "Outcome", head)
		periodLine(w, u("_", wName), u("_", wTime), u("_", wTime), u("_", wStatus), u("_", wPeriod), u("_", wOutcome), line)
	case head != "":
		runLine(w, "Task Name", "Start Time", "End Time", "Status", head)
		runLine(w, u("_", wName), u("_", wTime), u("_", wTime), u("_", wStatus), line)
	default:
		tableHeader(w)
	}
}

// named returns whether a run, or one of its children, names someone as
// f tells.
func named(f func(r *job.Run) bool) func(api.RunView) bool {
	return func(r api.RunView) bool {
		return f(&r.Run) || slices.ContainsFunc(r.Children, func(c job.Run) bool { return f(&c) })
	}
}

// writeRunRows prints runs as schd_runs does, below runsHeader: a bundle
// run is followed by the runs of its children; the run of a timeperiod
// process ends with its timeperiod and outcome. A run that names who
// started or ended it ends with those names, even on a page after the
// first, whose header runsHeader did not see.
func writeRunRows(w io.Writer, runs []api.RunView) {
	for _, r := range runs {
		if r.Timeperiod != "" {
			periodLine(w, termsafe.String(r.Task), stamp(r.Start), stamp(r.End), r.Status.String(), termsafe.String(r.Timeperiod), termsafe.String(r.Outcome),
				who(termsafe.String(r.By), termsafe.String(r.EndedBy)))
			continue
		}
		runRow(w, &r.Run, 0)
		for _, c := range r.Children {
			runRow(w, &c, 1)
		}
	}
}

// runRow writes a run as a row of the runs table, indented by level; a
// backfill run names the occurrence it ran after its task, and a retry
// its number.
func runRow(w io.Writer, r *job.Run, level int) {
	name := termsafe.String(r.Task)
	var tags []string
	if r.Trigger == job.TriggerBackfill {
		tags = append(tags, "backfill of "+stamp(r.Scheduled))
	}
	if r.Attempt > 0 {
		tags = append(tags, fmt.Sprintf("retry %d", r.Attempt))
	}
	if len(tags) > 0 {
		name += " [" + strings.Join(tags, ", ") + "]"
	}
	runLine(w, strings.Repeat(" ", level)+name, stamp(r.Start), stamp(r.End), r.Status.String(),
		who(termsafe.String(r.By), termsafe.String(r.EndedBy)))
}

// runLine writes the four columns of tableLine, then who started and
// ended the run (names, see who), without trailing blanks.
func runLine(w io.Writer, name, start, end, status, names string) {
	line := fmt.Sprintf("%-*s %-*s %-*s %-*s %s", wName, name, wTime, start, wTime, end, wStatus, status, names)
	fmt.Fprintln(w, strings.TrimRight(line, " "))
}

// writeJSONOut prints v as indented JSON (the --json outputs).
func writeJSONOut(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// writeChanges prints what a definition file changes: the definitions
// added, changed (each attribute that changes, old value then new, quoted;
// "unset" when not set) and deleted, or "no changes". With sync it first
// says what the file owns.
func writeChanges(w io.Writer, c *api.Changes, sync bool) {
	if c == nil {
		return
	}
	if sync {
		switch owns := strings.Join(c.SyncOwns, ","); owns {
		case "tasks":
			fmt.Fprintln(w, "sync: the file owns the tasks and groups; configurations are left alone (it defines none)")
		case "configurations":
			fmt.Fprintln(w, "sync: the file owns the configurations; tasks and groups are left alone (it defines none)")
		case "tasks,configurations":
			fmt.Fprintln(w, "sync: the file owns the tasks, groups and configurations")
		case "trees":
			fmt.Fprintln(w, "sync: the tree file owns its trees: those it no longer defines are removed")
		default:
			fmt.Fprintln(w, "sync: the file defines nothing, and deletes nothing it does not name")
		}
	}
	if len(c.Added)+len(c.Changed)+len(c.Deleted) == 0 {
		fmt.Fprintln(w, "no changes")
		return
	}
	value := func(v string) string {
		if v == "" {
			return "unset"
		}
		return fmt.Sprintf("%q", v)
	}
	// value quotes with %q, which escapes what is not printable.
	for _, a := range c.Added {
		fmt.Fprintf(w, "added:   %s (%s)\n", termsafe.String(a.Name), termsafe.String(string(a.Type)))
	}
	for _, ch := range c.Changed {
		fmt.Fprintf(w, "changed: %s (%s)\n", termsafe.String(ch.Name), termsafe.String(string(ch.Type)))
		for _, f := range ch.Fields {
			fmt.Fprintf(w, "    %s: %s -> %s\n", termsafe.String(f.Field), value(f.Old), value(f.New))
		}
	}
	for _, d := range c.Deleted {
		fmt.Fprintf(w, "deleted: %s (%s)\n", termsafe.String(d.Name), termsafe.String(string(d.Type)))
	}
}

// stateName names a node's state as the command line shows it: embryo is
// queued.
func stateName(s periods.State) string {
	if s == periods.Embryo {
		return "queued"
	}
	return s.String()
}

// states are the states of a node in the order listings count them.
var states = []periods.State{periods.Embryo, periods.InProgress, periods.FinalRun, periods.Processed, periods.Noop, periods.Skipped}

// every formats a continuous level's tick: 15m, 1h30m, 90s.
func every(d time.Duration) string {
	if d == 0 {
		d = periods.DefaultEvery
	}
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// none is what a list shows for no names.
func none(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return safeList(names, ", ")
}

// writeTrees prints the trees: for each, its file, settings and
// dependencies, then a table of its levels, coarsest first, with the
// nodes of each by state.
func writeTrees(w io.Writer, trees []periods.TreeInfo) {
	if len(trees) == 0 {
		fmt.Fprintln(w, "no trees defined")
		return
	}
	for i, t := range trees {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "tree %s (file %s): start %s, lag %d min, max failures %d\n", termsafe.String(t.Name), termsafe.String(t.File), t.Start, t.LagMinutes, t.MaxFailures)
		fmt.Fprintf(w, "  depends on: %s; dependants: %s\n", none(t.DependentOn), none(t.Dependants))
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  LEVEL\tQUALIFIER\tSTATE MACHINE\tBLOCKING\tRUN BY\tNEXT\tNODES")
		for _, l := range t.Levels {
			machine := l.StateMachine.String()
			if l.StateMachine == periods.Continuous {
				machine += " every " + every(l.Every)
			}
			by := "external"
			switch {
			case l.Command != "":
				by = "command"
			case l.Function != "":
				by = "function " + termsafe.String(l.Function)
			}
			next := "-"
			if l.Next != 0 {
				next = l.Next.String()
			}
			var counts []string
			for _, s := range states {
				if n := l.Counts[s]; n > 0 {
					counts = append(counts, fmt.Sprintf("%s %d", stateName(s), n))
				}
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\n", termsafe.String(l.Process), l.Qualifier, machine, l.Blocking, by, next, none(counts))
		}
		tw.Flush()
	}
}

// gridCell shows a node in a grid: its state, its failures in parentheses
// when it has some, and a * while a run is outstanding.
func gridCell(n api.NodeView) string {
	s := stateName(n.State)
	if n.Failures > 0 {
		s += fmt.Sprintf("(%d)", n.Failures)
	}
	if n.Run != nil {
		s += "*"
	}
	return s
}

// writeGrid prints a tree's nodes as a grid: one row per period, oldest
// first, with its key (UTC) and its start in loc, and one column per level.
func writeGrid(w io.Writer, g *grid, loc *time.Location) {
	if len(g.rows) == 0 {
		fmt.Fprintf(w, "tree %s has no periods in that range (nodes exist from the tree's start to the current period)\n", termsafe.String(g.tree))
		return
	}
	fmt.Fprintf(w, "tree %s: %d %s periods from %s to %s\n", termsafe.String(g.tree), len(g.rows), g.rowQ, g.rows[0], g.rows[len(g.rows)-1])
	layout := "2006-01-02 15:04"
	if loc != time.UTC {
		layout += " -07:00"
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := []string{"TIMEPERIOD", "START (" + loc.String() + ")"}
	for _, l := range g.levels {
		head = append(head, termsafe.String(l.Process))
	}
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	marks := false
	for _, k := range g.rows {
		row := []string{k.String(), g.rowQ.Start(k).In(loc).Format(layout)}
		for i, l := range g.levels {
			cell := "-"
			if lk, err := l.Qualifier.Cast(k); err == nil {
				if n, ok := g.nodes[i][lk]; ok {
					cell = gridCell(n)
					marks = marks || n.Run != nil || n.Failures > 0
				}
			}
			row = append(row, cell)
		}
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	tw.Flush()
	if marks {
		fmt.Fprintln(w, "(n): failed runs since the node started; *: a run is outstanding (requested or running)")
	}
}

// nodeLine names a node and tells its state, failures and run.
func nodeLine(n api.NodeView) string {
	s := fmt.Sprintf("%s %s %s", termsafe.String(n.Process), n.Timeperiod, stateName(n.State))
	if n.Failures > 0 {
		s += fmt.Sprintf(", %d failed", n.Failures)
	}
	if n.Run != nil {
		s += fmt.Sprintf(", run %d %s", n.Run.ID, termsafe.String(string(n.Run.State)))
	}
	return s
}

// writeNode prints a node: its period, state, run, its neighbours in the
// trees, and its event log, newest first.
func writeNode(w io.Writer, d *api.NodeDetailView, tf timeFormat) {
	fmt.Fprintf(w, "Node: %s %s (%s, tree %s)\n", termsafe.String(d.Process), d.Timeperiod, d.Qualifier, termsafe.String(d.Tree))
	fmt.Fprintf(w, "Period: %s to %s\n", tf.at(d.Start), tf.at(d.End))
	fmt.Fprintf(w, "State: %s\n", stateName(d.State))
	fmt.Fprintf(w, "Failures: %d\n", d.Failures)
	switch {
	case d.Run != nil:
		fmt.Fprintf(w, "Run: %d %s\n", d.Run.ID, termsafe.String(string(d.Run.State)))
	case d.Awaiting:
		fmt.Fprintln(w, "Run: none, awaiting its final run")
	default:
		fmt.Fprintln(w, "Run: none")
	}
	parent := "none"
	if d.Parent != nil {
		parent = nodeLine(*d.Parent)
	}
	fmt.Fprintf(w, "Parent: %s\n", parent)
	// Children may be hundreds (a year's days): counted by state.
	var counts []string
	for _, s := range states {
		n := 0
		for _, c := range d.Children {
			if c.State == s {
				n++
			}
		}
		if n > 0 {
			counts = append(counts, fmt.Sprintf("%s %d", stateName(s), n))
		}
	}
	if len(d.Children) == 0 {
		fmt.Fprintln(w, "Children: none")
	} else {
		fmt.Fprintf(w, "Children: %d (%s)\n", len(d.Children), strings.Join(counts, ", "))
	}
	for _, list := range []struct {
		label string
		nodes []api.NodeView
	}{{"Counterparts", d.Counterparts}, {"Dependants", d.Dependants}} {
		if len(list.nodes) == 0 {
			fmt.Fprintf(w, "%s: none\n", list.label)
			continue
		}
		fmt.Fprintf(w, "%s:\n", list.label)
		for _, n := range list.nodes {
			fmt.Fprintf(w, "  %s\n", nodeLine(n))
		}
	}
	fmt.Fprintln(w, "Log (newest first):")
	if len(d.Log) == 0 {
		fmt.Fprintln(w, "  none")
	}
	for _, e := range d.Log {
		line := fmt.Sprintf("  %s %s -> %s: %s, rule %d", tf.at(e.At), stateName(e.From), stateName(e.To), termsafe.String(string(e.Cause)), e.Rule)
		if e.RunID != 0 {
			line += fmt.Sprintf(", run %d", e.RunID)
		}
		if e.By != "" {
			line += ", by " + termsafe.String(e.By)
		}
		if e.Origin != nil {
			line += fmt.Sprintf(", from %s %s", termsafe.String(e.Origin.Process), e.Origin.Timeperiod)
		}
		if e.Message != "" {
			line += ": " + termsafe.String(e.Message)
		}
		fmt.Fprintln(w, line)
	}
}

// writeNodes prints nodes as a table, or the line none when there are
// none.
func writeNodes(w io.Writer, nodes []api.NodeView, none string) {
	if len(nodes) == 0 {
		fmt.Fprintln(w, none)
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PROCESS\tTIMEPERIOD\tSTATE\tFAILURES\tRUN")
	for _, n := range nodes {
		run := "-"
		if n.Run != nil {
			run = fmt.Sprintf("%d %s", n.Run.ID, termsafe.String(string(n.Run.State)))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", termsafe.String(n.Process), n.Timeperiod, stateName(n.State), n.Failures, run)
	}
	tw.Flush()
}

// writeNodeChanges prints the state changes of a skip or a reprocess, one
// line per change: process, timeperiod, from -> to.
func writeNodeChanges(w io.Writer, changes []api.NodeChange, dry bool) {
	for _, c := range changes {
		fmt.Fprintf(w, "%s %s %s -> %s\n", termsafe.String(c.Process), c.Timeperiod, stateName(c.From), stateName(c.To))
	}
	switch {
	case dry && len(changes) == 0:
		fmt.Fprintln(w, "dry run: no node would change")
	case dry:
		fmt.Fprintln(w, "dry run: nothing was changed")
	case len(changes) == 0:
		fmt.Fprintln(w, "no node changed")
	}
}
