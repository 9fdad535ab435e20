// Package bench holds gnomon's load generators, the same-run baselines
// they are compared with, and the other Go schedulers (peers.go) measured
// beside gnomon. Everything talks to 127.0.0.1 only and stops by itself;
// cmd/gnomon-bench runs it, and so do benchmarks in tests (api's
// BenchmarkIngestAuth). Nothing that ships may import it.
package bench

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Result is one measured run of a load.
type Result struct {
	Requests int
	Errors   int
	Elapsed  time.Duration
	P50, P99 time.Duration
	Max      time.Duration
	lat      []time.Duration // of each request that counted, sorted
}

// Rate returns requests per second.
func (r Result) Rate() float64 { return float64(r.Requests) / r.Elapsed.Seconds() }

func (r Result) String() string {
	return fmt.Sprintf("%8.0f req/s  p50 %6.2f ms  p99 %6.2f ms  max %6.2f ms  (%d requests, %d errors)",
		r.Rate(), ms(r.P50), ms(r.P99), ms(r.Max), r.Requests, r.Errors)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// Post sends POST requests with JSON bodies to url from conns
// connections, each a keep-alive HTTP/1.1 connection of its own, for the
// duration d. body(i) returns the body of the i-th request overall. A
// request counts when it gets want as status. The URL's user part, when it
// has one (http://TOKEN@host/path), is sent as a bearer token.
//
// The client writes requests and reads answers directly on the socket, so
// that the load generator spends as little CPU as it can: on a small
// machine it shares the cores with the server it measures.
func Post(ctx context.Context, url string, conns int, d time.Duration, want int, body func(i int64) []byte) Result {
	return PostEach(ctx, url, conns, d, want, body, nil)
}

// PostEach is Post that also calls ok, if not nil, with the index of every
// request that got want as status, from the connections' goroutines.
func PostEach(ctx context.Context, url string, conns int, d time.Duration, want int, body func(i int64) []byte, ok func(i int64)) Result {
	host, path, token, err := splitURL(url)
	if err != nil {
		return Result{Errors: 1}
	}
	var (
		next    atomic.Int64
		wg      sync.WaitGroup
		mu      sync.Mutex
		lat     []time.Duration
		errs    int
		stopped = make(chan struct{})
	)
	start := time.Now()
	timer := time.AfterFunc(d, func() { close(stopped) })
	defer timer.Stop()
	for range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mine := make([]time.Duration, 0, 4096)
			bad := 0
			defer func() {
				mu.Lock()
				lat, errs = append(lat, mine...), errs+bad
				mu.Unlock()
			}()
			var c *conn
			defer func() {
				if c != nil {
					c.Close()
				}
			}()
			for {
				select {
				case <-stopped:
					return
				case <-ctx.Done():
					return
				default:
				}
				if c == nil {
					var err error
					if c, err = dial(host); err != nil {
						bad++
						time.Sleep(10 * time.Millisecond)
						continue
					}
				}
				i := next.Add(1) - 1
				b := body(i)
				t0 := time.Now()
				status, err := c.post(host, path, token, b)
				if err != nil {
					bad++
					c.Close()
					c = nil
					continue
				}
				if status != want {
					bad++
					continue
				}
				mine = append(mine, time.Since(t0))
				if ok != nil {
					ok(i)
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	slices.Sort(lat)
	return result(lat, errs, elapsed)
}

// result returns the Result of requests whose sorted latencies are lat.
func result(lat []time.Duration, errs int, elapsed time.Duration) Result {
	r := Result{Requests: len(lat), Errors: errs, Elapsed: elapsed, lat: lat}
	if n := len(lat); n > 0 {
		r.P50, r.P99, r.Max = lat[n/2], lat[min(n-1, n*99/100)], lat[n-1]
	}
	return r
}

// Merge returns the result of several runs of one load taken as one: their
// requests and times added, and the percentiles of all their latencies.
func Merge(rs ...Result) Result {
	var (
		lat     []time.Duration
		errs    int
		elapsed time.Duration
	)
	for _, r := range rs {
		lat = append(lat, r.lat...)
		errs += r.Errors
		elapsed += r.Elapsed
	}
	slices.Sort(lat)
	return result(lat, errs, elapsed)
}

func splitURL(url string) (host, path, token string, err error) {
	rest, ok := strings.CutPrefix(url, "http://")
	if !ok {
		return "", "", "", fmt.Errorf("only http:// URLs: %s", url)
	}
	host, path, _ = strings.Cut(rest, "/")
	if t, h, ok := strings.Cut(host, "@"); ok {
		token, host = t, h
	}
	return host, "/" + path, token, nil
}

// conn is one keep-alive HTTP/1.1 client connection.
type conn struct {
	net.Conn
	r   *bufio.Reader
	req []byte
}

func dial(host string) (*conn, error) {
	c, err := net.DialTimeout("tcp", host, 5*time.Second)
	if err != nil {
		return nil, err
	}
	return &conn{Conn: c, r: bufio.NewReaderSize(c, 4096)}, nil
}

// post sends one request and reads the answer's status and body.
func (c *conn) post(host, path, token string, body []byte) (int, error) {
	c.req = fmt.Appendf(c.req[:0], "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n", path, host, len(body))
	if token != "" {
		c.req = fmt.Appendf(c.req, "Authorization: Bearer %s\r\n", token)
	}
	c.req = append(c.req, "\r\n"...)
	c.req = append(c.req, body...)
	c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := c.Write(c.req); err != nil {
		return 0, err
	}
	line, err := c.r.ReadSlice('\n')
	if err != nil {
		return 0, err
	}
	if len(line) < 12 {
		return 0, fmt.Errorf("bad status line %q", line)
	}
	status, err := strconv.Atoi(string(line[9:12]))
	if err != nil {
		return 0, fmt.Errorf("bad status line %q", line)
	}
	length, chunked := -1, false
	for {
		h, err := c.r.ReadSlice('\n')
		if err != nil {
			return 0, err
		}
		if len(h) <= 2 {
			break
		}
		k, v, _ := strings.Cut(string(h), ":")
		switch strings.ToLower(k) {
		case "content-length":
			length, _ = strconv.Atoi(strings.TrimSpace(v))
		case "transfer-encoding":
			chunked = strings.Contains(strings.ToLower(v), "chunked")
		}
	}
	switch {
	case chunked:
		for {
			h, err := c.r.ReadSlice('\n')
			if err != nil {
				return 0, err
			}
			n, err := strconv.ParseInt(strings.TrimSpace(string(h)), 16, 64)
			if err != nil {
				return 0, err
			}
			if _, err := c.r.Discard(int(n) + 2); err != nil {
				return 0, err
			}
			if n == 0 {
				break
			}
		}
	case length >= 0:
		if _, err := c.r.Discard(length); err != nil {
			return 0, err
		}
	default:
		return 0, fmt.Errorf("answer without a length")
	}
	return status, nil
}

// Summary is the median, min and max of several runs of one benchmark.
type Summary struct {
	Runs             []Result
	Median, Min, Max Result // by rate
}

// Summarize orders runs by rate.
func Summarize(runs []Result) Summary {
	s := slices.Clone(runs)
	slices.SortFunc(s, func(a, b Result) int {
		switch {
		case a.Rate() < b.Rate():
			return -1
		case a.Rate() > b.Rate():
			return 1
		}
		return 0
	})
	return Summary{Runs: runs, Min: s[0], Median: s[len(s)/2], Max: s[len(s)-1]}
}
