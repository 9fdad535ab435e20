package web_test

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/gnomon-sched/gnomon"
	"github.com/gnomon-sched/gnomon/api"
	"github.com/gnomon-sched/gnomon/auth"
	"github.com/gnomon-sched/gnomon/job"
)

// axe is axe-core (MPL-2.0, see testdata/axe.LICENSE), the accessibility
// checker, injected into each page.
//
//go:embed testdata/axe-4.14.1.min.js
var axe string

// demo is a running server with the example definitions loaded, and its
// tokens.
type demo struct {
	s        *gnomon.Scheduler
	url      string
	admin    string
	viewer   string
	shotsDir string
}

func startDemo(t *testing.T) *demo {
	t.Helper()
	ctx := context.Background()
	s := started(t, gnomon.Config{DataDir: t.TempDir()})
	for _, f := range []string{"demo.def", "seed004.def", "configurations.json", "trees.json"} {
		text, err := os.ReadFile(filepath.Join("..", "examples", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Apply(ctx, f, string(text)); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
	}
	// The examples name no calendar: one for the calendars' pages.
	if err := s.Apply(ctx, "calendars.def", "insert_calendar: month_end\ndescription: the last business day of each month\nrule: last business day of the month\n"); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler(gnomon.HandlerConfig{Version: "test"}))
	t.Cleanup(srv.Close)
	d := &demo{s: s, url: srv.URL}
	var err error
	if d.admin, err = s.NewToken(ctx, auth.Request{Name: "ada", Role: auth.Admin}); err != nil {
		t.Fatal(err)
	}
	if d.viewer, err = s.NewToken(ctx, auth.Request{Name: "vic", Role: auth.Viewer}); err != nil {
		t.Fatal(err)
	}
	d.shotsDir = os.Getenv("GNOMON_SCREENSHOTS")
	if d.shotsDir == "" {
		d.shotsDir = filepath.Join(os.TempDir(), "gnomon-screenshots")
	}
	if err := os.MkdirAll(d.shotsDir, 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}

// browser starts headless Chromium. Without it the test is skipped, but
// not in CI, which installs it.
func browser(t testing.TB) context.Context {
	t.Helper()
	path := os.Getenv("GNOMON_CHROMIUM")
	if path == "" {
		for _, p := range []string{"chromium", "chromium-browser", "google-chrome"} {
			if p, err := exec.LookPath(p); err == nil {
				path = p
				break
			}
		}
	}
	if path == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("no Chromium: CI installs Debian's chromium package (.ci/run)")
		}
		t.Skip("no Chromium installed (apt-get install chromium)")
	}
	// Chromium may still write its profile while it exits: the directory
	// goes after it has, and a leftover is no failure.
	profile, err := os.MkdirTemp("", "gnomon-chromium")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(profile) })
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.UserDataDir(profile),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.WindowSize(1280, 800),
	)
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	// The protocol has events this client does not know: it says so on
	// each, which is noise; its other complaints are kept.
	errorf := func(format string, args ...any) {
		if msg := fmt.Sprintf(format, args...); !strings.Contains(msg, "unhandled node event") {
			t.Log(msg)
		}
	}
	ctx, cancel2 := chromedp.NewContext(actx, chromedp.WithErrorf(errorf))
	t.Cleanup(cancel2)
	// A bound for a browser that hangs, not a measure of speed: on a
	// loaded machine the whole tour of the pages (three sizes, the
	// accessibility check on each) takes several minutes.
	ctx, cancel3 := context.WithTimeout(ctx, 15*time.Minute)
	t.Cleanup(cancel3)
	if err := chromedp.Run(ctx); err != nil {
		t.Fatalf("chromium does not start: %v", err)
	}
	return ctx
}

