package cli

import (
	"bytes"
	"context"
	"flag"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon"
	"github.com/gnomon-sched/gnomon/api"
	"github.com/gnomon-sched/gnomon/auth"
	"github.com/gnomon-sched/gnomon/executor"
	"github.com/gnomon-sched/gnomon/internal/pgtest"
)

var update = flag.Bool("update", false, "rewrite golden files")

// EnvServerProcess makes the test binary run the command line as its main
// program, so crash tests can SIGKILL a real server process.
const envServerProcess = "GNOMON_TEST_MAIN"

func TestMain(m *testing.M) {
	executor.MaybeSupervise()
	if os.Getenv(envServerProcess) != "" {
		os.Exit(Run(context.Background(), append([]string{"gnomon"}, os.Args[1:]...), Env{Stdout: os.Stdout, Stderr: os.Stderr}))
	}
	// The processes the tests start never read the user's client
	// configuration: theirs is a file of a temporary directory, unless a
	// test names another.
	dir, err := os.MkdirTemp("", "gnomon-cli-test-")
	if err != nil {
		panic(err)
	}
	os.Setenv("GNOMON_CONFIG", filepath.Join(dir, "config.json"))
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// testDBs holds the PostgreSQL database of each data directory, when the
// tests run on PostgreSQL: a server started again on the same data
// directory finds its database.
var testDBs sync.Map

// testDB returns the --db of a server on data: empty for the embedded
// SQLite store, or, when GNOMON_TEST_DB is "postgres" or "cluster", a
// fresh PostgreSQL database of its own (see internal/pgtest).
func testDB(t testing.TB, data string) string {
	t.Helper()
	if db := os.Getenv("GNOMON_TEST_DB"); db != "postgres" && db != "cluster" {
		return ""
	}
	if db, ok := testDBs.Load(data); ok {
		return db.(string)
	}
	db := pgtest.URL(t)
	testDBs.Store(data, db)
	return db
}

// fixture is what an end-to-end test runs against: one server in the
// test's process, or, in the cluster pass (see onCluster), a cluster of
// three processes. Either way its API is at client, and the director's
// data directory is dir/data.
type fixture struct {
	t      *testing.T
	dir    string
	srv    *Server // one server; nil on a cluster
	client *api.Client
	// cluster are the processes of a cluster, the director first.
	cluster []*clusterNode
	// st is the store as the test reads it, opened once (see store).
	st gnomon.Store
	// zone is the server's time zone, the command line's $TZ: it prints
	// times in the zone the server reads them in.
	zone string
}

// setup starts a server (or, in the cluster pass, a cluster) on a free
// port with its own data directory. The options adjust its
// configuration.
func setup(t *testing.T, opts ...func(*ServerConfig)) *fixture {
	t.Helper()
	f := &fixture{t: t, dir: t.TempDir()}
	f.start(opts...)
	t.Cleanup(func() {
		f.stop()
		if f.st != nil {
			f.st.Close()
		}
	})
	return f
}

func (f *fixture) start(opts ...func(*ServerConfig)) {
	f.t.Helper()
	cfg := ServerConfig{
		Data: filepath.Join(f.dir, "data"), DB: testDB(f.t, filepath.Join(f.dir, "data")), Listen: "127.0.0.1:0", Timezone: "Europe/Paris",
		Workers: 4, Grace: time.Second, Logger: slog.New(slog.DiscardHandler),
	}
	for _, o := range opts {
		o(&cfg)
	}
	f.zone = cfg.Timezone
	if onCluster() {
		f.startCluster(cfg)
		return
	}
	srv := NewServer(cfg)
	err := srv.Start(context.Background())
	if err != nil {
		f.t.Fatal(err)
	}
	f.srv = srv
	f.client = &api.Client{Base: "http://" + srv.Addr(), Token: adminToken(f.t, cfg.Data)}
	testTokens.Store(f.client.Base, f.client.Token)
}

// testTokens maps the base URL of each server a test started to the token
// testHTTP sends it.
var testTokens sync.Map

// testHTTP is the HTTP client of tests that make requests of their own: it
// sends the admin token of the server a request goes to, unless the
// request has an Authorization header already.
var testHTTP = &http.Client{Transport: roundTripFunc(func(req *http.Request) (*http.Response, error) {
	if tok, ok := testTokens.Load(req.URL.Scheme + "://" + req.URL.Host); ok && req.Header.Get("Authorization") == "" {
		req = req.Clone(req.Context())
		req.Header.Set("Authorization", "Bearer "+tok.(string))
	}
	return http.DefaultTransport.RoundTrip(req)
})}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// adminToken reads the admin token a server wrote in its data directory.
func adminToken(t testing.TB, data string) string {
	t.Helper()
	tok, err := auth.ReadTokenFile(filepath.Join(data, auth.AdminTokenFile))
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// stop stops the server, or every process of the cluster (again
// harmlessly).
func (f *fixture) stop() {
	if onCluster() {
		if len(f.cluster) > 0 {
			f.stopCluster()
		}
		return
	}
	if f.srv == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	f.srv.Stop(ctx)
	f.srv = nil
}

// simulateFrom starts the server on a virtual clock.
func simulateFrom(t string) func(*ServerConfig) {
	return func(c *ServerConfig) { c.SimulateFrom = t }
}

// run runs a command line (args[0] is the program name) against the server.
func (f *fixture) run(args ...string) (stdout, stderr string, code int) {
	return f.runEnv(nil, args...)
}

// runEnv runs a command line with environment variables of its own (they
// come before the fixture's server and token).
func (f *fixture) runEnv(env map[string]string, args ...string) (stdout, stderr string, code int) {
	var out, errb bytes.Buffer
	code = Run(context.Background(), args, Env{Stdout: &out, Stderr: &errb, Getenv: func(k string) string {
		if v, ok := env[k]; ok {
			return v
		}
		switch {
		case f.client == nil:
		case k == "GNOMON_SERVER":
			return f.client.Base
		case k == "GNOMON_TOKEN":
			return f.client.Token
		case k == "TZ":
			return f.zone
		}
		return ""
	}})
	return out.String(), errb.String(), code
}

func (f *fixture) mustRun(args ...string) string {
	f.t.Helper()
	out, errs, code := f.run(args...)
	if code != 0 {
		f.t.Fatalf("%v: exit %d\n%s%s", args, code, out, errs)
	}
	return out
}

// file writes a file in the fixture directory, with @DIR@ replaced by it.
func (f *fixture) file(name, text string) string {
	p := filepath.Join(f.dir, name)
	if err := os.WriteFile(p, []byte(strings.ReplaceAll(text, "@DIR@", f.dir)), 0o644); err != nil {
		f.t.Fatal(err)
	}
	return p
}

// waitFor polls cond until it holds.
func (f *fixture) waitFor(what string, cond func() bool) {
	f.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			f.t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitStatus waits until a task has a status.
func (f *fixture) waitStatus(task, want string) {
	f.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		s, err := f.client.Status(context.Background(), task)
		if err == nil && s.Rows[0].Status.String() == want {
			return
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("%s did not become %s (%+v, %v)", task, want, s, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

var stampRE = regexp.MustCompile(`\d{8} \d\d:\d\d:\d\d`)

// golden compares output with testdata/NAME.golden, with time stamps and
// the fixture directory masked.
func (f *fixture) golden(name, got string) {
	f.t.Helper()
	f.goldenAt(name, gnomonTimeRE.ReplaceAllString(got, "YYYY-MM-DD hh:mm:ss ZZZ"))
}

// goldenAt is golden for an output whose times the virtual clock sets:
// they are compared as they are.
func (f *fixture) goldenAt(name, got string) {
	t := f.t
	t.Helper()
	got = stampRE.ReplaceAllString(strings.ReplaceAll(got, f.dir, "@DIR@"), "YYYYMMDD hh:mm:ss")
	path := filepath.Join("testdata", name+".golden")
	if *update {
		os.WriteFile(path, []byte(got), 0o644)
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("%s differs from %s:\n--- got\n%s--- want\n%s", name, path, got, want)
	}
}

func readFile(dir, name string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, name))
	return string(b), err
}

// loadToken makes a token of a role with no rate limit, for a test that
// sends requests as fast as it can, as a data producer would be given.
func loadToken(t testing.TB, c *api.Client, role auth.Role) string {
	t.Helper()
	resp, err := c.CreateToken(context.Background(), api.TokenRequest{Name: "load-" + string(role), Role: role, Rate: auth.Unlimited})
	if err != nil {
		t.Fatal(err)
	}
	return resp.Token
}

// withToken returns a copy of hc that sends tok.
func withToken(hc *http.Client, tok string) *http.Client {
	next := hc.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	c := *hc
	c.Transport = roundTripFunc(func(req *http.Request) (*http.Response, error) {
		req = req.Clone(req.Context())
		req.Header.Set("Authorization", "Bearer "+tok)
		return next.RoundTrip(req)
	})
	return &c
}
