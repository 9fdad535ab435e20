package scheduler

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gnomon-sched/gnomon/engine"
	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/store"
	"github.com/gnomon-sched/gnomon/store/sqlite"
)

// windowsOf returns a scheduler's windows, sorted.
func windowsOf(t *testing.T, s *Scheduler) []string {
	t.Helper()
	var out []string
	if err := s.Read(context.Background(), func(e *engine.Engine) {
		for _, ref := range e.WindowRefs() {
			w, ok := e.Window(ref)
			if !ok {
				continue
			}
			for i, dep := range w.Deps {
				for _, ts := range w.TS[i] {
					out = append(out, fmt.Sprintf("%s %s %s", w.Task, dep, time.Unix(0, ts).UTC().Format(time.RFC3339Nano)))
				}
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// statesOf returns the states of a scheduler's tasks.
func statesOf(t *testing.T, s *Scheduler) map[string]job.State {
	t.Helper()
	out := map[string]job.State{}
	if err := s.Read(context.Background(), func(e *engine.Engine) {
		for _, n := range e.Names() {
			_, out[n], _ = e.Task(n)
		}
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// historyOf returns the runs and fires a scheduler has recorded, stored
// or held back (flushed: through Runs and Fires, which write them), sorted.
func historyOf(t *testing.T, s *Scheduler, flushed bool) []string {
	t.Helper()
	ctx := context.Background()
	var held []*job.Run
	if flushed {
		if _, err := s.Store().Runs(ctx, store.RunQuery{Limit: 1}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Store().Fires(ctx, store.FireQuery{Limit: 1}); err != nil {
			t.Fatal(err)
		}
	} else if err := s.Read(ctx, func(*engine.Engine) { held = slices.Clone(s.ckpt.held) }); err != nil {
		t.Fatal(err)
	}
	runs, err := s.cfg.Store.Runs(ctx, store.RunQuery{})
	if err != nil {
		t.Fatal(err)
	}
	fires, err := s.cfg.Store.Fires(ctx, store.FireQuery{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range held {
		runs, fires = append(runs, *r), append(fires, engine.RanFire(r))
	}
	var out []string
	for _, r := range runs {
		out = append(out, fmt.Sprintf("run %d %s %s %s %s %s %s %q by %q", r.ID, r.Task, r.Status, r.Start.UTC().Format(time.RFC3339Nano),
			r.End.UTC().Format(time.RFC3339Nano), r.Trigger, r.Scheduled.UTC().Format(time.RFC3339Nano), r.Message, r.By))
	}
	for _, f := range fires {
		out = append(out, fmt.Sprintf("fire %s %s %s %s run %d %s", f.Task, f.Scheduled.UTC().Format(time.RFC3339Nano), f.Fate,
			f.At.UTC().Format(time.RFC3339Nano), f.RunID, f.Reason))
	}
	slices.Sort(out)
	return slices.Compact(out) // held back after a restart, and stored already
}

// TestWindowsSurviveRestart posts events across several checkpoints and a
// redefinition, and checks that a restart rebuilds exactly the windows,
// states, runs and fires the scheduler had: from the last checkpoint, what
// is stored, and the journal after it.
func TestWindowsSurviveRestart(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	every, size, most := 7, 3, 0
	open := func() (*Scheduler, func()) {
		st, err := sqlite.Open(ctx, filepath.Join(dir, "gnomon.db"))
		if err != nil {
			t.Fatal(err)
		}
		s, err := New(ctx, Config{Store: st, Runner: localRunner(t, dir), DataDir: dir, Clock: NewVirtualClock(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC))})
		if err != nil {
			t.Fatal(err)
		}
		s.ckpt.every, s.ckpt.size, s.ckpt.most = every, size, most // checkpoints in parts, often
		if err := s.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		return s, func() { s.Stop(ctx); st.Close() }
	}
	s, stop := open()
	define := func(text string) {
		t.Helper()
		if _, err := s.Define(ctx, DefineFile{File: "c.json", Text: text}); err != nil {
			t.Fatal(err)
		}
	}
	define(`[{"name":"A","dependencies":[{"type":"TABLE","resourceId":"t","lifeDuration":60},{"type":"TIME_BASED","resourceId":"cron","lifeDuration":0}]},
		{"name":"B","dependencies":[{"type":"FILE","resourceId":"/in","lifeDuration":3600},{"type":"TABLE","resourceId":"u","lifeDuration":3600}]}]`)
	start := time.Date(2021, 1, 1, 0, 0, 0, 0, time.UTC)
	post := func(typ job.DataType, res string, sec int) {
		t.Helper()
		// The runs a restart rebuilds from the journal name the poster.
		if _, err := s.Post(ctx, engine.Data{Type: typ, Resource: res, At: start.Add(time.Duration(sec) * time.Second), By: "feed"}); err != nil {
			t.Fatal(err)
		}
	}
	check := func(when string) {
		t.Helper()
		before, states, history := windowsOf(t, s), statesOf(t, s), historyOf(t, s, false)
		stop()
		s, stop = open()
		if diff := cmp.Diff(before, windowsOf(t, s)); diff != "" {
			t.Errorf("%s: windows after a restart (-before +after):\n%s", when, diff)
		}
		if diff := cmp.Diff(states, statesOf(t, s)); diff != "" {
			t.Errorf("%s: states after a restart (-before +after):\n%s", when, diff)
		}
		if diff := cmp.Diff(history, historyOf(t, s, true)); diff != "" {
			t.Errorf("%s: runs and fires after a restart (-before +after):\n%s", when, diff)
		}
	}
	for i := range 40 {
		post(job.Table, "t", i*10)
		post(job.File, fmt.Sprintf("/in/f%d", i), i*10+1)
		if i%9 == 0 {
			post(job.TimeBased, "cron", i*10+5) // A triggers and drops what it no longer needs
		}
	}
	check("after 90 events")
	// Concurrent posts share journal entries.
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 20 {
				if _, err := s.Post(ctx, engine.Data{Type: job.File, Resource: "/in/c", At: start.Add(time.Duration(500+g*20+i) * time.Second)}); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	entries, _ := s.Store().JournalBefore(ctx, "data", 0, 1000)
	if len(entries) >= 90+160 {
		t.Errorf("%d data entries for 250 events: concurrent events did not share entries", len(entries))
	}
	check("after concurrent events")
	if s.ckpt.gen < 2 {
		t.Errorf("only %d checkpoints written", s.ckpt.gen)
	}
	// No more checkpoints: what follows is only in the journal, and what
	// is held back beyond two runs is written. B loses a dependency; A is
	// deleted and created again, and forgets what it had.
	every, most = 1000, 2
	stop()
	s, stop = open()
	post(job.Table, "t", 2000)
	post(job.Table, "t", 2010)
	post(job.Table, "u", 2000)
	define(`{"name":"B","dependencies":[{"type":"FILE","resourceId":"/in","lifeDuration":3600}]}`)
	if _, err := s.Define(ctx, DefineFile{File: "d.def", Text: "delete_task: A\n"}); err != nil {
		t.Fatal(err)
	}
	define(`{"name":"A","dependencies":[{"type":"TABLE","resourceId":"t","lifeDuration":60}]}`)
	for i := range 10 {
		post(job.Table, "t", 900+i) // A runs each time
	}
	post(job.Table, "t", 1000)
	post(job.File, "/in/late", 5)
	if err := s.Read(ctx, func(*engine.Engine) {
		if n := len(s.ckpt.held); n > most+size {
			t.Errorf("%d runs held back, want at most %d", n, most+size)
		}
	}); err != nil {
		t.Fatal(err)
	}
	check("after a redefinition")
	// A reset empties B.
	if err := s.Submit(ctx, engine.Act{Task: "B", Action: job.ActReset}); err != nil {
		t.Fatal(err)
	}
	post(job.File, "/in/after", 7)
	check("after a reset")
	if got := windowsOf(t, s); !slices.Equal(got, []string{"A TABLE:t 2021-01-01T00:16:40Z", "B FILE:/in 2021-01-01T00:00:07Z"}) {
		t.Errorf("windows after the redefinition and the reset: %v", got)
	}
	// B runs, then is reset: its stored state is the reset's, later than
	// the run the journal names.
	post(job.File, "/in/again", 9)
	if err := s.Submit(ctx, engine.Act{Task: "B", Action: job.ActReset}); err != nil {
		t.Fatal(err)
	}
	check("after a run and a reset")
	if st := statesOf(t, s)["B"]; !st.LastExec.IsZero() {
		t.Errorf("B's last execution after a reset and a restart: %v", st.LastExec)
	}
	// Checkpoints of one row per commit, always one in progress: each copies
	// a configuration's events commits after it started, while events,
	// a redefinition and a deletion come in between (a fuzzy checkpoint).
	every, size = 2, 1
	stop()
	s, stop = open()
	gen := s.ckpt.gen
	define(`[{"name":"B","dependencies":[{"type":"FILE","resourceId":"/in","lifeDuration":3600},{"type":"TABLE","resourceId":"u","lifeDuration":3600}]},
		{"name":"C","dependencies":[{"type":"TABLE","resourceId":"v","lifeDuration":3600}]}]`)
	// How many checkpoints a number of events completes depends on what
	// the batching of the concurrent posts above left in progress: go on
	// until two have completed (usually within the first 12 rounds).
	written := func() int64 {
		var g int64
		if err := s.Read(ctx, func(*engine.Engine) { g = s.ckpt.gen }); err != nil {
			t.Fatal(err)
		}
		return g - gen
	}
	for i := 0; i < 12 || written() < 2; i++ {
		if i == 400 {
			t.Fatalf("%d checkpoints written in 400 rounds of events, want at least 2", written())
		}
		post(job.File, fmt.Sprintf("/in/g%d", i), 3000+i)
		post(job.Table, "u", 3000+i)
		post(job.Table, "v", 3000+i)
		post(job.Table, "t", 3000+i)
		switch i {
		case 4:
			define(`{"name":"B","dependencies":[{"type":"TABLE","resourceId":"u","lifeDuration":3600}]}`)
		case 7:
			if _, err := s.Define(ctx, DefineFile{File: "d.def", Text: "delete_task: C\n"}); err != nil {
				t.Fatal(err)
			}
		case 9:
			check("during fuzzy checkpoints")
		}
	}
	check("after fuzzy checkpoints")
	stop()
}

// checkDataEntry checks that the hand-written encoding of a data entry is
// byte for byte what json.Marshal writes, or that it declines a time
// json.Marshal refuses.
func checkDataEntry(t *testing.T, typ, resource, task, dep string, at, received time.Time) {
	t.Helper()
	d := engine.Data{Type: job.DataType(typ), Resource: resource, At: at}
	if task != "" {
		d.By = task + "'s producer" // an identity, when the event came through the API
	}
	var (
		vals []job.Validation
		ran  []*job.Run
	)
	if task != "" {
		vals = []job.Validation{{Task: task, Dep: dep, TS: at}, {Task: task + "2", Dep: dep, TS: at}}
		ran = []*job.Run{{Task: task, ID: 1}, {Task: task + "2", ID: math.MaxInt64}}
	}
	got, ok := appendDataEntry(nil, d, received, vals, ran)
	e := dataEntry{Data: d, Received: received}
	for _, v := range vals {
		e.Accepted = append(e.Accepted, [2]string{v.Task, v.Dep})
	}
	for _, r := range ran {
		e.Ran = append(e.Ran, ranEntry{Task: r.Task, Run: r.ID})
	}
	want, err := json.Marshal(e)
	if !ok {
		if len(got) != 0 {
			t.Fatalf("declined, but appended %q", got)
		}
		if err == nil || (jsonYear(at) && jsonYear(received)) {
			t.Fatalf("declined an entry json.Marshal encodes: %q", want)
		}
		return
	}
	if err != nil {
		t.Fatalf("encoded %q, but json.Marshal fails: %v", got, err)
	}
	if string(got) != string(want) {
		t.Fatalf("appendDataEntry:\n got %s\nwant %s", got, want)
	}
}

func TestAppendDataEntry(t *testing.T) {
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 3, 29, 1, 59, 59, 123_456_789, time.UTC)
	for _, c := range []struct {
		typ, resource, task, dep string
		at                       time.Time
	}{
		{"TABLE", "db.orders", "cfg", "TABLE:db.orders", at},
		{"FILE", "/landing/a b/c.csv", "", "", at},
		{"TIME_BASED", "0 * * * *", "c", "TIME_BASED:0 * * * *", at.Truncate(time.Second)},
		{"TABLE", "x", "cfg", "TABLE:x", at.In(paris)},                       // an offset, not Z
		{"TABLE", `a"b`, "cfg", "", at},                                      // escaped
		{"TABLE", "a<b>&c", "cfg", "", at},                                   // HTML-escaped by json.Marshal
		{"TABLE", "é", "cfg", "", at},                                        // not ASCII
		{"TABLE", "x", "cfg", "dep\n", at},                                   // a control character
		{"TABLE", "x", "", "", time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}, // no JSON form: declined
	} {
		checkDataEntry(t, c.typ, c.resource, c.task, c.dep, c.at, at.Add(time.Second))
	}
}

func FuzzAppendDataEntry(f *testing.F) {
	f.Add("TABLE", "db.orders", "cfg", "TABLE:db.orders", int64(1_795_000_000_123_456_789), int64(0))
	f.Add("FILE", "/a/\"b\"", "c", "FILE:/a", int64(-1), int64(3600))
	f.Fuzz(func(t *testing.T, typ, resource, task, dep string, at int64, offset int64) {
		zone := time.FixedZone("z", int(offset%86_400))
		ts := time.Unix(0, at).In(zone)
		checkDataEntry(t, typ, resource, task, dep, ts, ts.UTC())
	})
}

// TestDataRunBuffers checks that the data entries of one batch keep their
// own bytes, and that the next batch gathers into the first one's buffer.
func TestDataRunBuffers(t *testing.T) {
	at := time.Date(2026, 11, 1, 2, 3, 4, 5, time.UTC)
	add := func(d *dataRun, resource string) {
		t.Helper()
		if err := d.add(engine.Data{Type: job.Table, Resource: resource, At: at}, &engine.Output{}, at); err != nil {
			t.Fatal(err)
		}
	}
	resources := func(body []byte) []string {
		t.Helper()
		var ds []dataEntry
		if err := json.Unmarshal(body, &ds); err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		var out []string
		for _, d := range ds {
			out = append(out, d.Resource)
		}
		return out
	}
	var b store.Batch
	d := dataRun{spare: make([]byte, 0, 16)}
	add(&d, "a")
	add(&d, "b")
	d.flush(&b)
	b.Entries = append(b.Entries, store.Entry{Kind: "act", Body: []byte(`{}`)})
	add(&d, "c")
	d.flush(&b)
	d.flush(&b) // nothing gathered: no entry
	if len(b.Entries) != 3 {
		t.Fatalf("%d entries, want 3", len(b.Entries))
	}
	if diff := cmp.Diff([]string{"a", "b"}, resources(b.Entries[0].Body)); diff != "" {
		t.Errorf("first entry (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"c"}, resources(b.Entries[2].Body)); diff != "" {
		t.Errorf("second entry (-want +got):\n%s", diff)
	}
	if &d.kept[:1][0] != &b.Entries[0].Body[0] {
		t.Errorf("kept buffer is not the first entry's")
	}

	var next store.Batch
	d2 := dataRun{spare: d.kept}
	add(&d2, "x")
	d2.flush(&next)
	if &next.Entries[0].Body[0] != &d.kept[:1][0] {
		t.Errorf("the next batch did not reuse the kept buffer")
	}
	if diff := cmp.Diff([]string{"x"}, resources(next.Entries[0].Body)); diff != "" {
		t.Errorf("next batch's entry (-want +got):\n%s", diff)
	}
}
