package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"time"

	_ "modernc.org/sqlite"

	"github.com/gnomon-sched/gnomon/api"
	"github.com/gnomon-sched/gnomon/auth"
	"github.com/gnomon-sched/gnomon/internal/bench"
	"github.com/gnomon-sched/gnomon/store/sqlite"
)

// spread is a set of measurements of one quantity over the rounds.
type spread []float64

func (s spread) median() float64 {
	c := slices.Clone(s)
	slices.Sort(c)
	return c[len(c)/2]
}

func (s spread) String() string {
	return fmt.Sprintf("%.4g (min %.4g, max %.4g)", s.median(), slices.Min(s), slices.Max(s))
}

// line prints one figure of a benchmark: the baseline, gnomon, and their
// ratio of medians.
func line(what, unit string, base, g spread) {
	if base == nil {
		fmt.Printf("  %-34s gnomon %s %s\n", what, g, unit)
		return
	}
	fmt.Printf("  %-34s baseline %s, gnomon %s %s; ratio %.2f\n", what, base, g, unit, g.median()/base.median())
}

// server is a gnomon server process on a fresh data directory.
type server struct {
	*process
	dir    string
	client *api.Client
}

func startServer(bin string, args ...string) (*server, error) {
	dir, err := os.MkdirTemp("", "gnomon-bench-")
	if err != nil {
		return nil, err
	}
	return startServerIn(bin, dir, args...)
}

func startServerIn(bin, dir string, args ...string) (*server, error) {
	return startServerEnv(bin, dir, nil, args...)
}

