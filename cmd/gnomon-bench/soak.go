package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/gnomon-sched/gnomon/engine"
	"github.com/gnomon-sched/gnomon/executor"
	"github.com/gnomon-sched/gnomon/scheduler"
	"github.com/gnomon-sched/gnomon/store"
	"github.com/gnomon-sched/gnomon/store/sqlite"
)

// soak runs a scheduler on a virtual clock through simulated days of a
// steady shape (tasks every minute, hourly and daily, a configuration fed
// data events, posted at the start of each hour with timestamps over it),
// the runs Go functions in process, on a SQLite file; a
// pass of the pruner runs at the end of each simulated day, as the
// server's every 10 minutes would (at most a day later). Every -report
// days it prints the database's size (file and WAL), its rows, audit.log's
// size, the heap in use and the process's resident memory, so that what
// grows and what levels off shows.
func soak(args []string) error {
	fs := flag.NewFlagSet("soak", flag.ExitOnError)
	days := fs.Int("days", 365, "simulated days")
	report := fs.Int("report", 30, "report every this many simulated days")
	minutely := fs.Int("every-minute", 2, "tasks every minute")
	hourly := fs.Int("hourly", 20, "tasks every hour")
	daily := fs.Int("daily", 200, "tasks every day")
	events := fs.Int("events", 1, "data events a minute, to one configuration")
	retention := fs.String("retention", "", "server --retention settings, comma-separated (default: the defaults); none keeps everything")
	dir := fs.String("dir", "", "directory for the database (default: a new one under the system's temporary directory; /dev/shm keeps fsync out of the figures)")
	fs.Parse(args)
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
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		return err
	}
	defer st.Close()
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := scheduler.NewVirtualClock(start)
	ok := func(context.Context, *executor.Call) error { return nil }
	runner, err := executor.NewLocal(executor.LocalConfig{Dir: filepath.Join(*dir, "runs"), Clock: clock,
		Functions: func(string) executor.Func { return ok }})
	if err != nil {
		return err
	}
	defer runner.Wait()
	s, err := scheduler.New(ctx, scheduler.Config{Store: st, Runner: runner, DataDir: *dir, Clock: clock, Location: time.UTC,
		Workers: 64, Functions: func(string) bool { return true }, Retention: r})
	if err != nil {
		return err
	}
	if err := s.Start(ctx); err != nil {
		return err
	}
	defer s.Stop(ctx)
	var defs strings.Builder
	task := func(name, cron string) {
		fmt.Fprintf(&defs, "insert_task: %s\ntype: callable\nfunction: ok\ncron: %s\n\n", name, cron)
	}
	for i := range *minutely {
		task(fmt.Sprintf("minutely_%d", i), "* * * * *")
	}
	for i := range *hourly {
		task(fmt.Sprintf("hourly_%d", i), fmt.Sprintf("%d * * * *", i%60))
	}
	for i := range *daily {
		task(fmt.Sprintf("daily_%d", i), fmt.Sprintf("%d %d * * *", i%60, i%24))
	}
	defs.WriteString("insert_task: loader\ntype: configuration\nfunction: ok\ndependencies: [{\"type\":\"FILE\",\"resourceId\":\"/in/\",\"lifeDuration\":3600}]\n")
	if _, err := s.Define(ctx, scheduler.DefineFile{File: "soak.def", Text: defs.String()}); err != nil {
		return err
	}
	fmt.Printf("\n## soak: %d simulated days, %d tasks every minute, %d hourly, %d daily, %d data events a minute; retention %s\n",
		*days, *minutely, *hourly, *daily, *events, s.Retention())
	fmt.Printf("# machine: %d CPUs, %s, %s/%s; database %s\n", runtime.NumCPU(), runtime.Version(), runtime.GOOS, runtime.GOARCH, path)
	fmt.Printf("%5s %9s %9s %9s %9s %9s %9s %10s %8s %8s %9s %8s\n", "day", "db MiB", "wal MiB", "journal", "runs", "fires", "audit", "audit.log", "heap", "rss", "pruned", "wall")
	wall := time.Now()
	var pruned store.Pruned
	gap := time.Minute / time.Duration(max(*events, 1))
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
		if d%*report == 0 || d == *days {
			if err := soakRow(path, *dir, d, pruned.Total(), time.Since(wall)); err != nil {
				return err
			}
			pruned = store.Pruned{}
		}
	}
	return nil
}

// soakRow prints one row of the soak's report.
func soakRow(path, dir string, day int, pruned int64, wall time.Duration) error {
	size := func(p string) float64 {
		fi, err := os.Stat(p)
		if err != nil {
			return 0
		}
		return float64(fi.Size()) / (1 << 20)
	}
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		return err
	}
	defer db.Close()
	var counts [4]int64
	for i, table := range []string{"journal", "runs", "fires", "audit"} {
		if err := db.QueryRow(`SELECT count(*) FROM ` + table).Scan(&counts[i]); err != nil {
			return err
		}
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	audit, _ := os.Stat(filepath.Join(dir, scheduler.AuditFile))
	var auditMiB float64
	if audit != nil {
		auditMiB = float64(audit.Size()) / (1 << 20)
	}
	fmt.Printf("%5d %9.1f %9.1f %9d %9d %9d %9d %9.1fM %7.0fM %7.0fM %9d %8s\n", day, size(path), size(path+"-wal"), counts[0], counts[1], counts[2], counts[3],
		auditMiB, float64(ms.HeapInuse)/(1<<20), rssMiB(), pruned, wall.Round(time.Second))
	return nil
}

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
