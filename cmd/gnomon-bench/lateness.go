package main

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gnomon-sched/gnomon/internal/bench"
)

// lateness: the delay between each occurrence's due instant and its
// start, with n schedules spread over each minute, for gnomon, for the Go
// libraries a user might pick instead (bench.Peers), and for a bare heap
// and one timer firing the same instants.
//
// Every scheduler gets the same schedules (k%60 * * * * *, in UTC) and the
// same window: it starts, takes all n schedules, waits a settling second,
// and its fires of the occurrences due in the next -window are counted.
// gnomon and each library run in a fresh process of their own, one at a
// time, with this process waiting; the baseline runs in this process.
// Each round measures all of them once, in an order that rotates from
// round to round, so that a drift of a shared machine falls on all alike.
func lateness(args []string) error {
	fs := flag.NewFlagSet("lateness", flag.ExitOnError)
	bin := fs.String("gnomon", "bin/gnomon", "gnomon binary")
	sizes := fs.String("schedules", "10000,100000", "numbers of schedules, comma-separated")
	window := fs.Duration("window", time.Minute, "length of each measured window")
	rounds := fs.Int("rounds", 3, "windows of each scheduler")
	peerNames := fs.String("peers", strings.Join(bench.Peers(), ","), "libraries measured beside gnomon, comma-separated; empty for none")
	fs.Parse(args)
	w := latenessWindow{settle: time.Second, window: *window, drain: time.Second, grace: 10 * time.Second}
	cs := []contender{{"baseline", baselineLateness}, {"gnomon", gnomonLateness(*bin)}}
	for _, name := range strings.Split(*peerNames, ",") {
		if name = strings.TrimSpace(name); name == "" {
			continue
		}
		if !slices.Contains(bench.Peers(), name) {
			return fmt.Errorf("-peers: no peer %q (have %s)", name, strings.Join(bench.Peers(), ", "))
		}
		cs = append(cs, contender{name, peerLateness(name)})
	}
	fmt.Printf("\n## fire lateness: start minus due instant, schedules spread over each minute, a %s window per round\n", *window)
	fmt.Printf("# every scheduler in turn in each round, each in a process of its own but the baseline, %s settling before the window\n", w.settle)
	for _, c := range cs[2:] {
		fmt.Printf("# %s: %s, in-process in its own child\n", c.name, bench.PeerVersion(c.name))
	}
	for _, n := range counts(*sizes) {
		res := make([][]latenessRound, len(cs))
		for r := range *rounds {
			for i := range cs {
				c := (r + i) % len(cs)
				l, err := cs[c].run(n, w)
				if err != nil {
					return fmt.Errorf("%s with %d schedules: %w", cs[c].name, n, err)
				}
				if len(l.Late) == 0 {
					return fmt.Errorf("%s with %d schedules: no fire in the window", cs[c].name, n)
				}
				res[c] = append(res[c], l)
			}
		}
		fmt.Printf("  %d schedules (%d fires a second), %d rounds:\n", n, n/60, *rounds)
		fmt.Printf("    %-12s %-37s %-37s %-37s %s\n", "", "p50 ms", "p99 ms", "max ms", "fired/due (doubled, missed, stray); setup, RSS")
		var ratios []string
		for i, c := range cs {
			var p50, p99, pmax spread
			var due, fired, doubled, stray int
			for _, l := range res[i] {
				p50, p99, pmax = append(p50, pct(l.Late, 50)), append(p99, pct(l.Late, 99)), append(pmax, pct(l.Late, 100))
				due, fired, doubled, stray = due+l.Due, fired+l.Fired, doubled+l.Doubled, stray+l.Stray
			}
			last := res[i][len(res[i])-1]
			extra := ""
			if c.name != "baseline" {
				extra = fmt.Sprintf("; %s, %d MiB", last.Setup.Round(time.Millisecond), last.RSSKiB/1024)
			}
			fmt.Printf("    %-12s %-37s %-37s %-37s %d/%d (%d, %d, %d)%s\n", c.name, p50, p99, pmax, fired+doubled+stray, due, doubled, due-fired, stray, extra)
			if i > 0 {
				var base spread
				for _, l := range res[0] {
					base = append(base, pct(l.Late, 99))
				}
				ratios = append(ratios, fmt.Sprintf("%s %.2f", c.name, p99.median()/base.median()))
			}
		}
		fmt.Printf("    p99 ratio to the baseline: %s\n", strings.Join(ratios, ", "))
	}
	return nil
}

// latenessWindow is when a scheduler's fires are counted: the occurrences
// due in window, which begins settle after it has taken its schedules. A
// scheduler gets at least drain after the window and at most grace for
// their fires; a later one counts as missed.
type latenessWindow struct {
	settle, window, drain, grace time.Duration
}

// latenessRound is one scheduler's window: its Lateness, how long it took
// to take its schedules and start, and its resident memory at the end.
type latenessRound struct {
	bench.Lateness
	Setup  time.Duration
	RSSKiB int
}

// contender is a scheduler the lateness benchmark measures.
type contender struct {
	name string
	run  func(n int, w latenessWindow) (latenessRound, error)
}

// baselineLateness runs the heap and timer in this process.
func baselineLateness(n int, w latenessWindow) (latenessRound, error) {
	from := time.Now().Add(w.settle)
	to := from.Add(w.window)
	fires := bench.HeapTimer(n, to.Add(w.drain))
	return latenessRound{Lateness: bench.Tally(n, from, to, fires)}, nil
}

