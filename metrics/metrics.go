// Package metrics exposes what happens inside gnomon as Prometheus
// metrics, with client_golang. Metrics implements scheduler.Observer with
// counters and histograms the scheduler's loop moves as it goes, and reads
// the gauges (runs in flight and ready, worker slots, supervisors, the
// journal) only when it is scraped. docs/metrics.md lists every metric.
//
// No label names a task: a server may hold 10^5 of them, and a series per
// task would make every scrape as large. Labels take a few values each
// (a trigger kind, a fate, a run's status and result, an alert's result).
//
// The scheduler and the engine know nothing of Prometheus: they tell an
// Observer and offer readings; this package is the one that imports
// client_golang, with the root package, which assembles it.
package metrics

import (
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/scheduler"
	"github.com/gnomon-sched/gnomon/store"
)

// Metrics are gnomon's metrics, registered with one Registerer. Its
// Observer methods are safe for concurrent use and allocate nothing for
// the label values gnomon records.
type Metrics struct {
	fires    *prometheus.CounterVec
	lateness prometheus.Histogram
	started  prometheus.Counter
	ended    *prometheus.CounterVec
	data     prometheus.Counter
	trigd    prometheus.Counter
	commits  prometheus.Histogram
	commitT  prometheus.Histogram
	alerts   *prometheus.CounterVec
	pruned   *prometheus.CounterVec
	pruneErr prometheus.Counter
	requests *prometheus.HistogramVec

	// The children of the vectors for the label values gnomon records,
	// made once: a lookup in a vector hashes its labels under a lock,
	// which the loop would pay for every event. Written only by New.
	fireOf  map[fireKey]prometheus.Counter
	endOf   map[endKey]prometheus.Counter
	alertOf map[scheduler.AlertResult]prometheus.Counter

	read atomic.Pointer[func() Reading]
}

type fireKey struct {
	by   scheduler.Trigger
	fate job.Fate
}

type endKey struct {
	status job.Status
	result job.Result
}

var (
	_ scheduler.Observer      = (*Metrics)(nil)
	_ scheduler.PruneObserver = (*Metrics)(nil)
)

// Reading is what the gauges report, read at each scrape.
type Reading struct {
	// Scheduler are the scheduler's own readings.
	Scheduler scheduler.Gauges
	// Running is the number of runs in flight, as the runner counts them.
	Running int
	// Supervisors tells whether the runner has run supervisors; then
	// SupervisorsRunning and SupervisorsSpare count them (see
	// executor.Executor.Supervisors).
	Supervisors                          bool
	SupervisorsRunning, SupervisorsSpare int
	// Unavailable is set while the database cannot take a commit.
	Unavailable bool
}

// Label values gnomon records; others are counted too, at the cost of a
// lookup in the vector.
var (
	triggers = []scheduler.Trigger{scheduler.TriggerTime, scheduler.TriggerEvent, scheduler.TriggerTimeperiod}
	fates    = []job.Fate{job.FateRan, job.FateSkipped, job.FateMissed}
	// A run succeeds only by ending normally; it is aborted when killed.
	ends = []endKey{{job.Success, job.ResultNormal}, {job.Failure, job.ResultNormal}, {job.Failure, job.ResultKilled},
		{job.Failure, job.ResultLaunch}, {job.Failure, job.ResultLost}, {job.Failure, job.ResultInternal}, {job.Aborted, job.ResultKilled}}
	alertResults = []scheduler.AlertResult{scheduler.AlertSent, scheduler.AlertRetrying, scheduler.AlertGivenUp,
		scheduler.AlertRefused, scheduler.AlertNotConfigured}
)

