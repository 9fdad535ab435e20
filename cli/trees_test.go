package cli

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/api"
	"github.com/gnomon-sched/gnomon/periods"
)

// treesFile defines three trees whose levels external workers handle, so
// that the test reports every outcome: site (a day blocked on its hours),
// client (hours gated on site's), and live (a continuous day ticking every
// quarter of an hour).
const treesFile = `{"settings": {"startTimeperiod": "2026112400", "lagMinutes": 1, "maxFailures": 1},
 "trees": [
  {"name": "site", "levels": [
     {"process": "site_daily", "qualifier": "daily", "blocking": "children"},
     {"process": "site_hourly", "qualifier": "hourly"}]},
  {"name": "client", "dependentOn": ["site"], "levels": [
     {"process": "client_hourly", "qualifier": "hourly", "blocking": "dependencies"}]},
  {"name": "live", "levels": [
     {"process": "live_daily", "qualifier": "daily", "stateMachine": "continuous", "every": "15m"}]}
 ]}
`

// call sends a request to the fixture's server and returns the status and
// the body without its final newline.
func (f *fixture) call(method, path, body string) (int, string) {
	f.t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, f.client.Base+path, r)
	if err != nil {
		f.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := testHTTP.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		f.t.Fatal(err)
	}
	return resp.StatusCode, strings.TrimSuffix(string(b), "\n")
}

// expect checks a request's status and that its body holds want: an
// error's message, or the body itself.
func (f *fixture) expect(method, path, body string, status int, want string) string {
	f.t.Helper()
	code, got := f.call(method, path, body)
	var er api.ErrorResponse
	text := got
	if code >= 400 && json.Unmarshal([]byte(got), &er) == nil {
		text = er.Error
	}
	if code != status || !strings.Contains(text, want) {
		f.t.Errorf("%s %s %s: %d %s\nwant %d with %s", method, path, body, code, got, status, want)
	}
	return got
}

// expectJSON checks a request's status and its whole body.
func (f *fixture) expectJSON(method, path, body string, status int, want string) {
	f.t.Helper()
	if code, got := f.call(method, path, body); code != status || got != want {
		f.t.Errorf("%s %s %s:\n got %d %s\nwant %d %s", method, path, body, code, got, status, want)
	}
}

// nodesOf returns the answer listing a process's nodes.
func (f *fixture) nodesOf(process string) string {
	f.t.Helper()
	_, body := f.call("GET", "/api/v1/nodes?process="+process, "")
	return body
}

