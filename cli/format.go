package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/gnomon-sched/gnomon/api"
	"github.com/gnomon-sched/gnomon/defs"
	"github.com/gnomon-sched/gnomon/job"
)

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
		if d.Count == 0 {
			fmt.Fprintf(w, "Stored: %s %s: no events\n", d.Type, d.Resource)
			continue
		}
		noun := "events"
		if d.Count == 1 {
			noun = "event"
		}
		fmt.Fprintf(w, "Stored: %s %s: %d %s, %s to %s\n", d.Type, d.Resource, d.Count, noun,
			d.Oldest.Format(time.RFC3339Nano), d.Newest.Format(time.RFC3339Nano))
	}
	for _, c := range v.Children {
		fmt.Fprintln(w)
		taskLines(w, &c.Task, "  ")
	}
	fmt.Fprintln(w)
}

// taskLabels are the schd_task labels of the definition attributes.
var taskLabels = map[string]string{
	"type": "Type", "parent": "Parent", "machine": "Machine", "command": "Command", "condition": "Condition",
	"out_log_file": "OutLogFile", "err_log_file": "ErrLogFile", "label": "Label", "profile": "Profile",
	"run_days": "RunDays", "start_times": "StartTimes", "run_window": "RunWindow", "start_mins": "StartMins",
	"cron": "Cron", "start_date": "StartDate", "end_date": "EndDate", "interval": "Interval",
	"timezone": "Timezone", "start_delay": "StartDelay", "overlap": "Overlap", "priority": "Priority",
	"function": "Function", "alert_on": "AlertOn", "alert_to": "AlertTo", "alert_template": "AlertTemplate", "jobs": "Jobs",
}

func taskLines(w io.Writer, t *job.Task, indent string) {
	if t.Type == job.Group {
		fmt.Fprintf(w, "%sGroup Name: %s\n", indent, t.Name)
	} else {
		fmt.Fprintf(w, "%sTask Name: %s\n", indent, t.Name)
	}
	for _, kv := range defs.Attrs(t) {
		if kv[0] == "dependencies" {
			for _, d := range t.Extras().Deps {
				fmt.Fprintf(w, "%sDependency: %s %s (life %ds)\n", indent, d.Type, d.Resource, d.Life)
			}
			continue
		}
		fmt.Fprintf(w, "%s%s: %s\n", indent, taskLabels[kv[0]], kv[1])
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
	tableLine(w, strings.Repeat(" ", level)+name, stamp(start), stamp(end), status.String())
}

// stamp renders a time as yyyymmdd HH:MM:SS in the zone it carries (the
// server's), or nothing for the zero time.
func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Format("20060102 15:04:05")
}

// writeStatus prints schd_status: header, underline, one row per task.
func writeStatus(w io.Writer, s *api.StatusResponse) {
	tableHeader(w)
	for _, r := range s.Rows {
		tableRow(w, r.Name, r.Level, r.Start, r.End, r.Status)
	}
	// What running function runs report, below the table.
	for _, r := range s.Rows {
		if r.RunningStatus != "" {
			fmt.Fprintf(w, "%s: %s\n", r.Name, r.RunningStatus)
		}
		for _, k := range slices.Sorted(maps.Keys(r.Data)) {
			fmt.Fprintf(w, "%s: %s = %s\n", r.Name, k, r.Data[k])
		}
	}
}

// writeRunRows prints runs as schd_runs does, below tableHeader: a bundle
// run is followed by the runs of its children.
func writeRunRows(w io.Writer, runs []api.RunView) {
	for _, r := range runs {
		tableRow(w, r.Task, 0, r.Start, r.End, r.Status)
		for _, c := range r.Children {
			tableRow(w, c.Task, 1, c.Start, c.End, c.Status)
		}
	}
}

// fireLine writes one line of the table of fires.
func fireLine(w io.Writer, sched, fate, run, reason string) {
	fmt.Fprintln(w, strings.TrimRight(fmt.Sprintf("%-*s %-7s %-8s %s", wTime, sched, fate, run, reason), " "))
}

// fireHeader writes the header of the table of fires.
func fireHeader(w io.Writer) {
	u := strings.Repeat
	fireLine(w, "Scheduled", "Fate", "Run", "Reason")
	fireLine(w, u("_", wTime), u("_", 7), u("_", 8), u("_", 6))
}

// writeFireRows prints what became of planned occurrences, below
// fireHeader.
func writeFireRows(w io.Writer, fires []job.Fire) {
	for _, f := range fires {
		run := ""
		if f.RunID != 0 {
			run = fmt.Sprint(f.RunID)
		}
		fireLine(w, stamp(f.Scheduled), string(f.Fate), run, f.Reason)
	}
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
	for _, a := range c.Added {
		fmt.Fprintf(w, "added:   %s (%s)\n", a.Name, a.Type)
	}
	for _, ch := range c.Changed {
		fmt.Fprintf(w, "changed: %s (%s)\n", ch.Name, ch.Type)
		for _, f := range ch.Fields {
			fmt.Fprintf(w, "    %s: %s -> %s\n", f.Field, value(f.Old), value(f.New))
		}
	}
	for _, d := range c.Deleted {
		fmt.Fprintf(w, "deleted: %s (%s)\n", d.Name, d.Type)
	}
}
