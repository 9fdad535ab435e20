package gnomon_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gnomon-sched/gnomon"
	"github.com/gnomon-sched/gnomon/auth"
)

// TestHandlerMetrics checks what Handler serves at /metrics: the
// scheduler's own registry, with the runtime's collectors; a program's
// registry when it can be gathered; nothing when it cannot.
func TestHandlerMetrics(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	get := func(h http.Handler, token string) (int, string) {
		req := httptest.NewRequest("GET", "http://localhost/metrics", nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		b, _ := io.ReadAll(w.Result().Body)
		return w.Code, string(b)
	}
	serve := func(cfg gnomon.Config, hc gnomon.HandlerConfig) (http.Handler, string) {
		s := start(t, cfg)
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		tok, err := s.NewToken(ctx, auth.Request{Name: "prometheus", Role: auth.Viewer})
		if err != nil {
			t.Fatal(err)
		}
		return s.Handler(hc), tok
	}

	h, tok := serve(gnomon.Config{}, gnomon.HandlerConfig{})
	if code, _ := get(h, ""); code != http.StatusUnauthorized {
		t.Errorf("own registry without a token: %d", code)
	}
	if code, body := get(h, tok); code != http.StatusOK || !strings.Contains(body, "\ngnomon_worker_slots 10\n") ||
		!strings.Contains(body, "\ngo_goroutines ") {
		t.Errorf("own registry: %d\n%s", code, body)
	}

	h, _ = serve(gnomon.Config{}, gnomon.HandlerConfig{MetricsPublic: true})
	if code, _ := get(h, ""); code != http.StatusOK {
		t.Errorf("public metrics without a token: %d", code)
	}

	reg := prometheus.NewRegistry()
	h, tok = serve(gnomon.Config{Metrics: reg, Workers: 3}, gnomon.HandlerConfig{})
	if code, body := get(h, tok); code != http.StatusOK || !strings.Contains(body, "\ngnomon_worker_slots 3\n") ||
		strings.Contains(body, "go_goroutines") {
		t.Errorf("a program's registry: %d\n%s", code, body)
	}

	wrapped := prometheus.WrapRegistererWith(prometheus.Labels{"scheduler": "a"}, prometheus.NewRegistry())
	h, tok = serve(gnomon.Config{Metrics: wrapped}, gnomon.HandlerConfig{})
	if code, _ := get(h, tok); code != http.StatusNotFound {
		t.Errorf("a registerer that cannot be gathered: %d", code)
	}
}

// TestHandlerRequestDurations checks that every request the handler
// answers is timed under the route that took it and its status class: an
// API route found and not found, a page of the UI, a request refused
// before any route.
func TestHandlerRequestDurations(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := start(t, gnomon.Config{})
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	tok, err := s.NewToken(ctx, auth.Request{Name: "reader", Role: auth.Viewer})
	if err != nil {
		t.Fatal(err)
	}
	h := s.Handler(gnomon.HandlerConfig{})
	get := func(path, token string) int {
		req := httptest.NewRequest("GET", "http://localhost"+path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w.Code
	}
	for _, c := range []struct {
		path, token string
		code        int
	}{
		{"/api/v1/info", tok, http.StatusOK},
		{"/api/v1/info", tok, http.StatusOK},
		{"/api/v1/tasks/nosuch", tok, http.StatusNotFound},
		{"/login", "", http.StatusOK},
		{"/api/v1/info", "", http.StatusUnauthorized},
	} {
		if code := get(c.path, c.token); code != c.code {
			t.Fatalf("GET %s: %d, want %d", c.path, code, c.code)
		}
	}
	req := httptest.NewRequest("GET", "http://localhost/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	body, _ := io.ReadAll(w.Result().Body)
	for _, want := range []string{
		`gnomon_http_request_duration_seconds_count{code="2xx",route="GET /api/v1/info"} 2`,
		`gnomon_http_request_duration_seconds_count{code="4xx",route="GET /api/v1/tasks/{name}"} 1`,
		`gnomon_http_request_duration_seconds_count{code="2xx",route="GET /login"} 1`,
		`gnomon_http_request_duration_seconds_count{code="4xx",route="refused"} 1`,
	} {
		if !strings.Contains(string(body), "\n"+want+"\n") {
			t.Errorf("no %s in\n%s", want, grepLines(string(body), "gnomon_http_request_duration_seconds_count"))
		}
	}
}

// grepLines returns the lines of s that hold sub.
func grepLines(s, sub string) string {
	var out []string
	for l := range strings.Lines(s) {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "")
}
