package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/gnomon-sched/gnomon/api"
	"github.com/gnomon-sched/gnomon/cluster"
	"github.com/gnomon-sched/gnomon/engine"
	"github.com/gnomon-sched/gnomon/job"
)

// clusterFlows are the flows of the seeds in the definition language,
// each command writing the node that ran it to OUT/TASK.node: a bundle
// whose steps run on named machines (seed 001), a task that runs when the
// bundle succeeds and one with a start delay after it (seed 004), a data
// configuration (seed 000) and an every-second time trigger.
const clusterFlows = `insert_task: flow
type: bundle

insert_task: extract
type: callable
parent: flow
machine: m1
command: echo "$TEST_NODE_NAME" > OUT/extract.node
out_log_file: OUT/extract.out
err_log_file: OUT/extract.err

insert_task: load
type: callable
parent: flow
machine: m2
condition: su(extract)
command: echo "$TEST_NODE_NAME" > OUT/load.node
out_log_file: OUT/load.out
err_log_file: OUT/load.err

insert_task: report
type: callable
condition: su(flow)
command: echo "$TEST_NODE_NAME" > OUT/report.node
out_log_file: OUT/report.out
err_log_file: OUT/report.err

insert_task: later
type: callable
condition: su(report)
start_delay: 2s
command: echo "$TEST_NODE_NAME" > OUT/later.node
out_log_file: OUT/later.out
err_log_file: OUT/later.err

insert_task: landed
type: configuration
dependencies: [{"type":"FILE","resourceId":"/landing/","lifeDuration":3600},{"type":"TABLE","resourceId":"sales","lifeDuration":3600}]
command: echo "$TEST_NODE_NAME" > OUT/landed.node
out_log_file: OUT/landed.out
err_log_file: OUT/landed.err

insert_task: tick
type: callable
command: true
out_log_file: /dev/null
err_log_file: /dev/null
start_date: 2026-01-01 00:00
interval: 1 second
`

// TestClusterFlows runs the seeds' flows on a cluster of three processes:
// a director, and two nodes that are clocks and workers, one serving
// machine m1, the other m2. Every run executes on a worker (the director
// runs none), each on the machine its task names.
func TestClusterFlows(t *testing.T) {
	_, c, _ := startNodes(t,
		nodeSpec{name: "dir", roles: "director"},
		nodeSpec{name: "w1", roles: "clock,worker", machines: "m1"},
		nodeSpec{name: "w2", roles: "clock,worker", machines: "m2"})
	ctx := context.Background()
	out := t.TempDir()
	if _, err := c.Define(ctx, "flows.def", strings.ReplaceAll(clusterFlows, "OUT", out), false); err != nil {
		t.Fatal(err)
	}
	if err := c.Event(ctx, "flow", "start"); err != nil {
		t.Fatal(err)
	}
	// Seed 000: the configuration runs when both dependencies are met.
	now := time.Now().UTC().Format(time.RFC3339)
	if _, err := c.PostEvent(ctx, "FILE", "/landing/day.csv", now); err != nil {
		t.Fatal(err)
	}
	if r, err := c.PostEvent(ctx, "TABLE", "sales", now); err != nil || !slices.Equal(r.Triggered, []string{"landed"}) {
		t.Fatalf("post event: %+v %v", r, err)
	}
	ranOn := func(task string) string {
		b, err := os.ReadFile(filepath.Join(out, task+".node"))
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(b))
	}
	waitUntil(t, "every flow ran", func() bool {
		for _, task := range []string{"extract", "load", "report", "later", "landed"} {
			if ranOn(task) == "" {
				return false
			}
		}
		return true
	})
	for task, want := range map[string][]string{"extract": {"w1"}, "load": {"w2"}, "report": {"w1", "w2"}, "later": {"w1", "w2"}, "landed": {"w1", "w2"}} {
		if got := ranOn(task); !slices.Contains(want, got) {
			t.Errorf("%s ran on %q, want one of %v", task, got, want)
		}
	}
	succeeded := func(task string, n int) bool {
		rs, err := c.Runs(ctx, task, 100, "")
		if err != nil {
			return false
		}
		ok := 0
		for _, r := range rs.Runs {
			if r.Status == job.Success {
				ok++
			}
		}
		return ok >= n
	}
	waitUntil(t, "the flows succeeded", func() bool {
		for _, task := range []string{"flow", "extract", "load", "report", "later", "landed"} {
			if !succeeded(task, 1) {
				return false
			}
		}
		return true
	})
	// The later task started no sooner than its delay after report ended.
	report, later := lastRun(t, c, "report"), lastRun(t, c, "later")
	if d := later.Start.Sub(report.End); d < 2e9 {
		t.Errorf("later started %s after report ended, want at least its 2s delay", d)
	}
	// The time trigger fires on the clock nodes and runs on the workers.
	waitUntil(t, "tick ran three times", func() bool { return succeeded("tick", 3) })
	if got := lastRun(t, c, "tick").Trigger; got == "" {
		t.Errorf("tick's run has no trigger")
	}
	st, err := c.Cluster(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Runs.Waiting) != 0 {
		t.Errorf("runs waiting for a machine: %+v", st.Runs.Waiting)
	}
	// The web UI's cluster page, signed in as a browser is, shows the
	// director and its nodes.
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar}
	if resp, err := browser.PostForm(c.Base+"/login", url.Values{"token": {c.Token}}); err != nil {
		t.Fatal(err)
	} else {
		resp.Body.Close()
	}
	resp, err := browser.Get(c.Base + "/cluster")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the cluster page is answered %d: %s", resp.StatusCode, page)
	}
	for _, want := range []string{"dir <strong>(director)</strong>", "<td>w1</td>", "<td>w2</td>", "clock, worker"} {
		if !bytes.Contains(page, []byte(want)) {
			t.Errorf("the cluster page does not show %q", want)
		}
	}
}

