package web

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/api"
	"github.com/gnomon-sched/gnomon/auth"
	"github.com/gnomon-sched/gnomon/clock"
	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/store"
)

// scopedServer serves the API with the UI mounted for the tokens given,
// and returns the server's URL.
func scopedServer(t *testing.T, text string, cfg Config, tokens ...auth.Token) string {
	t.Helper()
	return scopedHistory(t, text, nil, cfg, tokens...)
}

// scopedHistory is scopedServer with the history given stored first (see
// withHistory).
func scopedHistory(t *testing.T, text string, history func(int64) store.Batch, cfg Config, tokens ...auth.Token) string {
	t.Helper()
	s, _ := withHistory(t, text, history)
	a := auth.NewAuthority(clock.Wall, 0)
	a.Load(tokens)
	sessions := auth.NewSessions(a, 0, 0)
	cfg.Scheduler, cfg.Location, cfg.Sessions = s, time.UTC, sessions
	u, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h := api.NewServer(s, time.UTC, "test", nil, api.Access{Authority: a, Sessions: sessions})
	h.Mount(u)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// token makes a token and its secret.
func token(name string, role auth.Role, scope ...string) (auth.Token, string) {
	tok, id, hash := auth.NewSecret()
	return auth.Token{ID: id, Name: name, Role: role, Scope: scope, Hash: hash, Created: time.Now()}, tok
}

const scopeDefs = `insert_task: secret_job
type: callable
command: echo the-command-of-secret-job
out_log_file: x.out
err_log_file: x.err

insert_task: demo_ok
type: callable
command: echo demo
out_log_file: x.out
err_log_file: x.err

insert_task: demo_box
type: bundle

insert_task: secret_member
type: callable
command: echo the-command-of-secret-member
out_log_file: x.out
err_log_file: x.err
parent: demo_box

insert_task: demo_after
type: callable
command: echo after
out_log_file: x.out
err_log_file: x.err
condition: su(secret_job)
`

// A token with a scope reads the pages of its tasks, and nothing of the
// others: not their pages, not a bundle of its scope whose member is
// outside it, not a task whose condition shows the status of one outside
// it, and none of the pages that show every task.
func TestScopedPages(t *testing.T) {
	t.Parallel()
	demo, secret := token("demo-viewer", auth.Viewer, "demo_*")
	base := scopedServer(t, scopeDefs, Config{}, demo)
	_, cookie, _ := postLogin(t, base, secret, "/tasks/demo_ok")
	if cookie == nil {
		t.Fatal("a scoped viewer could not sign in")
	}
	for path, want := range map[string]int{
		"/tasks/demo_ok":                http.StatusOK,
		"/tasks/demo_ok/why":            http.StatusOK,
		"/live":                         http.StatusOK,
		"/tasks/secret_job":             http.StatusForbidden,
		"/tasks/secret_job/why":         http.StatusForbidden,
		"/tasks/demo_box":               http.StatusForbidden, // shows secret_member
		"/tasks/demo_after":             http.StatusForbidden, // explains secret_job's status
		"/tasks/demo_after/why":         http.StatusForbidden,
		"/tasks/secret_member":          http.StatusForbidden,
		"/graph":                        http.StatusForbidden,
		"/graph.json":                   http.StatusForbidden,
		"/data":                         http.StatusForbidden,
		"/trees":                        http.StatusForbidden,
		"/alerts":                       http.StatusForbidden,
		"/tasks/secret_job/runs/1/logs": http.StatusForbidden,
	} {
		status, body := getWith(t, base, cookie, path)
		if status != want {
			t.Errorf("scoped viewer GET %s: %d, want %d\n%s", path, status, want, body)
		}
		if strings.Contains(body, "the-command-of-secret") {
			t.Errorf("scoped viewer GET %s shows a command outside its scope:\n%s", path, body)
		}
		if status == http.StatusForbidden && !strings.Contains(body, "scope is [demo_*]") {
			t.Errorf("scoped viewer GET %s: the refusal does not say why:\n%s", path, body)
		}
		if status == http.StatusOK && strings.Contains(body, `href="/graph"`) {
			t.Errorf("scoped viewer GET %s: the navigation offers the graph, which it may not read", path)
		}
	}
	// Its home is the task list, narrowed to its scope.
	req, _ := http.NewRequest(http.MethodGet, base+"/", nil)
	req.AddCookie(cookie)
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/tasks" {
		t.Errorf("scoped viewer GET /: %d to %q, want 303 to /tasks", resp.StatusCode, resp.Header.Get("Location"))
	}
}

