package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/gnomon-sched/gnomon/auth"
	"github.com/gnomon-sched/gnomon/internal/bench"
)

// ui: the event-ingest load of events against one server, with and
// without browsers that keep a page of the web UI open (the overview, by
// default). Each browser holds the page's stream of change notices and
// fetches the page again at each notice, as the page's script does, with
// a viewer's session cookie; the scheduler changes with every event, so
// each browser fetches the page about twice a second. The baseline is the
// same server without browsers: a round alternates the two in slices of
// about a second, each after a second of load that is not measured, in
// which the browsers open one after the other. The ratio is that of the
// rates with and without browsers, the median of the rounds' own.
func ui(args []string) error {
	fs := flag.NewFlagSet("ui", flag.ExitOnError)
	bin := fs.String("gnomon", "bin/gnomon", "gnomon binary")
	sizes := fs.String("configs", "3,10000,100000", "numbers of configurations, comma-separated")
	browsers := fs.Int("browsers", 10, "browsers with the page open")
	page := fs.String("page", "/", "the page the browsers keep open")
	conns := fs.Int("conns", 64, "concurrent connections posting events")
	dur := fs.Duration("duration", 10*time.Second, "length of each measured run of each side")
	rounds := fs.Int("rounds", 3, "runs of each side")
	fs.Parse(args)
	fmt.Printf("\n# event ingest with web UI pages open: %d browsers on %s, %d connections posting, %s per run, %d rounds\n", *browsers, *page, *conns, *dur, *rounds)
	fmt.Printf("# machine: %d CPUs, %s, %s/%s\n", runtime.NumCPU(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
	for _, n := range counts(*sizes) {
		if err := uiWith(*bin, n, *browsers, *page, *conns, *dur, *rounds); err != nil {
			return err
		}
	}
	return nil
}

// leadIn is how long each side of the ui benchmark runs the load before it
// is measured: the browsers open over the first half of it, at moments
// spread over one beat of the change notices (500 ms), as people open
// pages at moments of their own, and each gets its first notice.
const leadIn = time.Second

func uiWith(bin string, n, browsers int, page string, conns int, dur time.Duration, rounds int) error {
	s, err := startServer(bin)
	if err != nil {
		return err
	}
	defer s.close()
	t0 := time.Now()
	const chunk = 10000
	for first := 0; first < n; first += chunk {
		if _, err := s.client.Define(context.Background(), "bench.json", bench.Configurations(first, min(chunk, n-first)), false); err != nil {
			return fmt.Errorf("define configurations: %w", err)
		}
	}
	events, err := s.eventsURL()
	if err != nil {
		return err
	}
	// The browsers sign in with a viewer's token, as a person watching
	// the scheduler would.
	viewer, err := benchToken(s.client, s.dir, auth.Viewer)
	if err != nil {
		return err
	}
	ctx := context.Background()
	base := "http://" + s.addr
	cookie, err := bench.SignIn(ctx, base, viewer)
	if err != nil {
		return err
	}
	fmt.Printf("\n## %d configurations (applied in %s; server RSS %s)\n", n, time.Since(t0).Round(time.Millisecond), rss(s.cmd.Process.Pid))
	var offset int64
	post := func(d time.Duration) bench.Result {
		r := bench.Post(ctx, events, conns, d, http.StatusAccepted, func(i int64) []byte { return bench.EventBody(offset+i, n) })
		offset += int64(r.Requests + r.Errors + conns)
		return r
	}
	// Warm up: the load alone, then with the browsers.
	post(time.Second)
	b := bench.OpenBrowsers(base, page, cookie, browsers, leadIn)
	post(time.Second)
	if st := b.Close(); st.Errors > 0 || st.Fetches == 0 {
		return fmt.Errorf("browsers while warming up: %s", st)
	}
	var (
		alone, with  []bench.Result
		seen         []bench.BrowserStats
		acpu, wcpu   time.Duration
		adone, wdone int
		ratios       []float64
		// pairs are the ratios of each slice with browsers to the slice
		// without them next to it.
		pairs []float64
	)
	parts := max(int(dur/time.Second), 1)
	slice := dur / time.Duration(parts)
	for range rounds {
		var ar, wr []bench.Result
		for p := range parts {
			// Which side goes first alternates from slice to slice.
			for side := range 2 {
				if (p+side)%2 == 0 {
					post(leadIn)
					c0 := cpu(s.cmd.Process.Pid)
					r := post(slice)
					acpu, adone = acpu+cpu(s.cmd.Process.Pid)-c0, adone+r.Requests
					ar = append(ar, r)
					continue
				}
				// The browsers open while the load runs, not measured yet.
				b := bench.OpenBrowsers(base, page, cookie, browsers, leadIn/2)
				post(leadIn)
				b.Measure()
				c0 := cpu(s.cmd.Process.Pid)
				r := post(slice)
				wcpu, wdone = wcpu+cpu(s.cmd.Process.Pid)-c0, wdone+r.Requests
				seen = append(seen, b.Close())
				wr = append(wr, r)
			}
			pairs = append(pairs, wr[len(wr)-1].Rate()/ar[len(ar)-1].Rate())
		}
		a, w := bench.Merge(ar...), bench.Merge(wr...)
		alone, with, ratios = append(alone, a), append(with, w), append(ratios, w.Rate()/a.Rate())
	}
	a, w := bench.Summarize(alone), bench.Summarize(with)
	seenAll := bench.MergeBrowsers(seen...)
	fmt.Printf("without browsers         median %s\n", a.Median)
	fmt.Printf("                         min %8.0f  max %8.0f req/s\n", a.Min.Rate(), a.Max.Rate())
	fmt.Printf("with %2d browsers on %-5s median %s\n", browsers, page, w.Median)
	fmt.Printf("                         min %8.0f  max %8.0f req/s\n", w.Min.Rate(), w.Max.Rate())
	fmt.Printf("the browsers             %s\n", seenAll)
	fmt.Printf("server CPU per event     without %.0f µs, with %.0f µs (the pages' included)\n",
		float64(acpu.Microseconds())/float64(max(adone, 1)), float64(wcpu.Microseconds())/float64(max(wdone, 1)))
	each := make([]string, len(ratios))
	for i, r := range ratios {
		each[i] = fmt.Sprintf("%.2f", r)
	}
	slices.Sort(ratios)
	fmt.Printf("ratio with/without       %.2f  (median of the rounds' %s)\n", ratios[len(ratios)/2], strings.Join(each, ", "))
	slices.Sort(pairs)
	fmt.Printf("                         slice by slice: median %.2f, quartiles %.2f and %.2f (%d pairs)\n",
		pairs[len(pairs)/2], pairs[len(pairs)/4], pairs[len(pairs)*3/4], len(pairs))
	if seenAll.Errors > 0 {
		return fmt.Errorf("the browsers saw %d errors", seenAll.Errors)
	}
	return nil
}