// gnomonLateness starts a server (--workers 2000) on a fresh data
// directory, defines n tasks running the built-in function log, and reads
// its runs' recorded starts and due instants from its database.
func gnomonLateness(bin string) func(int, latenessWindow) (latenessRound, error) {
	return func(n int, w latenessWindow) (latenessRound, error) {
		t0 := time.Now()
		s, err := startServer(bin, "--workers", "2000")
		if err != nil {
			return latenessRound{}, err
		}
		defer s.close()
		if err := s.define(bench.EverySecondOfMinute, n, 40000); err != nil {
			return latenessRound{}, err
		}
		setup := time.Since(t0)
		from := time.Now().Add(w.settle)
		to := from.Add(w.window)
		l, err := bench.Await(n, from, to, w.drain, w.grace, func() ([]bench.Fire, error) { return serverFires(s.dir, from, to) })
		return latenessRound{Lateness: l, Setup: setup, RSSKiB: rssKiB(s.cmd.Process.Pid)}, err
	}
}

// serverFires reads, from a running server's database, the runs of
// occurrences due in [from, to) of the tasks s<k>.
func serverFires(dir string, from, to time.Time) ([]bench.Fire, error) {
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "gnomon.db")+"?_pragma=query_only(1)&_pragma=busy_timeout(10000)")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	rows, err := db.Query(`SELECT task, scheduled, start_at FROM runs WHERE scheduled >= ? AND scheduled < ?`, from.UnixNano(), to.UnixNano())
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []bench.Fire
	for rows.Next() {
		var (
			task string
			f    bench.Fire
		)
		if err := rows.Scan(&task, &f.Due, &f.At); err != nil {
			return nil, err
		}
		if f.K, err = strconv.Atoi(strings.TrimPrefix(task, "s")); err != nil || !strings.HasPrefix(task, "s") {
			f.K = -1 // not a task of the benchmark: counted as stray
		}
		out = append(out, f)
	}
	return out, rows.Err()
}

// peerLateness runs the library name in a child process of this binary
// (gnomon-bench peer), like gnomon in a runtime of its own: no library's
// heap, goroutines or timers outlive its round or weigh on another's.
func peerLateness(name string) func(int, latenessWindow) (latenessRound, error) {
	return func(n int, w latenessWindow) (latenessRound, error) {
		self, err := os.Executable()
		if err != nil {
			return latenessRound{}, err
		}
		dir, err := os.MkdirTemp("", "gnomon-bench-peer-")
		if err != nil {
			return latenessRound{}, err
		}
		defer os.RemoveAll(dir)
		out := filepath.Join(dir, "round.json")
		cmd := exec.Command(self, "peer", "-lib", name, "-schedules", strconv.Itoa(n),
			"-settle", w.settle.String(), "-window", w.window.String(), "-drain", w.drain.String(), "-grace", w.grace.String(), "-out", out)
		var msg bytes.Buffer
		cmd.Stdout, cmd.Stderr = &msg, &msg
		if err := cmd.Run(); err != nil {
			return latenessRound{}, fmt.Errorf("%w: %s", err, bytes.TrimSpace(msg.Bytes()))
		}
		b, err := os.ReadFile(out)
		if err != nil {
			return latenessRound{}, err
		}
		var r latenessRound
		if err := json.Unmarshal(b, &r); err != nil {
			return latenessRound{}, fmt.Errorf("read %s's round: %w", name, err)
		}
		return r, nil
	}
}

// peer runs one round of the lateness benchmark for a library, in this
// process, and writes it as JSON to -out; lateness starts it.
func peer(args []string) error {
	fs := flag.NewFlagSet("peer", flag.ExitOnError)
	lib := fs.String("lib", "", "the library: "+strings.Join(bench.Peers(), ", "))
	n := fs.Int("schedules", 10000, "number of schedules")
	var w latenessWindow
	fs.DurationVar(&w.settle, "settle", time.Second, "wait after starting, before the window")
	fs.DurationVar(&w.window, "window", time.Minute, "length of the measured window")
	fs.DurationVar(&w.drain, "drain", time.Second, "wait after the window at least")
	fs.DurationVar(&w.grace, "grace", 10*time.Second, "wait after the window at most")
	out := fs.String("out", "", "file to write the round to")
	fs.Parse(args)
	if *out == "" {
		return errors.New("peer: -out is required")
	}
	room := *n * (int((w.settle+w.window+w.grace)/time.Minute) + 2)
	t0 := time.Now()
	p, err := bench.StartPeer(*lib, *n, room)
	if err != nil {
		return err
	}
	setup := time.Since(t0)
	from := time.Now().Add(w.settle)
	to := from.Add(w.window)
	l, err := bench.Await(*n, from, to, w.drain, w.grace, p.Fires)
	mem := rssKiB(os.Getpid())
	if serr := p.Stop(); err == nil && serr != nil {
		err = fmt.Errorf("stop %s: %w", *lib, serr)
	}
	if err != nil {
		return err
	}
	b, err := json.Marshal(latenessRound{Lateness: l, Setup: setup, RSSKiB: mem})
	if err != nil {
		return err
	}
	return os.WriteFile(*out, b, 0o644)
}

// pct returns the p-th percentile of the sorted l in milliseconds; p 100
// is the maximum.
func pct(l []time.Duration, p int) float64 {
	i := min(len(l)-1, len(l)*p/100)
	return float64(l[i]) / float64(time.Millisecond)
}