// openStream opens /live through a session and returns the answer, whose
// body the caller closes; cancel ends the stream.
func openStream(t *testing.T, base string, cookie *http.Cookie) (*http.Response, context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/live", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.AddCookie(cookie)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	return resp, cancel
}

// A token holds at most LiveStreams streams of change notices at once,
// whatever its sessions: the next gets 429 with Retry-After and a message
// that says what to do, another token is not held back, and a stream that
// ends makes room.
func TestLiveStreamsPerToken(t *testing.T) {
	t.Parallel()
	const max = 3
	alice, aliceSecret := token("alice", auth.Viewer)
	bob, bobSecret := token("bob", auth.Viewer)
	base := scopedServer(t, scopeDefs, Config{LiveStreams: max}, alice, bob)
	var cancels []context.CancelFunc
	defer func() {
		for _, c := range cancels {
			c()
		}
	}()
	for i := range max {
		_, cookie, _ := postLogin(t, base, aliceSecret, "/") // a session each: the limit is the token's
		resp, cancel := openStream(t, base, cookie)
		cancels = append(cancels, cancel)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("stream %d of %d: %d", i+1, max, resp.StatusCode)
		}
		defer resp.Body.Close()
	}
	_, cookie, _ := postLogin(t, base, aliceSecret, "/")
	resp, cancel := openStream(t, base, cookie)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	cancel()
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" ||
		!strings.Contains(string(body), "alice holds 3 streams") {
		t.Errorf("stream %d: %d, Retry-After %q, %s; want 429 naming the limit", max+1, resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	_, bobCookie, _ := postLogin(t, base, bobSecret, "/")
	resp, cancel = openStream(t, base, bobCookie)
	cancels = append(cancels, cancel)
	if resp.StatusCode != http.StatusOK {
		t.Errorf("another token's stream: %d", resp.StatusCode)
	}
	resp.Body.Close()
	// Ending a stream makes room, once the server has seen it end.
	cancels[0]()
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, cancel := openStream(t, base, cookie)
		resp.Body.Close()
		cancels = append(cancels, cancel)
		if resp.StatusCode == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a stream after one ended: %d", resp.StatusCode)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A token with a scope sees the lists of every task narrowed to the tasks
// its scope covers, and their runs and audit records, with a line saying
// so; the page of a run outside the scope is refused.
func TestScopedLists(t *testing.T) {
	t.Parallel()
	demo, secret := token("demo-viewer", auth.Viewer, "demo_*")
	all, allSecret := token("all-viewer", auth.Viewer)
	t0 := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	var ids = map[string]int64{}
	history := func(last int64) store.Batch {
		var b store.Batch
		for i, task := range []string{"demo_ok", "secret_job", "secret_member", "demo_after"} {
			r := job.Run{ID: last + 1 + int64(i), Task: task, Status: job.Failure, Start: t0.Add(time.Duration(i) * time.Minute), Trigger: "start"}
			r.End = r.Start.Add(time.Second)
			ids[task] = r.ID
			b.Runs = append(b.Runs, r)
			b.Audit = append(b.Audit, job.AuditRecord{Task: task, RunID: r.ID, Launch: r.Start, Stop: r.End, Result: job.ResultNormal, Status: r.Status})
		}
		return b
	}
	base := scopedHistory(t, scopeDefs, history, Config{}, demo, all)
	_, cookie, _ := postLogin(t, base, secret, "/tasks")
	_, allCookie, _ := postLogin(t, base, allSecret, "/tasks")
	if cookie == nil || allCookie == nil {
		t.Fatal("a viewer could not sign in")
	}
	const line = "limited to the tasks of your token's scope: demo_*"
	run := func(task string) string { return fmt.Sprintf(`href="/runs/%d"`, ids[task]) }
	for _, c := range []struct {
		path       string
		show, hide []string
	}{
		{"/tasks", []string{"/tasks/demo_ok", "/tasks/demo_after", line}, []string{"secret_job", "secret_member"}},
		{"/tasks?q=secret", []string{line}, []string{"/tasks/secret_"}},
		{"/runs", []string{run("demo_ok"), run("demo_after"), line}, []string{run("secret_job"), run("secret_member"), "secret_"}},
		{"/runs?task=secret_job", []string{line}, []string{run("secret_job")}},
		{"/runs?bundle=demo_box", []string{"1 task of bundle demo_box", line}, []string{run("secret_member")}},
		{"/runs?status=failure&sort=start", []string{run("demo_ok"), line}, []string{run("secret_job")}},
		{"/timeline?span=168h&from=2026-11-17T00:00:00Z", []string{`href="/tasks/demo_ok"`, run("demo_ok"), line}, []string{"secret_"}},
		{"/timeline?span=168h&from=2026-11-17T00:00:00Z&bundle=demo_box", []string{line}, []string{"secret_"}},
		{"/timeline?span=168h&from=2026-11-17T00:00:00Z&task=secret_job", []string{line}, []string{`href="/tasks/secret_job"`, run("secret_job")}},
		{"/audit", []string{run("demo_ok"), run("demo_after"), line}, []string{run("secret_job"), run("secret_member"), "secret_"}},
		{"/audit?task=secret_job", []string{line}, []string{run("secret_job")}},
		{"/audit?task=demo_ok&from=2026-11-20&to=2026-11-20", []string{run("demo_ok"), line}, []string{run("demo_after")}},
	} {
		status, body := getWith(t, base, cookie, c.path)
		if status != http.StatusOK {
			t.Errorf("scoped viewer GET %s: %d, want 200\n%s", c.path, status, body)
			continue
		}
		for _, s := range c.show {
			if !strings.Contains(body, s) {
				t.Errorf("scoped viewer GET %s does not show %q:\n%s", c.path, s, body)
			}
		}
		for _, s := range c.hide {
			if strings.Contains(body, s) {
				t.Errorf("scoped viewer GET %s shows %q:\n%s", c.path, s, body)
			}
		}
		// A token without a scope sees every task, and no such line.
		if _, body := getWith(t, base, allCookie, c.path); strings.Contains(body, "your token") {
			t.Errorf("viewer without a scope GET %s says it is limited:\n%s", c.path, body)
		}
	}
	if _, body := getWith(t, base, allCookie, "/runs"); !strings.Contains(body, run("secret_job")) {
		t.Errorf("viewer without a scope GET /runs does not show every run:\n%s", body)
	}
	for path, want := range map[string]int{
		fmt.Sprintf("/runs/%d", ids["demo_ok"]):       http.StatusOK,
		fmt.Sprintf("/runs/%d", ids["secret_job"]):    http.StatusForbidden,
		fmt.Sprintf("/runs/%d", ids["secret_member"]): http.StatusForbidden,
	} {
		status, body := getWith(t, base, cookie, path)
		if status != want {
			t.Errorf("scoped viewer GET %s: %d, want %d\n%s", path, status, want, body)
		}
		if status == http.StatusForbidden && !strings.Contains(body, "scope is [demo_*]") {
			t.Errorf("scoped viewer GET %s: the refusal does not say why:\n%s", path, body)
		}
	}
}
