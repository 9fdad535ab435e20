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
