package cli

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gnomon-sched/gnomon/api"
	"github.com/gnomon-sched/gnomon/auth"
)

// scopeDefs holds, for a token scoped to demo_*, tasks of its scope tied
// to tasks outside it every way the engine ties tasks: a bundle of the
// scope with a member outside it, a task of the scope that one outside
// it waits on (su), a task of the scope that waits on one outside it,
// and a configuration outside the scope fed by a data event. Each
// command leaves a mark, so that the test sees what ran.
const scopeDefs = `insert_calendar: holidays
dates: 2026-12-25

insert_task: demo_ok
type: callable
command: touch @DIR@/ran.demo_ok
out_log_file: @DIR@/o
err_log_file: @DIR@/e

insert_task: demo_box
type: bundle

insert_task: secret_member
type: callable
command: touch @DIR@/ran.secret_member
parent: demo_box
out_log_file: @DIR@/o
err_log_file: @DIR@/e

insert_task: demo_up
type: callable
command: touch @DIR@/ran.demo_up
out_log_file: @DIR@/o
err_log_file: @DIR@/e

insert_task: secret_dependant
type: callable
command: touch @DIR@/ran.secret_dependant
condition: su(demo_up) | fa(demo_up) | nr(demo_up)
out_log_file: @DIR@/o
err_log_file: @DIR@/e

insert_task: secret_job
type: callable
command: touch @DIR@/ran.secret_job
exclude_calendar: holidays
cron: 0 0 29 2 *
out_log_file: @DIR@/o
err_log_file: @DIR@/e

insert_task: demo_after
type: callable
command: touch @DIR@/ran.demo_after
condition: su(secret_job)
exclude_calendar: holidays
cron: 0 0 29 2 *
out_log_file: @DIR@/o
err_log_file: @DIR@/e

insert_task: demo_later
type: callable
command: touch @DIR@/ran.demo_later
condition: su(demo_after)
out_log_file: @DIR@/o
err_log_file: @DIR@/e

insert_task: secret_feed
type: configuration
dependencies: [{"type":"FILE","resourceId":"/landing/secret","lifeDuration":3600}]
command: touch @DIR@/ran.secret_feed
out_log_file: @DIR@/o
err_log_file: @DIR@/e

insert_task: demo_feed
type: configuration
dependencies: [{"type":"FILE","resourceId":"/landing/demo","lifeDuration":3600}]
command: touch @DIR@/ran.demo_feed
out_log_file: @DIR@/o
err_log_file: @DIR@/e
`

// scopeTrees: demo's tree is in the scope, and fin's, outside it, depends
// on it, so a skip or reprocess of demo's nodes would cascade into fin's;
// solo's tree is in the scope and alone.
const scopeTrees = `{"settings": {"startTimeperiod": "2026112400"},
 "trees": [
  {"name": "demo", "levels": [{"process": "demo_daily", "qualifier": "daily"}, {"process": "demo_hourly", "qualifier": "hourly"}]},
  {"name": "fin", "dependentOn": ["demo"], "levels": [{"process": "fin_hourly", "qualifier": "hourly"}]},
  {"name": "solo", "levels": [{"process": "demo_solo_hourly", "qualifier": "hourly"}]}
 ]}
`

// scopeRow is one route and action of the permission table, tried with a
// token scoped to demo_*: want is the status (403 for a refusal, whose
// message must name notice).
type scopeRow struct {
	method, path, body string
	want               int
	notice             string
}

// tryRows sends each row with token and checks the answer.
func tryRows(t *testing.T, base, token string, rows []scopeRow) {
	t.Helper()
	for _, row := range rows {
		status, msg, _ := send(t, base, token, row.method, row.path, row.body)
		if row.want == http.StatusForbidden {
			if status != http.StatusForbidden || !strings.Contains(msg, row.notice) || !strings.Contains(msg, "scope is [demo_*]") {
				t.Errorf("%s %s %s: %d %q; want 403 naming %q and the scope", row.method, row.path, row.body, status, msg, row.notice)
			}
			continue
		}
		if status != row.want {
			t.Errorf("%s %s %s: %d %q; want %d", row.method, row.path, row.body, status, msg, row.want)
		}
	}
}

