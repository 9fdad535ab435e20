package bench

import (
	"fmt"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	gocron "github.com/go-co-op/gocron/v2"
	cron "github.com/robfig/cron/v3"
)

// The peers are the in-process Go scheduling libraries the fire-lateness
// benchmark measures beside gnomon. Only this package and the benchmark
// command link them; the gnomon binary and library never do (the test in
// cmd/gnomon-bench checks it).

// A peer starts n schedules, schedule k as CronSpec(k) in UTC, calling
// fire(k) first thing in each of schedule k's jobs, and returns a function
// that stops it and waits for its jobs.
type peer struct {
	name, module string
	start        func(n int, fire func(k int)) (stop func() error, err error)
}

var peers = []peer{
	// robfig/cron keeps its entries in a slice sorted by next instant, with
	// one timer for the earliest, and starts each job in a goroutine.
	{"robfig/cron", "github.com/robfig/cron/v3", func(n int, fire func(int)) (func() error, error) {
		c := cron.New(cron.WithSeconds(), cron.WithLocation(time.UTC))
		for k := range n {
			if _, err := c.AddFunc(CronSpec(k), func() { fire(k) }); err != nil {
				return nil, err
			}
		}
		c.Start()
		return func() error { <-c.Stop().Done(); return nil }, nil
	}},
	// gocron arms a timer for each job; when it fires, the job goes to the
	// executor's goroutine, which starts it in a goroutine of its own and
	// sends it back to the scheduler's goroutine for its next instant.
	{"gocron", "github.com/go-co-op/gocron/v2", func(n int, fire func(int)) (func() error, error) {
		s, err := gocron.NewScheduler(gocron.WithLocation(time.UTC))
		if err != nil {
			return nil, err
		}
		for k := range n {
			if _, err := s.NewJob(gocron.CronJob(CronSpec(k), true), gocron.NewTask(func() { fire(k) })); err != nil {
				s.Shutdown()
				return nil, err
			}
		}
		s.Start()
		return s.Shutdown, nil
	}},
}

// Peers returns the names of the peers.
func Peers() []string {
	var out []string
	for _, p := range peers {
		out = append(out, p.name)
	}
	return out
}

func lookup(name string) (peer, bool) {
	i := slices.IndexFunc(peers, func(p peer) bool { return p.name == name })
	if i < 0 {
		return peer{}, false
	}
	return peers[i], true
}

// PeerVersion returns the module and version of the peer name as linked
// into this binary.
func PeerVersion(name string) string {
	p, ok := lookup(name)
	if !ok {
		return ""
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range bi.Deps {
			if m.Path == p.module {
				return m.Path + " " + m.Version
			}
		}
	}
	return p.module
}

// Peer is a running peer and the fires of its jobs.
type Peer struct {
	stop func() error
	rec  recorder
}

// StartPeer starts the peer name in this process with n schedules,
// schedule k as CronSpec(k) in UTC, each of whose jobs records its start
// and does nothing else. The schedules are all added before the peer is
// started. room is how many fires to make room for beforehand, so that
// recording one never grows the record while it is below that.
func StartPeer(name string, n, room int) (*Peer, error) {
	p, ok := lookup(name)
	if !ok {
		return nil, fmt.Errorf("no peer %q (have %v)", name, Peers())
	}
	r := &Peer{rec: recorder{fires: make([]Fire, 0, room)}}
	stop, err := p.start(n, r.rec.fire)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	r.stop = stop
	return r, nil
}

// Fires returns the fires so far, each with the due instant nearest to
// its start (DueNear): the libraries do not tell a job which instant it
// fires for.
func (p *Peer) Fires() ([]Fire, error) { return p.rec.read(), nil }

// Stop stops the peer and waits for its jobs.
func (p *Peer) Stop() error { return p.stop() }

// recorder collects a peer's fires from its jobs' goroutines.
type recorder struct {
	mu    sync.Mutex
	fires []Fire
}

// fire records that a job of schedule k started now.
func (r *recorder) fire(k int) {
	at := time.Now().UnixNano()
	r.mu.Lock()
	r.fires = append(r.fires, Fire{K: k, At: at})
	r.mu.Unlock()
}

func (r *recorder) read() []Fire {
	r.mu.Lock()
	out := slices.Clone(r.fires)
	r.mu.Unlock()
	for i := range out {
		out[i].Due = DueNear(out[i].K, out[i].At)
	}
	return out
}
