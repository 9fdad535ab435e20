package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/gnomon-sched/gnomon/internal/bench"
)

// workers measures a cluster's workers: N tasks due at one instant on a
// director without the worker role, run by 1, 2, 4 worker nodes, each
// held to a share of a core (-node-cpu) as on machines of their own. The
// runs go through PostgreSQL: the director enqueues them, workers claim
// them (FOR UPDATE SKIP LOCKED, woken by NOTIFY) and record their ends,
// and the director reads the ends back.
func workers(args []string) error {
	fs := flag.NewFlagSet("workers", flag.ExitOnError)
	bin := fs.String("gnomon", "bin/gnomon", "gnomon binary")
	pg := fs.String("pg", bench.PGBase(), "PostgreSQL server: the URL of an existing database there to connect to (default $GNOMON_BENCH_PG)")
	n := fs.Int("tasks", 5000, "tasks due at once, each running `true`")
	sizes := fs.String("nodes", "1,2,4", "numbers of worker nodes, comma-separated")
	slots := fs.Int("slots", 10, "runs in flight on each worker (its --workers)")
	nodeCPU := cpuShareFlags(fs, "hold each worker node, with its supervisors and commands, to this share of a core in a CPU cgroup of its own (0: unconfined; the director and PostgreSQL stay unconfined)")
	rounds := fs.Int("rounds", 1, "rounds")
	kind := fs.String("run", "true", "what each task runs: true (the command, under a supervisor) or func (the built-in Go function log, in the worker's process: the claim path without a process)")
	fs.Parse(args)
	if *kind != "true" && *kind != "func" {
		return fmt.Errorf("-run %q: should be true or func", *kind)
	}
	if err := bench.ReachPG(*pg); err != nil {
		return fmt.Errorf("-pg: %w", err)
	}
	ns := counts(*sizes)
	what := map[string]string{"true": "running `true`", "func": "calling the built-in function `log`"}[*kind]
	fmt.Printf("\n## cluster workers: %d tasks %s due at one instant, run by 1 to %d worker nodes of %d slots each\n", *n, what, slices.Max(ns), *slots)
	fmt.Printf("# %s; machine: %d CPUs, %s\n", pgVersion(*pg), runtime.NumCPU(), runtime.Version())
	fmt.Printf("# %s (a worker's supervisors and commands in its group); the director and PostgreSQL unconfined\n", newConfinement(nodeCPU()).describe())
	type figures struct{ rate, director, pgCPU, nodes spread }
	res := make([]figures, len(ns))
	for r := range *rounds {
		for i, k := range ns {
			if busy, waited := waitQuiet(time.Minute); waited > 0 {
				fmt.Printf("  (waited %s for the machine to quiet down: %.0f%% busy)\n", waited.Round(time.Second), 100*busy)
			}
			w, err := workersRound(*bin, *pg, *n, k, *slots, nodeCPU(), *kind == "func")
			if err != nil {
				return fmt.Errorf("%d workers: %w", k, err)
			}
			f := &res[i]
			per := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(*n) }
			f.rate = append(f.rate, w.rate)
			f.director, f.pgCPU, f.nodes = append(f.director, per(w.director)), append(f.pgCPU, per(w.pg)), append(f.nodes, per(w.nodes))
			fmt.Printf("  round %d, %d worker(s): %.0f runs/s (first start %s, last end %s after the instant); CPU: director %s, PostgreSQL's sessions %s, workers %s (throttled %s), machine %s\n",
				r+1, k, w.rate, w.first.Round(time.Millisecond), w.last.Round(time.Millisecond), w.director, w.pg, w.nodes, w.throttled.Round(time.Millisecond), w.machine)
		}
	}
	for i, k := range ns {
		f := res[i]
		fmt.Printf("  %d worker(s):\n", k)
		line("runs started and ended/s", "/s", nil, f.rate)
		line("director's CPU a run", "µs", nil, f.director)
		line("PostgreSQL's CPU a run", "µs", nil, f.pgCPU)
		line("workers' CPU a run (all of it)", "µs", nil, f.nodes)
		line("projected: runs/s a director core", "/s", nil, perCore(f.director))
	}
	for i := 1; i < len(ns); i++ {
		fmt.Printf("  %d workers against %d, the rounds' own ratios: %s\n", ns[i], ns[0], ratios(res[i].rate, res[0].rate))
	}
	return nil
}

// workersWindow is what one round of the workers benchmark measured: the
// rate of runs from the first start to the last end, when those came after
// the instant, and the CPU each part used from the instant to the last
// end.
type workersWindow struct {
	rate                                    float64
	first, last                             time.Duration
	director, pg, nodes, machine, throttled time.Duration
}