func lastRun(t *testing.T, c *api.Client, task string) job.Run {
	t.Helper()
	rs, err := c.Runs(context.Background(), task, 1, "")
	if err != nil || len(rs.Runs) == 0 {
		t.Fatalf("runs of %s: %v %v", task, rs, err)
	}
	return rs.Runs[0].Run
}

// TestClusterWorkerKilled kills a worker with a run in flight: the run is
// recorded lost once the worker is found dead, a run for the machine only
// that worker served waits, visibly, and runs once the worker is back.
func TestClusterWorkerKilled(t *testing.T) {
	db, c, nodes := startNodes(t,
		nodeSpec{name: "dir", roles: "director,clock,worker"},
		nodeSpec{name: "w1", roles: "worker", machines: "gpu"})
	ctx := context.Background()
	out := t.TempDir()
	defs := fmt.Sprintf(`insert_task: long
type: callable
machine: gpu
command: echo started > %[1]s/long.started; sleep 60
out_log_file: %[1]s/long.out
err_log_file: %[1]s/long.err

insert_task: next
type: callable
machine: gpu
command: echo "$TEST_NODE_NAME" > %[1]s/next.node
out_log_file: %[1]s/next.out
err_log_file: %[1]s/next.err
`, out)
	if _, err := c.Define(ctx, "gpu.def", defs, false); err != nil {
		t.Fatal(err)
	}
	if err := c.Event(ctx, "long", "start"); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "long started on w1", func() bool {
		_, err := os.Stat(filepath.Join(out, "long.started"))
		return err == nil
	})
	nodes["w1"].signal(syscall.SIGKILL)
	waitUntil(t, "long is recorded lost", func() bool {
		r := lastRun(t, c, "long")
		return r.Status != job.Running
	})
	lost := lastRun(t, c, "long")
	if lost.Status != job.Failure || lost.Result != job.ResultLost || !strings.Contains(lost.Message, "w1") {
		t.Fatalf("long's run after its worker died: %+v", lost)
	}
	// The death is in the journal, with the run lost.
	conn, err := pgx.Connect(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var gone engine.NodeGone
	var body string
	if err := conn.QueryRow(ctx, `SELECT body FROM journal WHERE kind = 'node_gone' ORDER BY seq DESC LIMIT 1`).Scan(&body); err != nil {
		t.Fatalf("no node_gone entry in the journal: %v", err)
	}
	if err := json.Unmarshal([]byte(body), &gone); err != nil {
		t.Fatal(err)
	}
	if gone.Node != "w1" || gone.State != cluster.Dead || !slices.Equal(gone.Lost, []int64{lost.ID}) || len(gone.Requeued) != 0 {
		t.Fatalf("journaled %+v, want w1 dead with run %d lost", gone, lost.ID)
	}
	// No live worker serves gpu: next waits, and says so.
	if err := c.Event(ctx, "next", "start"); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "next waits for machine gpu", func() bool {
		st, err := c.Cluster(ctx)
		return err == nil && len(st.Runs.Waiting) == 1 && st.Runs.Waiting[0].Task == "next" && st.Runs.Waiting[0].Machine == "gpu"
	})
	nodes["w1"].start()
	waitUntil(t, "next ran on w1", func() bool {
		b, err := os.ReadFile(filepath.Join(out, "next.node"))
		return err == nil && strings.TrimSpace(string(b)) == "w1"
	})
	waitUntil(t, "next succeeded", func() bool { return lastRun(t, c, "next").Status == job.Success })
}

