package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/gnomon-sched/gnomon/api"
	"github.com/gnomon-sched/gnomon/auth"
	"github.com/gnomon-sched/gnomon/internal/pgtest"
)

// dbProcess is a gnomon server process (this test binary, see TestMain)
// on a given database, watched so that a test can tell whether it exited.
type dbProcess struct {
	cmd    *exec.Cmd
	client *api.Client
	log    string
	exited chan struct{} // closed when the process has exited
}

// startDBProcess starts gnomon server on data and the database at db and
// waits until it is ready.
func startDBProcess(t *testing.T, data, db string) *dbProcess {
	t.Helper()
	addr := freePort(t)
	self, _ := os.Executable()
	cmd := exec.Command(self, "server", "--data", data, "--db", db, "--listen", addr, "--timezone", "UTC", "--workers", "4")
	cmd.Env = append(os.Environ(), envServerProcess+"=1")
	p := &dbProcess{cmd: cmd, client: &api.Client{Base: "http://" + addr}, log: data + ".log", exited: make(chan struct{})}
	logf, err := os.OpenFile(p.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() { cmd.Process.Kill(); <-p.exited; logf.Close() })
	deadline := time.Now().Add(30 * time.Second)
	for p.client.Health(context.Background()) != nil {
		select {
		case <-p.exited:
			t.Fatalf("the server exited (%v):\n%s", cmd.ProcessState, p.logTail())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("server did not become ready:\n%s", p.logTail())
		}
		time.Sleep(20 * time.Millisecond)
	}
	p.client.Token = adminToken(t, data)
	testTokens.Store(p.client.Base, p.client.Token)
	return p
}

func (p *dbProcess) logTail() string {
	b, _ := os.ReadFile(p.log)
	if len(b) > 8000 {
		b = b[len(b)-8000:]
	}
	return string(b)
}

// answer is what became of one request of the load.
type answer struct {
	kind   string // "event" or "definition"
	name   string // the event's resource, the definition's name
	phase  int64  // of the load when the request was sent
	status int    // 0: no answer
	err    string // the error body, or why there was no answer
	took   time.Duration
}

// pgLoad sends data events and definitions to a server from several
// clients, continuously, and records what became of each request, and what
// /healthz answered meanwhile, by phase: a test moves to the next phase
// when it disrupts PostgreSQL or when PostgreSQL is back.
type pgLoad struct {
	t    *testing.T
	p    *dbProcess
	dir  string
	hc   *http.Client
	stop chan struct{}
	wg   sync.WaitGroup
	end  func() // stops the load and waits for its clients (again harmlessly)

	phase atomic.Int64

	mu      sync.Mutex
	answers []answer
	acks    map[int64]map[string]int // phase, kind: acknowledgements
	health  map[int64]map[int]int    // phase, status: answers of /healthz
}

// The load's clients: posters send data events, definers definitions.
const posters, definers = 4, 2

// startLoad defines the seed-000 configurations the events go to (each
// stores the files of its directory and waits for a cron event that never
// comes) and starts the clients.
func startLoad(t *testing.T, p *dbProcess, dir string) *pgLoad {
	t.Helper()
	var cfgs []string
	for g := range posters {
		cfgs = append(cfgs, fmt.Sprintf(`{"name": "LANDING_%d", "dependencies": [
			{"type": "FILE", "resourceId": "/landing/w%d/", "lifeDuration": "86400"},
			{"type": "TIME_BASED", "resourceId": "cron", "lifeDuration": "0"}]}`, g, g))
	}
	if _, err := p.client.Define(context.Background(), "landing.json", "["+strings.Join(cfgs, ",")+"]", false); err != nil {
		t.Fatal(err)
	}
	// A request gets 10 s: a server that holds one longer than that hangs.
	ld := &pgLoad{t: t, p: p, dir: dir, stop: make(chan struct{}),
		hc: withToken(&http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: posters + definers + 2}},
			loadToken(t, p.client, auth.Admin)),
		acks: map[int64]map[string]int{}, health: map[int64]map[int]int{}}
	ld.end = sync.OnceFunc(func() { close(ld.stop); ld.wg.Wait() })
	t.Cleanup(ld.end)
	for g := range posters {
		ld.wg.Go(func() {
			for i := 0; ; i++ {
				res := fmt.Sprintf("/landing/w%d/e%05d.csv", g, i)
				ev := api.WireEvent{Type: "FILE", Timestamp: time.Now().UTC().Format("2006-01-02 15:04:05.000"), Resource: res}
				if !ld.pause(ld.post("/events", "event", res, ev)) {
					return
				}
			}
		})
	}
	for g := range definers {
		ld.wg.Go(func() {
			for i := 0; ; i++ {
				name := fmt.Sprintf("def_%d_%04d", g, i)
				req := api.DefineRequest{File: name + ".def", Text: fmt.Sprintf(
					"insert_task: %s\ntype: callable\ncommand: true\nout_log_file: %s/%s.out\nerr_log_file: %s/%s.err\n", name, dir, name, dir, name)}
				if i%2 == 1 {
					req = api.DefineRequest{File: name + ".json", Text: fmt.Sprintf(
						`[{"name": %q, "dependencies": [{"type": "TABLE", "resourceId": "T_%s", "lifeDuration": "60"}]}]`, name, name)}
				}
				if !ld.pause(ld.post("/api/v1/definitions", "definition", name, req)) {
					return
				}
			}
		})
	}
	ld.wg.Go(func() {
		for {
			status := 0
			if resp, err := ld.hc.Get(p.client.Base + "/healthz"); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				status = resp.StatusCode
			}
			ld.record(func() {
				ph := ld.phase.Load()
				if ld.health[ph] == nil {
					ld.health[ph] = map[int]int{}
				}
				ld.health[ph][status]++
			})
			if !ld.pause(false) {
				return
			}
		}
	})
	return ld
}

