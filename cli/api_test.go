package cli

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"
)

// TestAPIBadInput checks that malformed, oversized, truncated and
// mistyped requests get a JSON error that names the problem and change
// nothing.
func TestAPIBadInput(t *testing.T) {
	t.Parallel()
	f := setup(t)
	tests := []struct {
		name, method, path, ctype, body string
		status                          int
		err                             string
	}{
		{"unknown path", "GET", "/api/v1/nope", "", "", 404, "no such endpoint"},
		{"wrong method", "DELETE", "/api/v1/definitions", "", "", 405, "not allowed on /api/v1/definitions; allowed: GET, POST"},
		{"no content type", "POST", "/api/v1/definitions", "", `{"text":"x"}`, 415, "application/json"},
		{"form content type", "POST", "/api/v1/definitions", "application/x-www-form-urlencoded", `text=x`, 415, "application/json"},
		{"empty body", "POST", "/api/v1/definitions", "application/json", ``, 400, "empty request body"},
		{"truncated", "POST", "/api/v1/definitions", "application/json", `{"text": "insert_task: a`, 400, "truncated"},
		{"trailing data", "POST", "/api/v1/definitions", "application/json; charset=utf-8", `{"text":"x"} {}`, 400, "data after"},
		{"unknown field", "POST", "/api/v1/definitions", "application/json", `{"txt":"x"}`, 400, `unknown field "txt"`},
		{"wrong type", "POST", "/api/v1/definitions", "application/json", `{"text":3}`, 400, `field "text"`},
		{"oversized", "POST", "/api/v1/definitions", "application/json", `{"text":"` + strings.Repeat("#", 9<<20) + `"}`, 413, "larger than"},
		{"rejected file", "POST", "/api/v1/definitions", "application/json", `{"file":"x.def","text":"insert_task: a\ntype: thing\n"}`, 422, "definitions rejected"},
		{"unknown task", "POST", "/api/v1/tasks/ghost/events", "application/json", `{"event":"start"}`, 404, "task ghost not found"},
		{"unknown event", "POST", "/api/v1/tasks/ghost/events", "application/json", `{"event":"launch"}`, 400, `invalid send event "launch"`},
		{"bad mode", "POST", "/api/v1/definitions", "application/json", `{"text":"x","mode":"replace"}`, 400, `mode: "replace" should be "apply" or "sync"`},
		{"bad syntax", "POST", "/api/v1/definitions", "application/json", `{"text":"x","syntax":"yaml"}`, 400, `syntax: "yaml" is not a syntax: give language, configurations or trees`},
		{"bad count", "GET", "/api/v1/tasks/ghost/runs?count=0", "", "", 400, "count must be"},
	}
	for _, tt := range tests {
		req, _ := http.NewRequest(tt.method, f.client.Base+tt.path, strings.NewReader(tt.body))
		if tt.ctype != "" {
			req.Header.Set("Content-Type", tt.ctype)
		}
		resp, err := testHTTP.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var er struct{ Error string }
		if resp.StatusCode != tt.status || json.Unmarshal(b, &er) != nil || !strings.Contains(er.Error, tt.err) {
			t.Errorf("%s: %d %s; want %d with %q", tt.name, resp.StatusCode, b, tt.status, tt.err)
		}
	}
	if out := f.mustRun("gnomon", "export"); out != "" {
		t.Errorf("rejected requests defined something:\n%s", out)
	}
}

// TestInfo checks the server's description of itself, and that its
// runtime figures are read when asked: a collection in between shows.
func TestInfo(t *testing.T) {
	singleServer(t, "it reads the runtime figures of a server in the test's process")
	f := setup(t)
	ctx := context.Background()
	before, err := f.client.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if before.Timezone != "Europe/Paris" || before.Runtime.Goroutines == 0 || before.Runtime.HeapBytes == 0 {
		t.Errorf("info: %+v", before)
	}
	runtime.GC() // the server runs in this process
	after, err := f.client.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if after.Runtime.GCCycles <= before.Runtime.GCCycles {
		t.Errorf("gc_cycles %d after a collection, %d before", after.Runtime.GCCycles, before.Runtime.GCCycles)
	}
}
