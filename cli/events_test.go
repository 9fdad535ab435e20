package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon"
	"github.com/gnomon-sched/gnomon/auth"
	"github.com/gnomon-sched/gnomon/engine"
)

// postRaw sends a body to a path with a content type and returns the
// status and the decoded JSON body.
func postRaw(t *testing.T, base, method, path, ctype, body string) (int, map[string]any, http.Header) {
	t.Helper()
	req, err := http.NewRequest(method, base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := testHTTP.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s %s: body is not JSON: %q", method, path, b)
	}
	return resp.StatusCode, v, resp.Header
}

func event(typ, ts, res string) string {
	return fmt.Sprintf(`{"eventType":%q,"eventTimestamp":%q,"eventResourceId":%q}`, typ, ts, res)
}

// TestSeedTableOverHTTP replays the seed's table against a real server
// with the three seed configurations applied by gnomon def.
func TestSeedTableOverHTTP(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.mustRun("gnomon", "def", "-c", "-f", "../examples/configurations.json")
	if out := f.mustRun("gnomon", "def", "-f", "../examples/configurations.json"); !strings.Contains(out, "Successfully processed") {
		t.Fatalf("def: %s", out)
	}
	const dir = "/scheduling_configuraiton_1/directory/"
	steps := []struct {
		body string
		want []string
	}{
		{event("FILE", "2021-01-01 11:59:59", dir+"path/file_1.txt"), nil},
		{event("FILE", "2021-01-01 12:04:59", dir+"path/file_2.txt"), nil},
		{event("FILE", "2021-01-01 12:14:50", dir+"path/file_3.txt"), nil},
		{event("FILE", "2021-01-01 12:15:28", dir+"an_other_path/file_3.txt"), nil},
		// The seed spells this field eventResourceld.
		{`{"eventType":"TIME_BASED_CRON","eventTimestamp":"2021-01-01 12:30:00","eventResourceld":"cron"}`, []string{"SCHEDULING_CONFIGURATION_1"}},
		{event("TIME_BASED_CRON", "2021-01-01T13:10:00Z", "cron"), []string{"SCHEDULING_CONFIGURATION_1"}},
		{event("TIME_BASED_CRON", "2021-01-01T13:30:00.000Z", "cron"), nil},
	}
	for i, s := range steps {
		code, v, _ := postRaw(t, f.client.Base, "POST", "/events", "application/json", s.body)
		if code != http.StatusAccepted {
			t.Fatalf("step %d: %d %v", i, code, v)
		}
		var got []string
		for _, n := range v["triggered"].([]any) {
			got = append(got, n.(string))
		}
		if !slices.Equal(got, s.want) {
			t.Errorf("step %d (%s): triggered %v, want %v", i, s.body, got, s.want)
		}
		if _, ok := v["validated"].([]any); !ok {
			t.Errorf("step %d: no validated list in %v", i, v)
		}
	}
	out := f.mustRun("gnomon", "runs", "-j", "SCHEDULING_CONFIGURATION_1", "-n", "5")
	if n := strings.Count(out, "SCHEDULING_CONFIGURATION_1"); n != 2 {
		t.Errorf("runs lists %d executions, want 2:\n%s", n, out)
	}
	// Its triggers are fires too (shown in the server's zone), written
	// when asked for.
	out = squeeze(f.mustRun("gnomon", "runs", "-j", "SCHEDULING_CONFIGURATION_1", "--fires", "-n", "5"))
	if strings.Count(out, " ran") != 2 || !strings.Contains(out, "20210101 13:30:00 ran 1") || !strings.Contains(out, "20210101 14:10:00 ran 2") {
		t.Errorf("fires of configuration 1:\n%s", out)
	}
	out = f.mustRun("gnomon", "task", "-j", "SCHEDULING_CONFIGURATION_1")
	for _, want := range []string{"Type: configuration", "Dependency: FILE " + dir + "path/ (life 3600s)", "LastExecution: 2021-01-01T13:10:00Z",
		// 12:14:50 is the only file still able to count after 13:10.
		"Stored: FILE " + dir + "path/: 1 event, 2021-01-01T12:14:50Z to 2021-01-01T12:14:50Z", "Stored: TIME_BASED cron: 1 event, 2021-01-01T13:30:00Z"} {
		if !strings.Contains(out, want) {
			t.Errorf("task output lacks %q:\n%s", want, out)
		}
	}
	// The journal answers "why": every event received, and what stored it.
	out = f.mustRun("gnomon", "events", "-n", "3")
	if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 4 || !strings.Contains(squeeze(lines[1]), "20210101 14:30:00 TIME_BASED cron SCHEDULING_CONFIGURATION_1, SCHEDULING_CONFIGURATION_2") {
		t.Errorf("events:\n%s", out)
	}
	out = f.mustRun("gnomon", "events", "-n", "10", "-j", "SCHEDULING_CONFIGURATION_1")
	if strings.Contains(out, "an_other_path") || strings.Count(out, "SCHEDULING_CONFIGURATION_1") != 6 {
		t.Errorf("events of configuration 1:\n%s", out)
	}
	if out := f.mustRun("gnomon", "events", "-n", "10"); !strings.Contains(squeeze(out), "an_other_path/file_3.txt nothing") {
		t.Errorf("an event that matched nothing is not listed:\n%s", out)
	}
	// post-event from the shell, seed configuration 3.
	f.mustRun("gnomon", "post-event", "--type", "TABLE", "--resource", "BIGQUERY_TABLE_NAME_3", "--timestamp", "2021-01-01 13:00:00")
	out = f.mustRun("gnomon", "post-event", "--type", "TABLE", "--resource", "BIGQUERY_TABLE_NAME_4", "--timestamp", "2021-01-02 13:00:00")
	if !strings.Contains(out, "triggered: SCHEDULING_CONFIGURATION_3") {
		t.Errorf("post-event: %s", out)
	}
	// Export round-trips through def on another server.
	exported := f.mustRun("gnomon", "export")
	g := setup(t)
	g.mustRun("gnomon", "def", "-f", g.file("all.def", exported))
	if again := g.mustRun("gnomon", "export"); again != exported {
		t.Errorf("export does not round-trip:\n%s\n---\n%s", exported, again)
	}
}

