package cli

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os/user"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gnomon-sched/gnomon/api"
	"github.com/gnomon-sched/gnomon/auth"
)

const accessDefs = `insert_task: finance_eod
type: callable
command: true
out_log_file: @DIR@/o
err_log_file: @DIR@/e

insert_task: hr_pay
type: callable
command: true
out_log_file: @DIR@/o
err_log_file: @DIR@/e
`

// send makes a request with a token (none when empty) and returns the
// status, the error message of the answer and its headers.
func send(t *testing.T, base, token, method, path, body string, header ...string) (int, string, http.Header) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(header); i += 2 {
		if header[i] == "Host" {
			req.Host = header[i+1]
		}
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var er api.ErrorResponse
	json.Unmarshal(b, &er)
	return resp.StatusCode, er.Error, resp.Header
}

func (f *fixture) token(name string, role auth.Role, scope ...string) string {
	f.t.Helper()
	resp, err := f.client.CreateToken(context.Background(), api.TokenRequest{Name: name, Role: role, Scope: scope})
	if err != nil {
		f.t.Fatal(err)
	}
	return resp.Token
}

// TestRoleTable tries every endpoint with no token and with each role:
// each gets what its role grants and a 403 naming the missing permission
// otherwise, and a refused request changes nothing.
func TestRoleTable(t *testing.T) {
	f := setup(t)
	f.mustRun("gnomon", "def", "-f", f.file("a.def", accessDefs))
	tokens := map[auth.Role]string{}
	for _, r := range auth.Roles {
		tokens[r] = f.token(string(r)+"-user", r)
	}
	before := f.mustRun("gnomon", "export")
	def := `{"file":"x.def","text":"insert_task: intruder\ntype: callable\ncommand: id\nout_log_file: /tmp/x\nerr_log_file: /tmp/x\n","check":true}`
	endpoints := []struct {
		method, path, body string
		perm               auth.Permission
	}{
		{"GET", "/api/v1/info", "", auth.Read},
		{"GET", "/api/v1/tasks", "", auth.Read},
		{"GET", "/api/v1/tasks/hr_pay", "", auth.Read},
		{"GET", "/api/v1/tasks/hr_pay/status", "", auth.Read},
		{"GET", "/api/v1/tasks/hr_pay/runs", "", auth.Read},
		{"GET", "/api/v1/tasks/hr_pay/fires", "", auth.Read},
		{"GET", "/api/v1/definitions", "", auth.Read},
		{"GET", "/api/v1/forecast", "", auth.Read},
		{"GET", "/api/v1/events", "", auth.Read},
		{"GET", "/api/v1/alerts", "", auth.Read},
		{"GET", "/api/v1/audit", "", auth.Read},
		{"GET", "/api/v1/clock", "", auth.Read},
		{"GET", "/api/v1/trees", "", auth.Read},
		{"GET", "/api/v1/nodes?outstanding=true", "", auth.Read},
		{"GET", "/api/v1/cluster", "", auth.Read},
		{"GET", "/metrics", "", auth.Read},
		{"GET", "/api/v1/tasks/hr_pay/backfill", "", auth.Read},
		{"POST", "/api/v1/tasks/hr_pay/backfill", `{"from":"2026-01-01","to":"2026-01-02","dry_run":true}`, auth.Operate},
		{"POST", "/api/v1/tasks/hr_pay/backfill/cancel", "", auth.Operate},
		{"POST", "/api/v1/tasks/hr_pay/events", `{"event":"freeze"}`, auth.Operate},
		{"POST", "/api/v1/nodes/ghost/2026112400/skip?dry_run=true", "", auth.Operate},
		{"POST", "/api/v1/clock", `{"tick":true}`, auth.Clock},
		{"POST", "/events", `{"eventType":"FILE","eventTimestamp":"2021-01-01 12:00:00","eventResourceId":"/x"}`, auth.PostData},
		{"POST", "/api/v1/definitions", def, auth.Define},
		{"GET", "/api/v1/tokens", "", auth.ManageTokens},
		{"POST", "/api/v1/tokens", `{"name":"sneaky","role":"admin"}`, auth.ManageTokens},
		{"POST", "/api/v1/tokens/admin/revoke", "", auth.ManageTokens},
		{"POST", "/api/v1/cluster/nodes/n1/drain", "", auth.ManageCluster},
	}
	for _, e := range endpoints {
		if status, msg, h := send(t, f.client.Base, "", e.method, e.path, e.body); status != http.StatusUnauthorized || !strings.Contains(h.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("%s %s without a token: %d %s", e.method, e.path, status, msg)
		}
		for _, role := range []auth.Role{auth.Viewer, auth.Ingest, auth.Operator} { // the admin's would change things
			status, msg, _ := send(t, f.client.Base, tokens[role], e.method, e.path, e.body)
			if role.Has(e.perm) {
				if status == http.StatusForbidden || status == http.StatusUnauthorized {
					t.Errorf("%s %s as %s: %d %s; the role grants %s", e.method, e.path, role, status, msg, e.perm)
				}
			} else if status != http.StatusForbidden || !strings.Contains(msg, string(e.perm)) {
				t.Errorf("%s %s as %s: %d %q; want 403 naming %s", e.method, e.path, role, status, msg, e.perm)
			}
		}
	}
	if status, msg, _ := send(t, f.client.Base, "", "GET", "/healthz", ""); status != http.StatusOK {
		t.Errorf("/healthz without a token: %d %s", status, msg)
	}
	var health struct{ Status, Version string }
	if resp, err := http.Get(f.client.Base + "/healthz"); err != nil {
		t.Error(err)
	} else {
		json.NewDecoder(resp.Body).Decode(&health)
		resp.Body.Close()
		if health.Status != "ok" || health.Version != Version {
			t.Errorf("/healthz says %+v, want ok and version %s", health, Version)
		}
	}
	// The viewer's and the ingest token's refused requests changed
	// nothing; the operator froze hr_pay, which an admin's export shows.
	after := f.mustRun("gnomon", "export")
	if before != after {
		t.Errorf("refused requests changed the definitions:\n%s\n---\n%s", before, after)
	}
	if st, _ := f.client.Status(context.Background(), "hr_pay"); st.Rows[0].Status.String() != "frozen" {
		t.Errorf("hr_pay is %s after the operator froze it", st.Rows[0].Status)
	}
	list, err := f.client.Tokens(context.Background())
	if err != nil || len(list.Tokens) != 1+len(auth.Roles) {
		t.Errorf("tokens after refused creations: %+v, %v", list, err)
	}
}