func (d *demo) signIn(t *testing.T, ctx context.Context, token string) {
	t.Helper()
	var loc string
	run(t, ctx,
		chromedp.Navigate(d.url+"/tasks"),
		chromedp.WaitVisible("#token", chromedp.ByID),
		chromedp.SetValue("#token", token, chromedp.ByID),
		chromedp.Click(`form.login button[type="submit"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`table.list`, chromedp.ByQuery),
		chromedp.Location(&loc),
	)
	if !strings.HasSuffix(loc, "/tasks") {
		t.Fatalf("after signing in the browser is at %s, want back at /tasks", loc)
	}
}

func awaitPromise(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }

// waitFor polls a condition in the page every 50 ms until it holds, for
// at most limit, and returns why it stopped waiting if it does not hold.
// An evaluation that fails (a live update swapping the page's content
// under it) is tried again.
func waitFor(ctx context.Context, cond string, limit time.Duration) error {
	wait, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	for {
		// The poll's own timeout (30 s by default) is off: wait says how
		// long.
		err := chromedp.Run(wait, chromedp.Poll(cond, nil, chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(0)))
		if err == nil || wait.Err() != nil {
			return err
		}
		select {
		case <-wait.Done():
			return err
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func run(t testing.TB, ctx context.Context, actions ...chromedp.Action) {
	t.Helper()
	// A bound on a hang, not a measure: a step that waits for what never
	// comes fails with its error instead of holding the package until
	// its timeout.
	step, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	if err := chromedp.Run(step, actions...); err != nil {
		t.Fatal(err)
	}
}

// clickNow clicks the element sel finds, in one step in the page: on a
// part that live updates replace (the runs table, a tree's grid), a
// click by the browser's input could land on a node swapped out between
// finding it and clicking it, or on what took its place.
func clickNow(t *testing.T, ctx context.Context, sel string) {
	t.Helper()
	var clicked bool
	run(t, ctx, chromedp.Evaluate(`(e => { if (e) e.click(); return !!e })(document.querySelector(`+jsString(sel)+`))`, &clicked))
	if !clicked {
		t.Fatalf("nothing to click: %s", sel)
	}
}

// runSwapped runs actions that read or wait on a part of the page that
// live updates replace (a running run's log, polled every two seconds;
// the runs table as a run ends; a tree's grid): a node found, then
// swapped out before it was read, is looked for again.
func runSwapped(t *testing.T, ctx context.Context, actions ...chromedp.Action) {
	t.Helper()
	for {
		err := chromedp.Run(ctx, actions...)
		if err == nil {
			return
		}
		if msg := err.Error(); !strings.Contains(msg, "node with given id") || ctx.Err() != nil {
			t.Fatal(err)
		}
	}
}

// pages are the UI's pages, each by a stable URL, with something each must
// show.
var pages = []struct{ name, path, want string }{
	{"overview", "/", "Running now"},
	{"tasks", "/tasks", "demo_extract"},
	{"task", "/tasks/demo_flow", "Fire ledger"},
	{"callable", "/tasks/demo_extract", "Logs"},
	{"why", "/tasks/demo_report", "it starts when its condition su(demo_flow) holds"},
	{"timeline", "/timeline?span=24h", "planned fires"},
	{"timeline_grouped", "/timeline?span=24h&group=bundle", "grouped by bundle"},
	{"graph", "/graph?task=demo_flow", "Tasks in the graph"},
	{"graph_all", "/graph", "Tasks in the graph"},
	{"data", "/data", "Configurations"},
	{"trees", "/trees", "client"},
	{"tree", "/trees/client", "client_hourly"},
	{"alerts", "/alerts", "Alerts"},
	{"calendars", "/calendars", "month_end"},
	{"calendar", "/calendars/month_end", "Its days"},
	{"tokens", "/tokens", "A new token"},
	{"audit", "/audit", "Audit"},
	{"audit_days", "/audit?status=failure&from=2000-01-01&to=2100-12-31", "Audit"},
	{"runs", "/runs", "Runs"},
	{"runs_oldest", "/runs?sort=start", "Runs"},
	{"runs_longest", "/runs?sort=took", "Runs"},
}

// TestPages loads every page at a desktop and a phone size, and in the
// dark colours of a system that asks for them, saves a screenshot of
// each, and runs the accessibility check on each.
func TestPages(t *testing.T) {
	d := startDemo(t)
	ctx := browser(t)
	d.signIn(t, ctx, d.admin)
	sizes := []struct {
		name          string
		width, height int64
		mobile, dark  bool
	}{{"desktop", 1280, 800, false, false}, {"phone", 390, 844, true, false}, {"dark", 1280, 800, false, true}}
	for _, size := range sizes {
		run(t, ctx, emulation.SetDeviceMetricsOverride(size.width, size.height, 1, size.mobile))
		scheme := "light"
		if size.dark {
			scheme = "dark"
		}
		run(t, ctx, emulation.SetEmulatedMedia().WithFeatures([]*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}))
		for _, p := range pages {
			t.Run(size.name+"/"+p.name, func(t *testing.T) {
				var body string
				run(t, ctx,
					chromedp.Navigate(d.url+p.path),
					chromedp.WaitVisible("main h1", chromedp.ByQuery),
				)
				// What a page loads after it (why, while the loop was
				// busy) shows when the loop answers: wait for it, then
				// read. Right after the demo starts, the loop catches its
				// timeperiod trees up, which takes minutes on a loaded
				// machine.
				want, _ := json.Marshal(p.want)
				perr := waitFor(ctx, `(document.querySelector("main") || document.body).innerText.includes(`+string(want)+`)`, 3*time.Minute)
				run(t, ctx, chromedp.Text("main", &body, chromedp.ByQuery))
				if !strings.Contains(body, p.want) {
					t.Errorf("%s does not show %q (waited: %v):\n%s", p.path, p.want, perr, body)
				}
				if strings.HasPrefix(p.name, "graph") {
					run(t, ctx, chromedp.WaitVisible(`#graph[data-ready]`, chromedp.ByQuery))
					// No two tasks' boxes, labels included, overlap.
					var overlaps []string
					run(t, ctx, chromedp.Evaluate(`(() => {
						const ns = document.getElementById("graph").cy.nodes(), out = [];
						ns.forEach((a, i) => ns.forEach((b, j) => {
							if (j <= i) return;
							const p = a.boundingBox({includeLabels: true}), q = b.boundingBox({includeLabels: true});
							if (p.x1 < q.x2 && q.x1 < p.x2 && p.y1 < q.y2 && q.y1 < p.y2) out.push(a.id() + " / " + b.id());
						}));
						return out;
					})()`, &overlaps))
					if len(overlaps) > 0 {
						t.Errorf("%s: tasks drawn over each other: %v", p.path, overlaps)
					}
					// No edge passes through a task it does not join:
					// each edge as drawn, a line from its source through
					// its segment points to its target, against every
					// other task's box.
					var through []string
					run(t, ctx, chromedp.Evaluate(`(() => {
						const cy = document.getElementById("graph").cy, out = [];
						const cross = (a, b, r) => {
							// Liang-Barsky: does the segment a-b enter the box r?
							let t0 = 0, t1 = 1;
							const dx = b.x - a.x, dy = b.y - a.y;
							for (const [p, q] of [[-dx, a.x - r.x1], [dx, r.x2 - a.x], [-dy, a.y - r.y1], [dy, r.y2 - a.y]]) {
								if (p === 0) { if (q < 0) return false; continue; }
								const u = q / p;
								if (p < 0) { if (u > t1) return false; if (u > t0) t0 = u; }
								else { if (u < t0) return false; if (u < t1) t1 = u; }
							}
							return t0 < t1;
						};
						cy.edges().forEach(e => {
							const pts = [e.source().position()].concat(e.segmentPoints() || [], [e.target().position()]);
							cy.nodes().forEach(n => {
								if (n.same(e.source()) || n.same(e.target())) return;
								const r = n.boundingBox({includeLabels: true});
								const box = {x1: r.x1 + 1, x2: r.x2 - 1, y1: r.y1 + 1, y2: r.y2 - 1};
								for (let i = 1; i < pts.length; i++) {
									if (cross(pts[i - 1], pts[i], box)) { out.push(e.source().id() + " -> " + e.target().id() + " through " + n.id()); return; }
								}
							});
						});
						return out;
					})()`, &through))
					if len(through) > 0 {
						t.Errorf("%s: edges drawn through tasks they do not join: %v", p.path, through)
					}
				}
				var shot []byte
				run(t, ctx, chromedp.FullScreenshot(&shot, 100))
				if err := os.WriteFile(filepath.Join(d.shotsDir, size.name+"-"+p.name+".png"), shot, 0o644); err != nil {
					t.Fatal(err)
				}
				if size.mobile {
					// Usable on a phone: the page does not scroll sideways
					// (wide tables and the timeline scroll in their boxes).
					var over bool
					run(t, ctx, chromedp.Evaluate(`document.documentElement.scrollWidth > window.innerWidth + 1`, &over))
					if over {
						t.Errorf("%s scrolls sideways at %d px", p.path, size.width)
					}
				}
				checkAccessibility(t, ctx, p.path)
			})
		}
	}
	t.Logf("screenshots in %s", d.shotsDir)
}

