package cli

import (
	"net/http"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/gnomon-sched/gnomon/auth"
)

// scrape gets /metrics with a token (none when empty) and parses it with
// Prometheus's own text parser.
func scrape(t *testing.T, base, token string) map[string]*dto.MetricFamily {
	t.Helper()
	req, err := http.NewRequest("GET", base+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/plain")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %s", resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	return fams
}

// sample returns the value of the sample of a family whose labels include
// those given (name, value, ...): a counter's or a gauge's value, a
// histogram's count; ok is false when there is none.
func sample(fams map[string]*dto.MetricFamily, name string, labels ...string) (v float64, ok bool) {
	f := fams[name]
	if f == nil {
		return 0, false
	}
next:
	for _, m := range f.Metric {
		for i := 0; i+1 < len(labels); i += 2 {
			found := false
			for _, l := range m.Label {
				if l.GetName() == labels[i] && l.GetValue() == labels[i+1] {
					found = true
				}
			}
			if !found {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		}
	}
	return 0, false
}

// sum adds up the values of every sample of a counter family.
func sum(fams map[string]*dto.MetricFamily, name string) float64 {
	total := 0.0
	if f := fams[name]; f != nil {
		for _, m := range f.Metric {
			total += m.Counter.GetValue()
		}
	}
	return total
}

// TestMetrics runs tasks, posts data events and sends an alert on a
// server with a simulated clock, then checks that /metrics tells exactly
// what happened.
func TestMetrics(t *testing.T) {
	t.Parallel()
	f := setup(t, simulateFrom("2026-06-01T09:00:30Z"))
	f.mustRun("gnomon", "def", "-f", f.file("m.def", `insert_task: tick
type: callable
command: true
out_log_file: @DIR@/tick.out
err_log_file: @DIR@/tick.err
cron: * * * * *

insert_task: bad
type: callable
command: false
out_log_file: @DIR@/bad.out
err_log_file: @DIR@/bad.err
alert_on: failure
alert_to: ops@example.com
`))
	f.mustRun("gnomon", "def", "-f", "../examples/configurations.json")
	// Two occurrences of tick, each on its instant: 09:01 and 09:02.
	f.mustRun("gnomon", "clock", "advance", "--to", "2026-06-01T09:02:00Z")
	f.mustRun("schd_event", "-j", "bad", "-e", "start")
	f.waitStatus("bad", "failure")
	// Seven events, of which two trigger SCHEDULING_CONFIGURATION_1 (see
	// TestSeedTableOverHTTP); it runs no command.
	const dir = "/scheduling_configuraiton_1/directory/"
	for _, e := range []string{
		event("FILE", "2021-01-01 11:59:59", dir+"path/file_1.txt"),
		event("FILE", "2021-01-01 12:04:59", dir+"path/file_2.txt"),
		event("FILE", "2021-01-01 12:14:50", dir+"path/file_3.txt"),
		event("FILE", "2021-01-01 12:15:28", dir+"an_other_path/file_3.txt"),
		event("TIME_BASED", "2021-01-01 12:30:00", "cron"),
		event("TIME_BASED", "2021-01-01T13:10:00Z", "cron"),
		event("TIME_BASED", "2021-01-01T13:30:00.000Z", "cron"),
	} {
		if code, v, _ := postRaw(t, f.client.Base, "POST", "/events", "application/json", e); code != http.StatusAccepted {
			t.Fatalf("POST /events %s: %d %v", e, code, v)
		}
	}
	// The alert of bad's failure is attempted off the loop: wait for it.
	var fams map[string]*dto.MetricFamily
	f.waitFor("the alert's attempt", func() bool {
		fams = scrape(t, f.client.Base, f.client.Token)
		n, _ := sample(fams, "gnomon_alert_attempts_total", "result", "not_configured")
		return n > 0
	})

	want := []struct {
		name   string
		labels []string
		value  float64
	}{
		{"gnomon_runs_started_total", nil, 3},
		{"gnomon_runs_ended_total", []string{"status", "success", "result", "normal"}, 2},
		{"gnomon_runs_ended_total", []string{"status", "failure", "result", "normal"}, 1},
		{"gnomon_fires_total", []string{"trigger", "time", "fate", "ran"}, 2},
		{"gnomon_fires_total", []string{"trigger", "time", "fate", "skipped"}, 0},
		{"gnomon_fires_total", []string{"trigger", "time", "fate", "missed"}, 0},
		{"gnomon_fires_total", []string{"trigger", "event", "fate", "ran"}, 2},
		{"gnomon_fire_lateness_seconds", nil, 2},
		{"gnomon_data_events_total", nil, 7},
		{"gnomon_data_triggered_total", nil, 2},
		{"gnomon_alert_attempts_total", []string{"result", "not_configured"}, 1},
		{"gnomon_alert_attempts_total", []string{"result", "sent"}, 0},
		{"gnomon_runs_running", nil, 0},
		{"gnomon_runs_ready", nil, 0},
		{"gnomon_worker_slots", nil, 4},
		{"gnomon_worker_slots_busy", nil, 0},
		{"gnomon_store_unavailable", nil, 0},
	}
	for _, w := range want {
		if got, ok := sample(fams, w.name, w.labels...); !ok || got != w.value {
			t.Errorf("%s%v = %v (reported: %v), want %v", w.name, w.labels, got, ok, w.value)
		}
	}
	for _, name := range []string{"gnomon_runs_ended_total", "gnomon_fires_total", "gnomon_alert_attempts_total"} {
		if got, want := sum(fams, name), map[string]float64{"gnomon_runs_ended_total": 3, "gnomon_fires_total": 4, "gnomon_alert_attempts_total": 1}[name]; got != want {
			t.Errorf("%s adds up to %v, want %v", name, got, want)
		}
	}
	// The simulated clock stops on each instant: the occurrences were
	// handled on time.
	if h := fams["gnomon_fire_lateness_seconds"].GetMetric()[0].GetHistogram(); h.GetSampleSum() != 0 {
		t.Errorf("fire lateness sums to %vs on a simulated clock", h.GetSampleSum())
	}
	// Each request and run was committed: the commits journaled at least
	// the seven events, the two definitions, the start and the three ends.
	if h := fams["gnomon_commit_events"].GetMetric()[0].GetHistogram(); h.GetSampleSum() < 13 || h.GetSampleCount() == 0 ||
		fams["gnomon_commit_duration_seconds"].GetMetric()[0].GetHistogram().GetSampleCount() != h.GetSampleCount() {
		t.Errorf("commits: %v events in %v commits", h.GetSampleSum(), h.GetSampleCount())
	}
	if n, _ := sample(fams, "gnomon_journal_entries"); n < 13 {
		t.Errorf("gnomon_journal_entries = %v", n)
	}
	// A director that is no worker has no supervisors of its own.
	if _, ok := sample(fams, "gnomon_supervisors", "state", "spare"); ok == onCluster() {
		t.Errorf("gnomon_supervisors{state=spare} reported: %v, on a director without workers: %v", ok, onCluster())
	}
	for _, name := range []string{"go_goroutines", "process_resident_memory_bytes"} {
		if fams[name] == nil {
			t.Errorf("%s not reported", name)
		}
	}
	// No label names a task.
	for name, fam := range fams {
		for _, m := range fam.Metric {
			for _, l := range m.Label {
				if strings.Contains(l.GetValue(), "tick") || strings.Contains(l.GetValue(), "SCHEDULING") {
					t.Errorf("%s has a label naming a task: %s=%s", name, l.GetName(), l.GetValue())
				}
			}
		}
	}
}

// TestMetricsAccess checks that /metrics needs a token with the read
// permission, unless the server makes it public.
func TestMetricsAccess(t *testing.T) {
	t.Parallel()
	f := setup(t)
	if status, msg, _ := send(t, f.client.Base, "", "GET", "/metrics", ""); status != http.StatusUnauthorized {
		t.Errorf("/metrics without a token: %d %s", status, msg)
	}
	if status, msg, _ := send(t, f.client.Base, f.token("feeder", auth.Ingest), "GET", "/metrics", ""); status != http.StatusForbidden {
		t.Errorf("/metrics with an ingest token: %d %s", status, msg)
	}
	scrape(t, f.client.Base, f.token("viewer", auth.Viewer))

	g := setup(t, func(c *ServerConfig) { c.MetricsPublic = true })
	fams := scrape(t, g.client.Base, "")
	if _, ok := sample(fams, "gnomon_runs_started_total"); !ok {
		t.Error("public /metrics has no gnomon_runs_started_total")
	}
	// Only /metrics is public.
	if status, msg, _ := send(t, g.client.Base, "", "GET", "/api/v1/info", ""); status != http.StatusUnauthorized {
		t.Errorf("/api/v1/info without a token on a server with public metrics: %d %s", status, msg)
	}
}
