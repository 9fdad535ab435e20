package bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
)

// SignIn signs in to the web UI of the server at base (http://HOST:PORT)
// with a token, through its sign-in form as a browser does, and returns
// the session cookie to send with every request.
func SignIn(ctx context.Context, base, token string) (*http.Cookie, error) {
	form := url.Values{"token": {token}, "next": {"/"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/login", strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	c := &http.Client{Timeout: time.Minute, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		return nil, fmt.Errorf("sign in: %w", err)
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	for _, ck := range resp.Cookies() {
		if ck.Name == "gnomon_session" && ck.Value != "" {
			return ck, nil
		}
	}
	return nil, fmt.Errorf("sign in: %s, and no session cookie", resp.Status)
}

// Browsers are web UI pages kept open by simulated browsers. Each holds
// the server's stream of change notices (/live) open, and at every notice
// fetches its page again as htmx does: a GET of the same
// URL with the session cookie and htmx's headers, none while the previous
// one is unanswered (htmx drops a trigger that comes while its element's
// request is in flight). Nothing else is requested: the page's static
// files are cached by a real browser.
type Browsers struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	client *http.Client
	start  time.Time

	mu      sync.Mutex
	notices int
	errs    int
	lat     []time.Duration // of each page fetch answered 200
}

// BrowserStats is what the browsers saw while open.
type BrowserStats struct {
	Notices int // change notices received, over all browsers
	Fetches int // pages fetched and answered 200
	Errors  int // fetches or streams that failed
	Elapsed time.Duration
	// P50, P99 and Max are the times from a page's request to the last
	// byte of its answer.
	P50, P99, Max time.Duration
	lat           []time.Duration // sorted
}

// Rate returns the pages fetched per second.
func (s BrowserStats) Rate() float64 { return float64(s.Fetches) / s.Elapsed.Seconds() }

func (s BrowserStats) String() string {
	return fmt.Sprintf("%d notices, %.1f pages/s, page p50 %.1f ms, p99 %.1f ms, max %.1f ms, %d errors",
		s.Notices, s.Rate(), ms(s.P50), ms(s.P99), ms(s.Max), s.Errors)
}

// OpenBrowsers opens page (a path such as "/") of the server at base in n
// browsers signed in with cookie, as if each had loaded it already: they
// fetch it only when told it changed. The browsers open one after the
// other, evenly over spread, as people open pages at moments of their
// own. Close them with Close.
func OpenBrowsers(base, page string, cookie *http.Cookie, n int, spread time.Duration) *Browsers {
	ctx, cancel := context.WithCancel(context.Background())
	b := &Browsers{cancel: cancel, start: time.Now(), client: &http.Client{Transport: &http.Transport{
		MaxIdleConnsPerHost: 2 * n, // a page's fetches and its stream
		DisableCompression:  true,
	}}}
	for i := range n {
		b.wg.Add(1)
		go func() {
			defer b.wg.Done()
			select {
			case <-time.After(spread * time.Duration(i) / time.Duration(n)):
			case <-ctx.Done():
				return
			}
			b.browse(ctx, base, page, cookie)
		}()
	}
	return b
}

// Measure forgets what the browsers saw so far: Close reports what they
// see from now on.
func (b *Browsers) Measure() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.start, b.notices, b.errs, b.lat = time.Now(), 0, 0, nil
}

// Close closes the pages and returns what they saw while open (since
// Measure, if called).
func (b *Browsers) Close() BrowserStats {
	b.mu.Lock()
	elapsed := time.Since(b.start)
	b.mu.Unlock()
	b.cancel()
	b.wg.Wait()
	b.client.CloseIdleConnections()
	b.mu.Lock()
	defer b.mu.Unlock()
	return browserStats(b.notices, b.errs, elapsed, b.lat)
}

func browserStats(notices, errs int, elapsed time.Duration, lat []time.Duration) BrowserStats {
	slices.Sort(lat)
	s := BrowserStats{Notices: notices, Fetches: len(lat), Errors: errs, Elapsed: elapsed, lat: lat}
	if n := len(lat); n > 0 {
		s.P50, s.P99, s.Max = lat[n/2], lat[min(n-1, n*99/100)], lat[n-1]
	}
	return s
}

// MergeBrowsers returns the stats of several openings taken as one.
func MergeBrowsers(ss ...BrowserStats) BrowserStats {
	var (
		notices, errs int
		elapsed       time.Duration
		lat           []time.Duration
	)
	for _, s := range ss {
		notices, errs, elapsed = notices+s.Notices, errs+s.Errors, elapsed+s.Elapsed
		lat = append(lat, s.lat...)
	}
	return browserStats(notices, errs, elapsed, lat)
}

func (b *Browsers) browse(ctx context.Context, base, page string, cookie *http.Cookie) {
	var fetching sync.WaitGroup
	defer fetching.Wait()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/live", nil)
	if err != nil {
		b.failed(ctx)
		return
	}
	req.AddCookie(cookie)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := b.client.Do(req)
	if err != nil {
		b.failed(ctx)
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b.failed(ctx)
		return
	}
	inFlight := make(chan struct{}, 1)
	r := bufio.NewReader(resp.Body)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			b.failed(ctx)
			return
		}
		if strings.TrimSpace(line) != "event: change" {
			continue
		}
		b.mu.Lock()
		b.notices++
		b.mu.Unlock()
		select {
		case inFlight <- struct{}{}:
			fetching.Add(1)
			go func() {
				defer fetching.Done()
				b.fetch(ctx, base+page, cookie)
				<-inFlight
			}()
		default: // the previous fetch is not answered yet: dropped
		}
	}
}

// fetch gets the page once, as htmx reloads its live region.
func (b *Browsers) fetch(ctx context.Context, u string, cookie *http.Cookie) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		b.failed(ctx)
		return false
	}
	req.AddCookie(cookie)
	req.Header.Set("HX-Request", "true")
	req.Header.Set("HX-Current-URL", u)
	req.Header.Set("HX-Target", "live")
	req.Header.Set("HX-Trigger", "live")
	t0 := time.Now()
	resp, err := b.client.Do(req)
	if err != nil {
		b.failed(ctx)
		return false
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		b.failed(ctx)
		return false
	}
	d := time.Since(t0)
	b.mu.Lock()
	b.lat = append(b.lat, d)
	b.mu.Unlock()
	return true
}

// failed counts an error, unless the browsers are being closed.
func (b *Browsers) failed(ctx context.Context) {
	if ctx.Err() != nil {
		return
	}
	b.mu.Lock()
	b.errs++
	b.mu.Unlock()
}
