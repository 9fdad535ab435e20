package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/api"
	"github.com/gnomon-sched/gnomon/calendar"
	"github.com/gnomon-sched/gnomon/cluster"
	"github.com/gnomon-sched/gnomon/executor"
	"github.com/gnomon-sched/gnomon/internal/termsafe"
	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/periods"
)

// hostile holds what a stored string may hold that a terminal would obey:
// an escape sequence, a carriage return, a bidirectional override, a NUL,
// a tab, a newline, C1 and DEL.
const hostile = "x\x1b[31m\r\u202e\x00\t\n\u0085\x7fy"

// hostileShown is hostile as the command line prints it.
const hostileShown = `x\x1b[31m\r\u202e\x00\t\n\u0085\x7fy`

// TestWritersEscape feeds every string field of what the command line
// prints with control characters: no output holds one, but the newlines
// that end its lines.
func TestWritersEscape(t *testing.T) {
	t.Parallel()
	h := hostile
	at := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	task := &job.Task{Name: h, Type: job.Type(h), Command: h, Parent: h, OutLog: h}
	task.Edit().Label = h
	task.Edit().Deps = []job.DataDep{{Type: job.DataType(h), Resource: h}}
	node := api.NodeView{Process: h, Timeperiod: 2026112400, Run: &api.NodeRun{ID: 3, State: periods.RunStatus(h)}}
	level := periods.LevelInfo{Level: periods.Level{Process: h, Function: h}}
	writers := map[string]func(w *bytes.Buffer){
		"task": func(w *bytes.Buffer) {
			writeTask(w, &api.TaskView{Task: *task, Stored: []api.StoredEvents{{Type: job.DataType(h), Resource: h}, {Type: job.File, Resource: h, Count: 1}},
				Children: []api.TaskView{{Task: *task}}})
		},
		"status": func(w *bytes.Buffer) {
			writeStatus(w, &api.StatusResponse{Rows: []api.StatusRow{{Name: h, RunningStatus: h, Data: map[string]string{h: h}}}}, stamp)
		},
		"runs": func(w *bytes.Buffer) {
			writeRunRows(w, []api.RunView{{Run: job.Run{Task: h}, Children: []job.Run{{Task: h}}}, {Run: job.Run{Task: h, Timeperiod: h, Outcome: h}}})
		},
		"runs table": func(w *bytes.Buffer) {
			runs := []api.RunView{{Run: job.Run{Task: h, Message: h, Trigger: h, By: h, EndedBy: h}, Children: []job.Run{{Task: h}}}, {Run: job.Run{Task: h, Timeperiod: h, Outcome: h}}}
			writeRunsTable(w, runs, true, timeFormat{time.UTC})
		},
		"run": func(w *bytes.Buffer) {
			writeRun(w, &api.RunResponse{Run: job.Run{Task: h, Message: h, Status: job.Failure, Trigger: h, By: h, EndedBy: h, End: at},
				Logs: []executor.RunStream{{Name: h, Path: h, Text: h}}}, "", timeFormat{time.UTC})
		},
		"forecast": func(w *bytes.Buffer) {
			writeForecast(w, &api.ForecastResponse{Fires: []calendar.Planned{{At: at, Task: h}}}, "", time.UTC)
		},
		"changes": func(w *bytes.Buffer) {
			writeChanges(w, &api.Changes{Added: []api.DefinitionRef{{Name: h, Type: job.Type(h)}},
				Changed: []api.ChangedDef{{Name: h, Type: job.Type(h), Fields: []api.FieldChange{{Field: h, Old: h, New: h}}}},
				Deleted: []api.DefinitionRef{{Name: h, Type: job.Type(h)}}}, true)
		},
		"trees": func(w *bytes.Buffer) {
			writeTrees(w, []periods.TreeInfo{{Name: h, File: h, DependentOn: []string{h}, Dependants: []string{h}, Levels: []periods.LevelInfo{level}}})
		},
		"grid": func(w *bytes.Buffer) {
			writeGrid(w, &grid{tree: h, rowQ: periods.Hourly, rows: []periods.Key{2026112400}, levels: []periods.LevelInfo{level},
				nodes: []map[periods.Key]api.NodeView{{2026112400: node}}}, time.UTC)
		},
		"empty grid": func(w *bytes.Buffer) { writeGrid(w, &grid{tree: h}, time.UTC) },
		"node": func(w *bytes.Buffer) {
			writeNode(w, &api.NodeDetailView{NodeView: node, Tree: h, Parent: &node, Children: []api.NodeView{node}, Counterparts: []api.NodeView{node},
				Log: []periods.LogEntry{{At: at, Cause: periods.Cause(h), By: h, Origin: &periods.Ref{Process: h}, Message: h}}}, timeFormat{time.UTC})
		},
		"nodes":        func(w *bytes.Buffer) { writeNodes(w, []api.NodeView{node}, "none") },
		"node changes": func(w *bytes.Buffer) { writeNodeChanges(w, []api.NodeChange{{Process: h}}, false) },
		"posted": func(w *bytes.Buffer) {
			writePosted(w, &api.EventsResponse{Triggered: []string{h}, Validated: []api.Validated{{Configuration: h, Type: job.DataType(h), Resource: h}}})
		},
		"alerts": func(w *bytes.Buffer) {
			writeAlerts(w, &api.AlertsResponse{Alerts: []api.AlertView{{Alert: job.Alert{Task: h, Outcome: job.Outcome(h), To: []string{h, h},
				State: job.AlertState(h), LastError: h}}}}, "none", timeFormat{time.UTC})
		},
		"cluster": func(w *bytes.Buffer) {
			writeCluster(w, &cluster.Status{Space: cluster.DefaultSpace,
				Nodes:      []cluster.Node{{ID: h, Roles: []string{h}, State: h, Version: h, Address: h}},
				Partitions: []cluster.Load{{Name: h, Node: h, Fires: 1}},
				Moves:      []cluster.MoveRecord{{Move: cluster.Move{From: h, To: h}, At: at, Reason: h}},
				Runs:       cluster.Runs{Held: map[string]int{h: 1}, Waiting: []cluster.Waiting{{Task: h, Machine: h}}}}, timeFormat{time.UTC})
		},
		"error": func(w *bytes.Buffer) { w.WriteString(errorLine(h) + "\n") },
	}
	for name, write := range writers {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var b bytes.Buffer
			write(&b)
			out := b.String()
			for _, r := range out {
				if r != '\n' && termsafe.Unsafe(r) {
					t.Fatalf("the output holds %U:\n%q", r, out)
				}
			}
			if !strings.Contains(out, hostileShown) {
				t.Errorf("the output does not show %s:\n%s", hostileShown, out)
			}
		})
	}
}

