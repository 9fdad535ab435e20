package cli

import (
	"fmt"
	"io"
	"strconv"
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
	for _, c := range v.Children {
		fmt.Fprintln(w)
		taskLines(w, &c.Task, "  ")
	}
	fmt.Fprintln(w)
}

func taskLines(w io.Writer, t *job.Task, indent string) {
	line := func(label, value string) {
		if value != "" {
			fmt.Fprintf(w, "%s%s: %s\n", indent, label, value)
		}
	}
	line("Task Name", t.Name)
	line("Type", string(t.Type))
	line("Parent", t.Parent)
	line("Machine", t.Machine)
	line("Command", t.Command)
	line("Condition", t.Condition)
	line("OutLogFile", t.OutLog)
	line("ErrLogFile", t.ErrLog)
	line("Label", t.Label)
	line("Profile", t.Profile)
	line("RunDays", t.RunDays.String())
	line("StartTimes", defs.JoinClocks(t.StartTimes))
	if t.Window != nil {
		line("RunWindow", t.Window.Start.String()+"-"+t.Window.End.String())
	}
	line("StartMins", defs.JoinMins(t.StartMins))
	line("Timezone", t.Timezone)
	if t.StartDelay > 0 {
		line("StartDelay", time.Duration(t.StartDelay).String())
	}
	line("Overlap", string(t.Overlap))
	line("Priority", strconv.Itoa(int(t.Priority)))
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
}

// writeRuns prints schd_runs: the same table, no header when there are no
// runs; a bundle run is followed by the runs of its children.
func writeRuns(w io.Writer, rs *api.RunsResponse) {
	if len(rs.Runs) == 0 {
		fmt.Fprintln(w)
		return
	}
	tableHeader(w)
	for _, r := range rs.Runs {
		tableRow(w, r.Task, 0, r.Start, r.End, r.Status)
		for _, c := range r.Children {
			tableRow(w, c.Task, 1, c.Start, c.End, c.Status)
		}
	}
}
