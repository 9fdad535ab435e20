package api

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/auth"
	"github.com/gnomon-sched/gnomon/clock"
)

// BenchmarkGuard is the guard alone on the ingest benchmark's requests
// (host 127.0.0.1, no Origin, the bearer token of an ingest token without
// a rate limit): what authentication adds to each request of
// BenchmarkIngestAuth before the routes.
func BenchmarkGuard(b *testing.B) {
	a := auth.NewAuthority(clock.Wall, 100)
	tok, id, hash := auth.NewSecret()
	a.Load([]auth.Token{{ID: id, Name: "bench-ingest", Role: auth.Ingest, Hash: hash, Rate: auth.Unlimited}})
	s := NewServer(nil, time.UTC, "", nil, Access{Authority: a})
	r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8080/events", nil)
	r.Header.Set("Authorization", "Bearer "+tok)
	w := httptest.NewRecorder()
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := s.guard(w, r); !ok {
			b.Fatalf("refused: %d %s", w.Code, w.Body)
		}
	}
}