func (ld *pgLoad) record(fn func()) {
	ld.mu.Lock()
	defer ld.mu.Unlock()
	fn()
}

// pause waits a little before a client's next request (longer after a
// refusal, to give the server a breath), and reports whether the load goes
// on.
func (ld *pgLoad) pause(ok bool) bool {
	d := time.Millisecond
	if !ok {
		d = 20 * time.Millisecond
	}
	select {
	case <-ld.stop:
		return false
	case <-time.After(d):
		return true
	}
}

// post sends a JSON body and records the answer.
func (ld *pgLoad) post(path, kind, name string, body any) bool {
	a := answer{kind: kind, name: name, phase: ld.phase.Load()}
	b, _ := json.Marshal(body)
	sent := time.Now()
	resp, err := ld.hc.Post(ld.p.client.Base+path, "application/json", bytes.NewReader(b))
	if err != nil {
		a.err = err.Error()
	} else {
		rb, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		a.status, a.err = resp.StatusCode, strings.TrimSpace(string(rb))
	}
	a.took = time.Since(sent)
	ld.record(func() {
		ld.answers = append(ld.answers, a)
		if a.status/100 == 2 {
			if ld.acks[a.phase] == nil {
				ld.acks[a.phase] = map[string]int{}
			}
			ld.acks[a.phase][a.kind]++
		}
	})
	return a.status/100 == 2
}

// next moves the load to its next phase.
func (ld *pgLoad) next() { ld.phase.Add(1) }

// alive fails the test if the server process has exited.
func (ld *pgLoad) alive(when string) {
	ld.t.Helper()
	select {
	case <-ld.p.exited:
		ld.t.Fatalf("the server exited %s (%v):\n%s", when, ld.p.cmd.ProcessState, ld.p.logTail())
	default:
	}
}

