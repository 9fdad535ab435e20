package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gnomon-sched/gnomon/engine"
	"github.com/gnomon-sched/gnomon/eventdep"
	"github.com/gnomon-sched/gnomon/executor"
	"github.com/gnomon-sched/gnomon/scheduler"
	"github.com/gnomon-sched/gnomon/store"
)

// JournalBody returns what the journal holds for the i-th event of the
// stream for n configurations: the event and when it was received.
func JournalBody(i int64, n int) []byte {
	ev, _ := eventdep.DecodeEvent(EventBody(i, n))
	b, _ := json.Marshal(struct {
		engine.Data
		Received time.Time `json:"received"`
	}{engine.Data{Type: ev.Type, Resource: ev.Resource, At: ev.At}, time.Now().UTC()})
	return b
}

// SchedulerPosts runs a scheduler on st with 3 configurations, and counts
// the data events clients concurrent posters get accepted (durably) per
// second during d.
func SchedulerPosts(st store.Store, dir string, d time.Duration, clients int) (float64, error) {
	ctx := context.Background()
	runner, err := executor.NewLocal(executor.LocalConfig{Dir: filepath.Join(dir, "runs")})
	if err != nil {
		return 0, err
	}
	s, err := scheduler.New(ctx, scheduler.Config{Store: st, Runner: runner, DataDir: dir})
	if err != nil {
		return 0, err
	}
	if err := s.Start(ctx); err != nil {
		return 0, err
	}
	defer s.Stop(ctx)
	if _, err := s.Define(ctx, scheduler.DefineFile{File: "bench.json", Text: Configurations(0, 3)}); err != nil {
		return 0, err
	}
	var next, done atomic.Int64
	var wg sync.WaitGroup
	var ferr atomic.Value
	start := time.Now()
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Since(start) < d {
				ev, err := eventdep.DecodeEvent(EventBody(next.Add(1), 3))
				if err != nil {
					ferr.Store(err)
					return
				}
				if _, err := s.Post(ctx, engine.Data{Type: ev.Type, Resource: ev.Resource, At: ev.At}); err != nil {
					ferr.Store(err)
					return
				}
				done.Add(1)
			}
		}()
	}
	wg.Wait()
	if err, ok := ferr.Load().(error); ok {
		return 0, err
	}
	return float64(done.Load()) / time.Since(start).Seconds(), nil
}

// Unrelated returns n manual function tasks u<first>...: tasks nothing
// else refers to.
func Unrelated(first, n int) string {
	var b strings.Builder
	for k := first; k < first+n; k++ {
		fmt.Fprintf(&b, "insert_task: u%d\ntype: callable\nfunction: log\n\n", k)
	}
	return b.String()
}

// Chain returns tasks chain<first>... of a chain: each starts when the
// previous one succeeds, and calls the built-in function log.
func Chain(first, n int) string {
	var b strings.Builder
	for k := first; k < first+n; k++ {
		fmt.Fprintf(&b, "insert_task: chain%d\ntype: callable\nfunction: log\n", k)
		if k > 0 {
			fmt.Fprintf(&b, "condition: su(chain%d)\n", k-1)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// ShellChains returns conc chains sh<c>_<i> of length tasks running the
// command true, each starting when the previous one succeeds.
func ShellChains(conc, length int, dir string) string {
	var b strings.Builder
	for c := range conc {
		for i := range length {
			fmt.Fprintf(&b, "insert_task: sh%d_%d\ntype: callable\ncommand: true\nout_log_file: %s/sh.out\nerr_log_file: %s/sh.err\n", c, i, dir, dir)
			if i > 0 {
				fmt.Fprintf(&b, "condition: su(sh%d_%d)\n", c, i-1)
			}
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// EverySecondOfMinute returns function tasks s<first>... each firing once a
// minute, task k at second k mod 60 (cron: CronSpec(k)).
func EverySecondOfMinute(first, n int) string {
	var b strings.Builder
	for k := first; k < first+n; k++ {
		fmt.Fprintf(&b, "insert_task: s%d\ntype: callable\nfunction: log\ncron: %s\n\n", k, CronSpec(k))
	}
	return b.String()
}

// Mix returns n tasks m<first>...: a quarter each of calendars, intervals,
// cron expressions and condition-triggered tasks.
func Mix(first, n int) string {
	var b strings.Builder
	for k := first; k < first+n; k++ {
		fmt.Fprintf(&b, "insert_task: m%d\ntype: callable\ncommand: true\nout_log_file: /dev/null\nerr_log_file: /dev/null\n", k)
		switch k % 4 {
		case 0:
			fmt.Fprintf(&b, "run_days: mo,we,fr\nstart_times: %02d:%02d\n", k%24, k%60)
		case 1:
			fmt.Fprintf(&b, "start_date: 2026-01-01 %02d:%02d\ninterval: %d hours\n", k%24, k%60, 1+k%12)
		case 2:
			fmt.Fprintf(&b, "cron: %d %d * * *\n", k%60, k%24)
		case 3:
			fmt.Fprintf(&b, "condition: su(m%d)\n", k-3)
		}
		b.WriteByte('\n')
	}
	return b.String()
}