// checkAccessibility runs axe-core on the page and fails on every serious
// or critical violation.
func checkAccessibility(t *testing.T, ctx context.Context, path string) {
	t.Helper()
	var res struct {
		Violations []struct {
			ID     string `json:"id"`
			Impact string `json:"impact"`
			Help   string `json:"help"`
			Nodes  []struct {
				Target []any `json:"target"`
			} `json:"nodes"`
		} `json:"violations"`
	}
	var loaded bool
	run(t, ctx, chromedp.Evaluate(axe+";true", &loaded))
	run(t, ctx, chromedp.Evaluate(`axe.run(document, {resultTypes: ["violations"]}).then(r => ({violations: r.violations}))`, &res,
		awaitPromise))
	for _, v := range res.Violations {
		if v.Impact == "serious" || v.Impact == "critical" {
			targets, _ := json.Marshal(v.Nodes)
			t.Errorf("%s: %s violation %s (%s) at %s", path, v.Impact, v.ID, v.Help, targets)
		}
	}
}

// TestActionAndLiveUpdate starts a task from its page with the keyboard
// alone, confirms in the dialog, and sees its status change in place
// without the page being loaded again; then sees, on the overview, a run
// started from elsewhere appear by itself.
func TestActionAndLiveUpdate(t *testing.T) {
	d := startDemo(t)
	ctx := browser(t)
	d.signIn(t, ctx, d.admin)
	run(t, ctx,
		chromedp.Navigate(d.url+"/tasks/demo_report"),
		chromedp.WaitVisible(`button[data-action="start"]`, chromedp.ByQuery),
		chromedp.Evaluate(`window.unloaded = "no"`, nil),
	)
	// An action that does not apply now says why, and sends nothing.
	var refusal string
	run(t, ctx, chromedp.Evaluate(`(b => b.getAttribute("aria-disabled") + ": " + b.dataset.refusal)(document.querySelector('button[data-action="abort"]'))`, &refusal))
	if refusal != "true: event abort is not effective on inactive task" {
		t.Errorf("abort on an idle task: %q", refusal)
	}
	// Tab to the start button: every control is reachable by keyboard.
	var focused string
	for i := 0; i < 40 && focused != "start"; i++ {
		run(t, ctx, chromedp.KeyEvent("\t"), chromedp.Evaluate(`document.activeElement.dataset.action || ""`, &focused))
	}
	if focused != "start" {
		t.Fatal("the start button cannot be reached with the Tab key")
	}
	// A live update while it has the focus keeps it there.
	run(t, ctx, chromedp.Evaluate(`new Promise(done => {
		document.addEventListener("htmx:afterSettle", () => done(document.activeElement.dataset.action || document.activeElement.tagName), {once: true});
		htmx.trigger(document.body, "gnomon-change");
	})`, &focused, awaitPromise))
	if focused != "start" {
		t.Fatalf("after a live update the focus is on %q, not the start button", focused)
	}
	run(t, ctx,
		chromedp.KeyEvent("\r"),
		chromedp.WaitVisible("#confirm[open]", chromedp.ByQuery),
	)
	// The confirmation says what the start will do.
	var words string
	run(t, ctx, chromedp.Text("#confirm-body", &words, chromedp.ByQuery))
	if !strings.Contains(words, "Starts a run of demo_report now") {
		t.Errorf("the start's confirmation says %q", words)
	}
	run(t, ctx,
		// The dialog focuses its confirmation: Enter confirms.
		chromedp.KeyEvent("\r"),
		chromedp.WaitNotPresent("#confirm[open]", chromedp.ByQuery),
		chromedp.WaitVisible(`#live .badge.st-success`, chromedp.ByQuery),
	)
	var unloaded, runsText string
	runSwapped(t, ctx, chromedp.Evaluate(`window.unloaded`, &unloaded),
		chromedp.Text(`//section[@aria-labelledby="h-runs"]`, &runsText, chromedp.BySearch))
	if unloaded != "no" {
		t.Fatal("the page was loaded again: the update did not arrive in place")
	}
	if !strings.Contains(runsText, "ada") {
		t.Errorf("the runs table does not name who started the run:\n%s", runsText)
	}
	// The end of the run's log shows on the page.
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := chromedp.Run(wctx, chromedp.WaitVisible(`//pre[contains(@class, "log")][contains(., "report for demo_report")]`, chromedp.BySearch)); err != nil {
		var html string
		chromedp.Run(ctx, chromedp.OuterHTML(`//section[@aria-labelledby="h-logs"]`, &html, chromedp.BySearch))
		t.Fatalf("the log does not show: %v\n%s", err, html)
	}
	var shot []byte
	run(t, ctx, chromedp.FullScreenshot(&shot, 100))
	os.WriteFile(filepath.Join(d.shotsDir, "action-started.png"), shot, 0o644)

	// The run is the API's own: it names who started it. (The demo runs
	// on the wall clock: demo_flow's 22:00 may start the task too.)
	runs, err := startedRuns(d, "demo_report")
	if err != nil || len(runs) != 1 || runs[0].By != "ada" {
		t.Fatalf("runs of demo_report started after the click: %+v, %v", runs, err)
	}
	// The run's own log replaces the end of the files, in place.
	id := strconv.FormatInt(runs[0].ID, 10)
	clickNow(t, ctx, `a[aria-label="Log of run `+id+`"]`)
	runSwapped(t, ctx,
		chromedp.WaitVisible(`//div[@id="logs"]//p[starts-with(., "Run `+id+`.")]`, chromedp.BySearch),
		chromedp.WaitVisible(`//div[@id="logs"]//pre[contains(@class, "log")][contains(., "report for demo_report")]`, chromedp.BySearch),
		chromedp.Evaluate(`window.unloaded`, &unloaded),
	)
	if unloaded != "no" {
		t.Fatal("the run's log loaded a new page")
	}

	// The page drawn again has the run's bar in the trend of durations,
	// a link to the run, and passes the accessibility check.
	run(t, ctx,
		chromedp.Navigate(d.url+"/tasks/demo_report"),
		chromedp.WaitReady(`svg.trend a[href="/runs/`+id+`"] rect.oc-success`, chromedp.ByQuery),
	)
	checkAccessibility(t, ctx, "/tasks/demo_report (with its trend)")

	// A change made elsewhere reaches an open overview.
	run(t, ctx,
		chromedp.Navigate(d.url+"/"),
		chromedp.WaitVisible("#h-running", chromedp.ByID),
		chromedp.Evaluate(`window.unloaded = "no"`, nil),
	)
	if err := d.s.Send(context.Background(), "demo_flow", gnomon.ActStart); err != nil {
		t.Fatal(err)
	}
	run(t, ctx, chromedp.WaitVisible(`//section[@aria-labelledby="h-running"]//a[text()="demo_flow"]`, chromedp.BySearch))
	run(t, ctx, chromedp.Evaluate(`window.unloaded`, &unloaded))
	if unloaded != "no" {
		t.Fatal("the overview was loaded again: the update did not arrive in place")
	}

	// The bundle run's page draws its runs on one axis, the critical
	// path marked, and passes the accessibility check.
	var flow []gnomon.RunRecord
	for {
		if flow, err = d.s.Runs(context.Background(), "demo_flow", 0); err != nil {
			t.Fatal(err)
		}
		if len(flow) > 0 && flow[0].Done() { // the newest: demo_flow's own 22:00 may have run it too
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the run of demo_flow did not end: %+v", flow)
		case <-time.After(50 * time.Millisecond):
		}
	}
	run(t, ctx,
		chromedp.Navigate(d.url+"/runs/"+strconv.FormatInt(flow[0].ID, 10)),
		chromedp.WaitReady(`svg.gantt rect.critical`, chromedp.ByQuery),
	)
	var path string
	run(t, ctx, chromedp.Text(`//section[@aria-labelledby="h-children"]/p`, &path, chromedp.BySearch))
	if !strings.Contains(path, "the critical path (bars outlined, names in bold): demo_extract → demo_transform → demo_load") {
		t.Errorf("the bundle run's page says: %s", path)
	}
	checkAccessibility(t, ctx, "a bundle run's page")
	run(t, ctx, chromedp.FullScreenshot(&shot, 100))
	os.WriteFile(filepath.Join(d.shotsDir, "bundle-run.png"), shot, 0o644)
}

