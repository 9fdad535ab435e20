package web

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/api"
	"github.com/gnomon-sched/gnomon/auth"
	"github.com/gnomon-sched/gnomon/clock"
)

// uiServer serves the API with the UI mounted, over real HTTP on
// loopback, for the tokens of the roles given; it returns the server's
// URL, each role's token and the sessions.
func uiServer(t *testing.T, text string, roles ...auth.Role) (string, map[auth.Role]string, *auth.Sessions) {
	t.Helper()
	s, _ := startScheduler(t, text)
	a := auth.NewAuthority(clock.Wall, 0)
	tokens := map[auth.Role]string{}
	var all []auth.Token
	for _, r := range roles {
		tok, id, hash := auth.NewSecret()
		all = append(all, auth.Token{ID: id, Name: string(r) + "-user", Role: r, Hash: hash, Created: time.Now()})
		tokens[r] = tok
	}
	a.Load(all)
	sessions := auth.NewSessions(a, 0, 0)
	u, err := New(Config{Scheduler: s, Location: time.UTC, Sessions: sessions})
	if err != nil {
		t.Fatal(err)
	}
	h := api.NewServer(s, time.UTC, "test", nil, api.Access{Authority: a, Sessions: sessions})
	h.Mount(u)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL, tokens, sessions
}

// noRedirects is a client that shows redirects instead of following them.
var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// postLogin posts the sign-in form and returns the answer's status and
// the session cookie, if one was set.
func postLogin(t *testing.T, base, token, next string) (int, *http.Cookie, http.Header) {
	t.Helper()
	resp, err := noRedirects.PostForm(base+"/login", url.Values{"token": {token}, "next": {next}})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	for _, c := range resp.Cookies() {
		if c.Name == api.SessionCookie && c.Value != "" {
			return resp.StatusCode, c, resp.Header
		}
	}
	return resp.StatusCode, nil, resp.Header
}

// getWith asks for a path through a session and returns the status and
// the body (at most 64 KiB of it: /live streams).
func getWith(t *testing.T, base string, cookie *http.Cookie, path string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.AddCookie(cookie)
	resp, err := noRedirects.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return resp.StatusCode, ""
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	return resp.StatusCode, string(b)
}

const accessDefs = `insert_task: secret_job
type: callable
command: echo the-command-of-secret-job
out_log_file: secret.out
err_log_file: secret.err
`

// uiPaths are every page, fragment and stream of the UI that needs read.
var uiPaths = []string{"/", "/tasks", "/tasks/secret_job", "/tasks/secret_job/why", "/timeline", "/graph", "/graph.json",
	"/data", "/trees", "/trees/none", "/alerts", "/audit", "/live", "/no-such-page"}

// The web UI checks the same permissions as the API: a token that may not
// read (an ingest token) is refused a session, and a session of one,
// however opened, gets 403 on every page, fragment and stream, the
// commands of tasks included; a viewer reads the pages but not the logs,
// which need read:sensitive, as in the API.
func TestPagesNeedRead(t *testing.T) {
	t.Parallel()
	base, tokens, sessions := uiServer(t, accessDefs, auth.Ingest, auth.Viewer, auth.Operator)

	status, cookie, _ := postLogin(t, base, tokens[auth.Ingest], "/")
	if status != http.StatusForbidden || cookie != nil {
		t.Errorf("an ingest token signing in: %d, cookie %v; want 403 and no session", status, cookie)
	}
	// A session of a token without read, as a server without that check
	// at sign-in would have opened it.
	key, _, _, err := sessions.Open(tokens[auth.Ingest])
	if err != nil {
		t.Fatal(err)
	}
	ingest := &http.Cookie{Name: api.SessionCookie, Value: key}
	for _, p := range append(uiPaths, "/tasks/secret_job/log/out", "/tasks/secret_job/runs/1/logs") {
		status, body := getWith(t, base, ingest, p)
		if status != http.StatusForbidden {
			t.Errorf("ingest GET %s: %d, want 403", p, status)
		}
		if strings.Contains(body, "the-command-of-secret-job") || strings.Contains(body, "secret_job\"") {
			t.Errorf("ingest GET %s shows the task:\n%s", p, body)
		}
		if status == http.StatusForbidden && !strings.Contains(body, "permission read required") {
			t.Errorf("ingest GET %s: the refusal does not name the permission:\n%s", p, body)
		}
	}

	_, viewer, _ := postLogin(t, base, tokens[auth.Viewer], "/")
	if viewer == nil {
		t.Fatal("a viewer could not sign in")
	}
	for _, p := range uiPaths {
		want := http.StatusOK
		if p == "/trees/none" || p == "/no-such-page" {
			want = http.StatusNotFound
		}
		if status, body := getWith(t, base, viewer, p); status != want {
			t.Errorf("viewer GET %s: %d, want %d\n%s", p, status, want, body)
		}
	}
	if status, body := getWith(t, base, viewer, "/tasks/secret_job"); !strings.Contains(body, "the-command-of-secret-job") {
		t.Errorf("a viewer reads definitions, commands included, as from the API: %d\n%s", status, body)
	}
	if status, _ := getWith(t, base, viewer, "/tasks/secret_job/log/out"); status != http.StatusForbidden {
		t.Errorf("viewer GET a log: %d, want 403 (read:sensitive)", status)
	}
	_, operator, _ := postLogin(t, base, tokens[auth.Operator], "/")
	if operator == nil {
		t.Fatal("an operator could not sign in")
	}
	if status, body := getWith(t, base, operator, "/tasks/secret_job/log/out"); status != http.StatusOK {
		t.Errorf("operator GET a log: %d, want 200\n%s", status, body)
	}
}

