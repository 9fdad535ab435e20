package main

import (
	"cmp"
	"context"
	"database/sql"
	"flag"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gnomon-sched/gnomon/api"
	"github.com/gnomon-sched/gnomon/auth"
	"github.com/gnomon-sched/gnomon/internal/bench"
)

// storm: N tasks due at the same instant (a one-shot start_date), each
// running `true`, on a server with W worker slots, as at the top of the
// hour at month end. In one run it measures how fast the queue drains
// against exec.Command("true") at the same concurrency, how long from the
// instant to the last run's end, the lateness of an unrelated
// every-second task (critical priority) meanwhile, the latency of the
// reads an operator makes (a task and its runs from the API, the
// overview and a task page of the web UI) during the storm against the
// same reads on the idle server, how long a freeze takes to show in a
// read, how long a manual start of a critical task takes to start, and
// the server's peak resident memory.
func storm(args []string) error {
	fs := flag.NewFlagSet("storm", flag.ExitOnError)
	bin := fs.String("gnomon", "bin/gnomon", "gnomon binary")
	sizes := fs.String("tasks", "10000,100000", "numbers of tasks due at once, comma-separated")
	slots := fs.String("workers", "10,64", "worker slots, comma-separated")
	profile := fs.String("cpuprofile", "", "directory for a CPU profile of each server (storm-N-W.pprof)")
	sustained := fs.Duration("sustained", 0, "instead: run the tasks on a cron every -every for this long, and report each wave")
	every := fs.Duration("every", 5*time.Minute, "with -sustained: the period of the cron (whole minutes)")
	rounds := fs.Int("rounds", 1, "storms of each size")
	base := fs.String("dir", "", "directory under which each server's data directory is made, as an installation's /var/lib (default: the system's temporary directory)")
	fs.Parse(args)
	if *sustained > 0 {
		for _, n := range counts(*sizes) {
			for _, w := range counts(*slots) {
				if err := stormWaves(*bin, n, w, *every, *sustained); err != nil {
					return fmt.Errorf("sustained storm of %d tasks on %d slots: %w", n, w, err)
				}
			}
		}
		return nil
	}
	fmt.Printf("\n## fire storm: N tasks running `true` due at one instant\n")
	fmt.Printf("# machine: %d CPUs, %s, %s/%s\n", runtime.NumCPU(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
	for _, n := range counts(*sizes) {
		for _, w := range counts(*slots) {
			for range *rounds {
				if err := stormRound(*bin, *base, n, w, *profile); err != nil {
					return fmt.Errorf("storm of %d tasks on %d slots: %w", n, w, err)
				}
			}
		}
	}
	return nil
}

// stormReads are the reads timed on the idle server and during the
// storm.
var stormReads = []string{"api task", "api runs", "ui overview", "ui task"}

func stormRound(bin, under string, n, workers int, profile string) error {
	dir, err := os.MkdirTemp(under, "gnomon-bench-storm-")
	if err != nil {
		return err
	}
	var env []string
	if profile != "" {
		env = []string{"GNOMON_CPUPROFILE=" + filepath.Join(profile, fmt.Sprintf("storm-%d-%d.pprof", n, workers))}
	}
	s, err := startServerEnv(bin, dir, env, "--workers", fmt.Sprint(workers))
	if err != nil {
		os.RemoveAll(dir)
		return err
	}
	defer s.close()
	ctx := context.Background()
	logs := filepath.Join(dir, "logs")
	side := fmt.Sprintf(`insert_task: storm_tick
type: callable
command: true
out_log_file: %[1]s/tick.out
err_log_file: %[1]s/tick.err
priority: critical
cron: * * * * * *

insert_task: storm_probe
type: callable
command: true
out_log_file: %[1]s/probe.out
err_log_file: %[1]s/probe.err

insert_task: storm_urgent
type: callable
command: true
out_log_file: %[1]s/urgent.out
err_log_file: %[1]s/urgent.err
priority: critical
`, logs)
	if _, err := s.client.Define(ctx, "side.def", side, false); err != nil {
		return fmt.Errorf("define: %w", err)
	}
	// The tasks are defined for tomorrow first, then moved to the
	// instant: the move takes about as long as the definition did, which
	// tells how far ahead the instant must be.
	began := time.Now()
	far := began.Add(24 * time.Hour)
	if err := s.define(stormTasks(logs, far), n, 10_000); err != nil {
		return fmt.Errorf("define: %w", err)
	}
	took := time.Since(began)

	cookie, err := bench.SignIn(ctx, "http://"+s.addr, mustRead(filepath.Join(dir, auth.AdminTokenFile)))
	if err != nil {
		return err
	}
	rd := &stormReader{base: "http://" + s.addr, token: s.client.Token, cookie: cookie, http: &http.Client{Timeout: time.Minute}}
	m0, err := rd.metrics(ctx)
	if err != nil {
		return err
	}
	idle := map[string][]time.Duration{}
	for range 100 {
		if err := rd.all(ctx, idle); err != nil {
			return err
		}
	}

	m1, err := rd.metrics(ctx)
	if err != nil {
		return err
	}

	at := time.Now().Add(took*3/2 + 5*time.Second).Truncate(time.Second).Add(time.Second)
	if err := s.define(stormMove(at), n, 10_000); err != nil {
		return fmt.Errorf("move to the instant: %w", err)
	}
	if lead := time.Until(at); lead < time.Second {
		return fmt.Errorf("the tasks were moved to %s only %s before it: the machine is too slow for this size", at.Format(time.TimeOnly), lead)
	}
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "gnomon.db")+"?_pragma=query_only(1)&_pragma=busy_timeout(10000)")
	if err != nil {
		return err
	}
	defer db.Close()
	peak := &peakRSS{pid: s.cmd.Process.Pid}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { peak.watch(stop) })
	time.Sleep(time.Until(at))

	// The operator's reads, over the whole storm.
	during := map[string][]time.Duration{}
	var readErr error
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if err := rd.all(ctx, during); err != nil {
				readErr = err
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
	// A second into the storm: a freeze, then a manual start of a
	// critical task, each timed until a read shows it.
	time.Sleep(time.Second)
	freeze, err := rd.until(ctx, "storm_probe", "freeze", func(v *api.TaskView) bool { return v.State.Status.String() == "frozen" })
	if err != nil {
		return err
	}
	// Its run of `true` may start and end between two reads: a start
	// time (it never ran before) shows it as well as a run in flight.
	start, err := rd.until(ctx, "storm_urgent", "start", func(v *api.TaskView) bool { return v.State.RunID != 0 || !v.State.Start.IsZero() })
	if err != nil {
		return err
	}
	ended, first, last, err := drained(db, n, at.Add(10*time.Minute+time.Duration(n)*20*time.Millisecond))
	close(stop)
	wg.Wait()
	if err != nil {
		return err
	}
	if readErr != nil {
		return readErr
	}
	m2, err := rd.metrics(ctx)
	if err != nil {
		return err
	}
	fireLate, runLate, missed, err := tickLateness(db, at, last)
	if err != nil {
		return err
	}
	commits, err := rd.commits(ctx)
	if err != nil {
		return err
	}
	base := rawExec(workers, min(n, 20_000)/workers*workers)

	rate := float64(ended) / last.Sub(first).Seconds()
	fmt.Printf("\n### %d tasks due at once, %d worker slots\n", n, workers)
	fmt.Printf("  %-30s %8.0f runs/s; shell baseline %.0f runs/s; ratio %.3f\n", "drain", rate, base, rate/base)
	fmt.Printf("  %-30s %8.2f s (first start %.2f s after it)\n", "instant to last run's end", last.Sub(at).Seconds(), first.Sub(at).Seconds())
	fmt.Printf("  %-30s p50 %.1f ms, p99 %.1f ms, max %.1f ms over %d fires\n", "every-second task: fire late",
		pctD(fireLate, 50), pctD(fireLate, 99), pctD(fireLate, 100), len(fireLate))
	fmt.Printf("  %-30s p50 %.1f ms, p99 %.1f ms, max %.1f ms over %d runs; %d occurrences without a run\n", "every-second task: run late",
		pctD(runLate, 50), pctD(runLate, 99), pctD(runLate, 100), len(runLate), missed)
	for _, k := range stormReads {
		i, d := idle[k], during[k]
		fmt.Printf("  %-30s idle p50 %.1f p99 %.1f ms; storm p50 %.1f p99 %.1f ms (%d reads); p99 ratio %.2f\n", "read: "+k,
			pctD(i, 50), pctD(i, 99), pctD(d, 50), pctD(d, 99), len(d), pctD(d, 99)/pctD(i, 99))
	}
	idleServer, stormServer := serverP99(m0, m1), serverP99(m1, m2)
	for _, route := range slices.Sorted(maps.Keys(stormServer)) {
		if strings.Contains(route, "metrics") {
			continue
		}
		i, d := idleServer[route], stormServer[route]
		fmt.Printf("  %-30s idle p99 ≤ %g ms (%.0f); storm p99 ≤ %g ms (%.0f)\n", "server: "+route, i[0], i[1], d[0], d[1])
	}
	fmt.Printf("  %-30s %8.1f ms\n", "freeze visible in a read", freeze.Seconds()*1000)
	fmt.Printf("  %-30s %8.1f ms\n", "critical manual start", start.Seconds()*1000)
	fmt.Printf("  %-30s %8d MiB\n", "peak RSS", peak.max()/1024)
	fmt.Printf("  %-30s %s\n", "commits", commits)
	return nil
}