// TestViewerAndSession: a viewer sees no actions, and the API refuses one
// anyway; a change through the session without its CSRF token is refused,
// as is a request from another origin; signing out ends the session.
func TestViewerAndSession(t *testing.T) {
	d := startDemo(t)
	ctx := browser(t)
	d.signIn(t, ctx, d.viewer)
	var n int
	run(t, ctx,
		chromedp.Navigate(d.url+"/tasks/demo_report"),
		chromedp.WaitVisible("#h-state", chromedp.ByID),
		chromedp.Evaluate(`document.querySelectorAll("button[data-action]").length`, &n),
	)
	if n != 0 {
		t.Errorf("a viewer is shown %d action buttons", n)
	}
	// Logs may hold secrets: a viewer is shown none, and asking is refused.
	run(t, ctx, chromedp.Evaluate(`document.querySelectorAll("#h-logs").length`, &n))
	if n != 0 {
		t.Error("a viewer is shown the logs section")
	}
	var logStatus int
	run(t, ctx, chromedp.Evaluate(`fetch("/tasks/demo_report/log/out").then(r => r.status)`, &logStatus, awaitPromise))
	if logStatus != http.StatusForbidden {
		t.Errorf("a viewer asking for a log: %d, want 403", logStatus)
	}
	var status int
	post := func(headers string) int {
		run(t, ctx, chromedp.Evaluate(fmt.Sprintf(`fetch("/api/v1/tasks/demo_report/events", {method: "POST", headers: %s, body: JSON.stringify({event: "start"})}).then(r => r.status)`, headers), &status,
			awaitPromise))
		return status
	}
	if got := post(`{"Content-Type": "application/json"}`); got != http.StatusForbidden {
		t.Errorf("a change without the CSRF token: %d, want 403", got)
	}
	if got := post(`{"Content-Type": "application/json", "X-CSRF-Token": document.querySelector('meta[name="csrf-token"]').content}`); got != http.StatusForbidden {
		t.Errorf("a viewer's start with the CSRF token: %d, want 403 (no tasks:operate)", got)
	}

	// The cookie is HttpOnly: scripts cannot read it.
	var cookies string
	run(t, ctx, chromedp.Evaluate(`document.cookie`, &cookies))
	if strings.Contains(cookies, api.SessionCookie) {
		t.Errorf("the session cookie is readable by scripts: %q", cookies)
	}

	run(t, ctx,
		chromedp.Click("#logout", chromedp.ByID),
		chromedp.WaitVisible("#token", chromedp.ByID),
		chromedp.Navigate(d.url+"/tasks"),
		chromedp.WaitVisible("#token", chromedp.ByID),
	)
}

