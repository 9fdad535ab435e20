package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gnomon-sched/gnomon/engine"
	"github.com/gnomon-sched/gnomon/executor"
	"github.com/gnomon-sched/gnomon/internal/bench"
	"github.com/gnomon-sched/gnomon/internal/smtptest"
	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/notify"
	"github.com/gnomon-sched/gnomon/scheduler"
	"github.com/gnomon-sched/gnomon/store"
	"github.com/gnomon-sched/gnomon/store/postgres"
	"github.com/gnomon-sched/gnomon/store/sqlite"
)

// soak runs a scheduler on a virtual clock through simulated days of a
// steady mix: tasks every minute, hourly, daily and on an interval of 6
// hours; chains of daily tasks, each starting when the one before
// succeeded; tasks whose run fails at its first attempt, retried once,
// that alert each failure to an SMTP server on loopback; a configuration
// fed data events. The runs are Go functions in process, so that a year
// passes in minutes. A pass of the pruner runs at the end of each
// simulated day, as the server's every 10 minutes would (at most a day
// later).
//
// Every -report days the scheduler is stopped and started again on the
// same store, and the report gives: the database's size and rows, the
// bytes of log files, the heap and the resident memory, how long the
// start took (until the loop's first answer), the p99 of reads a client
// makes (a task from the View, a task's last runs and the last failures
// from the store), and how many errors were logged. What grows and what
// levels off shows.
func soak(args []string) error {
	fs := flag.NewFlagSet("soak", flag.ExitOnError)
	days := fs.Int("days", 365, "simulated days")
	report := fs.Int("report", 30, "report (and restart) every this many simulated days")
	minutely := fs.Int("every-minute", 2, "tasks every minute")
	hourly := fs.Int("hourly", 100, "tasks every hour")
	daily := fs.Int("daily", 8000, "tasks every day, on their own")
	interval := fs.Int("interval", 1500, "tasks on an interval trigger of 6 hours")
	chains := fs.Int("chains", 30, "chains of 10 daily tasks, each starting when the one before succeeded")
	retrying := fs.Int("retrying", 98, "daily tasks whose run fails at its first attempt, retried once after 5 minutes (half of them fail again), alerting each retry and failure by mail")
	events := fs.Int("events", 2, "data events a simulated minute, to one configuration")
	retention := fs.String("retention", "", "server --retention settings, comma-separated (default: the defaults); none keeps everything")
	rotateMiB := fs.Int64("log-rotate-mib", 0, "rotate audit.log at this many MiB, keeping -log-keep files (the server's --log-rotate-size; default 0: never)")
	logKeep := fs.Int("log-keep", 5, "rotated audit.log files kept, with -log-rotate-mib")
	dir := fs.String("dir", "", "directory for the data (default: a new one under the system's temporary directory; /dev/shm keeps fsync out of the figures)")
	storeKind := fs.String("store", "sqlite", "sqlite, or postgres (a new database on -pg, dropped at the end)")
	pg := fs.String("pg", bench.PGBase(), "PostgreSQL server for -store postgres (default $GNOMON_BENCH_PG)")
	profile := fs.String("cpuprofile", "", "write a CPU profile of the whole soak to this file")
	fs.Parse(args)
	if *profile != "" {
		f, err := os.Create(*profile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	var r scheduler.Retention
	switch *retention {
	case "":
	case "none":
		for _, k := range scheduler.RetentionKinds {
			if err := r.Set(k + "=forever"); err != nil {
				return err
			}
		}
	default:
		for _, s := range strings.Split(*retention, ",") {
			if err := r.Set(s); err != nil {
				return err
			}
		}
	}
	if *dir == "" {
		d, err := os.MkdirTemp("", "gnomon-soak-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		*dir = d
	}
	ctx := context.Background()
	path := filepath.Join(*dir, "gnomon.db")
	var open func() (store.Store, error)
	switch *storeKind {
	case "sqlite":
		open = func() (store.Store, error) { return sqlite.Open(ctx, path) }
	case "postgres":
		db, drop, err := freshDB(*pg)
		if err != nil {
			return err
		}
		defer drop()
		open = func() (store.Store, error) { return postgres.Open(ctx, db.URL) }
		path = db.URL
	default:
		return fmt.Errorf("-store %q: sqlite or postgres", *storeKind)
	}
	mailbox, err := smtptest.Listen("127.0.0.1:0", nil)
	if err != nil {
		return err
	}
	defer mailbox.Close()
	mailbox.CountOnly = true // the process's memory is gnomon's, not the mails'

	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := scheduler.NewVirtualClock(start)
	errorsLogged := &countingHandler{}
	logger := slog.New(errorsLogged)
	functions := func(name string) executor.Func {
		switch name {
		case "ok":
			return func(context.Context, *executor.Call) error { return nil }
		case "flaky": // fails at the first attempt of each run; an odd one at the retry too
			return func(_ context.Context, c *executor.Call) error {
				if c.Attempt == 0 {
					return errors.New("the first attempt fails")
				}
				if n, _ := strconv.Atoi(strings.TrimPrefix(c.Task, "flaky_")); n%2 == 1 {
					return errors.New("the retry fails too")
				}
				return nil
			}
		}
		return nil
	}
	mailer, err := notify.New(notify.Config{Addr: mailbox.Addr, From: "gnomon@soak.test", TLS: notify.TLSNone, Clock: clock, Location: time.UTC})
	if err != nil {
		return err
	}
	// up opens the store and starts a scheduler on it; it returns how long
	// that took, until the loop answered a first read.
	var (
		st     store.Store
		s      *scheduler.Scheduler
		runner *executor.Local
	)
	up := func() (time.Duration, error) {
		began := time.Now()
		var err error
		if st, err = open(); err != nil {
			return 0, err
		}
		if runner, err = executor.NewLocal(executor.LocalConfig{Dir: filepath.Join(*dir, "runs"), Clock: clock, Functions: functions, Logger: logger}); err != nil {
			return 0, err
		}
		s, err = scheduler.New(ctx, scheduler.Config{Store: st, Runner: runner, DataDir: *dir, Clock: clock, Location: time.UTC,
			Workers: 64, Functions: func(name string) bool { return functions(name) != nil }, Retention: r, Mailer: mailer, Logger: logger,
			AuditRotation: job.LogRotation{Size: *rotateMiB << 20, Keep: *logKeep}})
		if err != nil {
			return 0, err
		}
		if err := s.Start(ctx); err != nil {
			return 0, err
		}
		if err := s.Read(ctx, func(*engine.Engine) {}); err != nil {
			return 0, err
		}
		return time.Since(began), nil
	}
	down := func() error {
		err := s.Stop(ctx)
		runner.Wait()
		return errors.Join(err, st.Close())
	}
	if _, err := up(); err != nil {
		return err
	}

	var defs strings.Builder
	var names []string
	task := func(name, trigger string) {
		fmt.Fprintf(&defs, "insert_task: %s\ntype: callable\nfunction: ok\n%s\n\n", name, trigger)
		names = append(names, name)
	}
	for i := range *minutely {
		task(fmt.Sprintf("minutely_%d", i), "cron: * * * * *")
	}
	for i := range *hourly {
		task(fmt.Sprintf("hourly_%d", i), fmt.Sprintf("cron: %d * * * *", i%60))
	}
	for i := range *daily {
		task(fmt.Sprintf("daily_%d", i), fmt.Sprintf("cron: %d %d * * *", i%60, i%24))
	}
	for i := range *interval {
		task(fmt.Sprintf("every6h_%d", i), fmt.Sprintf("start_date: 2026-01-01 %02d:%02d\ninterval: 6 hours", i%6, i%60))
	}
	for c := range *chains {
		task(fmt.Sprintf("chain_%d_0", c), fmt.Sprintf("cron: %d %d * * *", c%60, c%24))
		for k := 1; k < 10; k++ {
			task(fmt.Sprintf("chain_%d_%d", c, k), fmt.Sprintf("condition: su(chain_%d_%d)", c, k-1))
		}
	}
	for i := range *retrying {
		fmt.Fprintf(&defs, "insert_task: flaky_%d\ntype: callable\nfunction: flaky\ncron: %d %d * * *\nn_retrys: 1\nretry_delay: 5m\nalert_on: retry, failure\nalert_to: ops@soak.test\n\n",
			i, i%60, i%24)
		names = append(names, fmt.Sprintf("flaky_%d", i))
	}
	defs.WriteString("insert_task: loader\ntype: configuration\nfunction: ok\ndependencies: [{\"type\":\"FILE\",\"resourceId\":\"/in/\",\"lifeDuration\":3600}]\n")
	if _, err := s.Define(ctx, scheduler.DefineFile{File: "soak.def", Text: defs.String()}); err != nil {
		return err
	}
	fmt.Printf("\n## soak: %d simulated days; %d tasks: %d every minute, %d hourly, %d daily, %d every 6 hours, %d in chains of 10, %d retried and alerting; %d data events a minute; %s store; retention %s\n",
		*days, len(names)+1, *minutely, *hourly, *daily, *interval, *chains*10, *retrying, *events, *storeKind, s.Retention())
	if *rotateMiB > 0 {
		fmt.Printf("# audit.log rotated at %d MiB, %d kept\n", *rotateMiB, *logKeep)
	}
	fmt.Printf("# machine: %d CPUs, %s, %s/%s; data %s\n", runtime.NumCPU(), runtime.Version(), runtime.GOOS, runtime.GOARCH, *dir)
	fmt.Printf("%5s %8s %9s %9s %9s %9s %8s %7s %6s %6s %8s %8s %8s %8s %7s %6s %8s\n", "day", "db MiB", "journal", "runs", "fires", "audit",
		"logs MiB", "mails", "heap", "rss", "start", "task p99", "runs p99", "fail p99", "pruned", "errors", "wall")
	wall := time.Now()
	var pruned store.Pruned
	gap := time.Minute / time.Duration(max(*events, 1))
	rng := rand.New(rand.NewPCG(1, 2))
	for d := 1; d <= *days; d++ {
		dayStart := start.Add(time.Duration(d-1) * 24 * time.Hour)
		// An hour at a time: its data events, stamped over the hour,
		// then the clock to its end (Advance stops at every due instant).
		for h := range 24 {
			hour := dayStart.Add(time.Duration(h) * time.Hour)
			for m := range 60 * *events {
				ts := hour.Add(time.Duration(m) * gap)
				if _, err := s.Post(ctx, engine.Data{Type: "FILE", Resource: "/in/" + strconv.Itoa(m), At: ts}); err != nil {
					return err
				}
			}
			if err := s.Advance(ctx, hour.Add(time.Hour-time.Second)); err != nil {
				return err
			}
		}
		n, err := s.Prune(ctx, false)
		if err != nil {
			return err
		}
		pruned.Add(n)
		if d%*report != 0 && d != *days {
			continue
		}
		reads, err := soakReads(ctx, s, names, rng)
		if err != nil {
			return err
		}
		if err := down(); err != nil {
			return err
		}
		row, err := soakSizes(*storeKind, path, *dir)
		if err != nil {
			return err
		}
		took, err := up()
		if err != nil {
			return err
		}
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		fmt.Printf("%5d %8.1f %9d %9d %9d %9d %8.1f %7d %5.0fM %5.0fM %8s %8s %8s %8s %7d %6d %8s\n", d, row.dbMiB, row.rows[0], row.rows[1], row.rows[2], row.rows[3],
			row.logMiB, mailbox.Count(), float64(ms.HeapInuse)/(1<<20), rssMiB(), took.Round(time.Millisecond),
			reads[0].Round(10*time.Microsecond), reads[1].Round(10*time.Microsecond), reads[2].Round(10*time.Microsecond),
			pruned.Total(), errorsLogged.n.Load(), time.Since(wall).Round(time.Second))
		pruned = store.Pruned{}
	}
	return down()
}

// soakReads makes 300 reads of each kind a client makes and returns the
// p99 of each: a task from the View, a task's last 20 runs, the last 100
// failures.
func soakReads(ctx context.Context, s *scheduler.Scheduler, names []string, rng *rand.Rand) ([3]time.Duration, error) {
	var p99 [3]time.Duration
	reads := []func(name string) error{
		func(name string) error {
			if _, _, ok := s.View().Task(name); !ok {
				return fmt.Errorf("task %s not in the view", name)
			}
			return nil
		},
		func(name string) error {
			_, err := s.Store().Runs(ctx, store.RunQuery{Task: name, Limit: 20})
			return err
		},
		func(string) error {
			_, err := s.Store().RunPage(ctx, store.RunPageQuery{Statuses: []job.Status{job.Failure}, Limit: 100})
			return err
		},
	}
	for i, read := range reads {
		took := make([]time.Duration, 300)
		for k := range took {
			name := names[rng.IntN(len(names))]
			began := time.Now()
			if err := read(name); err != nil {
				return p99, err
			}
			took[k] = time.Since(began)
		}
		slices.Sort(took)
		p99[i] = took[len(took)*99/100]
	}
	return p99, nil
}

// soakRowSizes is what a report row says of the data: the database's
// size, its rows (journal, runs, fires, audit) and the log files' bytes.
type soakRowSizes struct {
	dbMiB  float64
	rows   [4]int64
	logMiB float64
}

// soakSizes measures the data of a stopped scheduler.
func soakSizes(kind, path, dir string) (soakRowSizes, error) {
	var out soakRowSizes
	var db *sql.DB
	var err error
	tables := []string{"journal", "runs", "fires", "audit"}
	if kind == "sqlite" {
		for _, p := range []string{path, path + "-wal"} {
			if fi, err := os.Stat(p); err == nil {
				out.dbMiB += float64(fi.Size()) / (1 << 20)
			}
		}
		db, err = sql.Open("sqlite", "file:"+path+"?mode=ro")
	} else {
		db, err = sql.Open("pgx", path)
	}
	if err != nil {
		return out, err
	}
	defer db.Close()
	if kind != "sqlite" {
		var bytes int64
		if err := db.QueryRow(`SELECT pg_database_size(current_database())`).Scan(&bytes); err != nil {
			return out, err
		}
		out.dbMiB = float64(bytes) / (1 << 20)
	}
	for i, table := range tables {
		if err := db.QueryRow(`SELECT count(*) FROM ` + table).Scan(&out.rows[i]); err != nil {
			return out, err
		}
	}
	// The log files: audit.log and the tasks' logs, rotated ones too.
	err = filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() || strings.HasPrefix(filepath.Base(p), "gnomon.db") || filepath.Dir(p) == filepath.Join(dir, "runs") {
			return err
		}
		if fi, err := e.Info(); err == nil {
			out.logMiB += float64(fi.Size()) / (1 << 20)
		}
		return nil
	})
	return out, err
}

// countingHandler is a log handler that counts the errors logged and
// drops the rest.
type countingHandler struct{ n atomic.Int64 }

func (h *countingHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelError }
func (h *countingHandler) Handle(_ context.Context, r slog.Record) error {
	h.n.Add(1)
	fmt.Fprintf(os.Stderr, "soak: error logged: %s\n", r.Message)
	return nil
}
func (h *countingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *countingHandler) WithGroup(string) slog.Handler      { return h }

// rssMiB is the process's resident memory, from /proc/self/statm.
func rssMiB() float64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseInt(f[1], 10, 64)
	return float64(pages*int64(os.Getpagesize())) / (1 << 20)
}