// TestClusterWorkerDrained drains a worker with a run in flight: it claims
// nothing more, lets the run finish, and leaves.
func TestClusterWorkerDrained(t *testing.T) {
	db, c, _ := startNodes(t,
		nodeSpec{name: "dir", roles: "director,clock"},
		nodeSpec{name: "w1", roles: "worker", machines: "gpu"})
	ctx := context.Background()
	out := t.TempDir()
	defs := fmt.Sprintf(`insert_task: slow
type: callable
machine: gpu
command: touch %[1]s/slow.started; while [ ! -e %[1]s/slow.go ]; do sleep 0.1; done
out_log_file: %[1]s/slow.out
err_log_file: %[1]s/slow.err

insert_task: next
type: callable
machine: gpu
command: "true"
out_log_file: %[1]s/next.out
err_log_file: %[1]s/next.err
`, out)
	if _, err := c.Define(ctx, "gpu.def", defs, false); err != nil {
		t.Fatal(err)
	}
	if err := c.Event(ctx, "slow", "start"); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "slow started on w1", func() bool {
		_, err := os.Stat(filepath.Join(out, "slow.started"))
		return err == nil
	})
	if err := c.Drain(ctx, "w1"); err != nil {
		t.Fatal(err)
	}
	if err := c.Event(ctx, "next", "start"); err != nil {
		t.Fatal(err)
	}
	state := func() (string, int) {
		st, err := c.Cluster(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range st.Nodes {
			if n.ID == "w1" {
				return n.State, st.Runs.Held["w1"]
			}
		}
		t.Fatalf("no node w1 in %+v", st.Nodes)
		return "", 0
	}
	waitUntil(t, "next waits for a live worker serving gpu", func() bool {
		st, err := c.Cluster(ctx)
		return err == nil && len(st.Runs.Waiting) == 1 && st.Runs.Waiting[0].Task == "next"
	})
	if s, held := state(); s != cluster.Draining || held != 1 {
		t.Fatalf("w1 is %s with %d runs, want draining with slow's run", s, held)
	}
	if err := os.WriteFile(filepath.Join(out, "slow.go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "w1 left", func() bool { s, _ := state(); return s == cluster.Left })
	if r := lastRun(t, c, "slow"); r.Status != job.Success {
		t.Fatalf("slow's run: %+v", r)
	}
	if r := lastRun(t, c, "next"); r.Status != job.Running {
		t.Fatalf("next's run: %+v, want it still waiting", r)
	}

	// A second director does not start while dir holds the cluster.
	self, _ := os.Executable()
	cctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	second := exec.CommandContext(cctx, self, "server", "--data", filepath.Join(out, "dir2"), "--db", db, "--listen", freePort(t),
		"--timezone", "UTC", "--roles", "director", "--node", "dir2", "--node-timeout", "1s")
	second.Env = append(os.Environ(), envServerProcess+"=1")
	b, err := second.CombinedOutput()
	if err == nil || !strings.Contains(string(b), "another director holds the cluster: dir,") {
		t.Fatalf("a second director: %v\n%s", err, b)
	}
}

// TestClusterRunLogs: a run a worker executes keeps where it wrote in its
// task's log files, as a single server's run does: the worker measures
// the span and reports it with the outcome, naming itself. The worker is
// on the director's machine: the run's bytes in the file are that run's
// output, and the director's web UI shows them. A log the director does
// not share with the worker (a relative path, under each node's own log
// root, as on another machine) is said to be on the worker's machine.
func TestClusterRunLogs(t *testing.T) {
	_, c, _ := startNodes(t,
		nodeSpec{name: "dir", roles: "director"},
		nodeSpec{name: "w1", roles: "clock,worker"})
	ctx := context.Background()
	out := t.TempDir()
	defs := fmt.Sprintf(`insert_task: talk
type: callable
command: echo "out of run $GNOMON_RUN_ID on $TEST_NODE_NAME"; echo "err of run $GNOMON_RUN_ID" >&2
out_log_file: %[1]s/talk.out
err_log_file: %[1]s/talk.err

insert_task: far
type: callable
command: echo "far run $GNOMON_RUN_ID"
out_log_file: far.out
err_log_file: far.err
`, out)
	if _, err := c.Define(ctx, "logs.def", defs, false); err != nil {
		t.Fatal(err)
	}
	ended := func(task string, n int) []api.RunView {
		t.Helper()
		var rs []api.RunView
		waitUntil(t, fmt.Sprintf("%s ran %d times", task, n), func() bool {
			got, err := c.Runs(ctx, task, 100, "")
			if err != nil || len(got.Runs) < n {
				return false
			}
			for _, r := range got.Runs {
				if !r.Done() {
					return false
				}
			}
			rs = got.Runs
			return true
		})
		return rs
	}
	for n := 1; n <= 3; n++ {
		if err := c.Event(ctx, "talk", "start"); err != nil {
			t.Fatal(err)
		}
		ended("talk", n)
	}
	if err := c.Event(ctx, "far", "start"); err != nil {
		t.Fatal(err)
	}
	far := ended("far", 1)[0].Run
	talk := ended("talk", 3)
	slices.SortFunc(talk, func(a, b api.RunView) int { return int(a.ID - b.ID) })
	second := talk[1].Run
	span := second.Log
	if second.Status != job.Success || span == nil || span.Node != "w1" || span.OutFrom <= 0 || span.ErrFrom <= 0 {
		t.Fatalf("run %d of talk (%s) keeps the log span %+v, want one from past the first run's output, on w1", second.ID, second.Status, span)
	}
	part := func(name string, from, to int64) string {
		b, err := os.ReadFile(filepath.Join(out, name))
		if err != nil || to > int64(len(b)) {
			t.Fatalf("%s: %d bytes, %v; the span ends at %d", name, len(b), err, to)
		}
		return string(b[from:to])
	}
	if got, want := part("talk.out", span.OutFrom, span.OutTo), fmt.Sprintf("out of run %d on w1\n", second.ID); got != want {
		t.Errorf("run %d's span of talk.out holds %q, want %q", second.ID, got, want)
	}
	if got, want := part("talk.err", span.ErrFrom, span.ErrTo), fmt.Sprintf("err of run %d\n", second.ID); got != want {
		t.Errorf("run %d's span of talk.err holds %q, want %q", second.ID, got, want)
	}

	// The director's web UI: the run's own output, and for a log only the
	// worker has, where it is (the fragment the run's page fetches).
	get := webSession(t, c)
	body := get(fmt.Sprintf("/tasks/talk/runs/%d/logs", second.ID))
	if !strings.Contains(body, fmt.Sprintf("out of run %d on w1\n", second.ID)) || strings.Count(body, "of run") != 2 ||
		!strings.Contains(body, fmt.Sprintf("Run %d on worker w1", second.ID)) {
		t.Errorf("the director's page of run %d's log:\n%s", second.ID, body)
	}
	if far.Log == nil || far.Log.Node != "w1" || far.Log.OutTo <= 0 {
		t.Fatalf("run %d of far keeps the log span %+v, want its output on w1", far.ID, far.Log)
	}
	body = get(fmt.Sprintf("/tasks/far/runs/%d/logs", far.ID))
	if want := fmt.Sprintf("run %d ran on worker w1: its out log is in far.out on w1&#39;s machine, which this server cannot read", far.ID); !strings.Contains(body, want) {
		t.Errorf("the director's page of run %d's log does not say %q:\n%s", far.ID, want, body)
	}
}

// webSession signs in to the web UI of c's server with c's token, as a
// browser does, and returns a function that answers a page's body.
func webSession(t *testing.T, c *api.Client) func(path string) string {
	t.Helper()
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := hc.PostForm(c.Base+"/login", url.Values{"token": {c.Token}, "next": {"/"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var session *http.Cookie
	for _, ck := range resp.Cookies() {
		if ck.Name == api.SessionCookie && ck.Value != "" {
			session = ck
		}
	}
	if session == nil {
		t.Fatalf("sign-in: %s, no session cookie", resp.Status)
	}
	return func(path string) string {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, c.Base+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.AddCookie(session)
		req.Header.Set("HX-Request", "true") // as the pages' own requests: fragments, not redirects to their page
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %s %v\n%s", path, resp.Status, err, b)
		}
		return string(b)
	}
}

// TestClusterWorkerRestarted stops a worker with SIGTERM while a run is in
// flight: restarted within the node timeout, it takes the run up again
// (its command went on under its supervisor) and reports its end; stopped
// for longer, the run is recorded lost, and the worker, back, kills the
// command it left running.
func TestClusterWorkerRestarted(t *testing.T) {
	// Long enough for a restart of a race-built process on a loaded
	// machine (3 s was not always).
	timeout := []string{"--node-timeout", "8s"}
	_, c, nodes := startNodes(t,
		nodeSpec{name: "dir", roles: "director,clock", flags: timeout},
		nodeSpec{name: "w1", roles: "worker", machines: "gpu", flags: timeout})
	ctx := context.Background()
	slow := newHeldTask(t, "gpu")
	if _, err := c.Define(ctx, "gpu.def", slow.def, false); err != nil {
		t.Fatal(err)
	}
	w1 := nodes["w1"]

	// Restarted within the timeout: the run goes on and ends.
	slow.start(c, "w1")
	if !w1.stop(10 * time.Second) {
		t.Fatal("w1 did not exit on SIGTERM")
	}
	w1.start()
	slow.finish(c, "its worker restarted within the timeout")

	// Stopped past the timeout: the run is lost; the worker, back, kills
	// its command.
	pid := slow.start(c, "w1")
	if !w1.stop(10 * time.Second) {
		t.Fatal("w1 did not exit on SIGTERM")
	}
	waitUntil(t, "slow is recorded lost", func() bool { return lastRun(t, c, "slow").Status != job.Running })
	if r := lastRun(t, c, "slow"); r.Result != job.ResultLost || !strings.Contains(r.Message, "w1 stopped while it ran and did not come back") {
		t.Fatalf("slow's run, its worker gone past the timeout: %+v", r)
	}
	if syscall.Kill(pid, 0) != nil {
		t.Fatalf("slow's command (pid %d) ended with its worker: it should run on under its supervisor", pid)
	}
	w1.start()
	waitUntil(t, "w1 kills the command of the run recorded lost", func() bool { return syscall.Kill(pid, 0) != nil })
}

// heldTask is the task slow, for a worker of a machine: its command
// writes its pid, then runs until it is let go, and prints "finished".
type heldTask struct {
	t   *testing.T
	dir string
	def string
}

func newHeldTask(t *testing.T, machine string) *heldTask {
	dir := t.TempDir()
	return &heldTask{t: t, dir: dir, def: fmt.Sprintf(`insert_task: slow
type: callable
machine: %[2]s
command: echo $$ > %[1]s/slow.pid; while [ ! -e %[1]s/slow.go ]; do sleep 0.1; done; echo finished
out_log_file: %[1]s/slow.out
err_log_file: %[1]s/slow.err
`, dir, machine)}
}

// start starts a run of slow and returns the pid of its command once it
// runs on worker.
func (h *heldTask) start(c *api.Client, worker string) int {
	h.t.Helper()
	pidFile, goFile := filepath.Join(h.dir, "slow.pid"), filepath.Join(h.dir, "slow.go")
	os.Remove(pidFile)
	os.Remove(goFile)
	if err := c.Event(context.Background(), "slow", "start"); err != nil {
		h.t.Fatal(err)
	}
	var pid int
	waitUntil(h.t, "slow started on "+worker, func() bool {
		b, err := os.ReadFile(pidFile)
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil && pid > 0
	})
	return pid
}

// finish lets the run go, and checks that it ends in success with its
// output; how says what it went through.
func (h *heldTask) finish(c *api.Client, how string) {
	h.t.Helper()
	if err := os.WriteFile(filepath.Join(h.dir, "slow.go"), nil, 0o644); err != nil {
		h.t.Fatal(err)
	}
	waitUntil(h.t, "slow ended", func() bool { return lastRun(h.t, c, "slow").Status != job.Running })
	if r := lastRun(h.t, c, "slow"); r.Status != job.Success {
		h.t.Fatalf("slow's run, %s: %+v", how, r)
	}
	if b, _ := os.ReadFile(filepath.Join(h.dir, "slow.out")); !strings.Contains(string(b), "finished") {
		h.t.Fatalf("slow's output, %s: %q", how, b)
	}
}