// TestCrossSite: a page of another site cannot use a signed-in browser's
// session: the cookie is SameSite=Strict, and the server refuses requests
// whose Origin is not its own.
func TestCrossSite(t *testing.T) {
	d := startDemo(t)
	ctx := browser(t)
	d.signIn(t, ctx, d.admin)
	// The other site: another port is another origin.
	evil := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<form id="f" method="post" action="%s/api/v1/tasks/demo_report/events" enctype="text/plain"><input name='{"event":"start","x":"' value='"}'></form>
<script>fetch(%q, {method: "POST", credentials: "include", headers: {"Content-Type": "application/json"}, body: '{"event":"start"}'}).catch(()=>{}).finally(() => document.getElementById("f").submit())</script>`,
			d.url, d.url+"/api/v1/tasks/demo_report/events")
	}))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	evil.Listener = l
	evil.Start()
	defer evil.Close()
	// The page's form lands the browser on the API's refusal.
	run(t, ctx, chromedp.Navigate(evil.URL))
	var body, loc string
	for i := 0; i < 100 && !strings.HasPrefix(loc, d.url); i++ {
		// The page is replaced under the browser's feet: a failed read
		// is tried again.
		chromedp.Run(ctx, chromedp.Location(&loc))
		time.Sleep(50 * time.Millisecond)
	}
	run(t, ctx, chromedp.WaitVisible("body", chromedp.ByQuery), chromedp.Text("body", &body, chromedp.ByQuery))
	if !strings.Contains(body, "cross-origin") {
		t.Errorf("the other site's form was answered %q at %s, want a cross-origin refusal", body, loc)
	}
	runs, err := startedRuns(d, "demo_report")
	if err != nil || len(runs) != 0 {
		t.Fatalf("a page of another site started demo_report: %+v, %v", runs, err)
	}
}

// startedRuns returns the runs of a task that a start event began: not those
// its condition or its schedule did, which the demo's wall clock may
// bring at any time.
func startedRuns(d *demo, task string) ([]job.Run, error) {
	all, err := d.s.Runs(context.Background(), task, 0)
	var runs []job.Run
	for _, r := range all {
		if r.Trigger == "start" {
			runs = append(runs, r)
		}
	}
	return runs, err
}

// TestTreeSkip: a period of a timeperiod tree is skipped from its grid;
// the dialog shows what the cascade will change before anything does, and
// the grid shows the period skipped once confirmed.
func TestTreeSkip(t *testing.T) {
	d := startDemo(t)
	ctx := browser(t)
	d.signIn(t, ctx, d.admin)
	// The grid is live on the real clock: the period picked is the latest
	// one still waiting, the one least likely to change state before the
	// click, and the click names it exactly.
	var picked []string
	sel := `button.cell[data-node]:is(.node-embryo, .node-in_progress)`
	run(t, ctx,
		chromedp.Navigate(d.url+"/trees/client"),
		chromedp.WaitVisible("ul.cells", chromedp.ByQuery),
		chromedp.Evaluate(`[...document.querySelectorAll(`+jsString(sel)+`)].slice(-1).flatMap(c => [c.dataset.process, c.dataset.timeperiod])`, &picked),
	)
	if len(picked) != 2 {
		t.Fatal("no period of the client tree is waiting or in progress to skip")
	}
	process, timeperiod := picked[0], picked[1]
	clickNow(t, ctx, fmt.Sprintf(`button.cell[data-process=%q][data-timeperiod=%q]`, process, timeperiod))
	// The period's dialog only shows: one button closes it.
	var buttons []string
	run(t, ctx,
		chromedp.WaitVisible(`//dialog[@open]//button[text()="Preview skip"]`, chromedp.BySearch),
		chromedp.Evaluate(`[...document.querySelectorAll("#confirm .buttons button")].filter(b => !b.hidden).map(b => b.textContent)`, &buttons),
	)
	if strings.Join(buttons, ",") != "Close" {
		t.Errorf("the period's dialog offers %v, want Close alone", buttons)
	}
	run(t, ctx,
		chromedp.Click(`//dialog[@open]//button[text()="Preview skip"]`, chromedp.BySearch),
		chromedp.WaitVisible(`//dialog[@open]//p[starts-with(., "It changes")]`, chromedp.BySearch),
		chromedp.Evaluate(`[...document.querySelectorAll("#confirm .buttons button")].filter(b => !b.hidden).map(b => b.textContent)`, &buttons),
	)
	if strings.Join(buttons, ",") != "Cancel,Confirm" {
		t.Errorf("the skip's confirmation offers %v, want Cancel and Confirm", buttons)
	}
	var preview string
	run(t, ctx, chromedp.Text(`#confirm-body`, &preview, chromedp.ByID))
	if !strings.Contains(preview, process+" "+timeperiod+": ") || !strings.Contains(preview, "→ skipped") {
		t.Errorf("the preview does not show %s %s becoming skipped:\n%s", process, timeperiod, preview)
	}
	// Nothing is changed by looking.
	nodes, err := d.s.Nodes(context.Background(), process)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		if n.Timeperiod.String() == timeperiod && n.State.String() == "skipped" {
			t.Fatal("the preview skipped the period")
		}
	}
	run(t, ctx, chromedp.Click("#confirm-ok", chromedp.ByID))
	runSwapped(t, ctx, chromedp.WaitVisible(fmt.Sprintf(`button.cell.node-skipped[data-process=%q][data-timeperiod=%q]`, process, timeperiod), chromedp.ByQuery))
	var shot []byte
	run(t, ctx, chromedp.FullScreenshot(&shot, 100))
	os.WriteFile(filepath.Join(d.shotsDir, "tree-skipped.png"), shot, 0o644)
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestFailedRunLog: from the failed runs, one click opens the failed
// run's log on a page of its own, at its end where the newest lines are;
// a search marks and counts its matches; the page passes the
// accessibility check.
func TestFailedRunLog(t *testing.T) {
	d := startDemo(t)
	ctx := context.Background()
	if err := d.s.Apply(ctx, "chatty.def", `insert_task: chatty
type: callable
command: for i in $(seq 1 300); do echo "line $i of chatty"; done; exit 3
out_log_file: chatty.out
err_log_file: chatty.err
`); err != nil {
		t.Fatal(err)
	}
	if err := d.s.Send(ctx, "chatty", gnomon.ActStart); err != nil {
		t.Fatal(err)
	}
	var id string
	for deadline := time.Now().Add(30 * time.Second); id == ""; time.Sleep(20 * time.Millisecond) {
		runs, err := d.s.Runs(ctx, "chatty", 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(runs) == 1 && runs[0].Done() {
			id = strconv.FormatInt(runs[0].ID, 10)
		}
		if time.Now().After(deadline) {
			t.Fatal("chatty's run did not end")
		}
	}
	bctx := browser(t)
	d.signIn(t, bctx, d.admin)
	run(t, bctx,
		chromedp.Navigate(d.url+"/runs?status=failure"),
		chromedp.WaitVisible(`a[aria-label="Log of run `+id+`"]`, chromedp.ByQuery),
	)
	checkAccessibility(t, bctx, "/runs?status=failure")
	clickNow(t, bctx, `a[aria-label="Log of run `+id+`"]`)
	var loc string
	run(t, bctx,
		chromedp.WaitVisible(`//pre[contains(@class, "log")][contains(., "line 300 of chatty")]`, chromedp.BySearch),
		chromedp.Location(&loc),
	)
	if !strings.HasSuffix(loc, "/runs/"+id+"#log") {
		t.Errorf("the log link led to %s", loc)
	}
	var atEnd bool
	run(t, bctx, chromedp.Evaluate(`(p => p.scrollHeight > p.clientHeight && p.scrollTop + p.clientHeight >= p.scrollHeight - 2)(document.querySelector("#runlog pre.log"))`, &atEnd))
	if !atEnd {
		t.Error("the log does not open at its end")
	}
	var count string
	var marks int
	run(t, bctx,
		chromedp.SendKeys(`input[data-logsearch]`, "line 15", chromedp.ByQuery),
		chromedp.WaitVisible(`#runlog pre.log mark`, chromedp.ByQuery),
		chromedp.Text(`[data-logcount]`, &count, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelectorAll("#runlog pre.log mark").length`, &marks),
	)
	// line 15, 150 to 159
	if count != "11 matches" || marks != 11 {
		t.Errorf("searching for \"line 15\": %q and %d marks, want 11", count, marks)
	}
	clickNow(t, bctx, `button[data-lognext]`)
	var current string
	run(t, bctx, chromedp.Text(`#runlog pre.log mark.current`, &current, chromedp.ByQuery))
	if current != "line 15" {
		t.Errorf("the first match is %q", current)
	}
	var shot []byte
	run(t, bctx, chromedp.FullScreenshot(&shot, 100))
	os.WriteFile(filepath.Join(d.shotsDir, "run-log.png"), shot, 0o644)
	checkAccessibility(t, bctx, "/runs/"+id)
}

// TestFollowRunningLog: the page of a running run shows what it writes as
// it writes it, following the end; unticked, the log stays where the
// reader scrolled while it grows.
func TestFollowRunningLog(t *testing.T) {
	d := startDemo(t)
	ctx := context.Background()
	if err := d.s.Apply(ctx, "drip.def", `insert_task: drip
type: callable
command: for i in $(seq 1 400); do echo "drip line $i"; sleep 0.05; done; exec sleep 60
out_log_file: drip.out
err_log_file: drip.err
`); err != nil {
		t.Fatal(err)
	}
	if err := d.s.Send(ctx, "drip", gnomon.ActStart); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.s.Send(context.Background(), "drip", gnomon.ActAbort) })
	var id string
	for deadline := time.Now().Add(30 * time.Second); id == ""; time.Sleep(20 * time.Millisecond) {
		runs, err := d.s.Runs(ctx, "drip", 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(runs) == 1 {
			id = strconv.FormatInt(runs[0].ID, 10)
		}
		if time.Now().After(deadline) {
			t.Fatal("drip did not start")
		}
	}
	bctx := browser(t)
	d.signIn(t, bctx, d.admin)
	atEnd := `(p => !!p && p.scrollHeight > p.clientHeight && p.scrollTop + p.clientHeight >= p.scrollHeight - 2)(document.querySelector("#runlog pre.log"))`
	run(t, bctx,
		chromedp.Navigate(d.url+"/runs/"+id),
		chromedp.WaitVisible(`input[data-follow]:checked`, chromedp.ByQuery),
	)
	// It grows on the page, and the box keeps to its end.
	runSwapped(t, bctx, chromedp.WaitVisible(`//div[@id="runlog"]//pre[contains(., "drip line 100")]`, chromedp.BySearch))
	waitTrue(t, bctx, atEnd)
	// Unticked, the reader's place is kept while more arrives.
	run(t, bctx,
		chromedp.Click(`input[data-follow]`, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelector("#runlog pre.log").scrollTop = 0`, nil),
	)
	runSwapped(t, bctx, chromedp.WaitVisible(`//div[@id="runlog"]//pre[contains(., "drip line 300")]`, chromedp.BySearch))
	var top float64
	run(t, bctx, chromedp.Evaluate(`document.querySelector("#runlog pre.log").scrollTop`, &top))
	if top != 0 {
		t.Errorf("unticked, the log moved to %v as it grew", top)
	}
	checkAccessibility(t, bctx, "/runs/"+id)
}

// waitTrue waits until a script's value in the page is true.
func waitTrue(t *testing.T, ctx context.Context, script string) {
	t.Helper()
	for {
		var ok bool
		if err := chromedp.Run(ctx, chromedp.Evaluate(script, &ok)); err != nil {
			t.Fatal(err)
		}
		if ok {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("never true: %s", script)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// TestScopedListsAccessible signs in with a token scoped to the demo's
// tasks: the lists of every task show the line that says they are
// narrowed to the scope, with no accessibility violation.
func TestScopedListsAccessible(t *testing.T) {
	d := startDemo(t)
	tok, err := d.s.NewToken(context.Background(), auth.Request{Name: "dee", Role: auth.Viewer, Scope: auth.Scope{"demo_*"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := browser(t)
	d.signIn(t, ctx, tok)
	for _, path := range []string{"/tasks", "/runs", "/timeline?span=24h", "/audit?from=2000-01-01"} {
		var body string
		run(t, ctx,
			chromedp.Navigate(d.url+path),
			chromedp.WaitVisible("main h1", chromedp.ByQuery),
			chromedp.Text("main", &body, chromedp.ByQuery),
		)
		if !strings.Contains(body, "limited to the tasks of your token's scope: demo_*") {
			t.Errorf("%s does not say it is limited to the scope:\n%s", path, body)
		}
		checkAccessibility(t, ctx, path)
	}
}

// The header's clock ticks on a real clock, in the format the server
// prints.
func TestHeaderClockTicks(t *testing.T) {
	d := startDemo(t)
	ctx := browser(t)
	d.signIn(t, ctx, d.admin)
	var first string
	run(t, ctx, chromedp.Navigate(d.url+"/"), chromedp.WaitVisible("header time[data-tick]", chromedp.ByQuery),
		chromedp.Text("header time", &first, chromedp.ByQuery))
	format := regexp.MustCompile(`^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$`)
	if !format.MatchString(first) {
		t.Fatalf("the clock shows %q", first)
	}
	moved := fmt.Sprintf(`document.querySelector("header time").textContent !== %q`, first)
	if err := waitFor(ctx, moved, time.Minute); err != nil {
		t.Fatalf("the clock stayed at %s: %v", first, err)
	}
	var now string
	run(t, ctx, chromedp.Text("header time", &now, chromedp.ByQuery))
	if !format.MatchString(now) || now < first {
		t.Errorf("the clock went from %q to %q", first, now)
	}
}
