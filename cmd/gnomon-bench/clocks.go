package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/gnomon-sched/gnomon/cluster"
	"github.com/gnomon-sched/gnomon/internal/bench"
	"github.com/gnomon-sched/gnomon/scheduler"
	"github.com/gnomon-sched/gnomon/store/postgres"
)

// clocks: the fires a second that the clock nodes of a cluster record,
// with one clock node and with two, n schedules spread over the minute
// spots (bench.SpreadHourly: each fires once an hour, at a minute and
// second of its own, so that each partition of the default space holds
// n/60 of them), against PostgreSQL's rate for the same statements.
//
// A real-time minute holds the fires of one minute spot only, which one
// node owns: the nodes share the work over the hour, so their throughput
// is measured on a compressed clock. The cluster simulates (the director
// with --simulate-from, the clock nodes with --simulated) and the
// benchmark moves its virtual clock itself, as the director's Advance
// would, but without stopping at each instant: it saves the reading where
// the clock nodes read it and tells them, every 5 ms. The clock nodes run
// as in production but for the reading they fire by: each records the
// occurrences due under its leases, one statement per partition. The
// director only holds the definitions and assigns the partitions: it
// takes no fire in (a simulating director takes fires in at the steps of
// its own Advance, which the benchmark does not call), so the figures are
// the clock nodes' and PostgreSQL's, not the engine's.
//
// Each round, for each number of clock nodes, on a fresh database, once
// the machine is quiet (less than 15 % busy for a second, waiting a
// minute at most: it is shared):
//
//   - paced: the virtual clock runs at -speed times real time for -paced
//     of virtual time; a fire's lateness is when a watcher (polling every
//     5 ms) first saw it recorded, minus when the compressed clock
//     passed its occurrence; throughput is the fires over the real time
//     from the start to the last one seen.
//   - burst: the virtual clock jumps -burst hours at once, every
//     schedule's occurrences due together; throughput is the fires over
//     the time until they are all recorded (counted every 2 ms): what
//     the nodes can record at most. An hour of 10^5 fires lasts under a
//     second with two nodes, so three are the default.
//
// The baseline, in the same round, is PostgreSQL alone: the registry's
// own statements (Registry.RecordTurn, the fenced inserts of the fires of
// a turn of a clock node, a statement per partition, in one transaction)
// for the same fires, one statement per partition and hour, from as many
// connections as there are nodes, each its share of the partitions. And
// the write rate of the server: single-row INSERT commits a second from 1
// and from 8 connections. The ratio of two sizes is the median of the
// rounds' own ratios.
//
// With GNOMON_CLOCK_CPUPROFILE=PATH each clock node writes a CPU profile
// to PATH.NofK (node N of K) when it stops.
func clocks(args []string) error {
	fs := flag.NewFlagSet("clocks", flag.ExitOnError)
	bin := fs.String("gnomon", "bin/gnomon", "gnomon binary")
	pg := fs.String("pg", bench.PGBase(), "PostgreSQL server: the URL of an existing database there to connect to (default $GNOMON_BENCH_PG)")
	n := fs.Int("schedules", 100000, "schedules, spread over the minute spots")
	sizes := fs.String("nodes", "1,2", "numbers of clock nodes, comma-separated")
	speed := fs.Float64("speed", 240, "paced: virtual seconds a real second")
	paced := fs.Duration("paced", 20*time.Minute, "paced: virtual time run through")
	hours := fs.Int("burst", 3, "burst: hours of virtual time at once (each schedule fires once an hour)")
	rounds := fs.Int("rounds", 3, "rounds")
	nodeCPU := cpuShareFlags(fs, "hold each clock node to this share of a core, in a CPU cgroup of its own, as nodes on machines of their own would be (0: unconfined; the director and PostgreSQL stay unconfined)")
	fs.Parse(args)
	if err := bench.ReachPG(*pg); err != nil {
		return fmt.Errorf("-pg: %w", err)
	}
	ns := counts(*sizes)
	fmt.Printf("\n## clock nodes: fires recorded a second, %d schedules spread over the minute spots (%d a partition), 1 to %d clock nodes\n",
		*n, *n/60, slices.Max(ns))
	fmt.Printf("# %s; machine: %d CPUs, %s\n", pgVersion(*pg), runtime.NumCPU(), runtime.Version())
	fmt.Printf("# paced: a virtual clock at %gx real time through %s (%d fires, %.0f due a second); burst: %d hour(s) at once (%d fires)\n",
		*speed, *paced, bench.DueBetween(*n, time.Minute, time.Minute+*paced), float64(*n)/3600**speed, *hours, *hours**n)
	fmt.Printf("# %s; the director and PostgreSQL unconfined\n", newConfinement(nodeCPU()).describe())
	fmt.Println("# baseline: Registry.RecordTurn alone, the same fires, one statement per partition, a transaction per 10,000 fires, a connection per node")
	type figures struct{ paced, burst, raw, p50, p99, pmax, nodeCPU, pgCPU spread }
	res := make([]figures, len(ns))
	var single, multi spread
	for r := range *rounds {
		for i, k := range ns {
			if busy, waited := waitQuiet(time.Minute); waited > 0 {
				fmt.Printf("  (waited %s for the machine to quiet down: %.0f%% busy)\n", waited.Round(time.Second), 100*busy)
			}
			p, b, err := clockRound(*bin, *pg, *n, k, *speed, *paced, *hours, nodeCPU())
			if err != nil {
				return fmt.Errorf("%d clock nodes: %w", k, err)
			}
			raw, err := rawFires(*pg, *n, *hours, k)
			if err != nil {
				return fmt.Errorf("baseline with %d connections: %w", k, err)
			}
			f := &res[i]
			f.paced, f.burst, f.raw = append(f.paced, p.rate), append(f.burst, b.rate), append(f.raw, raw)
			f.p50, f.p99, f.pmax = append(f.p50, pct(p.late, 50)), append(f.p99, pct(p.late, 99)), append(f.pmax, pct(p.late, 100))
			fires := float64(*hours * *n)
			f.nodeCPU = append(f.nodeCPU, float64(b.cpu.nodes.Microseconds())/fires)
			f.pgCPU = append(f.pgCPU, float64(b.cpu.pg.Microseconds())/fires)
			fmt.Printf("  round %d, %d clock node(s): paced %.0f fires/s (p99 %.1f ms; nodes' CPU %s, throttled %s); burst %.0f fires/s in %s, CPU: nodes %s, PostgreSQL's sessions %s, machine %s of %s (%s in the second before); baseline %.0f fires/s; nodes throttled %s\n",
				r+1, k, p.rate, pct(p.late, 99), p.cpu.nodes, p.throttled.Round(time.Millisecond), b.rate, b.took.Round(time.Millisecond), b.cpu.nodes, b.cpu.pg, b.cpu.machine,
				time.Duration(runtime.NumCPU())*b.took.Round(10*time.Millisecond), b.before.machine, raw, b.throttled.Round(time.Millisecond))
		}
		s, m, err := writeRate(*pg)
		if err != nil {
			return err
		}
		single, multi = append(single, s), append(multi, m)
	}
	for i, k := range ns {
		f := res[i]
		fmt.Printf("  %d clock node(s):\n", k)
		line("burst, fires recorded/s", "/s", f.raw, f.burst)
		line("paced, fires recorded/s", "/s", nil, f.paced)
		line("paced lateness p50", "ms", nil, f.p50)
		line("paced lateness p99", "ms", nil, f.p99)
		line("paced lateness max", "ms", nil, f.pmax)
		line("burst: nodes' CPU a fire", "µs", nil, f.nodeCPU)
		line("burst: PostgreSQL's CPU a fire", "µs", nil, f.pgCPU)
		// One PostgreSQL core records at most a second's worth of its own
		// CPU a fire: the bound of a cluster whose nodes have cores of
		// their own.
		line("projected: fires/s a PostgreSQL core", "/s", nil, perCore(f.pgCPU))
	}
	for i := 1; i < len(ns); i++ {
		fmt.Printf("  %d nodes against %d, the rounds' own ratios: burst %s; baseline %s; paced %s\n", ns[i], ns[0],
			ratios(res[i].burst, res[0].burst), ratios(res[i].raw, res[0].raw), ratios(res[i].paced, res[0].paced))
	}
	fmt.Printf("  PostgreSQL alone, single-row INSERT commits/s: 1 connection %s, 8 connections %s\n", single, multi)
	return nil
}

