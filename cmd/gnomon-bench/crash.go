package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"net/http"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gnomon-sched/gnomon/auth"
	"github.com/gnomon-sched/gnomon/eventdep"
	"github.com/gnomon-sched/gnomon/internal/bench"
	"github.com/gnomon-sched/gnomon/scheduler"
	"github.com/gnomon-sched/gnomon/store/sqlite"
)

// crash: the event-ingest load against a server that is killed with
// SIGKILL in the middle of it, once per round, and restarted on the same
// data directory. At the end every event that got a 202 must be in the
// journal; the figure is the time from the restart to ready.
func crash(args []string) error {
	fs := flag.NewFlagSet("crash", flag.ExitOnError)
	bin := fs.String("gnomon", "bin/gnomon", "gnomon binary")
	n := fs.Int("configs", 10000, "configurations")
	conns := fs.Int("conns", 64, "concurrent connections")
	dur := fs.Duration("duration", 3*time.Second, "load before each kill")
	rounds := fs.Int("rounds", 3, "kills")
	fs.Parse(args)
	fmt.Printf("\n## SIGKILL during event ingest: %d configurations, %d connections, killed after %s of load, %d times\n", *n, *conns, *dur, *rounds)
	s, err := startServer(*bin)
	if err != nil {
		return err
	}
	defer func() { s.close() }()
	for first := 0; first < *n; first += 10000 {
		if _, err := s.client.Define(context.Background(), "bench.json", bench.Configurations(first, min(10000, *n-first)), false); err != nil {
			return fmt.Errorf("define configurations: %w", err)
		}
	}
	// The token outlives the restarts; the address does not: each
	// restart listens on a port of its own.
	token, err := benchToken(s.client, s.dir, auth.Ingest)
	if err != nil {
		return err
	}
	var (
		mu       sync.Mutex
		accepted []int64
		offset   int64
		ready    spread
	)
	for range *rounds {
		var issued atomic.Int64 // indexes are drawn in order from 0
		body := func(i int64) []byte {
			issued.Add(1)
			return bench.EventBody(offset+i, *n)
		}
		ok := func(i int64) {
			mu.Lock()
			accepted = append(accepted, offset+i)
			mu.Unlock()
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan bench.Result, 1)
		go func() {
			done <- bench.PostEach(ctx, "http://"+token+"@"+s.addr+"/events", *conns, time.Hour, http.StatusAccepted, body, ok)
		}()
		time.Sleep(*dur)
		s.cmd.Process.Kill()
		s.cmd.Wait()
		// Let the connections see the server gone, then stop them.
		time.Sleep(200 * time.Millisecond)
		cancel()
		r := <-done
		offset += issued.Load()
		t := time.Now()
		next, err := startServerIn(*bin, s.dir)
		if err != nil {
			return fmt.Errorf("restart after SIGKILL: %w", err)
		}
		ready = append(ready, time.Since(t).Seconds())
		s = next
		fmt.Printf("  round: %d events accepted before the kill (%.0f req/s), %d refused or cut\n", r.Requests, r.Rate(), r.Errors)
		if r.Requests == 0 {
			return errors.New("no event was accepted before the kill: the round tested nothing")
		}
	}
	s.stop()
	line("restart after SIGKILL, to ready", "s", nil, ready)
	missing, err := notJournaled(filepath.Join(s.dir, "gnomon.db"), accepted, *n)
	if err != nil {
		return err
	}
	if len(missing) > 0 {
		return fmt.Errorf("%d of %d events that got a 202 are not in the journal, the first: %s", len(missing), len(accepted), bench.EventBody(missing[0], *n))
	}
	fmt.Printf("  all %d events that got a 202 are in the journal\n", len(accepted))
	return nil
}

// notJournaled returns the events of the stream, by index, that the
// journal of the database at path does not hold.
func notJournaled(path string, indexes []int64, n int) ([]int64, error) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	received, err := scheduler.ReceivedEvents(ctx, st, "", math.MaxInt, math.MaxInt)
	if err != nil {
		return nil, err
	}
	type key struct {
		typ, res string
		ts       int64
	}
	stored := make(map[key]bool, len(received))
	for _, r := range received {
		stored[key{string(r.Type), r.Resource, r.TS.UnixNano()}] = true
	}
	var missing []int64
	for _, i := range indexes {
		ev, err := eventdep.DecodeEvent(bench.EventBody(i, n))
		if err != nil {
			return nil, err
		}
		if !stored[key{string(ev.Type), ev.Resource, ev.At.UnixNano()}] {
			missing = append(missing, i)
		}
	}
	return missing, nil
}
