package api_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon"
	"github.com/gnomon-sched/gnomon/api"
	"github.com/gnomon-sched/gnomon/auth"
	"github.com/gnomon-sched/gnomon/internal/bench"
	"github.com/gnomon-sched/gnomon/internal/gcfloor"
)

// ingest is one scheduler on its SQLite store, with the event-ingest
// benchmark's configurations, serving its API on two loopback listeners:
// guarded, as gnomon server serves it, and unguarded, the same routes
// without authentication.
type ingest struct {
	sched              *gnomon.Scheduler
	configs            int
	token              string // of the ingest role, without a rate limit
	guarded, unguarded string // host:port
}

// startIngest assembles a scheduler as gnomon server does (gnomon.New on
// the SQLite database of a fresh data directory, the real clock, UTC),
// applies n configurations of the event-ingest benchmark, and makes the
// token gnomon-bench gives its load: the ingest role, no rate limit. It
// serves Handler, with gnomon server's default token rate, on one
// listener, and the same Handler's routes without the guard on another,
// both with the limits gnomon server sets on its HTTP server.
func startIngest(tb testing.TB, n int) *ingest {
	tb.Helper()
	ctx := context.Background()
	s, err := gnomon.New(gnomon.Config{DataDir: tb.TempDir(), Location: time.UTC})
	if err != nil {
		tb.Fatal(err)
	}
	if err := s.Start(ctx); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := s.Stop(ctx); err != nil {
			tb.Error(err)
		}
	})
	if err := s.Apply(ctx, "bench.json", bench.Configurations(0, n)); err != nil {
		tb.Fatal(err)
	}
	tok, err := s.NewToken(ctx, auth.Request{Name: "bench-ingest", Role: auth.Ingest, Rate: auth.Unlimited})
	if err != nil {
		tb.Fatal(err)
	}
	h := s.Handler(gnomon.HandlerConfig{TokenRate: 100}) // gnomon server's --token-rate default
	return &ingest{sched: s, configs: n, token: tok, guarded: serve(tb, h), unguarded: serve(tb, api.Unguarded(h))}
}

// events is the URL of POST /events at addr, with the token as bench.Post
// sends it: both sides get the same requests, header included.
func (in *ingest) events(addr string) string { return "http://" + in.token + "@" + addr + "/events" }

// serve serves h on a loopback port with the limits gnomon server sets on
// its HTTP server (cli.limitClients) until the test ends, and returns the
// address.
func serve(tb testing.TB, h http.Handler) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: 5 * time.Minute, IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 64 << 10,
		ErrorLog: log.New(io.Discard, "", 0)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		srv.Serve(ln)
	}()
	tb.Cleanup(func() {
		srv.Shutdown(context.Background())
		<-done
	})
	return ln.Addr().String()
}