// After signing in, the browser goes back only to a page of this server:
// the ways a browser reads a path as another host (a tab or line break it
// drops, a backslash it reads as a slash, a second slash, a scheme) all
// send it to the overview instead.
func TestNextStaysHere(t *testing.T) {
	t.Parallel()
	base, tokens, _ := uiServer(t, accessDefs, auth.Viewer)
	for next, want := range map[string]string{
		"/tasks/secret_job?x=1":   "/tasks/secret_job?x=1",
		"/audit":                  "/audit",
		"/\t/evil.example":        "/",
		"/\n/evil.example":        "/",
		"/ /evil.example":         "/",
		"//evil.example":          "/",
		"/\\evil.example":         "/",
		"/\\/evil.example":        "/",
		"/x\\..\\\\evil.example":  "/",
		"https://evil.example/":   "/",
		"javascript:alert(1)":     "/",
		"evil.example":            "/",
		"/%2F/evil.example":       "/",
		"/\x7f/evil.example":      "/",
		"":                        "/",
		"/\u00a0/evil.example/ok": "/%c2%a0/evil.example/ok", // a path here, escaped
	} {
		status, cookie, h := postLogin(t, base, tokens[auth.Viewer], next)
		if status != http.StatusSeeOther || cookie == nil {
			t.Fatalf("sign-in with next %q: %d", next, status)
		}
		if got := h.Get("Location"); got != want {
			t.Errorf("sign-in with next %q goes to %q, want %q", next, got, want)
		}
	}
}

// Stored strings reach a page with their control characters escaped: an
// event's resource ID holding an escape sequence or a right-to-left
// override, and what a command printed to its log, show as \x1b and \u202e, never as
// the characters a terminal obeys and a browser reorders text by.
func TestPagesEscapeControls(t *testing.T) {
	t.Parallel()
	logs := t.TempDir()
	defs := "insert_task: painted\ntype: callable\ncommand: printf 'a\\033[31mRED\\342\\200\\256x\\n'\nout_log_file: " + filepath.Join(logs, "p.out") + "\nerr_log_file: " + filepath.Join(logs, "p.err") + "\n"
	base, tokens, _ := uiServer(t, defs, auth.Operator)
	resource := "res\x1b]0;owned\x07\x1b[31mRED\u202egpj.exe\u2066x\u0085"
	jr, _ := json.Marshal(resource)
	body := fmt.Sprintf(`{"eventType":"FILE","eventTimestamp":%q,"eventResourceId":%s}`, time.Now().UTC().Format(time.RFC3339), jr)
	req, err := http.NewRequest(http.MethodPost, base+"/events", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+tokens[auth.Operator])
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("POST /events: %d %s", resp.StatusCode, b)
	}
	_, session, _ := postLogin(t, base, tokens[auth.Operator], "/")
	if session == nil {
		t.Fatal("no session")
	}
	req, _ = http.NewRequest(http.MethodPost, base+"/api/v1/tasks/painted/events", strings.NewReader(`{"event":"start"}`))
	req.Header.Set("Authorization", "Bearer "+tokens[auth.Operator])
	req.Header.Set("Content-Type", "application/json")
	if resp, err = http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("start painted: %v %v", err, resp.Status)
	}
	resp.Body.Close()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, page := getWith(t, base, session, "/tasks/painted/log/out"); strings.Contains(page, "RED") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("painted wrote nothing to its log")
		}
		time.Sleep(20 * time.Millisecond)
	}
	for path, want := range map[string]string{
		"/data":                  `res\x1b]0;owned\x07\x1b[31mRED\u202egpj.exe\u2066x\u0085`,
		"/tasks/painted/log/out": `a\x1b[31mRED\u202ex`,
	} {
		status, page := getWith(t, base, session, path)
		if status != http.StatusOK {
			t.Fatalf("GET %s: %d\n%s", path, status, page)
		}
		if i := strings.IndexFunc(page, func(r rune) bool {
			return r < 0x20 && r != '\t' && r != '\n' && r != '\r' || r >= 0x7f && r <= 0x9f || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069
		}); i >= 0 {
			t.Errorf("GET %s shows a raw control character %q: ...%s...", path, page[i:i+1], page[max(0, i-40):min(len(page), i+40)])
		}
		if want != "" && !strings.Contains(page, html.EscapeString(want)) && !strings.Contains(page, want) {
			t.Errorf("GET %s does not show %s", path, want)
		}
	}
}

// The icon answers without a session, at /favicon.ico and where the pages
// name it, as an SVG.
func TestFavicon(t *testing.T) {
	t.Parallel()
	base, _, _ := uiServer(t, "insert_task: a\ntype: callable\nfunction: log\n")
	resp, err := noRedirects.Get(base + "/favicon.ico")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "image/svg+xml" || !strings.Contains(string(b), "<svg") {
		t.Errorf("GET /favicon.ico: %d %s %q", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	resp, err = noRedirects.Get(base + "/login")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(page), `rel="icon" type="image/svg+xml" href="/static/favicon.svg?v=`) {
		t.Errorf("the sign-in page names no icon:\n%s", page)
	}
}