// workersRound runs n tasks due at one instant on a fresh database, with a
// director (which is also the clock node: firing one instant costs
// little) and k workers of slots each.
func workersRound(bin, pg string, n, k, slots int, nodeCPU cpuShare, function bool) (w workersWindow, err error) {
	db, drop, err := freshDB(pg)
	if err != nil {
		return w, err
	}
	defer drop()
	// The director bounds the runs in flight in the whole cluster: it
	// must not be what limits k workers.
	director, err := startServer(bin, "--db", db.URL, "--roles", "director,clock", "--node", "dir", "--workers", strconv.Itoa(k*slots))
	if err != nil {
		return w, err
	}
	defer director.close()
	logs := filepath.Join(director.dir, "logs")
	began := time.Now()
	far := began.Add(24 * time.Hour)
	tasks := stormTasks(logs, far)
	if function {
		tasks = funcTasks(far)
	}
	if err := director.define(tasks, n, 10_000); err != nil {
		return w, fmt.Errorf("define: %w", err)
	}
	took := time.Since(began)

	var nodes []*process
	conf := newConfinement(nodeCPU)
	defer func() {
		for _, nd := range nodes {
			nd.stop()
		}
		conf.release()
	}()
	for i := range k {
		data := filepath.Join(director.dir, "w"+strconv.Itoa(i+1))
		if err := os.MkdirAll(data, 0o700); err != nil {
			return w, err
		}
		nd, err := startProcess(bin, []string{"server", "--data", data, "--timezone", "UTC", "--db", db.URL, "--roles", "worker",
			"--node", "w" + strconv.Itoa(i+1), "--workers", strconv.Itoa(slots)}, filepath.Join(data, "node.log"))
		if err != nil {
			return w, err
		}
		nodes = append(nodes, nd)
		conf.confine(nd.cmd.Process.Pid)
	}

	at := time.Now().Add(took*3/2 + 5*time.Second).Truncate(time.Second).Add(time.Second)
	if err := director.define(stormMove(at), n, 10_000); err != nil {
		return w, fmt.Errorf("move to the instant: %w", err)
	}
	if lead := time.Until(at); lead < time.Second {
		return w, fmt.Errorf("the tasks were moved to %s only %s before it: the machine is too slow for this size", at.Format(time.TimeOnly), lead)
	}
	ctx := context.Background()
	monitor, err := pgx.Connect(ctx, pg)
	if err != nil {
		return w, err
	}
	defer monitor.Close(ctx)
	conn, err := pgx.Connect(ctx, db.URL)
	if err != nil {
		return w, err
	}
	defer conn.Close(ctx)
	time.Sleep(time.Until(at) - 200*time.Millisecond)
	cpu := func() (dir, pg, nodes, machine, throttled time.Duration) {
		pg, _ = bench.BackendCPU(ctx, monitor, db.Name)
		return bench.ProcessCPU(director.cmd.Process.Pid), pg, conf.usage(), machineCPU(), conf.throttled()
	}
	d0, p0, n0, m0, t0 := cpu()
	first, last, err := pgDrained(ctx, conn, n, at.Add(10*time.Minute+time.Duration(n)*20*time.Millisecond))
	if err != nil {
		return w, err
	}
	d1, p1, n1, m1, t1 := cpu()
	w.director, w.pg, w.nodes, w.machine, w.throttled = d1-d0, p1-p0, n1-n0, m1-m0, t1-t0
	w.first, w.last = first.Sub(at), last.Sub(at)
	w.rate = float64(n) / last.Sub(first).Seconds()
	return w, nil
}

// pgDrained waits until the n storm tasks' runs have ended in the
// cluster's store, and returns the first start and the last end.
func pgDrained(ctx context.Context, conn *pgx.Conn, n int, deadline time.Time) (time.Time, time.Time, error) {
	for {
		var ended int
		var first, last *int64
		err := conn.QueryRow(ctx, `SELECT count(*), min(start_at), max(end_at) FROM runs WHERE task >= 'st0' AND task < 'st1' AND end_at > 0`).
			Scan(&ended, &first, &last)
		if err != nil {
			return time.Time{}, time.Time{}, err
		}
		if ended >= n {
			return time.Unix(0, *first), time.Unix(0, *last), nil
		}
		if time.Now().After(deadline) {
			return time.Time{}, time.Time{}, fmt.Errorf("only %d of %d runs ended by %s", ended, n, deadline.Format(time.TimeOnly))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// funcTasks is stormTasks with the built-in function log instead of a
// command: a run that starts no process.
func funcTasks(at time.Time) func(first, n int) string {
	return func(first, n int) string {
		var b strings.Builder
		for i := first; i < first+n; i++ {
			fmt.Fprintf(&b, "insert_task: st%06d\ntype: callable\nfunction: log\nstart_date: %s\n\n", i, at.UTC().Format(time.DateTime))
		}
		return b.String()
	}
}
