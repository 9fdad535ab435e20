package metrics

import (
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/gnomon-sched/gnomon/engine"
	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/scheduler"
	"github.com/gnomon-sched/gnomon/store"
)

func setup(t *testing.T) (*Metrics, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewRegistry()
	m, err := New(reg)
	if err != nil {
		t.Fatal(err)
	}
	return m, reg
}

// TestObserverAllocates checks that what the loop calls for each event
// allocates nothing: it runs for every data event of the ingest path.
func TestObserverAllocates(t *testing.T) {
	m, _ := setup(t)
	calls := map[string]func(){
		"Fired":       func() { m.Fired(scheduler.TriggerTime, job.FateRan, time.Millisecond) },
		"FiredEvent":  func() { m.Fired(scheduler.TriggerEvent, job.FateSkipped, 0) },
		"RunStarted":  func() { m.RunStarted() },
		"RunEnded":    func() { m.RunEnded(job.Failure, job.ResultLost) },
		"DataApplied": func() { m.DataApplied(3) },
		"Committed":   func() { m.Committed(17, 2*time.Millisecond) },
		"Alerted":     func() { m.Alerted(scheduler.AlertRetrying) },
	}
	for name, call := range calls {
		if n := testing.AllocsPerRun(100, call); n != 0 {
			t.Errorf("%s allocates %v times a call", name, n)
		}
	}
}

// TestCounts checks what each Observer call moves.
func TestCounts(t *testing.T) {
	m, _ := setup(t)
	m.Fired(scheduler.TriggerTime, job.FateRan, 2*time.Millisecond)
	m.Fired(scheduler.TriggerTime, job.FateSkipped, 0)
	m.Fired(scheduler.TriggerTime, job.FateMissed, time.Hour) // downtime: no lateness
	m.Fired(scheduler.TriggerEvent, job.FateRan, 0)           // not a time trigger: no lateness
	m.RunStarted()
	m.RunEnded(job.Aborted, job.ResultLost) // a pair made on demand
	m.DataApplied(0)
	m.DataApplied(2)
	m.Alerted("unheard-of")
	for _, c := range []struct {
		got, want float64
		what      string
	}{
		{testutil.ToFloat64(m.fires.WithLabelValues("time", "ran")), 1, "time ran"},
		{testutil.ToFloat64(m.fires.WithLabelValues("time", "missed")), 1, "time missed"},
		{testutil.ToFloat64(m.fires.WithLabelValues("event", "ran")), 1, "event ran"},
		{testutil.ToFloat64(m.started), 1, "started"},
		{testutil.ToFloat64(m.ended.WithLabelValues("aborted", "lost")), 1, "aborted lost"},
		{testutil.ToFloat64(m.data), 2, "data events"},
		{testutil.ToFloat64(m.trigd), 2, "triggered"},
		{testutil.ToFloat64(m.alerts.WithLabelValues("unheard-of")), 1, "alert"},
		{float64(testutil.CollectAndCount(m.lateness)), 1, "lateness series"},
	} {
		if c.got != c.want {
			t.Errorf("%s: %v, want %v", c.what, c.got, c.want)
		}
	}
}