// clockWindow is what the clock nodes did in one window: the fires a
// second, each fire's lateness, sorted, how long the last took, and the
// CPU time used meanwhile.
type clockWindow struct {
	rate float64
	late []time.Duration
	took time.Duration
	cpu  cpuUse
	// before is the CPU the machine used over a second before the window
	// (in a burst), with the cluster idle: the load of others.
	before cpuUse
	// throttled is how long the nodes' quotas held them back in the
	// window, with -node-cpu.
	throttled time.Duration
}

// cpuUse is CPU time used: by the clock nodes' processes, by the
// PostgreSQL sessions of the benchmark's database, and by the whole
// machine (every process, PostgreSQL's WAL writer among them).
type cpuUse struct{ nodes, pg, machine time.Duration }

func (c cpuUse) sub(d cpuUse) cpuUse {
	return cpuUse{c.nodes - d.nodes, c.pg - d.pg, c.machine - d.machine}
}

// readCPU reads the CPU time used so far by the nodes, the sessions of
// database db (through monitor, a session on another database) and the
// machine.
func readCPU(ctx context.Context, nodes []*process, monitor *pgx.Conn, db string) cpuUse {
	c := cpuUse{nodes: nodesCPU(nodes)}
	c.pg, _ = bench.BackendCPU(ctx, monitor, db)
	c.machine = machineCPU()
	return c
}

