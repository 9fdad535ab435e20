package scheduler

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/executor"
	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/store/sqlite"
)

// counter is an Observer that counts what it is told, by a key naming the
// call and its arguments.
type counter struct {
	mu     sync.Mutex
	n      map[string]int
	late   []time.Duration
	events int // journaled, as Committed was told
}

func (c *counter) add(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n[key]++
}

func (c *counter) Fired(by Trigger, fate job.Fate, late time.Duration) {
	c.add(fmt.Sprintf("fired %s %s", by, fate))
	c.mu.Lock()
	defer c.mu.Unlock()
	if by == TriggerTime {
		c.late = append(c.late, late)
	}
}
func (c *counter) RunStarted() { c.add("started") }
func (c *counter) RunEnded(status job.Status, result job.Result) {
	c.add(fmt.Sprintf("ended %s %s", status, result))
}
func (c *counter) DataApplied(triggered int) {
	c.add("data")
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n["triggered"] += triggered
}
func (c *counter) Committed(events int, took time.Duration) {
	c.add("commits")
	c.mu.Lock()
	defer c.mu.Unlock()
	c.events += events
}
func (c *counter) Alerted(r AlertResult) { c.add("alert " + string(r)) }

func (c *counter) get(key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[key]
}

// openObserved is openSim with an Observer.
func openObserved(t *testing.T, dir string, from time.Time, obs Observer) *sim {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(dir, "gnomon.db"))
	if err != nil {
		t.Fatal(err)
	}
	m := &sim{t: t, dir: dir, clock: NewVirtualClock(from), st: st}
	r, err := executor.NewLocal(executor.LocalConfig{Dir: filepath.Join(dir, "runs"), Clock: m.clock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Wait)
	m.s, err = New(ctx, Config{Store: st, Runner: r, DataDir: dir, Clock: m.clock, Location: time.UTC, Workers: 3, Observer: obs})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestObserver drives a task and a timeperiod tree on a
// virtual clock and checks what the observer is told, and the gauges.
func TestObserver(t *testing.T) {
	dir := t.TempDir()
	c := &counter{n: map[string]int{}}
	m := openObserved(t, dir, t0.Add(30*time.Second), c) // 06:00:30
	defer m.stop()
	m.define(DefineFile{File: "a.def", Text: `insert_task: tick
type: callable
command: true
out_log_file: ` + dir + `/tick.out
err_log_file: ` + dir + `/tick.err
cron: * * * * *
`})
	m.advance(t0.Add(2 * time.Minute)) // 06:01 and 06:02
	m.define(DefineFile{File: "site.json", Text: siteTrees(dir)})
	m.advance(t0.Add(2*time.Minute + time.Second)) // the hours 00 to 04 of the tree run (05 is not due)

	for key, want := range map[string]int{
		"fired time ran":           2,
		"fired timeperiod ran":     5,
		"started":                  7,
		"ended success normal":     7, // hour 03 exits 99: noop, a success
		"data":                     0,
		"fired time missed":        0,
		"fired time skipped":       0,
		"fired timeperiod skipped": 0,
	} {
		if got := c.get(key); got != want {
			t.Errorf("%s: told %d times, want %d", key, got, want)
		}
	}
	c.mu.Lock()
	late := c.late
	c.mu.Unlock()
	if len(late) != 2 || late[0] != 0 || late[1] != 0 {
		t.Errorf("lateness of the time trigger's fires on a virtual clock: %v", late)
	}
	if c.get("commits") == 0 || c.events < 2+7 {
		t.Errorf("%d commits journaled %d events", c.get("commits"), c.events)
	}
	g := m.s.Gauges()
	if g.Workers != 3 || g.Busy != 0 || g.Ready != 0 || g.Journal < int64(c.get("commits")) {
		t.Errorf("gauges: %+v after %d commits", g, c.get("commits"))
	}
}