// startServerEnv is startServerIn with more environment variables.
func startServerEnv(bin, dir string, env []string, args ...string) (*server, error) {
	p, err := startProcessEnv(bin, append([]string{"server", "--data", dir, "--timezone", "UTC"}, args...), filepath.Join(dir, "server.log"), env)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	s := &server{process: p, dir: dir, client: &api.Client{Base: "http://" + p.addr, HTTP: &http.Client{Timeout: 30 * time.Minute}}}
	if err := s.waitReady(); err != nil {
		s.close()
		return nil, err
	}
	if s.client.Token, err = benchToken(s.client, dir, auth.Admin); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

// benchToken makes a token of a role without a rate limit, as the admin
// whose token the server wrote in dir: what a data producer or an
// automation would be given.
func benchToken(c *api.Client, dir string, role auth.Role) (string, error) {
	admin, err := auth.ReadTokenFile(filepath.Join(dir, auth.AdminTokenFile))
	if err != nil {
		return "", err
	}
	ac := *c
	ac.Token = admin
	resp, err := ac.CreateToken(context.Background(), api.TokenRequest{Name: fmt.Sprintf("bench-%s-%08x", role, rand.Uint32()), Role: role, Rate: auth.Unlimited})
	if err != nil {
		return "", fmt.Errorf("bench token: %w", err)
	}
	return resp.Token, nil
}

// eventsURL is the /events URL of a server, with an ingest token of its
// own as bench.Post takes it. A server restarted on another port needs
// another.
func (s *server) eventsURL() (string, error) {
	tok, err := benchToken(s.client, s.dir, auth.Ingest)
	return "http://" + tok + "@" + s.addr + "/events", err
}

func (s *server) waitReady() error {
	deadline := time.Now().Add(5 * time.Minute)
	for s.client.Health(context.Background()) != nil {
		if time.Now().After(deadline) {
			return errors.New("server not ready after 5 minutes")
		}
		time.Sleep(10 * time.Millisecond)
	}
	return nil
}

func (s *server) close() {
	s.stop()
	os.RemoveAll(s.dir)
}

// define applies definition text in files of at most 3 MiB.
func (s *server) define(text func(first, n int) string, total, per int) error {
	for first := 0; first < total; first += per {
		if _, err := s.client.Define(context.Background(), "bench.def", text(first, min(per, total-first)), false); err != nil {
			var ae *api.Error
			if errors.As(err, &ae) && len(ae.Errors) > 0 {
				err = fmt.Errorf("%w: %s", err, ae.Errors[0])
			}
			return err
		}
	}
	return nil
}

// rawDB creates a SQLite database in a temporary directory, opened as
// gnomon's store opens its own (WAL, synchronous=FULL), with one table;
// done closes and removes it.
func rawDB(schema string) (db *sql.DB, done func(), err error) {
	dir, err := os.MkdirTemp("", "gnomon-bench-raw-")
	if err != nil {
		return nil, nil, err
	}
	q := url.Values{}
	for _, p := range []string{"journal_mode(WAL)", "synchronous(FULL)", "busy_timeout(10000)"} {
		q.Add("_pragma", p)
	}
	db, err = sql.Open("sqlite", "file:"+filepath.Join(dir, "raw.db")+"?"+q.Encode()+"&_txlock=immediate")
	if err == nil {
		db.SetMaxOpenConns(1)
		_, err = db.Exec(schema)
	}
	done = func() {
		if db != nil {
			db.Close()
		}
		os.RemoveAll(dir)
	}
	if err != nil {
		done()
		return nil, nil, err
	}
	return db, done, nil
}

// commits: events accepted per second by the scheduler (durable, group
// commit) against a raw loop inserting the same journal rows in
// transactions of 100, both with synchronous=FULL.
func commits(args []string) error {
	fs := flag.NewFlagSet("commits", flag.ExitOnError)
	dur := fs.Duration("duration", 5*time.Second, "length of each run")
	rounds := fs.Int("rounds", 3, "runs of each side")
	clients := fs.Int("clients", 100, "concurrent posters (the baseline commits 100 rows at a time)")
	profile := fs.String("cpuprofile", "", "write a CPU profile of the gnomon runs to this file")
	st, pg := storeFlags(fs)
	fs.Parse(args)
	if err := checkStore(*st); err != nil {
		return err
	}
	if *profile != "" {
		f, err := os.Create(*profile)
		if err != nil {
			return err
		}
		defer f.Close()
		profiling = f
	}
	if *st == "postgres" {
		return commitsPG(*pg, *dur, *rounds, *clients)
	}
	fmt.Printf("\n## journal commits: data events accepted per second, synchronous=FULL (%d clients, %s per run)\n", *clients, *dur)
	var base, g spread
	for range *rounds {
		b, err := rawCommits(*dur)
		if err != nil {
			return err
		}
		base = append(base, b)
		r, err := schedCommits(*dur, *clients)
		if err != nil {
			return err
		}
		g = append(g, r)
	}
	line("accepted events/s", "/s", base, g)
	return nil
}

func rawCommits(d time.Duration) (float64, error) {
	db, done, err := rawDB(`CREATE TABLE journal (seq INTEGER PRIMARY KEY, at INTEGER NOT NULL, kind TEXT NOT NULL, body TEXT NOT NULL)`)
	if err != nil {
		return 0, err
	}
	defer done()
	n := 0
	start := time.Now()
	for time.Since(start) < d {
		tx, err := db.Begin()
		if err != nil {
			return 0, err
		}
		st, err := tx.Prepare(`INSERT INTO journal (at, kind, body) VALUES (?, ?, ?)`)
		if err != nil {
			return 0, err
		}
		for range 100 {
			if _, err := st.Exec(time.Now().UnixNano(), "data", string(bench.JournalBody(int64(n), 3))); err != nil {
				return 0, err
			}
			n++
		}
		st.Close()
		if err := tx.Commit(); err != nil {
			return 0, err
		}
	}
	return float64(n) / time.Since(start).Seconds(), nil
}

// profiling, when set, receives a CPU profile of the gnomon side.
var profiling *os.File

func schedCommits(d time.Duration, clients int) (float64, error) {
	if profiling != nil {
		pprof.StartCPUProfile(profiling)
		defer pprof.StopCPUProfile()
	}
	dir, _ := os.MkdirTemp("", "gnomon-bench-sched-")
	defer os.RemoveAll(dir)
	st, err := sqlite.Open(context.Background(), filepath.Join(dir, "gnomon.db"))
	if err != nil {
		return 0, err
	}
	defer st.Close()
	return bench.SchedulerPosts(st, dir, d, clients)
}

// chain: a chain of condition-triggered function tasks, first start to
// last end, with unrelated tasks defined beside it; the baseline does, per
// hop, the two durable commits a hop needs at least (its start and its
// end).
func chain(args []string) error {
	fs := flag.NewFlagSet("chain", flag.ExitOnError)
	bin := fs.String("gnomon", "bin/gnomon", "gnomon binary")
	length := fs.Int("length", 10000, "tasks in the chain")
	others := fs.String("unrelated", "100,1000000", "numbers of unrelated tasks, comma-separated")
	rounds := fs.Int("rounds", 3, "runs of each side")
	fs.Parse(args)
	fmt.Printf("\n## condition propagation: a chain of %d function tasks, first start to last end\n", *length)
	for _, u := range counts(*others) {
		s, err := startServer(*bin, "--workers", "10")
		if err != nil {
			return err
		}
		t0 := time.Now()
		err = s.define(bench.Unrelated, u, 40000)
		if err == nil {
			err = s.define(func(first, n int) string { return bench.Chain(first, n) }, *length, 40000)
		}
		if err != nil {
			s.close()
			return err
		}
		setup := time.Since(t0)
		// Baseline and gnomon rounds alternate, for each size: the disk's
		// fsync, which sets both, drifts over minutes.
		var base, g spread
		for range *rounds {
			b, err := rawChain(*length)
			if err != nil {
				s.close()
				return err
			}
			base = append(base, b.Seconds())
			d, err := runChain(s, *length)
			if err != nil {
				s.close()
				return err
			}
			g = append(g, d.Seconds())
		}
		fmt.Printf("  with %d unrelated tasks (defined in %s, server RSS %s):\n", u, setup.Round(time.Millisecond), rss(s.cmd.Process.Pid))
		line("chain time", "s", base, g)
		perHop := func(sp spread) spread {
			out := make(spread, len(sp))
			for i, v := range sp {
				out[i] = v / float64(*length) * 1e6
			}
			return out
		}
		line("per hop", "µs", perHop(base), perHop(g))
		s.close()
	}
	return nil
}

// rawChain does 2 commits per hop, synchronous=FULL.
func rawChain(n int) (time.Duration, error) {
	db, done, err := rawDB(`CREATE TABLE runs (id INTEGER PRIMARY KEY, task TEXT NOT NULL, status TEXT NOT NULL, start_at INTEGER NOT NULL, end_at INTEGER NOT NULL DEFAULT 0)`)
	if err != nil {
		return 0, err
	}
	defer done()
	start := time.Now()
	for i := range n {
		if _, err := db.Exec(`INSERT INTO runs (id, task, status, start_at) VALUES (?, ?, 'running', ?)`, i+1, fmt.Sprintf("c%d", i), time.Now().UnixNano()); err != nil {
			return 0, err
		}
		if _, err := db.Exec(`UPDATE runs SET status = 'success', end_at = ? WHERE id = ?`, time.Now().UnixNano(), i+1); err != nil {
			return 0, err
		}
	}
	return time.Since(start), nil
}

// lastRun returns the last ended run of a task (none if none): a run in
// progress is listed too, and has no end yet.
func (s *server) lastRun(ctx context.Context, task string) (*api.RunsResponse, error) {
	return s.client.ListRuns(ctx, api.RunsQuery{Task: task, Count: 1, Done: true})
}

// runChain starts the head of the chain and returns the time from its
// run's start to the end of the last task's run, as the server recorded
// them.
func runChain(s *server, n int) (time.Duration, error) {
	ctx := context.Background()
	last := fmt.Sprintf("chain%d", n-1)
	before, err := s.lastRun(ctx, last)
	if err != nil {
		return 0, err
	}
	if err := s.client.Event(ctx, "chain0", "start"); err != nil {
		return 0, err
	}
	deadline := time.Now().Add(30 * time.Minute)
	for {
		rs, err := s.lastRun(ctx, last)
		if err != nil {
			return 0, err
		}
		if len(rs.Runs) > 0 && (len(before.Runs) == 0 || rs.Runs[0].ID != before.Runs[0].ID) {
			head, err := s.lastRun(ctx, "chain0")
			if err != nil {
				return 0, err
			}
			return rs.Runs[0].End.Sub(head.Runs[0].Start), nil
		}
		if time.Now().After(deadline) {
			return 0, errors.New("the chain did not end in 30 minutes")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// shell: runs of the command true started and finished per second, 8 at a
// time (8 chains of condition-triggered tasks), against
// exec.Command("true").Run() in 8 goroutines.
func shell(args []string) error {
	fs := flag.NewFlagSet("shell", flag.ExitOnError)
	bin := fs.String("gnomon", "bin/gnomon", "gnomon binary")
	length := fs.Int("length", 250, "runs per chain (8 chains)")
	rounds := fs.Int("rounds", 3, "runs of each side")
	fs.Parse(args)
	const conc = 8
	fmt.Printf("\n## shell jobs: `true` runs per second, %d at a time (%d runs per round)\n", conc, conc**length)
	s, err := startServer(*bin, "--workers", fmt.Sprint(conc))
	if err != nil {
		return err
	}
	defer s.close()
	if err := s.define(func(first, n int) string { return bench.ShellChains(conc, *length, filepath.Join(s.dir, "logs")) }, 1, 1); err != nil {
		return err
	}
	var base, g spread
	for range *rounds {
		b := rawExec(conc, conc**length)
		base = append(base, b)
		r, err := runShell(s, conc, *length)
		if err != nil {
			return err
		}
		g = append(g, r)
	}
	line("runs/s", "/s", base, g)
	return nil
}

func rawExec(conc, n int) float64 {
	var wg sync.WaitGroup
	per := n / conc
	start := time.Now()
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range per {
				exec.Command("true").Run()
			}
		}()
	}
	wg.Wait()
	return float64(per*conc) / time.Since(start).Seconds()
}

func runShell(s *server, conc, length int) (float64, error) {
	ctx := context.Background()
	last := func(c int) string { return fmt.Sprintf("sh%d_%d", c, length-1) }
	before := map[int]int64{}
	for c := range conc {
		rs, err := s.lastRun(ctx, last(c))
		if err != nil {
			return 0, err
		}
		if len(rs.Runs) > 0 {
			before[c] = rs.Runs[0].ID
		}
	}
	for c := range conc {
		if err := s.client.Event(ctx, fmt.Sprintf("sh%d_0", c), "start"); err != nil {
			return 0, err
		}
	}
	var first, end time.Time
	for c := range conc {
		for {
			rs, err := s.lastRun(ctx, last(c))
			if err != nil {
				return 0, err
			}
			if len(rs.Runs) > 0 && rs.Runs[0].ID != before[c] {
				if rs.Runs[0].End.After(end) {
					end = rs.Runs[0].End
				}
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		head, err := s.lastRun(ctx, fmt.Sprintf("sh%d_0", c))
		if err != nil {
			return 0, err
		}
		if first.IsZero() || head.Runs[0].Start.Before(first) {
			first = head.Runs[0].Start
		}
	}
	// Every run of a sample of the tasks succeeded.
	for c := range conc {
		for i := 0; i < length; i += 50 {
			rs, err := s.lastRun(ctx, fmt.Sprintf("sh%d_%d", c, i))
			if err != nil {
				return 0, err
			}
			if len(rs.Runs) == 0 || rs.Runs[0].Status.String() != "success" {
				return 0, fmt.Errorf("sh%d_%d did not succeed: %+v", c, i, rs.Runs)
			}
		}
	}
	return float64(conc*length) / end.Sub(first).Seconds(), nil
}

// startup: time from starting the server to /healthz answering, and its
// resident memory then, with n task definitions stored.
func startup(args []string) error {
	fs := flag.NewFlagSet("startup", flag.ExitOnError)
	bin := fs.String("gnomon", "bin/gnomon", "gnomon binary")
	n := fs.Int("tasks", 1000000, "task definitions (a mix of calendars, intervals, cron and conditions)")
	rounds := fs.Int("rounds", 3, "restarts")
	st, pg := storeFlags(fs)
	fs.Parse(args)
	if err := checkStore(*st); err != nil {
		return err
	}
	var db []string // the server's arguments that name its database
	if *st == "postgres" {
		d, drop, err := freshDB(*pg)
		if err != nil {
			return err
		}
		defer drop()
		db = []string{"--db", d.URL}
		fmt.Printf("\n## start-up with %d task definitions on PostgreSQL\n# %s\n", *n, pgVersion(*pg))
	} else {
		fmt.Printf("\n## start-up with %d task definitions\n", *n)
	}
	s, err := startServer(*bin, db...)
	if err != nil {
		return err
	}
	defer os.RemoveAll(s.dir)
	t0 := time.Now()
	if err := s.define(bench.Mix, *n, 25000); err != nil {
		s.stop()
		return err
	}
	fmt.Printf("  (defined in %s)\n", time.Since(t0).Round(time.Millisecond))
	s.stop()
	var ready, mem spread
	for range *rounds {
		t := time.Now()
		r, err := startServerIn(*bin, s.dir, db...)
		if err != nil {
			return err
		}
		ready = append(ready, time.Since(t).Seconds())
		mem = append(mem, float64(rssKiB(r.cmd.Process.Pid))/1024)
		r.stop()
	}
	line("time to ready", "s", nil, ready)
	line("RSS when ready", "MiB", nil, mem)
	return nil
}

func counts(s string) []int {
	var out []int
	for _, f := range strings.Split(s, ",") {
		var n int
		if _, err := fmt.Sscan(strings.TrimSpace(f), &n); err == nil && n > 0 {
			out = append(out, n)
		}
	}
	return out
}

// rssKiB reads a process's resident set size in KiB.
func rssKiB(pid int) int {
	var kib int
	fmt.Sscanf(strings.TrimSuffix(rss(pid), " kB"), "%d", &kib)
	return kib
}

// all runs every benchmark, each at least 3 rounds; quick shortens them
// to fit in a few minutes on 2 cores.
func all(args []string) error {
	fs := flag.NewFlagSet("all", flag.ExitOnError)
	bin := fs.String("gnomon", "bin/gnomon", "gnomon binary")
	quick := fs.Bool("quick", false, "shorter runs and smaller sizes (a few minutes on 2 cores)")
	pg := fs.String("pg", bench.PGBase(), "PostgreSQL server of the benchmarks on PostgreSQL (default $GNOMON_BENCH_PG); they are left out when it does not answer")
	fs.Parse(args)
	g := "-gnomon=" + *bin
	p := []string{"-store=postgres", "-pg=" + *pg}
	onPG := func(a ...string) []string { return append(slices.Clone(p), a...) }
	type step struct {
		run        func([]string) error
		full, fast []string
		pg         bool // on PostgreSQL
		rounds     int  // 0 for 3
	}
	steps := []step{
		{events, []string{g, "-configs=3,10000,1000000", "-duration=10s"}, []string{g, "-configs=3,10000", "-duration=3s"}, false, 0},
		{events, onPG(g, "-configs=3,10000", "-duration=10s"), onPG(g, "-configs=3,10000", "-duration=3s"), true, 0},
		{commits, []string{"-duration=5s"}, []string{"-duration=2s"}, false, 0},
		{commits, onPG("-duration=5s"), onPG("-duration=2s"), true, 0},
		{lateness, []string{g, "-schedules=10000,100000", "-window=30s"}, []string{g, "-schedules=10000", "-window=10s"}, false, 0},
		{chain, []string{g, "-length=10000", "-unrelated=100,1000000"}, []string{g, "-length=2000", "-unrelated=100,10000"}, false, 0},
		{shell, []string{g, "-length=250"}, []string{g, "-length=100"}, false, 0},
		{startup, []string{g, "-tasks=1000000"}, []string{g, "-tasks=100000"}, false, 0},
		{startup, onPG(g, "-tasks=1000000"), onPG(g, "-tasks=100000"), true, 0},
		{crash, []string{g, "-configs=10000", "-duration=3s"}, []string{g, "-configs=10000", "-duration=1s"}, false, 0},
		{ui, []string{g, "-configs=3,10000,100000", "-duration=5s"}, []string{g, "-configs=3,10000", "-duration=2s"}, false, 0},
		{clocks, []string{g, "-pg=" + *pg, "-schedules=100000"}, []string{g, "-pg=" + *pg, "-schedules=20000", "-paced=5m"}, true, 0},
		// A storm is one long round: its figures are many samples each.
		{storm, []string{g, "-tasks=10000,100000", "-workers=10,64"}, []string{g, "-tasks=2000", "-workers=10"}, false, 1},
	}
	mode := "full"
	if *quick {
		mode = "quick"
	}
	fmt.Printf("# gnomon-bench all (%s): %d CPUs, %s, %s/%s; every figure is the median of 3 rounds (min, max), the baseline measured in the same run\n",
		mode, runtime.NumCPU(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
	pgErr := bench.ReachPG(*pg)
	if pgErr != nil {
		fmt.Printf("# PostgreSQL (-pg) does not answer, its benchmarks are left out: %v\n", pgErr)
	}
	t0 := time.Now()
	for _, s := range steps {
		if s.pg && pgErr != nil {
			continue
		}
		a := s.full
		if *quick {
			a = s.fast
		}
		rounds := 3
		if s.rounds > 0 {
			rounds = s.rounds
		}
		if err := s.run(append(a, fmt.Sprintf("-rounds=%d", rounds))); err != nil {
			return err
		}
	}
	fmt.Printf("\n# done in %s\n", time.Since(t0).Round(time.Second))
	return nil
}
