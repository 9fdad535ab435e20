// Command gnomon-bench measures gnomon against baselines taken in the same
// run on the same machine. Everything runs on 127.0.0.1, and every
// benchmark stops by itself.
//
//	gnomon-bench all [-quick] [-gnomon bin/gnomon]     every benchmark below, 3 rounds each
//	gnomon-bench commits     data events accepted per second (synchronous=FULL) vs raw SQLite inserts in batches of 100
//	gnomon-bench lateness    start minus due instant, schedules spread over a minute: gnomon, robfig/cron and gocron vs a bare heap and timer
//	gnomon-bench chain       a chain of condition-triggered function tasks vs two raw commits per hop
//	gnomon-bench shell       `true` runs per second, 8 at a time, vs exec.Command("true").Run() in 8 goroutines
//	gnomon-bench startup     time to ready and RSS with stored task definitions
//	gnomon-bench crash       the event-ingest load with the server killed (SIGKILL) and restarted; every 202 must be journaled
//	gnomon-bench ui          the event-ingest load with and without 10 browsers keeping the web UI's overview open
//	gnomon-bench storm       10^4 and 10^5 tasks due at one instant: drain rate vs exec.Command("true") at the same concurrency, reads, a freeze, a critical start
//	gnomon-bench clocks      fires recorded a second by 1 and 2 clock nodes of a cluster, 10^5 schedules over the minute spots, vs PostgreSQL alone; -node-cpu F holds each node to F of a core
//	gnomon-bench workers     runs a second of 1, 2, 4 worker nodes of a cluster, each held to a share of a core (-node-cpu), and the director's and PostgreSQL's CPU a run
//	gnomon-bench soak        a simulated year of 10^4 tasks (cron, interval, chains, retries alerting by mail) and data events, pruned daily, restarted monthly: size, rows, memory, start-up time, read p99
//
//	gnomon-bench events [-gnomon bin/gnomon] [-configs 3,10000,1000000] [-conns 64] [-duration 10s] [-rounds 3]
//
// events starts a real gnomon server for each number of configurations,
// applies them through the API, and posts events over HTTP from -conns
// keep-alive connections; the baseline is a no-op Go HTTP server (this
// binary, in another process) that decodes the same JSON. Each round
// alternates baseline and gnomon in slices of about a second, so that both
// see the same state of a shared machine; each figure is the median of the
// rounds with their min and max, and the ratio the median of the rounds'
// own ratios.
//
// events, commits and startup take -store postgres (and -pg URL, the
// server): gnomon then runs on the PostgreSQL store (gnomon server --db),
// on a database the benchmark creates and drops, and so does the
// baseline, on one of its own. In events the baseline's handler commits
// each event's journal entry through pgx, one commit for each group of
// requests that arrived during the previous one; in commits it copies the
// same journal rows, 100 a commit. all runs them beside the SQLite ones,
// and leaves them out when the -pg server does not answer.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/gnomon-sched/gnomon/api"
	"github.com/gnomon-sched/gnomon/auth"
	"github.com/gnomon-sched/gnomon/internal/bench"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: gnomon-bench all|events|commits|chain|shell|lateness|startup|crash|ui|clocks|workers|storm [flags] | noop [-db URL] ADDR | peer [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "events":
		err = events(os.Args[2:])
	case "noop":
		err = noop(os.Args[2:])
	case "peer":
		err = peer(os.Args[2:])
	case "commits":
		err = commits(os.Args[2:])
	case "chain":
		err = chain(os.Args[2:])
	case "shell":
		err = shell(os.Args[2:])
	case "lateness":
		err = lateness(os.Args[2:])
	case "startup":
		err = startup(os.Args[2:])
	case "crash":
		err = crash(os.Args[2:])
	case "ui":
		err = ui(os.Args[2:])
	case "clocks":
		err = clocks(os.Args[2:])
	case "workers":
		err = workers(os.Args[2:])
	case "storm":
		err = storm(os.Args[2:])
	case "soak":
		err = soak(os.Args[2:])
	case "all":
		err = all(os.Args[2:])
	default:
		err = fmt.Errorf("unknown benchmark %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "ERROR", err)
		os.Exit(1)
	}
}

