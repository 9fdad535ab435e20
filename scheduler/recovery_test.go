package scheduler

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/engine"
	"github.com/gnomon-sched/gnomon/executor"
	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/periods"
	"github.com/gnomon-sched/gnomon/store"
)

// stoppedClock reads one instant: a scheduler on it is not simulating,
// so its loop ticks by itself as soon as it finds an occurrence due, as a
// scheduler on the system's clock does after a restart.
type stoppedClock time.Time

func (c stoppedClock) Now() time.Time { return time.Time(c) }

// TestOutcomeWhileDownDecidedFirst stops a scheduler while a run of an
// every-second task is in flight; the run ends while no scheduler runs,
// its supervisor recording the outcome, and a scheduler starts again on
// the same store 5 s later. It takes the outcome in before it decides the
// occurrences that fell due meanwhile: the first runs late (within the
// misfire grace), the others are skipped as the overlap policy skips
// them for a task that is ready, and none names the run that had ended.
// On the virtual clock the start's Tick decides them; on a stopped clock
// the loop ticks by itself as soon as it has taken in the start's
// requests.
func TestOutcomeWhileDownDecidedFirst(t *testing.T) { onBothClocks(t, testOutcomeWhileDown) }

// onBothClocks runs test on the virtual clock, then on a stopped clock
// where the loop ticks by itself, in parallel.
func onBothClocks(t *testing.T, test func(t *testing.T, virtual bool)) {
	t.Parallel()
	for _, virtual := range []bool{true, false} {
		name := "virtual clock"
		if !virtual {
			name = "loop ticking by itself"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			test(t, virtual)
		})
	}
}

func testOutcomeWhileDown(t *testing.T, virtual bool) {
	dir := t.TempDir()
	open := func(at time.Time) *sim {
		return openSimWith(t, dir, at, func(c *Config) {
			if !virtual {
				c.Clock = stoppedClock(at)
			}
		})
	}
	ctx := context.Background()
	m := open(t0)
	// The first run waits for the file go; once it exists, runs end at
	// once.
	release := filepath.Join(dir, "go")
	m.define(DefineFile{File: "tick.def", Text: fmt.Sprintf(`insert_task: tick
type: callable
command: [ -e %[1]s ] || while [ ! -e %[1]s ]; do sleep 0.02; done
out_log_file: /dev/null
err_log_file: /dev/null
start_date: 2026-03-08 06:00:01
interval: 1 second
`, release)})
	m.submit(engine.Act{Task: "tick", Action: job.ActStart})
	st := statesOf(t, m.s)["tick"]
	if st.Status != job.Running || st.RunID == 0 {
		t.Fatalf("tick: %+v; want a run in flight", st)
	}
	ended := st.RunID
	m.stop() // the run goes on under its supervisor

	if err := os.WriteFile(release, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if rec, _ := executor.ReadRecord(filepath.Join(dir, "runs", fmt.Sprint(ended))); rec.Exit != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the outcome of run %d was not recorded", ended)
		}
	}

	// 06:00:01 to 06:00:05 fell due while no scheduler ran.
	restart := t0.Add(5*time.Second + 300*time.Millisecond)
	m = open(restart)
	defer m.stop()
	var fires []job.Fire
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		var err error
		fires, err = m.s.Store().Fires(ctx, store.FireQuery{Task: "tick"})
		if err != nil {
			t.Fatal(err)
		}
		if len(fires) > 0 { // one commit records them all
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the occurrences due at the restart were not decided")
		}
	}
	if virtual {
		m.advance(m.s.Now()) // the late run ends
	}
	rs := m.runs("tick")
	slices.SortFunc(rs, func(a, b job.Run) int { return int(a.ID - b.ID) })
	if len(rs) == 0 || rs[0].ID != ended || rs[0].Status != job.Success || rs[0].Result != job.ResultNormal {
		t.Fatalf("runs %+v; want run %d first, a success as its supervisor recorded", rs, ended)
	}

	slices.SortFunc(fires, func(a, b job.Fire) int { return a.Scheduled.Compare(b.Scheduled) })
	var got []string
	for _, f := range fires {
		got = append(got, fmt.Sprintf("%s %s %s", f.Scheduled.Format("15:04:05"), f.Fate, f.Reason))
		if strings.Contains(f.Reason, fmt.Sprintf("with run %d ", ended)) {
			t.Errorf("occurrence %s %s for run %d, which had ended before the restart", f.Scheduled.Format("15:04:05"), f.Fate, ended)
		}
	}
	want := []string{"06:00:01 ran "}
	for _, s := range []string{"02", "03", "04", "05"} {
		want = append(want, "06:00:"+s+" skipped the task is ready (overlap skip)")
	}
	if !slices.Equal(got, want) {
		t.Errorf("fires:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(fires) > 0 && (fires[0].RunID == 0 || fires[0].RunID == ended || !fires[0].At.Equal(restart)) {
		t.Errorf("the first overdue occurrence: %+v; want it run late, at the restart (%s), by a new run", fires[0], restart.Format("15:04:05.000"))
	}
}

// commits records the batches a scheduler commits.
type commits struct {
	store.Store
	mu      sync.Mutex
	batches []*store.Batch
}

func (c *commits) Commit(ctx context.Context, b *store.Batch) error {
	if err := c.Store.Commit(ctx, b); err != nil {
		return err
	}
	c.mu.Lock()
	c.batches = append(c.batches, b)
	c.mu.Unlock()
	return nil
}