// TestTokenLifecycle creates, uses, revokes and expires tokens through the
// command line, and checks that a scope narrows what a token may change.
func TestTokenLifecycle(t *testing.T) {
	f := setup(t)
	f.mustRun("gnomon", "def", "-f", f.file("a.def", accessDefs))
	tok := strings.TrimSpace(f.mustRun("gnomon", "token", "create", "--name", "fin-ops", "--role", "operator", "--scope", "finance_*"))
	if _, _, err := auth.ParseToken(tok); err != nil {
		t.Fatalf("token create printed %q: %v", tok, err)
	}
	as := func(token string, args ...string) (string, string, int) {
		t.Helper()
		return f.runEnv(map[string]string{"GNOMON_TOKEN": token}, args...)
	}
	if out, errs, code := as(tok, "gnomon", "token", "whoami"); code != 0 || !strings.Contains(out, "fin-ops (operator, scope finance_*)") {
		t.Errorf("whoami: %d %s%s", code, out, errs)
	}
	if _, errs, code := as(tok, "gnomon", "event", "-j", "finance_eod", "-e", "freeze"); code != 0 {
		t.Errorf("a scoped operator freezing a task in its scope: exit %d %s", code, errs)
	}
	if _, errs, code := as(tok, "gnomon", "event", "-j", "hr_pay", "-e", "freeze"); code != ExitRejected || !strings.Contains(errs, "tasks:operate on task hr_pay") {
		t.Errorf("a scoped operator freezing hr_pay: exit %d %s", code, errs)
	}
	// A scoped admin defines within its scope only.
	scopedAdmin := f.token("fin-admin", auth.Admin, "finance_*")
	if _, errs, code := as(scopedAdmin, "gnomon", "def", "-f", f.file("hr.def", "update_task: hr_pay\ncommand: id\n")); code != ExitRejected || !strings.Contains(errs, "definitions:write on task hr_pay") {
		t.Errorf("a scoped admin updating hr_pay: exit %d %s", code, errs)
	}
	// Without owners, a scoped admin defines no command: it would run as
	// the server's user. With owners, commands that run as them.
	if _, errs, code := as(scopedAdmin, "gnomon", "def", "-f", f.file("fin.def", "update_task: finance_eod\ncommand: echo eod\n")); code != ExitRejected ||
		!strings.Contains(errs, "definitions:write on task finance_eod, whose command runs as ") || !strings.Contains(errs, "fin-admin's owners are none") {
		t.Errorf("a scoped admin without owners updating finance_eod's command: exit %d %s", code, errs)
	}
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	ownerAdmin := strings.TrimSpace(f.mustRun("gnomon", "token", "create", "--name", "fin-admin2", "--role", "admin", "--scope", "finance_*", "--owners", "nobody,"+me.Username))
	if _, errs, code := as(ownerAdmin, "gnomon", "def", "-f", f.file("fin.def", "update_task: finance_eod\ncommand: echo eod\n")); code != 0 {
		t.Errorf("a scoped admin updating finance_eod: exit %d %s", code, errs)
	}
	if _, errs, code := as(scopedAdmin, "gnomon", "token", "list"); code != ExitRejected || !strings.Contains(errs, "tokens:manage") {
		t.Errorf("a scoped admin listing tokens: exit %d %s", code, errs)
	}
	out := f.mustRun("gnomon", "token", "list")
	if !strings.Contains(out, "fin-ops") || !strings.Contains(out, "finance_*") || strings.Contains(out, tok[20:]) {
		t.Errorf("token list:\n%s", out)
	}
	f.mustRun("gnomon", "token", "revoke", "fin-ops")
	if _, errs, code := as(tok, "gnomon", "token", "whoami"); code != ExitRejected || !strings.Contains(errs, "revoked") {
		t.Errorf("a revoked token: exit %d %s", code, errs)
	}
	// A token that has expired is refused, and says so.
	resp, err := f.client.CreateToken(context.Background(), api.TokenRequest{Name: "brief", Role: auth.Viewer, Expires: "1ns"})
	if err != nil {
		t.Fatal(err)
	}
	if status, msg, _ := send(t, f.client.Base, resp.Token, "GET", "/api/v1/tasks", ""); status != http.StatusUnauthorized || !strings.Contains(msg, "expired") {
		t.Errorf("an expired token: %d %s", status, msg)
	}
	// A token that is not one, or an unknown one.
	if status, msg, _ := send(t, f.client.Base, "", "GET", "/api/v1/tasks", "", "Authorization", "Bearer nope"); status != http.StatusUnauthorized || !strings.Contains(msg, "malformed") {
		t.Errorf("a malformed token: %d %s", status, msg)
	}
	other, _, _ := auth.NewSecret()
	if status, msg, _ := send(t, f.client.Base, other, "GET", "/api/v1/tasks", ""); status != http.StatusUnauthorized || !strings.Contains(msg, "unknown") {
		t.Errorf("an unknown token: %d %s", status, msg)
	}
	// The operator's action names it in the journal.
	entries, err := f.store().JournalBefore(context.Background(), "act", 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) == 0 || !strings.Contains(string(entries[len(entries)-1].Body), `"by":"fin-ops"`) {
		t.Errorf("the journal does not name fin-ops: %+v", entries)
	}
}