// ran lists the tasks whose command left its mark.
func (f *fixture) ran() []string {
	marks, _ := filepath.Glob(filepath.Join(f.dir, "ran.*"))
	var out []string
	for _, m := range marks {
		out = append(out, strings.TrimPrefix(filepath.Base(m), "ran."))
	}
	return out
}

// settle starts demo_ok and waits for its run to end: what a request
// before it set going has then been applied.
func (f *fixture) settle(token string) {
	f.t.Helper()
	os.Remove(filepath.Join(f.dir, "ran.demo_ok"))
	if status, msg, _ := send(f.t, f.client.Base, token, "POST", "/api/v1/tasks/demo_ok/events", `{"event":"start"}`); status != http.StatusOK {
		f.t.Fatalf("starting demo_ok: %d %s", status, msg)
	}
	f.waitFor("demo_ok to run", func() bool {
		_, err := os.Stat(filepath.Join(f.dir, "ran.demo_ok"))
		st, serr := f.client.Status(context.Background(), "demo_ok")
		return err == nil && serr == nil && !st.Rows[0].Status.Active()
	})
}

// A token scoped to demo_* makes nothing outside its scope run or change
// by any route: operator events on a bundle whose member is outside it,
// on a task a task outside it waits on, backfills, data events,
// timeperiod actions whose cascade reaches another tree, and the clock
// and the cluster, which are for tokens without a scope.
func TestScopeHoldsForActions(t *testing.T) {
	f := setup(t)
	f.mustRun("gnomon", "def", "-f", f.file("scope.def", scopeDefs))
	f.mustRun("gnomon", "def", "-f", f.file("trees.json", scopeTrees))
	op := f.token("demo-ops", auth.Operator, "demo_*")
	admin := f.token("demo-admin", auth.Admin, "demo_*")
	var rows []scopeRow
	for _, a := range []string{"start", "abort", "freeze", "reset", "green", "red"} {
		ev := `{"event":"` + a + `"}`
		rows = append(rows,
			scopeRow{"POST", "/api/v1/tasks/demo_box/events", ev, 403, "task secret_member, which demo_box reaches"},
			scopeRow{"POST", "/api/v1/tasks/demo_up/events", ev, 403, "task secret_dependant, which demo_up reaches"},
			scopeRow{"POST", "/api/v1/tasks/secret_job/events", ev, 403, "task secret_job required"})
	}
	rows = append(rows,
		scopeRow{"POST", "/api/v1/tasks/demo_box/backfill", `{"from":"2026-01-01","to":"2026-01-02"}`, 403, "task secret_member, which demo_box reaches"},
		scopeRow{"POST", "/api/v1/tasks/demo_up/backfill", `{"from":"2026-01-01","to":"2026-01-02"}`, 403, "task secret_dependant, which demo_up reaches"},
		scopeRow{"POST", "/api/v1/tasks/demo_box/backfill/cancel", "", 403, "task secret_member, which demo_box reaches"},
		scopeRow{"POST", "/api/v1/tasks/demo_hourly/backfill", `{"from":"2026112400","to":"2026112401"}`, 403, "task fin_hourly, which demo_hourly reaches"},
		scopeRow{"POST", "/events", `{"eventType":"FILE","eventTimestamp":"2026-01-01 12:00:00","eventResourceId":"/landing/secret"}`, 403, "task secret_feed, which a data event on /landing/secret reaches"},
		scopeRow{"POST", "/events", `{"eventType":"FILE","eventTimestamp":"2026-01-01 12:00:00","eventResourceId":"/landing/demo"}`, http.StatusAccepted, ""},
		scopeRow{"POST", "/events", `{"eventType":"FILE"` + strings.Repeat(" ", 1<<20) + `}`, http.StatusRequestEntityTooLarge, ""},
		scopeRow{"POST", "/api/v1/clock", `{"tick":true}`, 403, "permission clock:advance over every task"},
	)
	for _, act := range []string{"skip", "reprocess", "start", "complete"} {
		body := ""
		if act == "complete" {
			body = `{"outcome":"processed"}`
		}
		rows = append(rows,
			scopeRow{"POST", "/api/v1/nodes/demo_hourly/2026112400/" + act + "?dry_run=true", body, 403, "task fin_hourly, which demo_hourly reaches"},
			scopeRow{"POST", "/api/v1/nodes/demo_daily/2026112400/" + act, body, 403, "task fin_hourly, which demo_daily reaches"})
	}
	tryRows(t, f.client.Base, op, rows)
	// Cluster administration needs an admin without a scope.
	tryRows(t, f.client.Base, admin, []scopeRow{
		{"POST", "/api/v1/cluster/nodes/n1/drain", "", 403, "cluster:manage over every task"},
		{"GET", "/api/v1/cluster", "", 403, "read over every task"},
	})
	// What is wholly in the scope goes through: a lone process's skip
	// (its dry run), a task on its own.
	if status, msg, _ := send(t, f.client.Base, op, "POST", "/api/v1/nodes/demo_solo_hourly/2026112400/skip?dry_run=true", ""); status == http.StatusForbidden {
		t.Errorf("skipping a node of a tree wholly in the scope: %d %s", status, msg)
	}
	f.settle(op)
	if got := f.ran(); strings.Join(got, ",") != "demo_feed,demo_ok" {
		t.Errorf("the refused requests ran %v; want only demo_feed, whose data event was in the scope, and demo_ok", got)
	}
	for _, name := range []string{"secret_member", "secret_dependant", "secret_job", "demo_box", "demo_up"} {
		if st, err := f.client.Status(context.Background(), name); err != nil || st.Rows[0].Status.String() != "idle" {
			t.Errorf("%s after the refused requests: %+v %v; want idle", name, st, err)
		}
	}
}