// ratios are a size against the first, round by round: the median of the
// rounds' own ratios, each of two runs a few seconds apart, which a shared
// machine's drift touches alike.
func ratios(a, b spread) spread {
	var out spread
	for r := range a {
		out = append(out, a[r]/b[r])
	}
	return out
}

// perCore turns CPU time an operation (µs) into operations a second that
// one core does.
func perCore(us spread) spread {
	var out spread
	for _, c := range us {
		out = append(out, 1e6/c)
	}
	return out
}

// nodesCPU reads the CPU time the nodes used so far.
func nodesCPU(nodes []*process) time.Duration {
	var d time.Duration
	for _, nd := range nodes {
		d += bench.ProcessCPU(nd.cmd.Process.Pid)
	}
	return d
}

// waitQuiet waits, up to limit, for a second in which the machine's cores
// are less than 15 % busy, and returns the last second's share and how
// long it waited: this machine is shared, and a round measured while
// others work says more of them than of the cluster.
func waitQuiet(limit time.Duration) (float64, time.Duration) {
	start := time.Now()
	for {
		c0 := machineCPU()
		time.Sleep(time.Second)
		busy := float64(machineCPU()-c0) / float64(time.Duration(runtime.NumCPU())*time.Second)
		if busy < 0.15 || time.Since(start) >= limit {
			return busy, time.Since(start) - time.Second
		}
	}
}

// machineCPU reads the CPU time every core of the machine has been busy,
// from /proc/stat: all but idle and I/O wait.
func machineCPU() time.Duration {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	var busy int64
	for i, v := range f[1:] {
		n, _ := strconv.ParseInt(v, 10, 64)
		if i != 3 && i != 4 && i < 8 { // idle and iowait; guest time is in user already
			busy += n
		}
	}
	return time.Duration(busy) * time.Second / 100
}

// clockStart is where the virtual clock starts: an hour's start.
var clockStart = time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)