// TestIngestSides checks the two sides the ingest benchmark compares:
// the guarded API refuses an event without the token and journals the
// token's name with one it accepts; the unguarded routes accept both and
// journal no name.
func TestIngestSides(t *testing.T) {
	t.Parallel()
	in := startIngest(t, 3)
	ctx := context.Background()
	for i, c := range []struct {
		name   string
		addr   string
		token  bool
		status int
		by     bool // the journal names the token
	}{
		{"guarded with the token", in.guarded, true, http.StatusAccepted, true},
		{"guarded without a token", in.guarded, false, http.StatusUnauthorized, false},
		{"unguarded with the token", in.unguarded, true, http.StatusAccepted, false},
		{"unguarded without a token", in.unguarded, false, http.StatusAccepted, false},
	} {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+c.addr+"/events", strings.NewReader(string(bench.EventBody(int64(i), 3))))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		if c.token {
			req.Header.Set("Authorization", "Bearer "+in.token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.status {
			t.Errorf("%s: status %d, want %d", c.name, resp.StatusCode, c.status)
			continue
		}
		if c.status != http.StatusAccepted {
			continue
		}
		last, err := in.sched.Store().JournalBefore(ctx, "data", 0, 1)
		if err != nil || len(last) != 1 {
			t.Fatalf("%s: journal: %v, %d entries", c.name, err, len(last))
		}
		if by := strings.Contains(string(last[0].Body), `"by":"bench-ingest"`); by != c.by {
			t.Errorf("%s: journal entry %s names the token: %v, want %v", c.name, last[0].Body, by, c.by)
		}
	}
}

// BenchmarkIngestAuth is the event-ingest benchmark (gnomon-bench events)
// with authentication, as every gnomon server runs, and without it, in the
// same run: one scheduler on its SQLite store, its API served on two
// loopback listeners, one through the guard (host check, origin check,
// bearer token, the token's rate) and one straight to the routes
// (Unguarded, which only this package's tests have). The unguarded side
// has no identity, so its journal entries name no one: recording who
// posted is part of what authentication costs. The load is bench.Post's,
// 64 keep-alive connections posting the same stream of events with the
// same headers to either; rounds alternate the two sides in slices of a
// quarter of a second, so that both see the same state of a shared
// machine (whose speed drifts within seconds), and each round's ratio is
// of its own two sides. Unlike gnomon-bench, the load generator runs in
// the servers' process; it is the same for both sides.
//
// It reports the median of the rounds' ratios (with/without), the median
// round's requests a second of each side, the p99 latency of each over all
// its requests, and the CPU of the whole process (server and load
// generator) per request of each. With -short: 3 configurations, 3 rounds
// of 8 pairs of slices (12 s of load); otherwise 3 and 10^4
// configurations, 5 rounds of 20 pairs each (50 s of load each).
func BenchmarkIngestAuth(b *testing.B) {
	sizes, rounds, pairs := []int{3, 10_000}, 5, 20
	if testing.Short() {
		sizes, rounds, pairs = []int{3}, 3, 8
	}
	for _, n := range sizes {
		b.Run(fmt.Sprintf("configs=%d", n), func(b *testing.B) {
			for b.Loop() {
				ingestAuth(b, n, rounds, pairs)
			}
		})
	}
}

// The load of the ingest benchmark.
const (
	ingestConns = 64
	ingestSlice = 250 * time.Millisecond
)

func ingestAuth(b *testing.B, n, rounds, pairs int) {
	defer gcfloor.Start(64 << 20)() // gnomon server's --heap-floor default
	in := startIngest(b, n)
	ctx := context.Background()
	var offset int64 // the next event of the stream, shared by both sides
	post := func(addr string, d time.Duration) (bench.Result, time.Duration) {
		first := offset
		c0 := processCPU()
		r := bench.Post(ctx, in.events(addr), ingestConns, d, http.StatusAccepted, func(i int64) []byte {
			return bench.EventBody(first+i, n)
		})
		cpu := processCPU() - c0
		offset += int64(r.Requests + r.Errors + ingestConns)
		if r.Errors > 0 || r.Requests == 0 {
			b.Fatalf("%s: %d requests answered 202, %d not", addr, r.Requests, r.Errors)
		}
		return r, cpu
	}
	post(in.unguarded, time.Second) // warm both up
	post(in.guarded, time.Second)
	var (
		withs, withouts       []bench.Result // a round each
		withCPU, withoutCPU   time.Duration
		withDone, withoutDone int
		ratios                []float64
		withRates             []string // of each round
		withoutRates          []string
	)
	for round := range rounds {
		var w, o []bench.Result
		for p := range pairs {
			// The side that goes first alternates, so that neither
			// always comes after the other's garbage.
			first, second := in.unguarded, in.guarded
			if (round*pairs+p)%2 == 1 {
				first, second = second, first
			}
			for _, addr := range []string{first, second} {
				r, cpu := post(addr, ingestSlice)
				if addr == in.guarded {
					w, withCPU, withDone = append(w, r), withCPU+cpu, withDone+r.Requests
				} else {
					o, withoutCPU, withoutDone = append(o, r), withoutCPU+cpu, withoutDone+r.Requests
				}
			}
		}
		wr, or := bench.Merge(w...), bench.Merge(o...)
		withs, withouts, ratios = append(withs, wr), append(withouts, or), append(ratios, wr.Rate()/or.Rate())
		withRates, withoutRates = append(withRates, fmt.Sprintf("%.0f", wr.Rate())), append(withoutRates, fmt.Sprintf("%.0f", or.Rate()))
	}
	wm, om := bench.Summarize(withs).Median, bench.Summarize(withouts).Median
	wAll, oAll := bench.Merge(withs...), bench.Merge(withouts...)
	each := make([]string, len(ratios))
	for i, r := range ratios {
		each[i] = fmt.Sprintf("%.3f", r)
	}
	slices.Sort(ratios)
	ratio := ratios[len(ratios)/2]
	withUS := float64(withCPU.Microseconds()) / float64(max(withDone, 1))
	withoutUS := float64(withoutCPU.Microseconds()) / float64(max(withoutDone, 1))
	// A benchmark's log is cut after 10 lines.
	b.Logf("%d configurations, %d connections, %d rounds of %d slices of %s a side\n"+
		"with auth:    %s req/s by round; median round %s; all %d requests p99 %.2f ms, CPU %.1f µs a request\n"+
		"without auth: %s req/s by round; median round %s; all %d requests p99 %.2f ms, CPU %.1f µs a request\n"+
		"ratio with/without %.3f, the median of the rounds' %s (CPU: the whole process, servers and load)",
		n, ingestConns, rounds, pairs, ingestSlice,
		strings.Join(withRates, ", "), wm, wAll.Requests, ms(wAll.P99), withUS,
		strings.Join(withoutRates, ", "), om, oAll.Requests, ms(oAll.P99), withoutUS,
		ratio, strings.Join(each, ", "))
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(ratio, "ratio")
	b.ReportMetric(wm.Rate(), "req/s-auth")
	b.ReportMetric(om.Rate(), "req/s-noauth")
	b.ReportMetric(ms(wAll.P99), "p99-ms-auth")
	b.ReportMetric(ms(oAll.P99), "p99-ms-noauth")
	b.ReportMetric(withUS, "cpu-us/req-auth")
	b.ReportMetric(withoutUS, "cpu-us/req-noauth")
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// processCPU is the user and system CPU this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