// TestEventsContract checks every row of the HTTP contract.
func TestEventsContract(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.mustRun("gnomon", "def", "-f", "../examples/configurations.json")
	good := event("TABLE", "2021-01-01T10:00:00Z", "BIGQUERY_TABLE_NAME_1")
	cases := []struct {
		method, path, ctype, body string
		status                    int
		want                      string
	}{
		{"POST", "/events", "application/json", good, 202, ""},
		{"POST", "/events", "Application/JSON; charset=utf-8", good, 202, ""},
		{"GET", "/events", "", "", 405, "method GET not allowed"},
		{"PUT", "/events", "application/json", good, 405, ""},
		{"POST", "/event", "application/json", good, 404, "no such endpoint"},
		{"POST", "/events/x", "application/json", good, 404, ""},
		{"POST", "/events", "", good, 415, "Content-Type must be application/json"},
		{"POST", "/events", "text/plain", good, 415, ""},
		{"POST", "/events", "application/x-www-form-urlencoded", good, 415, ""},
		{"POST", "/events", "application/json", `{"eventType":"TABLE","eventResourceId":"` + strings.Repeat("x", 1<<20) + `"}`, 413, "larger than 1 MiB"},
		{"POST", "/events", "application/json", "", 400, "empty body"},
		{"POST", "/events", "application/json", `{"eventType":"TABLE",`, 400, "invalid JSON"},
		{"POST", "/events", "application/json", good + good, 400, "invalid JSON"},
		{"POST", "/events", "application/json", `[1]`, 422, "must be a JSON object"},
		{"POST", "/events", "application/json", `{"eventType":"TABLE","eventTimestamp":"2021-01-01T10:00:00Z"}`, 422, "eventResourceId: required"},
		{"POST", "/events", "application/json", event("table", "2021-01-01T10:00:00Z", "x"), 422, "eventType"},
		{"POST", "/events", "application/json", event("TABLE", "2021-01-01", "x"), 422, "eventTimestamp"},
		{"POST", "/events", "application/json", event("TABLE", "2021-01-01T10:00:00Z", ""), 422, "must not be empty"},
		{"POST", "/events", "application/json", `{"eventType":"TABLE","eventTimestamp":1609495200,"eventResourceId":"x"}`, 422, "eventTimestamp: expected a string"},
	}
	for _, c := range cases {
		code, v, h := postRaw(t, f.client.Base, c.method, c.path, c.ctype, c.body)
		if code != c.status {
			t.Errorf("%s %s (%s) %.60q: status %d, want %d (%v)", c.method, c.path, c.ctype, c.body, code, c.status, v)
			continue
		}
		if code >= 400 {
			msg, _ := v["error"].(string)
			if msg == "" || !strings.Contains(msg, c.want) {
				t.Errorf("%s %s %.60q: error %q, want one containing %q", c.method, c.path, c.body, msg, c.want)
			}
		}
		if code == 405 && h.Get("Allow") != "POST" {
			t.Errorf("405 with Allow %q", h.Get("Allow"))
		}
	}
	// Rejected requests leave no trace: only the two accepted events
	// validated anything.
	runs, err := f.store().Journal(context.Background(), 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range runs {
		var evs []engine.Data
		if e.Kind == "data" && json.Unmarshal(e.Body, &evs) == nil {
			n += len(evs)
		}
	}
	if n != 2 {
		t.Errorf("%d data events journaled, want 2", n)
	}
	// post-event exit codes: 1 for a refused event, 3 for no server.
	if _, errs, code := f.run("gnomon", "post-event", "--type", "DIR", "--resource", "x"); code != ExitRejected || !strings.HasPrefix(errs, "ERROR ") {
		t.Errorf("refused event: exit %d, %q", code, errs)
	}
	if _, _, code := f.run("gnomon", "--server", "http://127.0.0.1:1", "post-event", "--type", "FILE", "--resource", "/x"); code != ExitUnreachable {
		t.Errorf("no server: exit %d", code)
	}
}

// TestConcurrentIdenticalEvents posts the same cron event from many
// clients at once: one trigger.
func TestConcurrentIdenticalEvents(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.mustRun("gnomon", "def", "-f", f.file("c.json", `{"name":"HOURLY","dependencies":[{"type":"TIME_BASED","resourceId":"cron","lifeDuration":0}]}`))
	var (
		wg        sync.WaitGroup
		mu        sync.Mutex
		triggered int
	)
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := f.client.PostEvent(context.Background(), "TIME_BASED", "cron", "2021-01-01T12:00:00Z")
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			triggered += len(res.Triggered)
			mu.Unlock()
		}()
	}
	wg.Wait()
	if triggered != 1 {
		t.Errorf("%d triggers, want 1", triggered)
	}
}