// TestEscapedOutput stores strings that hold control characters through
// the server (a data event's resource id, a worker's message) and checks
// what the command line prints of them against golden files; an error
// that echoes one prints it escaped on its ERROR line.
func TestEscapedOutput(t *testing.T) {
	t.Parallel()
	f := setup(t, simulateFrom("2026-11-24T00:30:00Z"))
	// A resource id may hold control characters, written as JSON escapes.
	f.mustRun("gnomon", "def", "-f", f.file("in.json", `{"name": "landing", "dependencies": [{"type": "FILE", "resourceId": "/in/\u001b[1m\u202e/", "lifeDuration": 3600}]}`))
	f.mustRun("gnomon", "def", "-f", f.file("trees.json", treesFile))

	// A file name may hold control characters: the event is accepted, its
	// resource id kept, and printed escaped.
	resource := "/in/\x1b[1m\u202e/\x1b]0;owned\x07report\u202etxt.exe\t.csv"
	f.golden("escaped_post_event", f.mustRun("gnomon", "post-event", "--type", "FILE", "--resource", resource, "--timestamp", "2026-11-24T00:10:00Z"))
	f.golden("escaped_events", f.mustRun("gnomon", "events"))
	f.golden("escaped_task", f.mustRun("gnomon", "task", "-j", "landing"))

	// A worker's message, in the node's log and the audit trail.
	f.mustRun("gnomon", "node", "complete", "live_daily", "2026112400", "--outcome", "processed", "--message", "done\x1b[2J\r\nok")
	f.goldenAt("escaped_node_show", f.mustRun("gnomon", "node", "show", "live_daily", "2026112400"))
	f.golden("escaped_audit", f.mustRun("gnomon", "audit"))
	// Export writes the resource id's characters as JSON escapes, which
	// apply again as the same id.
	f.golden("escaped_export", f.mustRun("gnomon", "export", "-j", "landing"))

	// Errors that quote what they were sent.
	if _, errs, code := f.run("gnomon", "task", "-j", "ghost\x1b[2J"); code != ExitRejected || errs != "ERROR task ghost\\x1b[2J not found\n" {
		t.Errorf("task of an unknown name: exit %d, stderr %q", code, errs)
	}
	bad := f.file("bad.def", "insert_task: a\x1b[2Jb\ntype: callable\ncommand: echo \u202eok\nout_log_file: o\nerr_log_file: e\n")
	_, errs, code := f.run("gnomon", "def", "-f", bad)
	want := "ERROR " + bad + ":1: insert_task a\\x1b[2Jb: task name can only contain alpha numeric and underscore chars: it holds the control character U+001B (a definition holds printable text and tabs only)\n" +
		"ERROR " + bad + ":3: insert_task a\\x1b[2Jb: command: holds the bidirectional formatting character U+202E, which shows the text around it in another order than it is read\n"
	if code != ExitRejected || errs != want {
		t.Errorf("def of a bad file: exit %d, stderr\n%s\nwant\n%s", code, errs, want)
	}
	// The client would send a byte that is not UTF-8 as U+FFFD.
	if _, errs, code := f.run("gnomon", "post-event", "--type", "FILE", "--resource", "/in/caf\xe9"); code != ExitUsage ||
		errs != "ERROR --resource /in/caf\\xe9 is not UTF-8 text\n" {
		t.Errorf("post-event of a resource that is not UTF-8: exit %d, stderr %q", code, errs)
	}
	if _, errs, code := f.run("gnomon", "post-event", "--type", "FILE", "--resource", "/in/\x00"); code != ExitRejected ||
		errs != "ERROR invalid event: eventResourceId: holds a NUL character (\\u0000)\n" {
		t.Errorf("post-event with a NUL: exit %d, stderr %q", code, errs)
	}
}

