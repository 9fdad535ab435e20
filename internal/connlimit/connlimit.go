// Package connlimit keeps a server's connections below its file
// descriptor limit, with a reserve of descriptors for everything else the
// process opens: the store, and the lock files, log files and pipes of the
// runs it launches. A flood of idle connections must never make a
// scheduled run fail to open its files.
//
// A Listener accepts at most Max connections at once. At the cap it makes
// room by closing the connection that has been idle longest (kept alive
// between requests, or accepted and not yet sending one), so that a new
// client, a health check say, is answered while a crowd of idle clients
// holds its connections open; a connection in the middle of a request is
// never closed for room. When every connection is busy, the next one waits
// in the kernel's accept queue, without a descriptor, until one closes:
// busy connections end by the server's read and write timeouts.
package connlimit

import (
	"container/list"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Reserve is how many descriptors of a limit stay for what is not a
// connection: a quarter of the limit, and at least MinReserve.
func Reserve(limit uint64) uint64 { return max(MinReserve, limit/4) }

// MinReserve is the least number of descriptors kept from connections.
const MinReserve = 256

// minMax is the least cap DefaultMax gives, however low the limit.
const minMax = 16

// DefaultMax is the connection cap of a process whose descriptor limit is
// limit: the limit less its Reserve, and at least 16.
func DefaultMax(limit uint64) int {
	if limit <= Reserve(limit)+minMax {
		return minMax
	}
	return int(min(limit-Reserve(limit), 1<<30))
}

// RaiseFileLimit raises the process's soft limit on open files to its hard
// limit, when it is lower, and returns the soft limit then in force. (The
// Go runtime raises it already on Linux at start, and restores the
// original for the commands the process starts, which only a limit it did
// not raise itself keeps: so it is set here only when it is still low.)
func RaiseFileLimit() (uint64, error) {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return 0, err
	}
	if l.Cur >= l.Max {
		return uint64(l.Cur), nil
	}
	raised := l
	raised.Cur = l.Max
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &raised); err != nil {
		// A hard limit of "unlimited" cannot be the soft one: keep what is.
		return uint64(l.Cur), err
	}
	return uint64(raised.Cur), nil
}

// Listener is a net.Listener that holds at most Max connections open. The
// http.Server serving it must report its connections' states to ConnState
// (see Serve): that is how the Listener knows which are idle. One
// goroutine accepts, as http.Server does.
type Listener struct {
	net.Listener
	max int
	// Full, if set, is told each time the cap made the Listener close an
	// idle connection (closed) or wait for a busy one to end.
	Full func(closed bool)

	mu   sync.Mutex
	open int
	idle *list.List    // of *Conn, the longest idle first
	wake chan struct{} // a connection closed or went idle
	done chan struct{}
	once sync.Once
}

// New returns a Listener over ln that holds at most max connections.
func New(ln net.Listener, max int) *Listener {
	if max < 1 {
		max = 1
	}
	return &Listener{Listener: ln, max: max, idle: list.New(), wake: make(chan struct{}, 1), done: make(chan struct{})}
}

// Max returns the cap.
func (l *Listener) Max() int { return l.max }

// Open returns how many connections are open.
func (l *Listener) Open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open
}

// Accept accepts a connection; at the cap, it makes room for it by
// closing the longest idle connection, or when every one is busy, waits
// for one to end before it hands the new one over. (So a Listener holds
// at most Max+1 descriptors: the new connection, while it waits.)
func (l *Listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	lc := &Conn{Conn: c, l: l}
	l.mu.Lock()
	l.open++
	for l.open > l.max {
		victim := l.idle.Front()
		l.mu.Unlock()
		if l.Full != nil {
			l.Full(victim != nil)
		}
		if victim != nil {
			v := victim.Value.(*Conn)
			v.evicted.Store(true)
			v.Close()
		} else {
			select {
			case <-l.wake:
			case <-l.done:
				lc.Close()
				return nil, net.ErrClosed
			}
		}
		l.mu.Lock()
	}
	// Accepted and not yet sending a request: idle, as far as room goes.
	lc.elem = l.idle.PushBack(lc)
	l.mu.Unlock()
	return lc, nil
}

// Close closes the listener; connections stay open.
func (l *Listener) Close() error {
	l.once.Do(func() { close(l.done) })
	return l.Listener.Close()
}

func (l *Listener) release() {
	l.mu.Lock()
	l.open--
	l.mu.Unlock()
	l.signal()
}

// signal wakes an Accept waiting for room.
func (l *Listener) signal() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// setIdle moves c to the end of the idle list, or takes it off.
func (l *Listener) setIdle(c *Conn, idle bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if c.elem != nil {
		l.idle.Remove(c.elem)
		c.elem = nil
	}
	if idle && !c.closed {
		c.elem = l.idle.PushBack(c)
	}
}

// ConnState is the http.Server's ConnState hook: it tells the Listener
// which of its connections are idle.
func (l *Listener) ConnState(nc net.Conn, state http.ConnState) {
	c := unwrap(nc)
	if c == nil || c.l != l {
		return
	}
	switch state {
	case http.StateIdle:
		l.setIdle(c, true)
		l.signal()
	case http.StateActive, http.StateHijacked, http.StateClosed:
		l.setIdle(c, false)
	}
}

// Serve sets what an http.Server needs to serve l: its ConnState hook
// (called after the one it has).
func (l *Listener) Serve(h *http.Server) {
	prev := h.ConnState
	h.ConnState = func(c net.Conn, s http.ConnState) {
		if prev != nil {
			prev(c, s)
		}
		l.ConnState(c, s)
	}
}

// unwrap finds the Conn under the connections that wrap it (TLS).
func unwrap(c net.Conn) *Conn {
	for c != nil {
		if lc, ok := c.(*Conn); ok {
			return lc
		}
		w, ok := c.(interface{ NetConn() net.Conn })
		if !ok {
			return nil
		}
		c = w.NetConn()
	}
	return nil
}

// Conn is a connection a Listener accepted: closing it makes room.
type Conn struct {
	net.Conn
	l       *Listener
	elem    *list.Element // in l.idle while idle; guarded by l.mu
	closed  bool          // guarded by l.mu
	once    sync.Once
	evicted atomic.Bool
}

// Close closes the connection and gives its room back.
func (c *Conn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		c.l.mu.Lock()
		c.closed = true
		if c.elem != nil {
			c.l.idle.Remove(c.elem)
			c.elem = nil
		}
		c.l.mu.Unlock()
		c.l.release()
	})
	return err
}

// Evicted reports whether the Listener closed the connection for room.
func (c *Conn) Evicted() bool { return c.evicted.Load() }

// Every is a throttle for reports: Allow is true at most once a period.
type Every struct {
	Period time.Duration
	last   atomic.Int64
}

// Allow reports whether a period passed since it last said so.
func (e *Every) Allow(now time.Time) bool {
	last := e.last.Load()
	if last != 0 && now.UnixNano()-last < int64(e.Period) {
		return false
	}
	return e.last.CompareAndSwap(last, now.UnixNano())
}