// TestGauges checks that the gauges are read at each scrape, once Read
// said where from.
func TestGauges(t *testing.T) {
	m, reg := setup(t)
	if n, err := testutil.GatherAndCount(reg, "gnomon_runs_running"); err != nil || n != 0 {
		t.Fatalf("before Read: %d series, %v", n, err)
	}
	reading := Reading{Scheduler: scheduler.Gauges{Ready: 2, Workers: 10, Busy: 10, Journal: 1234}, Running: 11}
	m.Read(func() Reading { return reading })
	for name, want := range map[string]float64{"gnomon_runs_running": 11, "gnomon_runs_ready": 2, "gnomon_worker_slots": 10,
		"gnomon_worker_slots_busy": 10, "gnomon_journal_entries": 1234, "gnomon_store_unavailable": 0} {
		if got := gathered(t, reg, name); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	if n, _ := testutil.GatherAndCount(reg, "gnomon_supervisors"); n != 0 {
		t.Errorf("supervisors of a runner without any: %d series", n)
	}
	reading.Running, reading.Unavailable, reading.Supervisors, reading.SupervisorsSpare = 3, true, true, 8
	if got := gathered(t, reg, "gnomon_runs_running"); got != 3 {
		t.Errorf("gnomon_runs_running read again = %v, want 3", got)
	}
	if got := gathered(t, reg, "gnomon_store_unavailable"); got != 1 {
		t.Errorf("gnomon_store_unavailable = %v, want 1", got)
	}
	if n, _ := testutil.GatherAndCount(reg, "gnomon_supervisors"); n != 2 {
		t.Errorf("supervisors: %d series, want running and spare", n)
	}
	if n, _ := testutil.GatherAndCount(reg, "gnomon_resource_units"); n != 0 {
		t.Errorf("resources of a scheduler without any: %d series", n)
	}
	reading.Scheduler.Resources = []engine.Resource{{Name: "warehouse", Amount: 2, Held: 2, Waiting: 18}}
	for name, want := range map[string]float64{"gnomon_resource_units": 2, "gnomon_resource_units_held": 2, "gnomon_resource_waiting": 18} {
		if got := gathered(t, reg, name); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	reading.Scheduler.Resources = []engine.Resource{{Name: "ledger", Amount: 1, Exclusive: 1}}
	if got := gathered(t, reg, "gnomon_resource_units_held"); got != 1 {
		t.Errorf("an exclusive holder holds every unit: %v", got)
	}
}

func gathered(t *testing.T, g prometheus.Gatherer, name string) float64 {
	t.Helper()
	fams, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() == name {
			return f.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatalf("%s not gathered", name)
	return 0
}

// TestRegisteredTwice checks that two schedulers on one registerer are
// refused, and that two registerers wrapping one registry, each with a
// label of its own, serve.
func TestRegisteredTwice(t *testing.T) {
	_, reg := setup(t)
	var are prometheus.AlreadyRegisteredError
	if _, err := New(reg); !errors.As(err, &are) {
		t.Errorf("second New on one registry: %v", err)
	}
	shared := prometheus.NewRegistry()
	for _, name := range []string{"a", "b"} {
		if _, err := New(prometheus.WrapRegistererWith(prometheus.Labels{"scheduler": name}, shared)); err != nil {
			t.Errorf("New on a registerer wrapped with scheduler=%s: %v", name, err)
		}
	}
	if n, err := testutil.GatherAndCount(shared, "gnomon_runs_started_total"); err != nil || n != 2 {
		t.Errorf("two wrapped schedulers: %d series of gnomon_runs_started_total, %v", n, err)
	}
}

// TestDashboard checks that the Grafana dashboard in examples/grafana is a
// dashboard and has a panel for every family gnomon reports.
func TestDashboard(t *testing.T) {
	b, err := os.ReadFile("../examples/grafana/gnomon.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Targets []struct{ Expr string }
		}
	}
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatalf("examples/grafana/gnomon.json: %v", err)
	}
	var exprs []string
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			exprs = append(exprs, tg.Expr)
		}
	}
	m, reg := setup(t)
	m.Read(func() Reading { return Reading{Supervisors: true} })
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if !slices.ContainsFunc(exprs, func(e string) bool { return strings.Contains(e, f.GetName()) }) {
			t.Errorf("no panel of the dashboard shows %s", f.GetName())
		}
	}
}

// TestPruned checks what a pass of the pruner moves: the rows by kind,
// and a failed pass.
func TestPruned(t *testing.T) {
	m, _ := setup(t)
	m.Pruned(store.Pruned{Journal: 500, Runs: 3}, nil)
	m.Pruned(store.Pruned{Runs: 2}, errors.New("disk I/O error"))
	for _, c := range []struct {
		got, want float64
		what      string
	}{
		{testutil.ToFloat64(m.pruned.WithLabelValues("journal")), 500, "journal"},
		{testutil.ToFloat64(m.pruned.WithLabelValues("runs")), 5, "runs"},
		{testutil.ToFloat64(m.pruned.WithLabelValues("node_log")), 0, "node_log"},
		{testutil.ToFloat64(m.pruneErr), 1, "failures"},
	} {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.what, c.got, c.want)
		}
	}
}