// TestDirectTokens makes a token on a stopped server's data directory,
// which the server takes at its next start.
func TestDirectTokens(t *testing.T) {
	f := setup(t)
	f.stop()
	data := filepath.Join(f.dir, "data")
	out, errs, code := f.runEnv(map[string]string{"GNOMON_DATA": data, "GNOMON_DB": testDB(t, data)},
		"gnomon", "token", "create", "--direct", "--name", "ci", "--role", "viewer", "--expires", "24h")
	if code != 0 {
		t.Fatalf("token create --direct: exit %d %s", code, errs)
	}
	f.start()
	if status, msg, _ := send(t, f.client.Base, strings.TrimSpace(out), "GET", "/api/v1/tasks", ""); status != http.StatusOK {
		t.Errorf("a token made on the data directory: %d %s", status, msg)
	}
}

// TestRequestsNamingOtherHosts refuses what a page on another origin could
// send through DNS rebinding, and what a page on another origin sends.
func TestRequestsNamingOtherHosts(t *testing.T) {
	f := setup(t)
	admin := f.client.Token
	def := `{"file":"x.def","text":"insert_task: rebind\ntype: callable\ncommand: id\nout_log_file: /tmp/x\nerr_log_file: /tmp/x\n"}`
	if status, msg, _ := send(t, f.client.Base, admin, "POST", "/api/v1/definitions", def, "Host", "evil.example.com:8080"); status != http.StatusMisdirectedRequest {
		t.Errorf("Host evil.example.com: %d %s", status, msg)
	}
	if status, msg, _ := send(t, f.client.Base, admin, "POST", "/api/v1/definitions", def, "Origin", "http://evil.example.com"); status != http.StatusForbidden || !strings.Contains(msg, "cross-origin") {
		t.Errorf("Origin evil.example.com: %d %s", status, msg)
	}
	if status, msg, _ := send(t, f.client.Base, admin, "GET", "/api/v1/tasks", "", "Host", "localhost:1"); status != http.StatusOK {
		t.Errorf("Host localhost: %d %s", status, msg)
	}
	if status, msg, _ := send(t, f.client.Base, admin, "GET", "/api/v1/tasks", "", "Origin", f.client.Base); status != http.StatusOK {
		t.Errorf("same origin: %d %s", status, msg)
	}
	if out := f.mustRun("gnomon", "export"); out != "" {
		t.Errorf("refused requests defined:\n%s", out)
	}
}