// restartCommit returns the batch that journals the forest's Restart,
// once it is committed.
func (c *commits) restartCommit() *store.Batch {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, b := range c.batches {
		if slices.ContainsFunc(b.Entries, func(e store.Entry) bool { return e.Kind == "tree.restart" }) {
			return b
		}
	}
	return nil
}

// TestNodeOutcomeWhileDownDecidedFirst stops a scheduler while the run of
// a timeperiod node is in flight, its later periods due and waiting for
// it (a process advances in key order); the run ends while no scheduler
// runs, its supervisor recording the outcome, and a scheduler starts
// again on the same store. The commit that holds the forest's Restart
// holds the node's outcome too, and the start of the next period: the
// periods that came due meanwhile are decided against the node as it is,
// before the forest's first tick and any other request. On the virtual
// clock the start's Tick decides them; on a stopped clock the loop ticks
// by itself as soon as it has taken in the start's requests.
func TestNodeOutcomeWhileDownDecidedFirst(t *testing.T) { onBothClocks(t, testNodeOutcomeWhileDown) }

func testNodeOutcomeWhileDown(t *testing.T, virtual bool) {
	dir := t.TempDir()
	var log *commits
	open := func(at time.Time) *sim {
		return openSimWith(t, dir, at, func(c *Config) {
			log = &commits{Store: c.Store}
			c.Store = log
			if !virtual {
				c.Clock = stoppedClock(at)
			}
		})
	}
	m := open(t0) // 2026-03-08 06:00: hours 00 to 04 are due
	// The first run waits for the file go; once it exists, runs end at
	// once.
	release := filepath.Join(dir, "go")
	text, _ := json.Marshal(map[string]any{
		"settings": map[string]any{"startTimeperiod": "2026030800", "lagMinutes": 5, "timezone": "UTC"},
		"trees": []any{map[string]any{"name": "site", "levels": []any{map[string]any{"process": "site_hourly", "qualifier": "hourly",
			"command": fmt.Sprintf(`[ -e %[1]s ] || while [ ! -e %[1]s ]; do sleep 0.02; done`, release)}}}},
	})
	m.define(DefineFile{File: "site.json", Text: string(text)})
	first := m.nodes("site_hourly")["2026030800"]
	if first.State != periods.InProgress || first.RunID == 0 || m.nodes("site_hourly")["2026030801"].State != periods.Embryo {
		t.Fatalf("hours 00 and 01: %+v, %+v; want 00's run in flight, 01 waiting for it", first, m.nodes("site_hourly")["2026030801"])
	}
	m.stop() // the run goes on under its supervisor

	if err := os.WriteFile(release, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if rec, _ := executor.ReadRecord(filepath.Join(dir, "runs", fmt.Sprint(first.RunID))); rec.Exit != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the outcome of run %d was not recorded", first.RunID)
		}
	}

	// 06:10: hour 05 is due too.
	restart := t0.Add(10 * time.Minute)
	m = open(restart)
	defer m.stop()
	var b *store.Batch
	for deadline := time.Now().Add(30 * time.Second); b == nil; time.Sleep(10 * time.Millisecond) {
		if b = log.restartCommit(); b == nil && time.Now().After(deadline) {
			t.Fatal("the restart of the forest was not committed")
		}
	}
	state := map[int64]string{}
	for _, n := range b.Trees.Nodes {
		state[n.Timeperiod] = n.State
	}
	var ended, next *job.Run
	for i, r := range b.Runs {
		switch {
		case r.ID == first.RunID:
			ended = &b.Runs[i]
		case r.Timeperiod == "2026030801":
			next = &b.Runs[i]
		}
	}
	if ended == nil || ended.Status != job.Success || state[2026030800] != periods.Processed.String() {
		t.Errorf("the restart's commit: run %d %+v, hour 00 %q; want the run's end as its supervisor recorded it, the hour processed",
			first.RunID, ended, state[2026030800])
	}
	if next == nil || state[2026030801] != periods.InProgress.String() {
		t.Errorf("the restart's commit: hour 01 %q, its run %+v; want it started, its predecessor done", state[2026030801], next)
	}

	// Then every hour due runs, in order. (Hour 01's run, started by the
	// restart, may have ended already, moving the virtual clock on by
	// the time it took.)
	if virtual {
		m.advance(later(restart, m.clock.Now()))
	}
	waitNodes := func() map[string]periods.Node {
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			ns := m.nodes("site_hourly")
			if ns["2026030805"].State == periods.Processed || time.Now().After(deadline) {
				return ns
			}
		}
	}
	ns := waitNodes()
	for _, h := range []string{"2026030800", "2026030801", "2026030802", "2026030803", "2026030804", "2026030805"} {
		if ns[h].State != periods.Processed {
			t.Errorf("hour %s: %s, want processed", h, ns[h].State)
		}
	}
	rs := m.runs("site_hourly")
	slices.SortFunc(rs, func(a, b job.Run) int { return int(a.ID - b.ID) })
	if len(rs) != 6 || rs[0].ID != first.RunID || rs[0].Status != job.Success {
		t.Errorf("runs of site_hourly: %+v; want six, run %d first, a success as its supervisor recorded", rs, first.RunID)
	}
}

// later returns the later of two instants.
func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