// stormWaves runs n tasks on a cron every period (whole minutes) for
// about d, and reports for each wave how long its runs took to drain and
// whether the queue was empty when the next wave came.
func stormWaves(bin string, n, workers int, period, d time.Duration) error {
	mins := int(period / time.Minute)
	if mins < 1 || period%time.Minute != 0 {
		return fmt.Errorf("-every %s: give whole minutes", period)
	}
	s, err := startServer(bin, "--workers", fmt.Sprint(workers))
	if err != nil {
		return err
	}
	defer s.close()
	logs := filepath.Join(s.dir, "logs")
	cron := fmt.Sprintf("*/%d * * * *", mins)
	if err := s.define(func(first, k int) string {
		var b strings.Builder
		for i := first; i < first+k; i++ {
			fmt.Fprintf(&b, "insert_task: st%06d\ntype: callable\ncommand: true\nout_log_file: %s/storm.out\nerr_log_file: %s/storm.err\ncron: %s\n\n", i, logs, logs, cron)
		}
		return b.String()
	}, n, 10_000); err != nil {
		return fmt.Errorf("define: %w", err)
	}
	rd := &stormReader{base: "http://" + s.addr, token: s.client.Token, http: &http.Client{Timeout: time.Minute}}
	fmt.Printf("\n### %d tasks on `%s`, %d worker slots, for %s\n", n, cron, workers, d)
	end := time.Now().Add(d)
	wave := time.Now().Truncate(period).Add(period)
	failed := 0
	for wave.Before(end) {
		base, err := rd.metric(context.Background(), "gnomon_runs_ended_total")
		if err != nil {
			return err
		}
		time.Sleep(time.Until(wave))
		next := wave.Add(period)
		ended := 0.0
		for ended < base+float64(n) && time.Now().Before(next) {
			time.Sleep(100 * time.Millisecond)
			if ended, err = rd.metric(context.Background(), "gnomon_runs_ended_total"); err != nil {
				return err
			}
		}
		if took := time.Since(wave); ended >= base+float64(n) {
			fmt.Printf("  wave %s: %d runs drained in %.1f s (%.0f runs/s), before the next wave\n", wave.Format(time.TimeOnly), n, took.Seconds(), float64(n)/took.Seconds())
		} else {
			failed++
			fmt.Printf("  wave %s: only %.0f of %d runs ended when the next wave came\n", wave.Format(time.TimeOnly), ended-base, n)
		}
		wave = next
	}
	fmt.Printf("  waves that did not drain before the next: %d\n", failed)
	return nil
}