// The clock of a simulating server is moved only by a token without a
// scope, even one whose scope is empty of tasks.
func TestScopeHoldsForClock(t *testing.T) {
	f := setup(t, simulateFrom("2026-11-24T00:00:00Z"))
	op := f.token("nobody-ops", auth.Operator, "nothing_matches_this")
	before, err := f.client.Clock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	status, msg, _ := send(t, f.client.Base, op, "POST", "/api/v1/clock", `{"to":"2026-11-25T00:00:00Z"}`)
	if status != http.StatusForbidden || !strings.Contains(msg, "clock:advance over every task") {
		t.Errorf("a scoped operator moving the clock: %d %s", status, msg)
	}
	after, err := f.client.Clock(context.Background())
	if err != nil || !after.Now.Equal(before.Now) {
		t.Errorf("the clock moved from %s to %s (%v)", before.Now, after.Now, err)
	}
	unscoped := f.token("all-ops", auth.Operator)
	if status, msg, _ := send(t, f.client.Base, unscoped, "POST", "/api/v1/clock", `{"to":"2026-11-25T00:00:00Z"}`); status != http.StatusOK {
		t.Errorf("an operator without a scope moving the clock: %d %s", status, msg)
	}
}

// A token scoped to demo_* reads its tasks and nothing of the others:
// a task outside the scope, a bundle of the scope whose member is outside
// it, why a task waits on one outside it, and every list that would show
// tasks outside it, unless it names a task of the scope; the list of
// tasks shows the scope's.
func TestScopeHoldsForReads(t *testing.T) {
	f := setup(t)
	f.mustRun("gnomon", "def", "-f", f.file("scope.def", scopeDefs))
	f.mustRun("gnomon", "def", "-f", f.file("trees.json", scopeTrees))
	viewer := f.token("demo-viewer", auth.Viewer, "demo_*")
	rows := []scopeRow{
		{"GET", "/api/v1/tasks/demo_ok", "", 200, ""},
		{"GET", "/api/v1/tasks/demo_ok/why", "", 200, ""},
		{"GET", "/api/v1/definitions?task=demo_ok", "", 200, ""},
		{"GET", "/api/v1/alerts?job=demo_ok", "", 200, ""},
		{"GET", "/api/v1/forecast?task=demo_ok", "", 200, ""},
		{"GET", "/api/v1/events?configuration=demo_feed", "", 200, ""},
		{"GET", "/api/v1/nodes?process=demo_solo_hourly", "", 200, ""},
		{"GET", "/api/v1/clock", "", 200, ""},
		{"GET", "/api/v1/whoami", "", 200, ""},
		{"GET", "/api/v1/calendars", "", 200, ""},
	}
	for _, p := range []string{"", "/status", "/runs", "/runs/1", "/fires", "/why", "/backfill"} {
		rows = append(rows,
			scopeRow{"GET", "/api/v1/tasks/secret_job" + p, "", 403, "task secret_job required"},
			scopeRow{"GET", "/api/v1/tasks/demo_box" + p, "", 403, "task secret_member, which demo_box reaches"})
	}
	rows = append(rows,
		scopeRow{"GET", "/api/v1/tasks/demo_after/why", "", 403, "task secret_job, which demo_after reaches"},
		scopeRow{"GET", "/api/v1/tasks/demo_later/why", "", 403, "task secret_job, which demo_later reaches"}, // why follows demo_after's reasons
		scopeRow{"GET", "/api/v1/tasks/demo_later", "", 200, ""},
		scopeRow{"GET", "/api/v1/definitions", "", 403, "?task=NAME"},
		scopeRow{"GET", "/api/v1/definitions?task=secret_job", "", 403, "task secret_job required"},
		scopeRow{"GET", "/api/v1/definitions?tree_file=trees.json", "", 403, "?task=NAME"},
		scopeRow{"GET", "/api/v1/forecast", "", 403, "?task=NAME"},
		scopeRow{"GET", "/api/v1/forecast?task=secret_job", "", 403, "task secret_job required"},
		scopeRow{"GET", "/api/v1/alerts", "", 403, "?job=NAME"},
		scopeRow{"GET", "/api/v1/alerts?job=secret_job", "", 403, "task secret_job required"},
		scopeRow{"GET", "/api/v1/events", "", 403, "?configuration=NAME"},
		scopeRow{"GET", "/api/v1/events?configuration=secret_feed", "", 403, "task secret_feed required"},
		scopeRow{"GET", "/api/v1/audit", "", 403, "read over every task"},
		scopeRow{"GET", "/api/v1/trees", "", 403, "read over every task"},
		scopeRow{"GET", "/api/v1/trees/fin", "", 403, "read over every task"},
		scopeRow{"GET", "/api/v1/nodes?outstanding=true", "", 403, "?process=NAME"},
		scopeRow{"GET", "/api/v1/nodes?process=fin_hourly", "", 403, "task fin_hourly required"},
		scopeRow{"GET", "/api/v1/nodes/fin_hourly/2026112400", "", 403, "task fin_hourly required"},
		scopeRow{"GET", "/api/v1/nodes?process=demo_hourly", "", 403, "task fin_hourly, which demo_hourly reaches"}, // its nodes' dependants
		scopeRow{"GET", "/api/v1/nodes/demo_daily/2026112400", "", 403, "task fin_hourly, which demo_daily reaches"},
		scopeRow{"GET", "/api/v1/cluster", "", 403, "read over every task"},
	)
	tryRows(t, f.client.Base, viewer, rows)
	var list api.TasksResponse
	getJSON(t, f.client.Base, viewer, "/api/v1/tasks", &list)
	if got := strings.Join(list.Tasks, ","); got != "demo_after,demo_box,demo_feed,demo_later,demo_ok,demo_up" {
		t.Errorf("the scoped task list: %s", got)
	}
	// A calendar names the tasks of the scope that use it, and no other.
	var cal api.CalendarView
	getJSON(t, f.client.Base, viewer, "/api/v1/calendars/holidays", &cal)
	var cals api.CalendarsResponse
	getJSON(t, f.client.Base, viewer, "/api/v1/calendars", &cals)
	if got := strings.Join(cal.UsedBy, ","); got != "demo_after" || len(cals.Calendars) != 1 || strings.Join(cals.Calendars[0].UsedBy, ",") != "demo_after" {
		t.Errorf("the calendar's users, to a scoped token: %s; in the list: %+v", got, cals.Calendars)
	}
}