// TestConfigurationFileErrors checks that a bad configuration file names
// the configuration, the dependency and the field, and changes nothing.
func TestConfigurationFileErrors(t *testing.T) {
	t.Parallel()
	f := setup(t)
	bad := f.file("bad.json", `[
  {"name": "GOOD", "dependencies": [{"type": "TABLE", "resourceId": "t", "lifeDuration": 1}]},
  {"name": "BAD", "dependencies": [{"type": "TABLE", "resourceId": "t", "lifeDuration": 1},
                                   {"type": "TABLE", "resourceId": "u", "lifeDuration": "-5"}]}
]`)
	_, errs, code := f.run("gnomon", "def", "-f", bad)
	if code != ExitRejected || !strings.Contains(errs, "bad.json:3: configuration BAD: dependencies[1].lifeDuration: -5 is negative") {
		t.Errorf("exit %d:\n%s", code, errs)
	}
	if _, _, code := f.run("gnomon", "task", "-j", "GOOD"); code != ExitRejected {
		t.Errorf("GOOD was applied from a rejected file")
	}
	// A server refuses to start on a bad file.
	err := NewServer(ServerConfig{Data: t.TempDir(), Listen: "127.0.0.1:0", Definitions: bad, Logger: nopLogger()}).Start(context.Background())
	if err == nil || !strings.Contains(err.Error(), "dependencies[1].lifeDuration") {
		t.Errorf("server start: %v", err)
	}
}