// wait waits, for up to a minute, until requests of both kinds sent in the
// current phase were acknowledged and /healthz answers 200.
func (ld *pgLoad) wait(when string) {
	ld.t.Helper()
	ph := ld.phase.Load()
	acks := func(kind string) (n int) {
		ld.record(func() { n = ld.acks[ph][kind] })
		return n
	}
	deadline := time.Now().Add(time.Minute)
	for {
		ld.alive(when)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		healthy := ld.p.client.Health(ctx) == nil
		cancel()
		if healthy && acks("event") >= 50 && acks("definition") >= 10 {
			return
		}
		if time.Now().After(deadline) {
			ld.t.Fatalf("the server did not take requests again %s (healthy %v, %d events and %d definitions acknowledged):\n%s",
				when, healthy, acks("event"), acks("definition"), ld.p.logTail())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// finish stops the load and returns its answers, and what /healthz
// answered by phase.
func (ld *pgLoad) finish() ([]answer, map[int64]map[int]int) {
	ld.end()
	ld.mu.Lock()
	defer ld.mu.Unlock()
	return ld.answers, ld.health
}

// check checks that every request the server acknowledged is stored once,
// as the server shows it and as the database db holds it, and that every
// other request was answered 503.
func (ld *pgLoad) check(answers []answer, db string) {
	t := ld.t
	t.Helper()
	ctx := context.Background()
	acked, refused, bad := 0, 0, 0
	for _, a := range answers {
		switch {
		case a.status/100 == 2:
			acked++
		case a.status == http.StatusServiceUnavailable:
			refused++
		default:
			if bad++; bad <= 10 {
				t.Errorf("%s %s (phase %d): status %d after %v, want a success or 503: %s", a.kind, a.name, a.phase, a.status, a.took, a.err)
			}
		}
	}
	t.Logf("%d requests acknowledged, %d refused with 503", acked, refused)

	received := map[string]bool{}
	for cursor := ""; ; {
		page, err := ld.p.client.ListReceived(ctx, "", api.MaxPage, cursor)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range page.Events {
			received[e.Resource] = true
		}
		if cursor = page.Next; cursor == "" {
			break
		}
	}
	names, err := ld.p.client.Tasks(ctx)
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, n := range names {
		listed[n] = true
	}
	conn, err := pgx.Connect(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	journaled := map[string]int{}
	resRE := regexp.MustCompile(`"resource":"(/landing/w\d+/e\d+\.csv)"`)
	rows, _ := conn.Query(ctx, `SELECT body FROM journal WHERE kind = 'data'`)
	var body string
	if _, err := pgx.ForEachRow(rows, []any{&body}, func() error {
		for _, m := range resRE.FindAllStringSubmatch(body, -1) {
			journaled[m[1]]++
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	tasks := map[string]bool{}
	rows, _ = conn.Query(ctx, `SELECT name FROM tasks`)
	var name string
	if _, err := pgx.ForEachRow(rows, []any{&name}, func() error {
		tasks[name] = true
		return nil
	}); err != nil {
		t.Fatal(err)
	}

	lost := 0
	for _, a := range answers {
		if a.status/100 != 2 {
			continue
		}
		var why string
		switch {
		case a.kind == "event" && !received[a.name]:
			why = "GET /api/v1/events does not list it"
		case a.kind == "event" && journaled[a.name] == 0:
			why = "the table journal does not hold it"
		case a.kind == "definition" && !listed[a.name]:
			why = "GET /api/v1/tasks does not list it"
		case a.kind == "definition" && !tasks[a.name]:
			why = "the table tasks does not hold it"
		}
		if why != "" {
			if lost++; lost <= 10 {
				t.Errorf("acknowledged %s %s (phase %d) is lost: %s", a.kind, a.name, a.phase, why)
			}
		}
	}
	if lost > 10 {
		t.Errorf("%d acknowledged requests lost in all", lost)
	}
	for res, n := range journaled {
		if n > 1 {
			t.Errorf("event %s is journaled %d times", res, n)
		}
	}
}

// TestPostgresRestartUnderLoad stops PostgreSQL for a second, three ways (a
// fast shutdown, an immediate one, and a SIGKILL of the postmaster, which
// then recovers from its WAL), under a server taking data events and
// definitions from several clients. It checks that the server recovers by
// itself each time, that every request it acknowledged is stored, once,
// that every other request was answered 503 within the clients' timeout of
// 10 s (requests the server holds while PostgreSQL is down are answered
// once it is back: see TestPostgresOutageRefusesRequests), that the server
// takes new requests afterwards, and that it never exited.
func TestPostgresRestartUnderLoad(t *testing.T) {
	t.Parallel()
	singleServer(t, ownPostgres)
	pg := pgtest.Start(t)
	dir := t.TempDir()
	p := startDBProcess(t, filepath.Join(dir, "data"), pg.URL())
	ld := startLoad(t, p, dir)
	ld.wait("at first")
	const down = time.Second // under load
	for _, d := range []struct {
		name string
		do   func()
	}{
		{"pg_ctl restart -m fast", func() { pg.Restart("fast", down) }},
		{"pg_ctl restart -m immediate", func() { pg.Restart("immediate", down) }},
		{"SIGKILL of the postmaster", func() { pg.Kill(down) }},
	} {
		ld.next()
		d.do() // returns once PostgreSQL accepts connections again
		ld.next()
		ld.wait("after " + d.name)
	}
	answers, health := ld.finish()
	ld.alive("under load")
	slowest := map[int64]time.Duration{}
	for _, a := range answers {
		slowest[a.phase] = max(slowest[a.phase], a.took)
	}
	// Phases 1, 3 and 5 are the outages.
	t.Logf("by phase: /healthz answered %v; the slowest request took %v", health, slowest)
	ld.check(answers, pg.URL())

	// The server takes new requests.
	ctx := context.Background()
	if _, err := p.client.PostEvent(ctx, "FILE", "/landing/w0/after.csv", time.Now().UTC().Format("2006-01-02 15:04:05")); err != nil {
		t.Fatalf("an event after the restarts: %v", err)
	}
	if _, err := p.client.Define(ctx, "after.json", `[{"name": "AFTER", "dependencies": [{"type": "FILE", "resourceId": "/after/", "lifeDuration": "60"}]}]`, false); err != nil {
		t.Fatalf("a definition after the restarts: %v", err)
	}
	if v, err := p.client.Received(ctx, "LANDING_0", 1); err != nil || len(v.Events) != 1 || v.Events[0].Resource != "/landing/w0/after.csv" {
		t.Errorf("the newest event of LANDING_0: %+v, %v", v, err)
	}
	if _, err := p.client.Task(ctx, "AFTER"); err != nil {
		t.Errorf("the definition after the restarts: %v", err)
	}
	ld.alive("at the end")
}

// TestPostgresOutageRefusesRequests checks that while PostgreSQL is down,
// the server refuses requests with 503 and /healthz says so, rather than
// holding them until the database is back.
func TestPostgresOutageRefusesRequests(t *testing.T) {
	t.Parallel()
	singleServer(t, ownPostgres)
	pg := pgtest.Start(t)
	dir := t.TempDir()
	p := startDBProcess(t, filepath.Join(dir, "data"), pg.URL())
	ld := startLoad(t, p, dir)
	ld.wait("at first")
	ld.next()
	pg.Restart("immediate", 4*time.Second)
	ld.next()
	ld.wait("after the outage")
	answers, health := ld.finish()
	ld.alive("under load")
	if health[1][http.StatusServiceUnavailable] == 0 {
		t.Errorf("/healthz never answered 503 while PostgreSQL was down: %v", health[1])
	}
	refused := 0
	for _, a := range answers {
		if a.phase == 1 && a.status == http.StatusServiceUnavailable {
			refused++
		}
	}
	if refused == 0 {
		t.Errorf("no request was refused with 503 during the outage")
	}
	ld.check(answers, pg.URL())
}

// TestPostgresRefusesWritesUnderLoad makes the database refuse writes
// under load, two ways, and take them again: read-only (as a failover to
// a standby, or an operator, makes it), and full (PostgreSQL's disk_full
// error, raised here by a trigger on the journal, as PostgreSQL raises it
// when it cannot extend a file). While it refuses, every request that
// needs a commit is refused with 503 naming the cause, and nothing is
// acknowledged that is not stored; after, the server takes requests again
// by itself.
func TestPostgresRefusesWritesUnderLoad(t *testing.T) {
	t.Parallel()
	singleServer(t, ownPostgres)
	pg := pgtest.Start(t)
	dir := t.TempDir()
	p := startDBProcess(t, filepath.Join(dir, "data"), pg.URL())
	ld := startLoad(t, p, dir)
	ld.wait("at first")

	ctx := context.Background()
	admin, err := pgx.Connect(ctx, pg.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	exec := func(qs ...string) {
		t.Helper()
		for _, q := range qs {
			if _, err := admin.Exec(ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	}
	// The database's default for new sessions, and the server's sessions
	// ended so that the ones it opens next take it.
	readOnly := func(v string) {
		exec(`ALTER DATABASE postgres SET default_transaction_read_only = `+v,
			`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = 'postgres' AND pid <> pg_backend_pid()`)
	}
	for _, fault := range []struct {
		name, says string
		on, off    func()
	}{
		{"read-only", "read-only", func() { readOnly("on") }, func() { readOnly("off") }},
		{"full", "No space left on device", func() {
			exec(`CREATE FUNCTION full_disk() RETURNS trigger LANGUAGE plpgsql AS $$
				BEGIN RAISE EXCEPTION 'could not extend file "base/5/16384": No space left on device' USING ERRCODE = 'disk_full'; END $$`,
				`CREATE TRIGGER full_disk BEFORE INSERT ON journal FOR EACH STATEMENT EXECUTE FUNCTION full_disk()`)
		}, func() { exec(`DROP TRIGGER full_disk ON journal`, `DROP FUNCTION full_disk()`) }},
	} {
		ld.next()
		phase := ld.phase.Load()
		fault.on()
		var sample string
		refused := func() (n int) {
			ld.record(func() {
				for _, a := range ld.answers {
					if a.phase == phase && a.status == http.StatusServiceUnavailable && strings.Contains(a.err, fault.says) {
						n, sample = n+1, a.err
					}
				}
			})
			return n
		}
		for deadline := time.Now().Add(30 * time.Second); refused() < 20; time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("only %d requests refused for the %s database:\n%s", refused(), fault.name, p.logTail())
			}
		}
		t.Logf("refused for the %s database: %s", fault.name, sample)
		fault.off()
		ld.next()
		ld.wait("after the database was " + fault.name)
	}
	answers, _ := ld.finish()
	ld.alive("under load")
	ld.check(answers, pg.URL())
}