// clockRound runs the paced and burst windows on a cluster of k clock
// nodes and a director, on a fresh database.
func clockRound(bin, pg string, n, k int, speed float64, paced time.Duration, hours int, nodeCPU cpuShare) (p, b clockWindow, err error) {
	db, drop, err := freshDB(pg)
	if err != nil {
		return p, b, err
	}
	defer drop()
	director, err := startServer(bin, "--db", db.URL, "--roles", "director", "--node", "dir", "--simulate-from", clockStart.Format(time.RFC3339))
	if err != nil {
		return p, b, err
	}
	defer director.close()
	if err := director.define(bench.SpreadHourly, n, 25000); err != nil {
		return p, b, err
	}
	var nodes []*process
	conf := newConfinement(nodeCPU)
	defer func() {
		for _, nd := range nodes {
			nd.stop()
		}
		conf.release()
	}()
	for i := range k {
		data := filepath.Join(director.dir, "c"+strconv.Itoa(i+1))
		if err := os.MkdirAll(data, 0o700); err != nil {
			return p, b, err
		}
		var env []string
		if prof := os.Getenv("GNOMON_CLOCK_CPUPROFILE"); prof != "" {
			env = []string{fmt.Sprintf("GNOMON_CPUPROFILE=%s.%dof%d", prof, i+1, k)}
		}
		nd, err := startProcessEnv(bin, []string{"server", "--data", data, "--timezone", "UTC", "--db", db.URL, "--roles", "clock", "--simulated",
			"--node", "c" + strconv.Itoa(i+1)}, filepath.Join(data, "node.log"), env)
		if err != nil {
			return p, b, err
		}
		nodes = append(nodes, nd)
		conf.confine(nd.cmd.Process.Pid)
	}
	ctx := context.Background()
	st, err := postgres.Open(ctx, db.URL)
	if err != nil {
		return p, b, err
	}
	defer st.Close()
	reg, err := st.Cluster(ctx, cluster.DefaultSpace, 5*time.Second)
	if err != nil {
		return p, b, err
	}
	if err := waitOwned(director, k); err != nil {
		return p, b, err
	}
	move := func(at time.Time) error {
		if err := st.SetCursors(ctx, map[string]int64{scheduler.ClockCursor: at.UnixNano()}); err != nil {
			return err
		}
		return reg.ClockMoved(ctx)
	}
	// Warm-up: the first minute, which also says that every node has
	// its partitions and its schedules.
	if err := move(clockStart.Add(time.Minute)); err != nil {
		return p, b, err
	}
	seen, err := watchAll(ctx, reg, 0, bench.DueBetween(n, -time.Nanosecond, time.Minute), 5*time.Minute)
	if err != nil {
		return p, b, fmt.Errorf("warm-up: %w", err)
	}

	// Paced.
	from, to := clockStart.Add(time.Minute), clockStart.Add(time.Minute+paced)
	want := bench.DueBetween(n, time.Minute, time.Minute+paced)
	after := lastID(seen)
	wctx, cancel := context.WithTimeout(ctx, paced+5*time.Minute)
	defer cancel()
	var werr error
	var wg sync.WaitGroup
	wg.Go(func() { seen, werr = bench.Watch(wctx, reg, after, 5*time.Millisecond, want) })
	pacedCPU, pacedThrottled := nodesCPU(nodes), conf.throttled()
	start := time.Now()
	passed := func(s time.Time) time.Time { return start.Add(time.Duration(float64(s.Sub(from)) / speed)) }
	for at := from; at.Before(to); {
		time.Sleep(5 * time.Millisecond)
		at = from.Add(time.Duration(float64(time.Since(start)) * speed))
		if at.After(to) {
			at = to
		}
		if err := move(at); err != nil {
			return p, b, err
		}
	}
	wg.Wait()
	if werr != nil {
		return p, b, werr
	}
	if p, err = window(seen, want, start, passed); err != nil {
		return p, b, fmt.Errorf("paced: %w", err)
	}
	p.cpu.nodes, p.throttled = nodesCPU(nodes)-pacedCPU, conf.throttled()-pacedThrottled

	// Burst: the next hour at once.
	after = max(after, lastID(seen))
	monitor, err := pgx.Connect(ctx, pg)
	if err != nil {
		return p, b, err
	}
	defer monitor.Close(ctx)
	// The machine's load from elsewhere, over a second before.
	idle0 := readCPU(ctx, nodes, monitor, db.Name)
	time.Sleep(time.Second)
	b.before = readCPU(ctx, nodes, monitor, db.Name).sub(idle0)
	cpu0, throttled0 := readCPU(ctx, nodes, monitor, db.Name), conf.throttled()
	jump := time.Now()
	if err := move(to.Add(time.Duration(hours) * time.Hour)); err != nil {
		return p, b, err
	}
	// The fires are counted, not watched one by one: reading them would
	// take a share of the machine the nodes compete for.
	done, err := countTo(ctx, st.Pool(), after, hours*n, 10*time.Minute)
	if err != nil {
		return p, b, fmt.Errorf("burst: %w", err)
	}
	b.cpu = readCPU(ctx, nodes, monitor, db.Name).sub(cpu0)
	b.throttled = conf.throttled() - throttled0
	b.took = done.Sub(jump)
	b.rate = float64(hours*n) / b.took.Seconds()
	return p, b, nil
}