func mustRead(path string) string {
	tok, err := auth.ReadTokenFile(path)
	if err != nil {
		panic(err)
	}
	return tok
}

// stormTasks defines tasks st000000... running true, due once at at.
func stormTasks(logs string, at time.Time) func(first, n int) string {
	return func(first, n int) string {
		var b strings.Builder
		for i := first; i < first+n; i++ {
			fmt.Fprintf(&b, "insert_task: st%06d\ntype: callable\ncommand: true\nout_log_file: %s/storm.out\nerr_log_file: %s/storm.err\nstart_date: %s\n\n",
				i, logs, logs, at.UTC().Format(time.DateTime))
		}
		return b.String()
	}
}

// stormMove moves the tasks of stormTasks to the instant at.
func stormMove(at time.Time) func(first, n int) string {
	return func(first, n int) string {
		var b strings.Builder
		for i := first; i < first+n; i++ {
			fmt.Fprintf(&b, "update_task: st%06d\nstart_date: %s\n\n", i, at.UTC().Format(time.DateTime))
		}
		return b.String()
	}
}

// stormReader makes an operator's reads, one after the other, on
// connections kept alive.
type stormReader struct {
	base, token string
	cookie      *http.Cookie
	http        *http.Client
}

func (r *stormReader) get(ctx context.Context, path string, ui bool) (time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.base+path, nil)
	if err != nil {
		return 0, err
	}
	if ui {
		req.AddCookie(r.cookie)
	} else {
		req.Header.Set("Authorization", "Bearer "+r.token)
	}
	t := time.Now()
	resp, err := r.http.Do(req)
	if err != nil {
		return 0, err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	d := time.Since(t)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("GET %s: %s", path, resp.Status)
	}
	return d, err
}