// TestTreesScenario runs trees on a simulated clock through the API and
// the command line: definition (refused, checked, applied), clock moves,
// the outstanding runs an external worker sees, their outcomes, ticks,
// skips and reprocessing (dry, then for real), node details, the grid,
// the runs of a process, and a tree file exported and defined again.
func TestTreesScenario(t *testing.T) {
	t.Parallel()
	f := setup(t, simulateFrom("2026-11-24T00:30:00Z"), func(c *ServerConfig) { c.Timezone = "UTC" })

	// A malformed tree file is refused whole, every problem named with
	// the file, line and JSON path, and nothing is stored.
	badText := `{"settings": {"startTimeperiod": "2026112400"},
 "trees": [{"name": "site", "levels": [{"process": "site_hourly", "qualifier": "weekly"}]},
  {"name": "other", "colour": "red", "levels": [{"process": "other_hourly", "qualifier": "hourly"}]}]}`
	req, _ := json.Marshal(api.DefineRequest{File: "bad.json", Text: badText})
	f.expectJSON("POST", "/api/v1/definitions", string(req), 400,
		`{"error":"tree file rejected","errors":["bad.json:2: trees[0].levels[0].qualifier: unknown qualifier \"weekly\" (want hourly, daily, monthly or yearly)","bad.json:3: trees[1].colour: unknown key (want one of name, dependentOn, settings, levels)"]}`)
	bad := f.file("bad.json", badText)
	for _, args := range [][]string{{"gnomon", "def", "-f", bad}, {"gnomon", "def", "--sync", "-f", bad}} {
		if _, errs, code := f.run(args...); code != 1 || !strings.Contains(errs, "ERROR "+bad+`:2: trees[0].levels[0].qualifier: unknown qualifier "weekly"`) {
			t.Errorf("%v: exit %d\n%s", args, code, errs)
		}
	}
	f.expectJSON("GET", "/api/v1/trees", "", 200, `{"trees":[]}`)

	// Checked, then checked declaratively: nothing is stored either.
	file := f.file("trees.json", treesFile)
	if out := f.mustRun("gnomon", "def", "-c", "-f", file); out != "Successfully validated\n" {
		t.Errorf("def -c:\n%s", out)
	}
	if out := f.mustRun("gnomon", "def", "--apply", "-c", "-f", file); out != "added:   client (tree)\nadded:   live (tree)\nadded:   site (tree)\nSuccessfully validated\n" {
		t.Errorf("def --apply -c:\n%s", out)
	}
	if out := f.mustRun("gnomon", "tree", "list"); out != "no trees defined\n" {
		t.Errorf("the checks defined trees:\n%s", out)
	}
	if out := f.mustRun("gnomon", "def", "-f", file); out != "Successfully processed\n" {
		t.Errorf("def:\n%s", out)
	}
	f.golden("tree_list_defined", f.mustRun("gnomon", "tree", "list"))

	// The listings' parameters.
	f.expect("GET", "/api/v1/nodes", "", 400, "give process=NAME (the nodes of a process) or outstanding=true")
	f.expect("GET", "/api/v1/nodes?outstanding=false", "", 400, "give process=NAME")
	f.expect("GET", "/api/v1/nodes?process=ghost", "", 404, "ghost")
	f.expect("GET", "/api/v1/nodes?process=site_hourly&from=2026", "", 400, `from: bad timeperiod key "2026"`)
	f.expect("GET", "/api/v1/nodes?outstanding=yes", "", 400, "outstanding must be true or false")
	f.expect("GET", "/api/v1/trees/ghost", "", 404, "tree ghost not found")

	// At 00:30 only the continuous day has started; its run waits for a
	// worker.
	f.expectJSON("GET", "/api/v1/nodes?outstanding=true", "", 200,
		`{"nodes":[{"process":"live_daily","timeperiod":"2026112400","state":"in_progress","failures":0,"run":{"id":1,"state":"requested"}}]}`)
	f.expectJSON("GET", "/api/v1/nodes?process=site_hourly", "", 200,
		`{"nodes":[{"process":"site_hourly","timeperiod":"2026112400","state":"embryo","failures":0,"run":null}]}`)

	// Outcomes: no run, unknown process or node, bad outcome or body.
	f.expect("POST", "/api/v1/nodes/site_hourly/2026112400/complete", `{"outcome":"processed"}`, 409, "node site_hourly 2026112400 has no outstanding run (it is queued)")
	f.expect("POST", "/api/v1/nodes/site_hourly/2026112400/start", ``, 409, "has no outstanding run")
	f.expect("POST", "/api/v1/nodes/ghost/2026112400/complete", `{"outcome":"processed"}`, 404, "ghost")
	f.expect("POST", "/api/v1/nodes/site_hourly/2026112500/complete", `{"outcome":"processed"}`, 404, "site_hourly@2026112500")
	f.expect("POST", "/api/v1/nodes/live_daily/2026112400/complete", `{"outcome":"done"}`, 400, `outcome: "done" should be processed, noop, failed or canceled`)
	f.expect("POST", "/api/v1/nodes/live_daily/2026112400/complete", `{"outcome":`, 400, "truncated JSON body")
	f.expect("POST", "/api/v1/nodes/live_daily/2026112400/complete", `{"outcome":"processed","by":"me"}`, 400, `unknown field "by"`)
	f.expect("POST", "/api/v1/nodes/live_daily/20261124/complete", `{"outcome":"processed"}`, 400, `bad timeperiod key "20261124"`)
	// The day is open: its run's outcome leaves it awaiting the next tick.
	got := f.expect("POST", "/api/v1/nodes/live_daily/2026112400/complete", `{"outcome":"processed","message":"early figure"}`, 200,
		`{"process":"live_daily","timeperiod":"2026112400","state":"in_progress","failures":0,"run":null,"tree":"live","qualifier":"daily","awaiting":true,`)
	if !strings.Contains(got, `"message":"early figure"`) {
		t.Errorf("the worker's message is not in the node's log: %s", got)
	}
	f.expect("POST", "/api/v1/nodes/live_daily/2026112400/complete", `{"outcome":"processed"}`, 409, "has no outstanding run (it awaits its final run)")
	f.expectJSON("GET", "/api/v1/nodes?outstanding=true", "", 200, `{"nodes":[]}`)

	// A tick runs the continuous day again, and leaves the clock alone.
	f.expectJSON("POST", "/api/v1/clock", `{"tick":true}`, 200, `{"now":"2026-11-24T00:30:00Z","simulated":true}`)
	f.expectJSON("GET", "/api/v1/nodes?outstanding=true", "", 200,
		`{"nodes":[{"process":"live_daily","timeperiod":"2026112400","state":"in_progress","failures":0,"run":{"id":2,"state":"requested"}}]}`)
	f.expect("POST", "/api/v1/clock", `{}`, 400, "give to")

	// Hour 00 is due after 01:01: its worker starts it, then completes it,
	// and the client's hour 00, gated on it, starts.
	if out := f.mustRun("gnomon", "clock", "advance", "--to", "2026-11-24 01:02"); out != "2026-11-24 01:02:00 UTC (simulated)\n" {
		t.Errorf("clock advance:\n%s", out)
	}
	f.expectJSON("GET", "/api/v1/nodes?outstanding=true", "", 200,
		`{"nodes":[{"process":"live_daily","timeperiod":"2026112400","state":"in_progress","failures":0,"run":{"id":2,"state":"requested"}},`+
			`{"process":"site_hourly","timeperiod":"2026112400","state":"in_progress","failures":0,"run":{"id":3,"state":"requested"}}]}`)
	if out := f.mustRun("gnomon", "node", "start", "site_hourly", "2026112400"); out != "site_hourly 2026112400: in_progress, run 3 running\n" {
		t.Errorf("node start:\n%s", out)
	}
	f.expect("POST", "/api/v1/nodes/site_hourly/2026112400/complete", `{"outcome":"processed"}`, 200,
		`{"process":"site_hourly","timeperiod":"2026112400","state":"processed","failures":0,"run":null,`)
	f.expectJSON("GET", "/api/v1/nodes?process=client_hourly&outstanding=true", "", 200,
		`{"nodes":[{"process":"client_hourly","timeperiod":"2026112400","state":"in_progress","failures":0,"run":{"id":4,"state":"requested"}}]}`)

	// At 04:02 hours 01 to 03 are due; the process takes them in order.
	f.mustRun("gnomon", "clock", "advance", "--to", "2026-11-24 04:02")
	if out := f.mustRun("gnomon", "node", "complete", "site_hourly", "2026112401", "--outcome", "noop"); out != "site_hourly 2026112401: run 5 noop; the node is noop\n" {
		t.Errorf("node complete:\n%s", out)
	}
	if _, errs, code := f.run("gnomon", "node", "complete", "site_hourly", "2026112401", "--outcome", "noop"); code != 1 || !strings.Contains(errs, "has no outstanding run (it is noop)") {
		t.Errorf("node complete of a finished node: exit %d %q", code, errs)
	}
	if _, errs, code := f.run("gnomon", "node", "complete", "site_hourly", "2026112402", "--outcome", "done"); code != 2 || !strings.Contains(errs, "--outcome must be") {
		t.Errorf("node complete --outcome done: exit %d %q", code, errs)
	}
	if out := f.mustRun("gnomon", "node", "list", "--outstanding"); out != `PROCESS        TIMEPERIOD  STATE        FAILURES  RUN
client_hourly  2026112400  in_progress  0         4 requested
live_daily     2026112400  in_progress  0         2 requested
site_hourly    2026112402  in_progress  0         6 requested
` {
		t.Errorf("node list --outstanding:\n%s", out)
	}

	// A dry skip lists the cascade and changes nothing.
	site, client := f.nodesOf("site_hourly"), f.nodesOf("client_hourly")
	f.expectJSON("POST", "/api/v1/nodes/site_hourly/2026112402/skip?dry_run=true", "", 200,
		`{"changed":[{"process":"site_hourly","timeperiod":"2026112402","from":"in_progress","to":"skipped"},`+
			`{"process":"client_hourly","timeperiod":"2026112402","from":"embryo","to":"skipped"}]}`)
	if out := f.mustRun("gnomon", "node", "skip", "site_hourly", "2026112402", "--dry-run"); out != "site_hourly 2026112402 in_progress -> skipped\nclient_hourly 2026112402 queued -> skipped\ndry run: nothing was changed\n" {
		t.Errorf("node skip --dry-run:\n%s", out)
	}
	if f.nodesOf("site_hourly") != site || f.nodesOf("client_hourly") != client {
		t.Errorf("a dry skip changed nodes:\n%s\n%s", f.nodesOf("site_hourly"), f.nodesOf("client_hourly"))
	}
	// The skip cancels the run, cascades to the dependant, and the next
	// hour starts.
	f.expect("POST", "/api/v1/nodes/site_hourly/2026112402/skip", `{"timeperiods": ["nope"]}`, 400, `bad timeperiod key "nope"`)
	f.expectJSON("POST", "/api/v1/nodes/site_hourly/2026112402/skip", "", 200,
		`{"changed":[{"process":"site_hourly","timeperiod":"2026112402","from":"in_progress","to":"skipped"},`+
			`{"process":"client_hourly","timeperiod":"2026112402","from":"embryo","to":"skipped"},`+
			`{"process":"site_hourly","timeperiod":"2026112403","from":"embryo","to":"in_progress"}]}`)
	// Skipping finished nodes changes them not, but the skip still goes
	// on to their dependants; with a body, several.
	f.expectJSON("POST", "/api/v1/nodes/site_hourly/2026112401/skip", `{"timeperiods": ["2026112402"]}`, 200,
		`{"changed":[{"process":"client_hourly","timeperiod":"2026112401","from":"embryo","to":"skipped"}]}`)

	// Reprocess, dry then for real: the hour and its dependant go back to
	// queued (the day is queued already), and the hour starts again.
	site, client = f.nodesOf("site_hourly"), f.nodesOf("client_hourly")
	if out := f.mustRun("gnomon", "node", "reprocess", "site_hourly", "2026112400", "--dry-run"); out != "site_hourly 2026112400 processed -> queued\nclient_hourly 2026112400 in_progress -> queued\ndry run: nothing was changed\n" {
		t.Errorf("node reprocess --dry-run:\n%s", out)
	}
	if f.nodesOf("site_hourly") != site || f.nodesOf("client_hourly") != client {
		t.Errorf("a dry reprocess changed nodes:\n%s\n%s", f.nodesOf("site_hourly"), f.nodesOf("client_hourly"))
	}
	f.expectJSON("POST", "/api/v1/nodes/site_hourly/2026112400/reprocess", "", 200,
		`{"changed":[{"process":"site_hourly","timeperiod":"2026112400","from":"processed","to":"embryo"},`+
			`{"process":"client_hourly","timeperiod":"2026112400","from":"in_progress","to":"embryo"},`+
			`{"process":"site_hourly","timeperiod":"2026112400","from":"embryo","to":"in_progress"}]}`)

	// The node detail: a finer key names the day that holds it.
	d, err := f.client.Node(context.Background(), "site_daily", "2026112414")
	if err != nil {
		t.Fatal(err)
	}
	var kids []string
	for _, c := range d.Children {
		kids = append(kids, c.Timeperiod.String()+" "+c.State.String())
	}
	if d.Timeperiod != 2026112400 || d.State != periods.Embryo || d.Parent != nil || d.Run != nil || d.Awaiting ||
		d.Start.Format("2006-01-02T15:04Z07:00") != "2026-11-24T00:00Z" || d.End.Format("2006-01-02T15:04Z07:00") != "2026-11-25T00:00Z" ||
		strings.Join(kids, ",") != "2026112400 in_progress,2026112401 noop,2026112402 skipped,2026112403 in_progress,2026112404 embryo" {
		t.Errorf("node site_daily 2026112414: %+v", d)
	}
	f.goldenAt("node_show_reprocessed", f.mustRun("gnomon", "node", "show", "site_hourly", "2026112400"))
	// A failed run is retried (maxFailures is 1), and the grid shows the
	// failure.
	f.expect("POST", "/api/v1/nodes/site_hourly/2026112403/complete", `{"outcome":"failed","message":"exit status 3"}`, 200,
		`{"process":"site_hourly","timeperiod":"2026112403","state":"in_progress","failures":1,"run":{"id":9,"state":"requested"},`)
	f.golden("tree_show_site", f.mustRun("gnomon", "tree", "show", "site"))
	f.golden("tree_show_client_paris", f.mustRun("gnomon", "tree", "show", "client", "--tz", "Europe/Paris", "--from", "2026112322", "--to", "2026112402"))
	if out := f.mustRun("gnomon", "tree", "show", "site", "--level", "daily"); !strings.HasSuffix(out, "2026112400  2026-11-24 00:00  queued\n") {
		t.Errorf("tree show --level daily:\n%s", out)
	}
	if _, errs, code := f.run("gnomon", "tree", "show", "site", "--level", "monthly"); code != 2 || !strings.Contains(errs, `tree site has no level "monthly" (its levels: daily (site_daily), hourly (site_hourly))`) {
		t.Errorf("tree show --level monthly: exit %d %q", code, errs)
	}

	// The runs of a process, with their timeperiods and outcomes.
	rs, err := f.client.Runs(context.Background(), "site_hourly", 10, "")
	if err != nil {
		t.Fatal(err)
	}
	var runs []string
	for _, r := range rs.Runs {
		runs = append(runs, r.Timeperiod+" "+r.Status.String()+" "+r.Outcome)
	}
	if got := strings.Join(runs, ","); got != "2026112403 running ,2026112400 running ,2026112403 failure failed,2026112402 aborted canceled,2026112401 success noop,2026112400 success processed" {
		t.Errorf("runs of site_hourly: %s", got)
	}
	f.golden("runs_site_hourly", f.mustRun("gnomon", "runs", "-j", "site_hourly", "-n", "10"))
	f.expect("GET", "/api/v1/tasks/ghost/runs", "", 404, "task ghost not found")

	// The tree file exported and defined again under its name changes
	// nothing.
	listed := f.mustRun("gnomon", "tree", "list")
	exported := f.mustRun("gnomon", "export", "--tree-file", file)
	if !strings.Contains(exported, `"stateMachine": "continuous"`) || !periods.IsTreeFile(exported) {
		t.Fatalf("export --tree-file:\n%s", exported)
	}
	if err := os.WriteFile(file, []byte(exported), 0o644); err != nil {
		t.Fatal(err)
	}
	if out := f.mustRun("gnomon", "def", "--apply", "-f", file); out != "no changes\nSuccessfully processed\n" {
		t.Errorf("def --apply of the export:\n%s", out)
	}
	if out := f.mustRun("gnomon", "def", "-f", file); out != "Successfully processed\n" {
		t.Errorf("def of the export:\n%s", out)
	}
	if out := f.mustRun("gnomon", "tree", "list"); out != listed {
		t.Errorf("defining the export changed the trees:\n%s\nwas\n%s", out, listed)
	}
	f.expect("GET", "/api/v1/definitions?tree_file=ghost.json", "", 404, "tree file ghost.json not found (the tree files are "+file+")")

	// An edit, checked: the trees it changes with what changes in each,
	// and those it drops.
	edited := strings.Replace(treesFile, `"dependentOn": ["site"],`, `"dependentOn": ["site"], "settings": {"lagMinutes": 2},`, 1)
	edited = strings.Replace(edited, `{"process": "site_hourly", "qualifier": "hourly"}`, `{"process": "site_hourly", "qualifier": "hourly", "blocking": "children"}`, 1)
	edited = strings.Replace(edited, `,
  {"name": "live", "levels": [
     {"process": "live_daily", "qualifier": "daily", "stateMachine": "continuous", "every": "15m"}]}`, "", 1)
	if err := os.WriteFile(file, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	want := `sync: the tree file owns its trees: those it no longer defines are removed
changed: client (tree)
    lagMinutes: "1" -> "2"
changed: site (tree)
    level site_hourly: "{\"process\":\"site_hourly\",\"qualifier\":\"hourly\"}" -> "{\"process\":\"site_hourly\",\"qualifier\":\"hourly\",\"blocking\":\"children\"}"
deleted: live (tree)
Successfully validated
`
	if out := f.mustRun("gnomon", "def", "--sync", "-c", "-f", file); out != want {
		t.Errorf("def --sync -c of an edit:\n%s", out)
	}
	if out := f.mustRun("gnomon", "tree", "list"); out != listed {
		t.Errorf("def --sync -c changed the trees:\n%s", out)
	}

	// Completion offers processes and trees.
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"gnomon", "__complete", "node", "show", "site"}, "site_daily\nsite_hourly\n:4\n"},
		{[]string{"gnomon", "__complete", "node", "show", "site_daily", ""}, ":4\n"},
		{[]string{"gnomon", "__complete", "node", "list", "-p", "c"}, "client_hourly\n:4\n"},
		{[]string{"gnomon", "__complete", "tree", "show", "l"}, "live\n:4\n"},
		{[]string{"gnomon", "__complete", "runs", "-j", "live"}, "live_daily\n:4\n"},
		{[]string{"gnomon", "__complete", "export", "--tree-file", ""}, file + "\n:4\n"},
	} {
		if out, errs, code := f.run(tt.args...); code != 0 || out != tt.want {
			t.Errorf("%q: exit %d\n%s(want %q; stderr %q)", tt.args, code, out, tt.want, errs)
		}
	}
}