// countTo waits until the fires recorded after ID after number total, and
// returns when it saw them all: it adds up the fires of the statements
// recorded after it every 2 ms.
func countTo(ctx context.Context, pool *pgxpool.Pool, after int64, total int, limit time.Duration) (time.Time, error) {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		var k int
		if err := pool.QueryRow(ctx, `SELECT coalesce(sum(n), 0) FROM cluster_fires WHERE id > $1`, after).Scan(&k); err != nil {
			return time.Time{}, err
		}
		if k >= total {
			return time.Now(), nil
		}
		time.Sleep(2 * time.Millisecond)
	}
	return time.Time{}, fmt.Errorf("not all %d fires recorded after %s", total, limit)
}

func lastID(seen []bench.Sighting) int64 {
	var id int64
	for _, s := range seen {
		id = max(id, s.ID)
	}
	return id
}

// window measures the fires seen: there must be want of them; their
// lateness is when they were seen minus when their occurrence passed.
func window(seen []bench.Sighting, want int, start time.Time, passed func(time.Time) time.Time) (clockWindow, error) {
	if len(seen) != want {
		return clockWindow{}, fmt.Errorf("%d fires recorded, want %d", len(seen), want)
	}
	w := clockWindow{late: make([]time.Duration, len(seen))}
	var last time.Time
	for i, s := range seen {
		w.late[i] = max(s.Seen.Sub(passed(s.Scheduled)), 0)
		if s.Seen.After(last) {
			last = s.Seen
		}
	}
	slices.Sort(w.late)
	w.took = last.Sub(start)
	w.rate = float64(want) / w.took.Seconds()
	return w, nil
}

// watchAll watches the fires after ID after until total are recorded,
// within limit.
func watchAll(ctx context.Context, reg cluster.FireSource, after int64, total int, limit time.Duration) ([]bench.Sighting, error) {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	seen, err := bench.Watch(ctx, reg, after, 5*time.Millisecond, total)
	if err == nil && len(seen) < total {
		err = fmt.Errorf("%d of %d fires recorded after %s", len(seen), total, limit)
	}
	return seen, err
}

