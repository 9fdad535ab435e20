package connlimit

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"syscall"
	"testing"
	"time"
)

// serve serves h on a Listener of max connections on loopback.
func serve(t *testing.T, max int, h http.Handler) (*Listener, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := New(ln, max)
	srv := &http.Server{Handler: h}
	l.Serve(srv)
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return l, ln.Addr().String()
}

// get sends a request on c and reads the answer.
func get(t *testing.T, c net.Conn, br *bufio.Reader, path string) int {
	t.Helper()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", path)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

func dial(t *testing.T, addr string) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, bufio.NewReader(c)
}

// waitIdle waits until the Listener counts n idle connections.
func waitIdle(t *testing.T, l *Listener, n int) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Millisecond) {
		l.mu.Lock()
		idle := l.idle.Len()
		l.mu.Unlock()
		if idle == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d connections idle, want %d", idle, n)
		}
	}
}

// At the cap, a new connection takes the place of the longest idle one.
func TestIdleMakesRoom(t *testing.T) {
	over := make(chan int, 100)
	var l *Listener
	l, addr := serve(t, 2, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n := l.Open(); n > l.Max() {
			over <- n
		}
	}))
	// The server marks a connection idle after its answer is written,
	// which the client may read first: wait for it, so that the first
	// is idle longest whatever the machine's load.
	first, br1 := dial(t, addr)
	get(t, first, br1, "/")
	waitIdle(t, l, 1)
	second, br2 := dial(t, addr)
	get(t, second, br2, "/")
	waitIdle(t, l, 2)
	third, br3 := dial(t, addr)
	if s := get(t, third, br3, "/"); s != http.StatusOK {
		t.Fatalf("a third client at a cap of two: %d", s)
	}
	// The first, idle longest, was closed for it.
	first.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := br1.ReadByte(); !errors.Is(err, io.EOF) && !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("the longest idle connection: %v, want it closed", err)
	}
	if s := get(t, second, br2, "/"); s != http.StatusOK {
		t.Errorf("the second connection after the third came: %d", s)
	}
	// Connections that never send a request are idle too.
	silent, _ := dial(t, addr)
	_ = silent
	fourth, br4 := dial(t, addr)
	if s := get(t, fourth, br4, "/"); s != http.StatusOK {
		t.Errorf("a client after a silent one at the cap: %d", s)
	}
	select {
	case n := <-over:
		t.Errorf("%d connections open at a cap of %d", n, l.Max())
	default:
	}
}

// At the cap with every connection busy, a new one waits, and is served
// once one ends; a busy connection is never closed for room.
func TestBusyWaits(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{}, 10)
	_, addr := serve(t, 2, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hold" {
			entered <- struct{}{}
			<-release
		}
	}))
	done := make(chan int, 2)
	for range 2 {
		c, br := dial(t, addr)
		go func() {
			c.SetDeadline(time.Now().Add(30 * time.Second))
			fmt.Fprintf(c, "GET /hold HTTP/1.1\r\nHost: x\r\n\r\n")
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				done <- 0
				return
			}
			resp.Body.Close()
			done <- resp.StatusCode
		}()
		<-entered
	}
	third, br3 := dial(t, addr)
	answered := make(chan int, 1)
	go func() {
		third.SetDeadline(time.Now().Add(30 * time.Second))
		fmt.Fprintf(third, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		resp, err := http.ReadResponse(br3, nil)
		if err != nil {
			answered <- 0
			return
		}
		resp.Body.Close()
		answered <- resp.StatusCode
	}()
	close(release)
	for range 2 {
		if s := <-done; s != http.StatusOK {
			t.Errorf("a busy request: %d, want it answered", s)
		}
	}
	if s := <-answered; s != http.StatusOK {
		t.Errorf("the waiting client: %d", s)
	}
}

func TestDefaultMax(t *testing.T) {
	for _, c := range []struct {
		limit uint64
		want  int
	}{{1024, 768}, {20000, 15000}, {512, 256}, {300, 44}, {200, 16}, {1 << 20, 786432}} {
		if got := DefaultMax(c.limit); got != c.want {
			t.Errorf("DefaultMax(%d) = %d, want %d", c.limit, got, c.want)
		}
	}
}
