package scheduler

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/engine"
	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/store"
)

func (m *sim) backfill(ev engine.Backfill, dry bool) *engine.BackfillResult {
	m.t.Helper()
	res, err := m.s.Backfill(context.Background(), ev, dry)
	if err != nil {
		m.t.Fatal(err)
	}
	return res
}

func (m *sim) fires(task string) []job.Fire {
	m.t.Helper()
	fs, err := m.s.Store().Fires(context.Background(), store.FireQuery{Task: task})
	if err != nil {
		m.t.Fatal(err)
	}
	return fs
}

// A backfill's remaining occurrences are in the task's stored state: a
// restart in the middle goes on with them, and runs none twice.
func TestBackfillAcrossRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	m := openSim(t, dir, t0, nil)
	m.define(DefineFile{File: "a.def", Text: fmt.Sprintf("insert_task: h\ntype: callable\ncommand: true\ncron: 0 * * * *\nout_log_file: %s\nerr_log_file: %s\n",
		filepath.Join(dir, "h.out"), filepath.Join(dir, "h.err"))})
	ev := engine.Backfill{Task: "h", From: t0.Add(-6 * time.Hour), To: t0.Add(-time.Hour), By: "alice"}
	if res := m.backfill(ev, true); res.Count(engine.BackfillQueued) != 6 {
		t.Fatalf("dry run: %+v", res)
	}
	if fs := m.fires("h"); len(fs) != 0 {
		t.Fatalf("a dry run recorded fires: %+v", fs)
	}
	res := m.backfill(ev, false)
	if res.Count(engine.BackfillQueued) != 6 || res.Occurrences[0].RunID == 0 {
		t.Fatalf("backfill: %+v", res)
	}
	m.stop() // the first run may still be in flight

	m = openSim(t, dir, t0, nil)
	defer m.stop()
	// Asked again before it is done: nothing twice.
	again := m.backfill(ev, false)
	if n := again.Count(engine.BackfillQueued); n != 0 {
		t.Errorf("repeated backfill queued %d: %+v", n, again)
	}
	m.advance(t0.Add(time.Minute))
	seen := map[time.Time]int{}
	for _, r := range m.runs("h") {
		if r.Trigger == "schedule" && r.Scheduled.Equal(t0) {
			continue // the clock's own occurrence
		}
		if r.Trigger != job.TriggerBackfill || r.By != "alice" {
			t.Errorf("run %+v", r)
		}
		seen[r.Scheduled]++
	}
	if len(seen) != 6 {
		t.Errorf("%d occurrences ran, want 6", len(seen))
	}
	for at, n := range seen {
		if n != 1 {
			t.Errorf("%s ran %d times", at, n)
		}
	}
	fs := m.fires("h")[1:] // newest first: the clock's own occurrence
	for _, f := range fs {
		if f.Fate != job.FateBackfilled || f.RunID == 0 {
			t.Errorf("fire %+v", f)
		}
	}
	if len(fs) != 6 {
		t.Errorf("%d fires, want 6", len(fs))
	}
	if res := m.backfill(ev, false); res.Count(engine.BackfillDone) != 6 {
		t.Errorf("after the backfill: %+v", res)
	}
}

// A configuration's occurrences are the instants its journaled data
// events would have triggered it, had it been defined all along.
func TestBackfillReplaysDataEvents(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	m := openSim(t, dir, t0, nil)
	defer m.stop()
	post := func(res string, at time.Time) {
		t.Helper()
		if _, err := m.s.Post(context.Background(), engine.Data{Type: job.Table, Resource: res, At: at}); err != nil {
			t.Fatal(err)
		}
	}
	// Before the configuration exists: a then b each hour; b alone at
	// -30m, whose a is too old (life 20 minutes).
	for h := 5; h >= 1; h-- {
		post("a", t0.Add(-time.Duration(h)*time.Hour))
		post("b", t0.Add(-time.Duration(h)*time.Hour+5*time.Minute))
	}
	post("b", t0.Add(-30*time.Minute))
	m.define(DefineFile{File: "c.json", Text: fmt.Sprintf(`[{"name":"cfg","command":"true","out_log_file":%q,"err_log_file":%q,
		"dependencies":[{"type":"TABLE","resourceId":"a","lifeDuration":1200},{"type":"TABLE","resourceId":"b","lifeDuration":1200}]}]`,
		filepath.Join(dir, "c.out"), filepath.Join(dir, "c.err"))})
	res := m.backfill(engine.Backfill{Task: "cfg", From: t0.Add(-4 * time.Hour), To: t0, By: "alice"}, false)
	var got []string
	for _, o := range res.Occurrences {
		got = append(got, fmt.Sprintf("%s %s", o.Scheduled.Sub(t0), o.Action))
	}
	want := "[-3h55m0s queued -2h55m0s queued -1h55m0s queued -55m0s queued]"
	if fmt.Sprint(got) != want {
		t.Fatalf("backfill: %s, want %s", got, want)
	}
	m.advance(t0.Add(time.Minute))
	if rs := m.runs("cfg"); len(rs) != 4 || rs[0].Scheduled != t0.Add(-55*time.Minute) || rs[0].Trigger != job.TriggerBackfill {
		t.Errorf("runs %+v", rs)
	}
}
