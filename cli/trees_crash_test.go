package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/periods"
)

// nodes returns the nodes GET /api/v1/nodes lists for query.
func (p *process) nodes(query string) []scNode {
	p.t.Helper()
	resp, err := testHTTP.Get(p.client.Base + "/api/v1/nodes?" + query)
	if err != nil {
		p.t.Fatal(err)
	}
	defer resp.Body.Close()
	var out scNodes
	if resp.StatusCode != http.StatusOK {
		p.t.Fatalf("GET /api/v1/nodes?%s: %s", query, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		p.t.Fatal(err)
	}
	return out.Nodes
}

// TestTreesSurviveSIGKILL kills the server while a node's command runs and
// an external worker's run is outstanding. After the restart the command
// is attached, not started again; every due hour is processed once; the
// external run is still outstanding under the same ID.
func TestTreesSurviveSIGKILL(t *testing.T) {
	t.Parallel()
	singleServer(t, killedProcess)
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	addr := freePort(t)
	p := startProcess(t, data, addr)
	ctx := context.Background()

	// Three hours are due at once (lag 0), run one after the other; the
	// daily level is continuous, so its open day is requested at once
	// from an external worker.
	start := periods.Hourly.KeyAt(time.Now().Add(-3 * time.Hour))
	cmd := fmt.Sprintf(`echo "$GNOMON_RUN_ID $GNOMON_TIMEPERIOD" >> %[1]s/starts; touch %[1]s/up.$GNOMON_TIMEPERIOD; `+
		`while [ ! -e %[1]s/go ]; do sleep 0.05; done`, dir)
	text, _ := json.Marshal(map[string]any{
		"settings": map[string]any{"startTimeperiod": start.String(), "lagMinutes": 0},
		"trees": []any{map[string]any{"name": "crash", "levels": []any{
			map[string]any{"process": "crash_daily", "qualifier": "daily", "stateMachine": "continuous", "every": "1h"},
			map[string]any{"process": "crash_hourly", "qualifier": "hourly", "command": cmd},
		}}},
	})
	if _, err := p.client.Define(ctx, "crash.json", string(text), false); err != nil {
		t.Fatal(err)
	}
	waitFile(t, filepath.Join(dir, "up."+start.String()))
	external := func() scNode {
		for _, n := range p.nodes("outstanding=true") {
			if n.Process == "crash_daily" {
				return n
			}
		}
		t.Fatal("no outstanding run of crash_daily")
		return scNode{}
	}
	before := external()
	p.kill()

	p = startProcess(t, data, addr)
	if after := external(); after.Run == nil || before.Run == nil || after.Run.ID != before.Run.ID {
		t.Fatalf("the external run was %+v before the crash, %+v after", before.Run, after.Run)
	}
	if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	due := []string{start.String(), periods.Hourly.Next(start).String(), periods.Hourly.Add(start, 2).String()}
	deadline := time.Now().Add(30 * time.Second)
	for {
		done := 0
		for _, n := range p.nodes("process=crash_hourly") {
			for _, k := range due {
				if n.Timeperiod == k && n.State == "processed" {
					done++
				}
			}
		}
		if done == len(due) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("hours not processed after the restart: %+v", p.nodes("process=crash_hourly"))
		}
		time.Sleep(50 * time.Millisecond)
	}
	starts, err := os.ReadFile(filepath.Join(dir, "starts"))
	if err != nil {
		t.Fatal(err)
	}
	seenRun, seenHour := map[string]bool{}, map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(starts)), "\n") {
		run, hour, _ := strings.Cut(line, " ")
		if seenRun[run] {
			t.Errorf("run %s started twice:\n%s", run, starts)
		}
		seenRun[run] = true
		seenHour[hour]++
	}
	for _, k := range due {
		if seenHour[k] != 1 {
			t.Errorf("hour %s ran %d times:\n%s", k, seenHour[k], starts)
		}
	}
	if got := external(); got.Run.ID != before.Run.ID {
		t.Errorf("the external run changed: %d, then %d", before.Run.ID, got.Run.ID)
	}
}