// all makes each of stormReads once, adding the latencies to into.
func (r *stormReader) all(ctx context.Context, into map[string][]time.Duration) error {
	for i, path := range []string{"/api/v1/tasks/storm_probe", "/api/v1/tasks/storm_tick/runs?count=20", "/", "/tasks/storm_tick"} {
		d, err := r.get(ctx, path, i >= 2)
		if err != nil {
			return err
		}
		into[stormReads[i]] = append(into[stormReads[i]], d)
	}
	return nil
}

// until sends an event to a task and returns how long until a read of
// the task shows ok.
func (r *stormReader) until(ctx context.Context, task, event string, ok func(*api.TaskView) bool) (time.Duration, error) {
	c := &api.Client{Base: r.base, Token: r.token, HTTP: r.http}
	t := time.Now()
	if err := c.Event(ctx, task, event); err != nil {
		return 0, fmt.Errorf("%s %s: %w", event, task, err)
	}
	for deadline := t.Add(time.Minute); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		v, err := c.Task(ctx, task)
		if err != nil {
			return 0, err
		}
		if ok(v) {
			return time.Since(t), nil
		}
	}
	return 0, fmt.Errorf("%s of %s not visible after a minute", event, task)
}

// metrics reads the server's metrics, each series by its name and labels.
func (r *stormReader) metrics(ctx context.Context) (map[string]float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.base+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+r.token)
	resp, err := r.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	return parseMetrics(string(body)), nil
}

// parseMetrics reads metrics in Prometheus's text format: gnomon's
// series, each by its name and labels.
func parseMetrics(body string) map[string]float64 {
	v := map[string]float64{}
	for _, l := range strings.Split(body, "\n") {
		// A label's value may hold spaces (a route's "GET /…"): the value
		// is after the last.
		if i := strings.LastIndexByte(l, ' '); i > 0 && strings.HasPrefix(l, "gnomon_") {
			var x float64
			fmt.Sscan(l[i+1:], &x)
			v[l[:i]] = x
		}
	}
	return v
}

// routeBucket is a bucket of gnomon_http_request_duration_seconds: its
// route and upper bound.
var routeBucket = regexp.MustCompile(`^gnomon_http_request_duration_seconds_bucket\{code="[^"]*",route="([^"]*)",le="([^"]*)"\}$`)

// serverP99 returns the p99 of the server's own time for each route
// between two readings of its metrics, as the bound of the bucket it
// falls in (ms), and how many requests each route answered between them.
func serverP99(before, after map[string]float64) map[string][2]float64 {
	type bucket struct{ le, n float64 }
	per := map[string]map[float64]float64{}
	for k, x := range after {
		m := routeBucket.FindStringSubmatch(k)
		if m == nil || m[2] == "+Inf" {
			continue
		}
		le, _ := strconv.ParseFloat(m[2], 64)
		if per[m[1]] == nil {
			per[m[1]] = map[float64]float64{}
		}
		per[m[1]][le] += x - before[k]
	}
	out := map[string][2]float64{}
	for route, bs := range per {
		var sorted []bucket
		for le, n := range bs {
			sorted = append(sorted, bucket{le, n})
		}
		slices.SortFunc(sorted, func(a, b bucket) int { return cmp.Compare(a.le, b.le) })
		var total float64
		for _, k := range []string{"2xx", "3xx", "4xx", "5xx"} {
			key := fmt.Sprintf("gnomon_http_request_duration_seconds_count{code=%q,route=%q}", k, route)
			total += after[key] - before[key]
		}
		if total == 0 {
			continue
		}
		p99 := math.Inf(1) // past the last bound
		for _, b := range sorted {
			if b.n >= 0.99*total {
				p99 = b.le * 1000
				break
			}
		}
		out[route] = [2]float64{p99, total}
	}
	return out
}