// A definition file that is not UTF-8 is refused by the client, which
// would send its bytes as U+FFFD (a JSON string holds UTF-8 only), naming
// the file, the line, the column and the offset of the first bad byte; a
// request that sends such bytes itself is refused by the server.
func TestDefRefusesFileNotUTF8(t *testing.T) {
	t.Parallel()
	f := setup(t)
	text := "insert_task: a\ntype: callable\ncommand: echo caf\xe9\nout_log_file: @DIR@/o\nerr_log_file: @DIR@/e\n"
	bad := f.file("bad.def", text)
	for _, args := range [][]string{{"gnomon", "def", "-f", bad}, {"gnomon", "def", "-c", "-f", bad}, {"gnomon", "def", "--apply", "-f", bad}} {
		_, errs, code := f.run(args...)
		want := "ERROR " + bad + ":3: not UTF-8 text: byte 0xe9 (column 18, offset 47) is not UTF-8; save the file as UTF-8\n"
		if code != ExitRejected || errs != want {
			t.Errorf("%v: exit %d, stderr\n%s\nwant\n%s", args[1:], code, errs, want)
		}
	}
	if _, _, code := f.run("gnomon", "task", "-j", "a"); code != ExitRejected {
		t.Errorf("task a after a refused file: exit %d, want %d (not defined)", code, ExitRejected)
	}
	body := "{\"file\":\"bad.def\",\"text\":\"" + strings.ReplaceAll(strings.ReplaceAll(text, "\n", `\n`), "@DIR@", f.dir) + "\"}"
	if status, msg, _ := send(t, f.client.Base, f.client.Token, "POST", "/api/v1/definitions", body); status != 400 || msg != "request body is not valid UTF-8" {
		t.Errorf("POST /api/v1/definitions with a byte that is not UTF-8: %d %q", status, msg)
	}
}