// TestTickNeedsASimulation checks that a tick is refused on a real clock.
func TestTickNeedsASimulation(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.expect("POST", "/api/v1/clock", `{"tick":true}`, 409, "virtual clock")
	if _, errs, code := f.run("gnomon", "clock", "--tick"); code != 1 || errs != "ERROR the clock can only be moved or ticked on a server started with --simulate-from\n" {
		t.Errorf("clock --tick on a real clock: exit %d %q", code, errs)
	}
	f.expectJSON("GET", "/api/v1/trees", "", 200, `{"trees":[]}`)
	f.expect("GET", "/api/v1/definitions?tree_file=x.json", "", 404, "tree file x.json not found (none is defined)")
	f.expect("GET", "/api/v1/definitions?tree_file=x.json&task=a", "", 400, "give task or tree_file, not both")
}

// TestTickSettles checks that a tick answers once the runs it started have
// ended, as a move of the clock does, and that the clock stays where it is
// but for the virtual time those runs take: as long as they take for real,
// under a second on an idle machine, more on a loaded one, never a minute.
func TestTickSettles(t *testing.T) {
	t.Parallel()
	f := setup(t, simulateFrom("2026-11-24T00:30:00Z"), func(c *ServerConfig) { c.Timezone = "UTC" })
	f.mustRun("gnomon", "def", "-f", f.file("live.json", `{"settings": {"startTimeperiod": "2026112400"},
 "trees": [{"name": "live", "levels": [{"process": "live_daily", "qualifier": "daily", "stateMachine": "continuous",
   "every": "1h", "command": "echo $GNOMON_TIMEPERIOD >> @DIR@/live.out"}]}]}`))
	f.mustRun("gnomon", "clock", "advance", "--to", "2026-11-24T00:31:00Z") // the first run, at the define
	for i, want := range []string{"2026112400\n2026112400\n", "2026112400\n2026112400\n2026112400\n"} {
		out := f.mustRun("gnomon", "clock", "--tick")
		at, err := time.Parse(timeLayout, strings.TrimSuffix(out, " (simulated)\n"))
		if from := time.Date(2026, 11, 24, 0, 31, 0, 0, time.UTC); err != nil || at.Before(from) || !at.Before(from.Add(time.Minute)) {
			t.Errorf("tick %d: %s", i, out)
		}
		if got, err := readFile(f.dir, "live.out"); err != nil || got != want {
			t.Errorf("after tick %d the command had written %q (%v), want %q", i, got, err, want)
		}
	}
	if out := f.mustRun("gnomon", "node", "list", "-p", "live_daily"); out != "PROCESS     TIMEPERIOD  STATE        FAILURES  RUN\nlive_daily  2026112400  in_progress  0         -\n" {
		t.Errorf("node list after the ticks:\n%s", out)
	}
}
