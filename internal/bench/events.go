package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/gnomon-sched/gnomon/eventdep"
)

// Configurations returns n configurations numbered from first, each with
// three dependencies of its own: TABLE table_K, FILE /landing/K and
// TIME_BASED cron_K, as one JSON array.
func Configurations(first, n int) string {
	var b strings.Builder
	b.WriteByte('[')
	for k := first; k < first+n; k++ {
		if k > first {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"name":"C%d","dependencies":[{"type":"TABLE","resourceId":"table_%d","lifeDuration":3600},`+
			`{"type":"FILE","resourceId":"/landing/%d","lifeDuration":3600},{"type":"TIME_BASED","resourceId":"cron_%d","lifeDuration":0}]}`, k, k, k, k)
	}
	b.WriteByte(']')
	return b.String()
}

// EventBody returns the i-th event of the stream for n configurations:
// each event names one configuration drawn at random, and is a table
// (60%), a file under its landing directory (30%) or its cron (10%).
// Timestamps advance by one millisecond per event, so the stream is in
// order and configurations trigger when their cron comes within an hour
// of a table and a file.
func EventBody(i int64, n int) []byte {
	r := rand.New(rand.NewPCG(uint64(i), 0x9e3779b97f4a7c15))
	k := r.IntN(n)
	ts := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Millisecond).Format("2006-01-02T15:04:05.000Z")
	var typ, res string
	switch p := r.IntN(10); {
	case p < 6:
		typ, res = "TABLE", fmt.Sprintf("table_%d", k)
	case p < 9:
		typ, res = "FILE", fmt.Sprintf("/landing/%d/part=%d/file_%d.csv", k, i%24, i)
	default:
		typ, res = "TIME_BASED", fmt.Sprintf("cron_%d", k)
	}
	return fmt.Appendf(nil, `{"eventType":%q,"eventTimestamp":%q,"eventResourceId":%q}`, typ, ts, res)
}

// NoopServer is the baseline: a Go HTTP server on loopback whose handler
// reads and decodes the same JSON events as /events and answers 202 with a
// body of the same shape, doing nothing else.
type NoopServer struct {
	URL  string
	srv  *http.Server
	done func() // after the server, if not nil
}

// StartNoop starts the baseline server on addr.
func StartNoop(addr string) (*NoopServer, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var buf bytes.Buffer
		buf.ReadFrom(http.MaxBytesReader(w, r.Body, 1<<20))
		ev, err := eventdep.DecodeEvent(buf.Bytes())
		if err != nil {
			w.WriteHeader(http.StatusUnprocessableEntity)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusAccepted)
		json.NewEncoder(w).Encode(map[string]any{"triggered": []string{}, "validated": []map[string]string{
			{"configuration": "C", "type": string(ev.Type), "resourceId": ev.Resource}}})
	})
	s := &NoopServer{URL: "http://" + ln.Addr().String() + "/events", srv: &http.Server{Handler: h}}
	go s.srv.Serve(ln)
	return s, nil
}

// Close stops the baseline server.
func (s *NoopServer) Close() error {
	err := s.srv.Shutdown(context.Background())
	if s.done != nil {
		s.done()
	}
	return err
}
