package bench

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/eventdep"
)

// TestEventBody checks that the stream is valid, deterministic and spread
// over the configurations.
func TestEventBody(t *testing.T) {
	seen := map[string]bool{}
	for i := range int64(200) {
		b := EventBody(i, 10)
		if string(b) != string(EventBody(i, 10)) {
			t.Fatalf("event %d differs between calls", i)
		}
		ev, err := eventdep.DecodeEvent(b)
		if err != nil {
			t.Fatalf("event %d: %v: %s", i, err, b)
		}
		seen[string(ev.Type)] = true
	}
	if len(seen) != 3 {
		t.Errorf("types %v, want all three", seen)
	}
}

// TestPost runs the load client against the baseline server and against a
// handler that answers with chunked bodies and errors.
func TestPost(t *testing.T) {
	s, err := StartNoop("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r := Post(context.Background(), s.URL, 4, 300*time.Millisecond, http.StatusAccepted, func(i int64) []byte { return EventBody(i, 3) })
	if r.Requests < 10 || r.Errors != 0 || r.P50 <= 0 || r.P99 < r.P50 || r.Max < r.P99 {
		t.Errorf("against the baseline: %+v", r)
	}
	chunked := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength%2 == 0 {
			w.WriteHeader(http.StatusTeapot)
			return
		}
		w.WriteHeader(http.StatusAccepted)
		w.(http.Flusher).Flush() // forces chunked encoding
		w.Write([]byte(`{"ok":true}`))
	}))
	defer chunked.Close()
	var mu sync.Mutex
	var ok []int64
	r = PostEach(context.Background(), chunked.URL+"/events", 2, 200*time.Millisecond, http.StatusAccepted, func(i int64) []byte {
		if i%2 == 0 {
			return []byte(`{}`) // even length: refused
		}
		return []byte(`{ }`)
	}, func(i int64) {
		mu.Lock()
		defer mu.Unlock()
		ok = append(ok, i)
	})
	if r.Requests == 0 || r.Errors == 0 {
		t.Errorf("against a chunked, sometimes failing server: %+v", r)
	}
	// Exactly the accepted requests, the odd ones, are reported.
	if len(ok) != r.Requests {
		t.Errorf("%d requests reported accepted, %d counted", len(ok), r.Requests)
	}
	for _, i := range ok {
		if i%2 == 0 {
			t.Errorf("request %d was refused but reported accepted", i)
		}
	}
}

// TestMerge checks that merged runs count every request once and take
// their percentiles over all of them.
func TestMerge(t *testing.T) {
	ms := func(ds ...int) []time.Duration {
		var out []time.Duration
		for _, d := range ds {
			out = append(out, time.Duration(d)*time.Millisecond)
		}
		return out
	}
	a := result(ms(1, 2, 3), 1, time.Second)
	b := result(ms(10, 20), 2, 3*time.Second)
	m := Merge(a, b)
	if m.Requests != 5 || m.Errors != 3 || m.Elapsed != 4*time.Second || m.Rate() != 1.25 {
		t.Errorf("merged %+v", m)
	}
	if m.P50 != 3*time.Millisecond || m.Max != 20*time.Millisecond || m.P99 != 20*time.Millisecond {
		t.Errorf("merged percentiles p50 %s p99 %s max %s", m.P50, m.P99, m.Max)
	}
}