// New makes gnomon's metrics and registers them with reg. Gauges are
// reported once Read has said where they come from. It fails when reg
// already holds metrics of the same names: two schedulers need a
// registerer each, such as one registry wrapped for each with a label of
// its own (prometheus.WrapRegistererWith).
func New(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		fires: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gnomon_fires_total",
			Help: "Fates recorded for occurrences of time triggers, periods of timeperiod trees and triggers of configurations by data events.",
		}, []string{"trigger", "fate"}),
		lateness: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "gnomon_fire_lateness_seconds",
			Help:    "How long after its instant, by the scheduler's clock, an occurrence of a time trigger was handled (those that ran or were skipped).",
			Buckets: []float64{0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 15, 60},
		}),
		started: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "gnomon_runs_started_total",
			Help: "Runs handed to the runner.",
		}),
		ended: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gnomon_runs_ended_total",
			Help: "Runs whose end their runner reported, by status and result.",
		}, []string{"status", "result"}),
		data: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "gnomon_data_events_total",
			Help: "Data events accepted (POST /events).",
		}),
		trigd: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "gnomon_data_triggered_total",
			Help: "Configurations triggered by data events.",
		}),
		commits: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "gnomon_commit_events",
			Help:    "Events journaled by each group commit.",
			Buckets: prometheus.ExponentialBuckets(1, 2, 10), // 1 to 512, the most a commit takes
		}),
		commitT: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "gnomon_commit_duration_seconds",
			Help:    "How long the store took to make each group commit durable.",
			Buckets: []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5},
		}),
		alerts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gnomon_alert_attempts_total",
			Help: "Attempts at sending an alert, by result.",
		}, []string{"result"}),
		pruned: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gnomon_pruned_rows_total",
			Help: "Rows the pruner removed, past their retention horizon, by kind.",
		}, []string{"kind"}),
		pruneErr: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "gnomon_prune_failures_total",
			Help: "Passes of the pruner that failed (they are retried at the next pass).",
		}),
		requests: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "gnomon_http_request_duration_seconds",
			Help:    "How long the server took to answer each HTTP request, from its headers read to its answer written, by route and status class.",
			Buckets: []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10},
		}, []string{"route", "code"}),
		fireOf:  map[fireKey]prometheus.Counter{},
		endOf:   map[endKey]prometheus.Counter{},
		alertOf: map[scheduler.AlertResult]prometheus.Counter{},
	}
	// Every child made here is reported from zero, so that a rate over
	// a dashboard's range has a start.
	for _, by := range triggers {
		for _, f := range fates {
			if f == job.FateMissed && by != scheduler.TriggerTime {
				continue // only time triggers miss occurrences
			}
			m.fireOf[fireKey{by, f}] = m.fires.WithLabelValues(string(by), string(f))
		}
	}
	for _, k := range ends {
		m.endOf[k] = m.ended.WithLabelValues(k.status.String(), string(k.result))
	}
	for _, r := range alertResults {
		m.alertOf[r] = m.alerts.WithLabelValues(string(r))
	}
	for _, k := range pruneKinds {
		m.pruned.WithLabelValues(k)
	}
	for _, c := range []prometheus.Collector{m.fires, m.lateness, m.started, m.ended, m.data, m.trigd, m.commits, m.commitT, m.alerts,
		m.pruned, m.pruneErr, m.requests, gauges{m}} {
		if err := reg.Register(c); err != nil {
			if are := (prometheus.AlreadyRegisteredError{}); errors.As(err, &are) {
				return nil, fmt.Errorf("metrics: already registered (give each scheduler a registerer of its own, or wrap one registry with a label for each): %w", err)
			}
			return nil, fmt.Errorf("metrics: %w", err)
		}
	}
	return m, nil
}

// Read sets where the gauges come from: fn is called at each scrape. Until
// it is set, the gauges are not reported.
func (m *Metrics) Read(fn func() Reading) { m.read.Store(&fn) }

// NewRegistry returns a registry with the collectors of the Go runtime
// and of the process: the registry of a program that has none of its own.
func NewRegistry() *prometheus.Registry {
	r := prometheus.NewRegistry()
	r.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return r
}

// Handler returns the handler of /metrics: what g gathers, in the text
// format (or another that the scraper asks for).
func Handler(g prometheus.Gatherer) http.Handler {
	return promhttp.HandlerFor(g, promhttp.HandlerOpts{})
}

// Fired implements scheduler.Observer.
func (m *Metrics) Fired(by scheduler.Trigger, fate job.Fate, late time.Duration) {
	c, ok := m.fireOf[fireKey{by, fate}]
	if !ok {
		c = m.fires.WithLabelValues(string(by), string(fate))
	}
	c.Inc()
	// A missed occurrence was found late because the scheduler was not
	// running: that is downtime, not how late the loop was.
	if by == scheduler.TriggerTime && fate != job.FateMissed {
		m.lateness.Observe(max(late, 0).Seconds())
	}
}

// RunStarted implements scheduler.Observer.
func (m *Metrics) RunStarted() { m.started.Inc() }

// RunEnded implements scheduler.Observer.
func (m *Metrics) RunEnded(status job.Status, result job.Result) {
	c, ok := m.endOf[endKey{status, result}]
	if !ok {
		c = m.ended.WithLabelValues(status.String(), string(result))
	}
	c.Inc()
}

// DataApplied implements scheduler.Observer.
func (m *Metrics) DataApplied(triggered int) {
	m.data.Inc()
	if triggered > 0 {
		m.trigd.Add(float64(triggered))
	}
}

// Committed implements scheduler.Observer.
func (m *Metrics) Committed(events int, took time.Duration) {
	m.commits.Observe(float64(events))
	m.commitT.Observe(took.Seconds())
}

// Alerted implements scheduler.Observer.
func (m *Metrics) Alerted(result scheduler.AlertResult) {
	c, ok := m.alertOf[result]
	if !ok {
		c = m.alerts.WithLabelValues(string(result))
	}
	c.Inc()
}