// TestRateLimit answers a token over its rate with 429 and Retry-After.
func TestRateLimit(t *testing.T) {
	f := setup(t)
	resp, err := f.client.CreateToken(context.Background(), api.TokenRequest{Name: "slow", Role: auth.Viewer, Rate: 1})
	if err != nil {
		t.Fatal(err)
	}
	var limited bool
	for range 5 { // a burst of two, then one a second
		status, _, h := send(t, f.client.Base, resp.Token, "GET", "/api/v1/tasks", "")
		if status == http.StatusTooManyRequests {
			limited = h.Get("Retry-After") != ""
			break
		}
	}
	if !limited {
		t.Error("a token of one request a second made five at once")
	}
	// Other tokens are not slowed.
	if status, _, _ := send(t, f.client.Base, f.client.Token, "GET", "/api/v1/tasks", ""); status != http.StatusOK {
		t.Errorf("the admin token after another was limited: %d", status)
	}
}

// TestTLS serves HTTPS with a self-signed certificate, which the command
// line on the same machine trusts through the data directory, and refuses
// plain HTTP beyond loopback.
func TestTLS(t *testing.T) {
	singleServer(t, "the cluster fixture serves plain HTTP; TLS is the director's listener, the same as one server's")
	f := setup(t, func(c *ServerConfig) { c.TLSSelfSigned = true })
	base := strings.Replace(f.client.Base, "http://", "https://", 1)
	out, errs, code := f.runEnv(map[string]string{"GNOMON_SERVER": base, "GNOMON_DATA": filepath.Join(f.dir, "data")}, "gnomon", "token", "whoami")
	if code != 0 || !strings.HasPrefix(out, "admin (admin)") {
		t.Errorf("whoami over TLS: exit %d %s%s", code, out, errs)
	}
	if _, err := (&api.Client{Base: f.client.Base, Token: f.client.Token}).Whoami(context.Background()); err == nil {
		t.Error("plain HTTP answered on the TLS port")
	}
	err := NewServer(ServerConfig{Data: t.TempDir(), Listen: "0.0.0.0:0", Logger: nopLogger()}).Start(context.Background())
	if err == nil || !strings.Contains(err.Error(), "--tls-self-signed") {
		t.Errorf("plain HTTP on 0.0.0.0: %v", err)
	}
}