// TestEventsSurviveKill posts a burst of events from several clients,
// kills the server with SIGKILL in the middle, and checks that every
// event that got a 202 is stored after a restart.
func TestEventsSurviveKill(t *testing.T) {
	t.Parallel()
	singleServer(t, killedProcess)
	dir := t.TempDir()
	data, addr := dir+"/data", freePort(t)
	os.MkdirAll(data, 0o755)
	p := startProcess(t, data, addr)
	cfg := `{"name":"SINK","dependencies":[{"type":"TABLE","resourceId":"t","lifeDuration":864000},{"type":"TABLE","resourceId":"never","lifeDuration":0}]}`
	if _, err := p.client.Define(context.Background(), "c.json", cfg, false); err != nil {
		t.Fatal(err)
	}
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		accepted []string
	)
	client := withToken(&http.Client{Timeout: 5 * time.Second}, loadToken(t, p.client, auth.Ingest))
	stop := make(chan struct{})
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				ts := time.Date(2021, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i*8+w) * time.Millisecond).Format(time.RFC3339Nano)
				resp, err := client.Post("http://"+addr+"/events", "application/json", bytes.NewReader([]byte(event("TABLE", ts, "t"))))
				if err != nil {
					return // the server is gone
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode == http.StatusAccepted {
					mu.Lock()
					accepted = append(accepted, ts)
					mu.Unlock()
				}
			}
		}()
	}
	// The kill comes in the middle of the burst, once a hundred events
	// are accepted, however long that takes the machine.
	waitUntil(t, "100 events are accepted", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(accepted) >= 100
	})
	p.kill()
	close(stop)
	wg.Wait()
	q := startProcess(t, data, addr)
	st, err := gnomon.OpenStore(context.Background(), testDB(t, data), data)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	stored := map[time.Time]bool{}
	for after := int64(0); ; {
		entries, err := st.Journal(context.Background(), after, 1000)
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) == 0 {
			break
		}
		for _, e := range entries {
			after = e.Seq
			var evs []engine.Data
			if e.Kind == "data" && json.Unmarshal(e.Body, &evs) == nil {
				for _, d := range evs {
					stored[d.At] = true
				}
			}
		}
	}
	last := time.Time{}
	for _, ts := range accepted {
		at, _ := time.Parse(time.RFC3339Nano, ts)
		if !stored[at] {
			t.Errorf("event %s got a 202 but is not in the journal", ts)
		}
		if at.After(last) {
			last = at
		}
	}
	// The restarted server still has the validations: the missing
	// dependency, stamped at the last accepted event, triggers.
	res, err := q.client.PostEvent(context.Background(), "TABLE", "never", last.Format(time.RFC3339Nano))
	if err != nil || !slices.Equal(res.Triggered, []string{"SINK"}) {
		t.Errorf("after restart: %+v, %v", res, err)
	}
	t.Logf("%d events accepted before SIGKILL, all journaled", len(accepted))
}

func nopLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// TestMaxFutureSkew refuses events stamped too far ahead of the server's
// clock only when asked to.
func TestMaxFutureSkew(t *testing.T) {
	t.Parallel()
	f := setup(t, simulateFrom("2026-06-01T12:00:00Z"), func(c *ServerConfig) { c.MaxFutureSkew = time.Hour })
	f.mustRun("gnomon", "def", "-f", f.file("c.json", `{"name":"C","dependencies":[{"type":"TABLE","resourceId":"t","lifeDuration":0}]}`))
	code, v, _ := postRaw(t, f.client.Base, "POST", "/events", "application/json", event("TABLE", "2026-06-01T14:00:00Z", "t"))
	if msg, _ := v["error"].(string); code != 422 || !strings.Contains(msg, "ahead of the server clock") {
		t.Errorf("two hours ahead: %d %v", code, v)
	}
	if code, v, _ := postRaw(t, f.client.Base, "POST", "/events", "application/json", event("TABLE", "2026-06-01T12:30:00Z", "t")); code != 202 {
		t.Errorf("half an hour ahead: %d %v", code, v)
	}
	g := setup(t, simulateFrom("2026-06-01T12:00:00Z"))
	g.mustRun("gnomon", "def", "-f", g.file("c.json", `{"name":"C","dependencies":[{"type":"TABLE","resourceId":"t","lifeDuration":0}]}`))
	if code, v, _ := postRaw(t, g.client.Base, "POST", "/events", "application/json", event("TABLE", "2099-01-01T00:00:00Z", "t")); code != 202 {
		t.Errorf("far ahead without the flag: %d %v", code, v)
	}
}