// Requested records an HTTP request the server answered: its route (the
// pattern that took it, such as "GET /api/v1/tasks/{name}"), its status
// and how long it took. It fits api.Server.ObserveFunc. A stream of
// change notices is counted when it ends, with the time it was open.
func (m *Metrics) Requested(route string, status int, took time.Duration) {
	m.requests.WithLabelValues(route, codeClass(status)).Observe(took.Seconds())
}

// codeClass is the code label of a status: 2xx, 3xx, 4xx or 5xx.
func codeClass(status int) string {
	switch {
	case status < 300:
		return "2xx"
	case status < 400:
		return "3xx"
	case status < 500:
		return "4xx"
	}
	return "5xx"
}

// pruneKinds are the kind label's values of gnomon_pruned_rows_total.
var pruneKinds = []string{"journal", "runs", "fires", "audit", "alerts", "node_log"}

// Pruned implements scheduler.PruneObserver.
func (m *Metrics) Pruned(n store.Pruned, err error) {
	if err != nil {
		m.pruneErr.Inc()
	}
	for i, v := range []int64{n.Journal, n.Runs, n.Fires, n.Audit, n.Alerts, n.NodeLog} {
		if v > 0 {
			m.pruned.WithLabelValues(pruneKinds[i]).Add(float64(v))
		}
	}
}

// gauges collects the gauges from a Reading, taken once per scrape.
type gauges struct{ m *Metrics }

var (
	descRunning = prometheus.NewDesc("gnomon_runs_running",
		"Runs in flight, as the runner counts them (commands, functions and timeperiod nodes; runs attached after a restart included).", nil, nil)
	descReady = prometheus.NewDesc("gnomon_runs_ready",
		"Tasks ready to start, waiting for a worker slot (status ready).", nil, nil)
	descSlots = prometheus.NewDesc("gnomon_worker_slots",
		"Worker slots: the most runs of tasks at once.", nil, nil)
	descBusy = prometheus.NewDesc("gnomon_worker_slots_busy",
		"Worker slots held by a run.", nil, nil)
	descSupervisors = prometheus.NewDesc("gnomon_supervisors",
		"Run supervisor processes: running a command's run, or spare.", []string{"state"}, nil)
	descJournal = prometheus.NewDesc("gnomon_journal_entries",
		"Entries ever written to the journal, the last one's number: those retention removed count (consecutive data events of one commit share an entry).", nil, nil)
	descUnavailable = prometheus.NewDesc("gnomon_store_unavailable",
		"1 while the database cannot take a commit (changes are refused and the commit is retried), else 0.", nil, nil)
	descResUnits = prometheus.NewDesc("gnomon_resource_units",
		"Units of a resource shared between tasks (its amount).", []string{"resource"}, nil)
	descResHeld = prometheus.NewDesc("gnomon_resource_units_held",
		"Units of a resource held by runs in flight (an exclusive holder holds them all).", []string{"resource"}, nil)
	descResWaiting = prometheus.NewDesc("gnomon_resource_waiting",
		"Ready tasks that wait for a resource they claim.", []string{"resource"}, nil)
	descWatchPosted = prometheus.NewDesc("gnomon_watch_files_total",
		"Settled file versions the file watchers handed to their tasks (a start, or a FILE data event) since the server started.", nil, nil)
)

// Describe implements prometheus.Collector.
func (g gauges) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descRunning, descReady, descSlots, descBusy, descSupervisors, descJournal, descUnavailable,
		descResUnits, descResHeld, descResWaiting, descWatchPosted} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (g gauges) Collect(ch chan<- prometheus.Metric) {
	fn := g.m.read.Load()
	if fn == nil {
		return
	}
	r := (*fn)()
	gauge := func(d *prometheus.Desc, v int64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(v), labels...)
	}
	gauge(descRunning, int64(r.Running))
	gauge(descReady, int64(r.Scheduler.Ready))
	gauge(descSlots, int64(r.Scheduler.Workers))
	gauge(descBusy, int64(r.Scheduler.Busy))
	gauge(descJournal, r.Scheduler.Journal)
	ch <- prometheus.MustNewConstMetric(descWatchPosted, prometheus.CounterValue, float64(r.Scheduler.FilesPosted))
	unavailable := int64(0)
	if r.Unavailable {
		unavailable = 1
	}
	gauge(descUnavailable, unavailable)
	if r.Supervisors {
		gauge(descSupervisors, int64(r.SupervisorsRunning), "running")
		gauge(descSupervisors, int64(r.SupervisorsSpare), "spare")
	}
	// A label per resource: resources are defined by hand, a few.
	for _, res := range r.Scheduler.Resources {
		held := res.Held
		if res.Exclusive > 0 {
			held = res.Amount
		}
		gauge(descResUnits, int64(res.Amount), res.Name)
		gauge(descResHeld, int64(held), res.Name)
		gauge(descResWaiting, int64(res.Waiting), res.Name)
	}
}