// noop serves the baseline on ADDR until killed; with -db, the baseline
// that also commits each event to that PostgreSQL database.
func noop(args []string) error {
	fs := flag.NewFlagSet("noop", flag.ExitOnError)
	db := fs.String("db", "", "PostgreSQL database URL: commit each event's journal entry there, by groups")
	fs.Parse(args)
	var (
		s   *bench.NoopServer
		err error
	)
	if *db != "" {
		s, err = bench.StartNoopPG(fs.Arg(0), *db)
	} else {
		s, err = bench.StartNoop(fs.Arg(0))
	}
	if err != nil {
		return err
	}
	defer s.Close()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	<-ctx.Done()
	return nil
}

func events(args []string) error {
	fs := flag.NewFlagSet("events", flag.ExitOnError)
	bin := fs.String("gnomon", "bin/gnomon", "gnomon binary")
	counts := fs.String("configs", "3,10000,1000000", "numbers of configurations, comma-separated")
	conns := fs.Int("conns", 64, "concurrent connections")
	dur := fs.Duration("duration", 10*time.Second, "length of each measured run")
	rounds := fs.Int("rounds", 3, "runs of each side")
	st, pg := storeFlags(fs)
	fs.Parse(args)

	if err := checkStore(*st); err != nil {
		return err
	}
	var ns []int
	for _, c := range strings.Split(*counts, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(c))
		if err != nil || n < 1 {
			return fmt.Errorf("-configs: bad count %q", c)
		}
		ns = append(ns, n)
	}
	self, _ := os.Executable()
	if *st == "postgres" {
		fmt.Printf("\n# durable event ingest over HTTP on PostgreSQL, %d connections, %s per run, %d rounds\n", *conns, *dur, *rounds)
		fmt.Printf("# machine: %d CPUs, %s, %s/%s; %s\n", runtime.NumCPU(), runtime.Version(), runtime.GOOS, runtime.GOARCH, pgVersion(*pg))
		fmt.Println("# baseline: the no-op handler, with one synchronous commit through pgx per group of requests; each side on a fresh database")
		for _, n := range ns {
			if err := eventsPG(*bin, self, *pg, n, *conns, *dur, *rounds); err != nil {
				return err
			}
		}
		return nil
	}
	fmt.Printf("# durable event ingest over HTTP, %d connections, %s per run, %d rounds\n", *conns, *dur, *rounds)
	fmt.Printf("# machine: %d CPUs, %s, %s/%s\n", runtime.NumCPU(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
	base, err := startProcess(self, []string{"noop"}, "")
	if err != nil {
		return err
	}
	defer base.stop()
	for _, n := range ns {
		if err := eventsWith(*bin, ingestSides{base: base}, n, *conns, *dur, *rounds); err != nil {
			return err
		}
	}
	return nil
}

// ingestSides is what the events benchmark runs against besides gnomon:
// the baseline's process, and on PostgreSQL the arguments that put gnomon
// on its database, the two databases and a session to watch them from.
type ingestSides struct {
	base     *process
	args     []string // more arguments of gnomon server
	gdb, bdb string   // the databases of gnomon and the baseline, "" on SQLite
	monitor  *pgx.Conn
}

// dbCPU is the CPU time the server processes of a database's sessions
// have used, 0 on SQLite.
func (s ingestSides) dbCPU(ctx context.Context, db string) time.Duration {
	if db == "" || s.monitor == nil {
		return 0
	}
	d, _ := bench.BackendCPU(ctx, s.monitor, db)
	return d
}

func eventsWith(bin string, sides ingestSides, n, conns int, dur time.Duration, rounds int) error {
	base := sides.base
	dir, err := os.MkdirTemp("", "gnomon-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	g, err := startProcess(bin, append([]string{"server", "--data", dir, "--timezone", "UTC"}, sides.args...), filepath.Join(dir, "server.log"))
	if err != nil {
		return err
	}
	defer g.stop()
	client := &api.Client{Base: "http://" + g.addr, HTTP: &http.Client{Timeout: 10 * time.Minute}}
	if client.Token, err = benchToken(client, dir, auth.Admin); err != nil {
		return err
	}
	ingest, err := benchToken(client, dir, auth.Ingest)
	if err != nil {
		return err
	}
	events := "http://" + ingest + "@" + g.addr + "/events"
	t0 := time.Now()
	const chunk = 10000
	for first := 0; first < n; first += chunk {
		if _, err := client.Define(context.Background(), "bench.json", bench.Configurations(first, min(chunk, n-first)), false); err != nil {
			var ae *api.Error
			if errors.As(err, &ae) && len(ae.Errors) > 0 {
				err = fmt.Errorf("%w: %s", err, ae.Errors[0])
			}
			return fmt.Errorf("define configurations: %w", err)
		}
	}
	fmt.Printf("\n## %d configurations (applied in %s; server RSS %s)\n", n, time.Since(t0).Round(time.Millisecond), rss(g.cmd.Process.Pid))
	body := func(i int64) []byte { return bench.EventBody(i, n) }
	var offset int64
	stream := func(i int64) []byte { return body(offset + i) }
	ctx := context.Background()
	// Warm both up.
	bench.Post(ctx, "http://"+base.addr+"/events", conns, time.Second, http.StatusAccepted, body)
	warm := bench.Post(ctx, events, conns, time.Second, http.StatusAccepted, stream)
	offset += int64(warm.Requests + warm.Errors + conns)
	var (
		bs, gs         []bench.Result
		bcpu, gcpu     time.Duration
		bdbcpu, gdbcpu time.Duration // of the database's server processes, on PostgreSQL
		bdone, gdone   int
		// The server's runtime at the start of each round. A collection
		// is counted in the round in which it completes, which may be the
		// round after the one whose allocations started it.
		infos []*api.Info
	)
	// A round alternates the two servers in slices of about a second, so
	// that both see the same state of a shared machine, which drifts within
	// seconds; each round's ratio is of its own two sides.
	parts := max(int(dur/time.Second), 1)
	var ratios []float64
	for range rounds {
		infos = append(infos, runtimeInfo(ctx, client))
		var br, gr []bench.Result
		for range parts {
			c0, d0 := cpu(base.cmd.Process.Pid), sides.dbCPU(ctx, sides.bdb)
			r := bench.Post(ctx, "http://"+base.addr+"/events", conns, dur/time.Duration(parts), http.StatusAccepted, body)
			bcpu, bdone = bcpu+cpu(base.cmd.Process.Pid)-c0, bdone+r.Requests
			bdbcpu += sides.dbCPU(ctx, sides.bdb) - d0
			br = append(br, r)
			c0, d0 = cpu(g.cmd.Process.Pid), sides.dbCPU(ctx, sides.gdb)
			r = bench.Post(ctx, events, conns, dur/time.Duration(parts), http.StatusAccepted, stream)
			gcpu, gdone = gcpu+cpu(g.cmd.Process.Pid)-c0, gdone+r.Requests
			gdbcpu += sides.dbCPU(ctx, sides.gdb) - d0
			offset += int64(r.Requests + r.Errors + conns)
			gr = append(gr, r)
		}
		b, g := bench.Merge(br...), bench.Merge(gr...)
		bs, gs, ratios = append(bs, b), append(gs, g), append(ratios, g.Rate()/b.Rate())
	}
	b, s := bench.Summarize(bs), bench.Summarize(gs)
	if sides.gdb != "" {
		fmt.Printf("baseline (group commit)  median %s\n", b.Median)
	} else {
		fmt.Printf("baseline (no-op handler) median %s\n", b.Median)
	}
	fmt.Printf("                         min %8.0f  max %8.0f req/s\n", b.Min.Rate(), b.Max.Rate())
	fmt.Printf("gnomon /events (durable) median %s\n", s.Median)
	fmt.Printf("                         min %8.0f  max %8.0f req/s\n", s.Min.Rate(), s.Max.Rate())
	fmt.Printf("server CPU per request   baseline %.0f µs, gnomon %.0f µs\n",
		float64(bcpu.Microseconds())/float64(max(bdone, 1)), float64(gcpu.Microseconds())/float64(max(gdone, 1)))
	if sides.gdb != "" {
		fmt.Printf("PostgreSQL CPU per req.  baseline %.0f µs, gnomon %.0f µs (its sessions' server processes)\n",
			float64(bdbcpu.Microseconds())/float64(max(bdone, 1)), float64(gdbcpu.Microseconds())/float64(max(gdone, 1)))
	}
	each := make([]string, len(ratios))
	for i, r := range ratios {
		each[i] = fmt.Sprintf("%.2f", r)
	}
	slices.Sort(ratios)
	fmt.Printf("ratio gnomon/baseline    %.2f  (median of the rounds' %s; server RSS after the load %s)\n",
		ratios[len(ratios)/2], strings.Join(each, ", "), rss(g.cmd.Process.Pid))
	time.Sleep(settleGC) // a collection the last round started ends
	infos = append(infos, runtimeInfo(ctx, client))
	var gcs []string
	for i := range rounds {
		if a, b := infos[i], infos[i+1]; a != nil && b != nil && b.Runtime.GCCycles > 0 {
			gcs = append(gcs, fmt.Sprint(b.Runtime.GCCycles-a.Runtime.GCCycles))
		}
	}
	if len(gcs) == rounds {
		fmt.Printf("collections in gnomon    %s, round by round (heap %d MB at the end)\n", strings.Join(gcs, ", "), infos[rounds].Runtime.HeapBytes>>20)
	}
	return nil
}

// settleGC is how long the events benchmark waits after gnomon's last
// round for a collection it started to end: one of a 3 GB heap took 3.5 s.
const settleGC = 5 * time.Second

// runtimeInfo returns what a server says of its runtime, nil if it cannot
// (a build from before GET /api/v1/info reported it).
func runtimeInfo(ctx context.Context, c *api.Client) *api.Info {
	info, err := c.Info(ctx)
	if err != nil || info.Runtime.GCCycles == 0 && info.Runtime.Goroutines == 0 {
		return nil
	}
	return info
}

// process is a server started for a benchmark.
type process struct {
	cmd  *exec.Cmd
	addr string
}

func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// startProcess starts bin with args and the listen address (as --listen
// for gnomon, as the last argument for the baseline) and waits until it
// answers.
func startProcess(bin string, args []string, logPath string) (*process, error) {
	return startProcessEnv(bin, args, logPath, nil)
}

// startProcessEnv is startProcess with more environment variables.
func startProcessEnv(bin string, args []string, logPath string, env []string) (*process, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	if args[0] == "server" {
		args = append(args, "--listen", addr)
	} else {
		args = append(args, addr)
	}
	cmd := exec.Command(bin, args...)
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	if logPath != "" {
		f, err := os.Create(logPath)
		if err != nil {
			return nil, err
		}
		cmd.Stdout, cmd.Stderr = f, f
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &process{cmd: cmd, addr: addr}
	deadline := time.Now().Add(time.Minute)
	for {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			return p, nil
		}
		if time.Now().After(deadline) {
			p.stop()
			return nil, fmt.Errorf("%s did not start listening on %s", bin, addr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (p *process) stop() {
	p.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		p.cmd.Process.Kill()
		<-done
	}
}

// rss reads a process's resident set size.
func rss(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "unknown"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

// cpu reads the user and system CPU time a process has used.
func cpu(pid int) time.Duration { return bench.ProcessCPU(pid) }