// getJSON reads an answer of the API with a token.
func getJSON(t *testing.T, base, token, path string, v any) {
	t.Helper()
	req, _ := http.NewRequest("GET", base+path, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d", path, resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
}

// A token scoped to demo_* defines nothing that reaches outside it: a
// task whose condition names one outside the scope (its status would be
// shown and waited on), a task that one outside the scope waits on (its
// new command would settle the other's condition), a bundle with a
// member outside the scope.
func TestScopeHoldsForDefinitions(t *testing.T) {
	f := setup(t)
	f.mustRun("gnomon", "def", "-f", f.file("scope.def", scopeDefs))
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	resp, err := f.client.CreateToken(context.Background(), api.TokenRequest{Name: "demo-admin", Role: auth.Admin, Scope: []string{"demo_*"}, Owners: []string{me.Username}})
	if err != nil {
		t.Fatal(err)
	}
	define := func(text string) string {
		b, _ := json.Marshal(api.DefineRequest{File: "x.def", Text: f.dirText(text)})
		return string(b)
	}
	task := "type: callable\ncommand: true\nout_log_file: @DIR@/o\nerr_log_file: @DIR@/e\n"
	tryRows(t, f.client.Base, resp.Token, []scopeRow{
		{"POST", "/api/v1/definitions", define("insert_task: demo_spy\n" + task + "condition: su(secret_job)\n"), 403, "task secret_job, which demo_spy reaches"},
		{"POST", "/api/v1/definitions", define("update_task: demo_up\ncommand: true\n"), 403, "task secret_dependant, which demo_up reaches"},
		{"POST", "/api/v1/definitions", define("update_task: demo_box\nrun_days: all\n"), 403, "task secret_member, which demo_box reaches"},
		{"POST", "/api/v1/definitions", define("insert_task: demo_joiner\n" + task + "parent: demo_box\n"), 403, "task secret_member, which demo_joiner reaches"},
		{"POST", "/api/v1/definitions", define("delete_task: secret_job\n"), 403, "task secret_job"},
		{"POST", "/api/v1/definitions", define("insert_calendar: demo_days\ndates: 2026-12-24\n"), 403, "calendar demo_days"},
		{"POST", "/api/v1/definitions", define("insert_group: demo_group\n"), 403, "group demo_group"},
		{"POST", "/api/v1/definitions", define("insert_task: demo_new\n" + task + "condition: su(demo_ok)\n"), 200, ""},
	})
	after := f.mustRun("gnomon", "export")
	if strings.Contains(after, "demo_spy") || strings.Contains(after, "demo_joiner") || strings.Contains(after, "demo_days") || strings.Contains(after, "demo_group") ||
		!strings.Contains(after, "insert_task: secret_job") || !strings.Contains(after, "demo_new") || !strings.Contains(after, "ran.demo_up") || strings.Contains(after, "run_days") {
		t.Errorf("the definitions after the scoped admin's requests:\n%s", after)
	}
}

// dirText writes the fixture's directory for @DIR@.
func (f *fixture) dirText(text string) string { return strings.ReplaceAll(text, "@DIR@", f.dir) }

// gnomon server --live-streams caps the web UI's streams each token
// holds: with 1, a second page of the same token gets 429 while the first
// stays open. A negative cap is a usage error naming the flag.
func TestLiveStreamsFlag(t *testing.T) {
	if _, errs, code := runAlone("gnomon", "server", "--data", t.TempDir(), "--live-streams", "-1"); code != 2 || !strings.Contains(errs, "--live-streams") {
		t.Errorf("--live-streams -1: exit %d %s", code, errs)
	}
	f := setup(t, func(c *ServerConfig) { c.LiveStreams = 1 })
	jar := func() *http.Client {
		return &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}()
	resp, err := jar.PostForm(f.client.Base+"/login", url.Values{"token": {f.client.Token}, "next": {"/"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var session *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == api.SessionCookie {
			session = c
		}
	}
	if session == nil {
		t.Fatalf("signing in: %d, no session", resp.StatusCode)
	}
	open := func() *http.Response {
		req, _ := http.NewRequest("GET", f.client.Base+"/live", nil)
		req.AddCookie(session)
		resp, err := jar.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	first := open()
	defer first.Body.Close()
	if first.StatusCode != http.StatusOK {
		t.Fatalf("the first stream: %d", first.StatusCode)
	}
	second := open()
	second.Body.Close()
	if second.StatusCode != http.StatusTooManyRequests || second.Header.Get("Retry-After") == "" {
		t.Errorf("the second stream with --live-streams 1: %d, Retry-After %q", second.StatusCode, second.Header.Get("Retry-After"))
	}
}