// waitOwned waits until k live clock nodes own every partition.
func waitOwned(dir *server, k int) error {
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		st, err := dir.client.Cluster(context.Background())
		if err == nil {
			owners, owned := 0, 0
			for _, nd := range st.Nodes {
				if nd.State == cluster.Live && nd.Has(cluster.RoleClock) && len(nd.Partitions) > 0 {
					owners++
					owned += len(nd.Partitions)
				}
			}
			if owners == k && owned == st.Space.Count() && balanced(st) {
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return errors.New("the clock nodes did not get every partition, evenly, within 2 minutes")
}

// balanced reports whether the live clock nodes hold the regular
// partitions evenly, and the dedicated ones evenly, as the director
// assigns them in the end (cluster.AssignSpace): a window measured while
// partitions still move measures their hand-overs, not a steady cluster.
func balanced(st *cluster.Status) bool {
	for _, group := range [][2]int{{0, st.Space.Partitions}, {st.Space.Partitions, st.Space.Count()}} {
		low, high := -1, 0
		for _, nd := range st.Nodes {
			if nd.State != cluster.Live || !nd.Has(cluster.RoleClock) {
				continue
			}
			held := 0
			for _, p := range nd.Partitions {
				if p >= group[0] && p < group[1] {
					held++
				}
			}
			if low < 0 || held < low {
				low = held
			}
			high = max(high, held)
		}
		if high-low > 1 {
			return false
		}
	}
	return true
}

// turnFires is how many fires a clock node records in a turn of its loop
// at most (cluster's maxFires).
const turnFires = 10000

// rawFires records the burst's fires (n schedules over hours) through
// the registry alone, on a fresh database, from k connections, each
// recording its share of the partitions, an hour after the other, one
// statement per partition and hour, in transactions of turnFires fires,
// and returns the fires a second.
func rawFires(pg string, n, hours, k int) (float64, error) {
	db, drop, err := freshDB(pg)
	if err != nil {
		return 0, err
	}
	defer drop()
	ctx := context.Background()
	st, err := postgres.Open(ctx, db.URL)
	if err != nil {
		return 0, err
	}
	defer st.Close()
	pool, err := pgxpool.New(ctx, db.WithParam("pool_max_conns", strconv.Itoa(k)))
	if err != nil {
		return 0, err
	}
	defer pool.Close()
	space := cluster.DefaultSpace
	reg, err := postgres.NewRegistry(ctx, pool, space, time.Minute)
	if err != nil {
		return 0, err
	}
	now := time.Now()
	var names []string
	for i := range k {
		name := "b" + strconv.Itoa(i+1)
		if err := reg.Register(ctx, cluster.Node{ID: name, Roles: []string{cluster.RoleClock}}, now); err != nil {
			return 0, err
		}
		names = append(names, name)
	}
	epoch, err := reg.TakeDirector(ctx, cluster.Node{ID: "bench"}, now)
	if err != nil {
		return 0, err
	}
	if _, err := reg.Rebalance(ctx, "bench", epoch, now, time.Time{}); err != nil {
		return 0, err
	}
	leases := make([][]cluster.Lease, k)
	for i, name := range names {
		if leases[i], err = reg.Heartbeat(ctx, name, now); err != nil {
			return 0, err
		}
	}
	// The fires of an hour, by partition: schedule s's spot is its
	// minute.
	byPart := map[int][]cluster.Fire{}
	for s := range n {
		off := bench.HourlyOffset(s)
		p := space.Partition(int(off / time.Minute))
		byPart[p] = append(byPart[p], cluster.Fire{Task: "h" + strconv.Itoa(s), Scheduled: clockStart.Add(off)})
	}
	start := time.Now()
	var wg sync.WaitGroup
	errs := make([]error, k)
	for i, name := range names {
		wg.Go(func() {
			// Turns of up to turnFires fires, one transaction each, as a
			// clock node records them.
			var turn []cluster.Batch
			fires := 0
			for h := range hours {
				for j, l := range leases[i] {
					fs := slices.Clone(byPart[l.Partition])
					for j := range fs {
						fs[j].Scheduled = fs[j].Scheduled.Add(time.Duration(h) * time.Hour)
					}
					if len(fs) > 0 {
						turn, fires = append(turn, cluster.Batch{Lease: l, Fires: fs}), fires+len(fs)
					}
					if fires < turnFires && (h < hours-1 || j < len(leases[i])-1) {
						continue
					}
					if _, err := reg.RecordTurn(ctx, name, turn, now); err != nil {
						errs[i] = err
						return
					}
					turn, fires = turn[:0], 0
				}
			}
		})
	}
	wg.Wait()
	took := time.Since(start)
	if err := errors.Join(errs...); err != nil {
		return 0, err
	}
	return float64(hours*n) / took.Seconds(), nil
}

// writeRate measures the server's single-row commits a second, one INSERT
// a transaction, from 1 and from 8 connections, for 2 s each, on a fresh
// database.
func writeRate(pg string) (single, multi float64, err error) {
	db, drop, err := freshDB(pg)
	if err != nil {
		return 0, 0, err
	}
	defer drop()
	ctx := context.Background()
	for _, conns := range []int{1, 8} {
		pool, err := pgxpool.New(ctx, db.WithParam("pool_max_conns", strconv.Itoa(conns)))
		if err != nil {
			return 0, 0, err
		}
		if _, err := pool.Exec(ctx, `CREATE TABLE IF NOT EXISTS w (id BIGSERIAL PRIMARY KEY, task TEXT NOT NULL, at BIGINT NOT NULL)`); err != nil {
			pool.Close()
			return 0, 0, err
		}
		var total int64
		var mu sync.Mutex
		var wg sync.WaitGroup
		start := time.Now()
		for range conns {
			wg.Go(func() {
				var done int64
				for time.Since(start) < 2*time.Second {
					if _, err := pool.Exec(ctx, `INSERT INTO w (task, at) VALUES ($1, $2)`, "t", time.Now().UnixNano()); err != nil {
						break
					}
					done++
				}
				mu.Lock()
				total += done
				mu.Unlock()
			})
		}
		wg.Wait()
		rate := float64(total) / time.Since(start).Seconds()
		pool.Close()
		if conns == 1 {
			single = rate
		} else {
			multi = rate
		}
	}
	return single, multi, nil
}