// metric reads one metric: the sum of its series.
func (r *stormReader) metric(ctx context.Context, name string) (float64, error) {
	v, err := r.metrics(ctx)
	sum := 0.0
	for k, x := range v {
		if k == name || strings.HasPrefix(k, name+"{") {
			sum += x
		}
	}
	return sum, err
}

// commits summarises the server's commits from its metrics: how many,
// the events each journaled on average and the mean time each took.
func (r *stormReader) commits(ctx context.Context) (string, error) {
	v, err := r.metrics(ctx)
	if err != nil {
		return "", err
	}
	n := v["gnomon_commit_duration_seconds_count"]
	if n == 0 {
		return "none", nil
	}
	return fmt.Sprintf("%.0f, %.1f events and %.2f ms each on average", n, v["gnomon_commit_events_sum"]/n, v["gnomon_commit_duration_seconds_sum"]/n*1000), nil
}

// drained waits until every storm task's run has ended, and returns how
// many ended, the first start and the last end.
func drained(db *sql.DB, n int, deadline time.Time) (int, time.Time, time.Time, error) {
	for {
		var (
			ended       int
			first, last sql.NullInt64
		)
		err := db.QueryRow(`SELECT count(*), min(start_at), max(end_at) FROM runs WHERE task >= 'st0' AND task < 'st1' AND end_at > 0`).Scan(&ended, &first, &last)
		if err != nil {
			return 0, time.Time{}, time.Time{}, err
		}
		if ended >= n {
			return ended, time.Unix(0, first.Int64), time.Unix(0, last.Int64), nil
		}
		if time.Now().After(deadline) {
			return 0, time.Time{}, time.Time{}, fmt.Errorf("only %d of %d runs ended by %s", ended, n, deadline.Format(time.TimeOnly))
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// tickLateness returns, for the occurrences of the every-second task due
// in [from, to], the fire's lateness (when its fate was decided, minus the
// occurrence) and the run's (its start, minus the occurrence: it also
// waits for a worker slot), and how many occurrences got no run.
func tickLateness(db *sql.DB, from, to time.Time) (fire, run []time.Duration, missed int, err error) {
	rows, err := db.Query(`SELECT f.scheduled, f.at, coalesce(r.start_at, 0) FROM fires f LEFT JOIN runs r ON r.task = f.task AND r.scheduled = f.scheduled
		WHERE f.task = 'storm_tick' AND f.scheduled >= ? AND f.scheduled <= ?`, from.UnixNano(), to.UnixNano())
	if err != nil {
		return nil, nil, 0, err
	}
	defer rows.Close()
	for rows.Next() {
		var due, at, start int64
		if err := rows.Scan(&due, &at, &start); err != nil {
			return nil, nil, 0, err
		}
		fire = append(fire, time.Duration(at-due))
		if start != 0 {
			run = append(run, time.Duration(start-due))
		}
	}
	want := int(to.Truncate(time.Second).Sub(from)/time.Second) + 1
	return fire, run, max(want-len(run), 0), rows.Err()
}

// pctD returns the p-th percentile of l in milliseconds (100: the
// largest), 0 for none.
func pctD(l []time.Duration, p int) float64 {
	if len(l) == 0 {
		return 0
	}
	c := slices.Clone(l)
	slices.Sort(c)
	return c[min(len(c)*p/100, len(c)-1)].Seconds() * 1000
}

// peakRSS samples a process's resident memory until told to stop.
type peakRSS struct {
	pid  int
	mu   sync.Mutex
	peak int // KiB
}

func (p *peakRSS) watch(stop chan struct{}) {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		if k := rssKiB(p.pid); k > 0 {
			p.mu.Lock()
			p.peak = max(p.peak, k)
			p.mu.Unlock()
		}
		select {
		case <-stop:
			return
		case <-t.C:
		}
	}
}

func (p *peakRSS) max() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.peak
}
