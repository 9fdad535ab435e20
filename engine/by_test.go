package engine

import (
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/job"
)

// by returns the identity each run names, by run id order, as
// "task:by" ("task:-" for none).
func byLog(h *harness) []string {
	var out []string
	for id := int64(1); id <= h.e.lastRun; id++ {
		if r, ok := h.runs[id]; ok {
			by := r.By
			if by == "" {
				by = "-"
			}
			out = append(out, r.Task+":"+by)
		}
	}
	return out
}

func wantBy(t *testing.T, h *harness, want ...string) {
	t.Helper()
	got := byLog(h)
	if len(got) != len(want) {
		t.Fatalf("runs name %v, want %v", got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("runs name %v, want %v", got, want)
		}
	}
}

// Every run names the identity whose call started it: an operator's
// start, the start of the bundle run it belongs to, a data event's
// poster. Runs the clock or a condition started name no one.
func TestRunsNameWhoStartedThem(t *testing.T) {
	t.Parallel()
	t.Run("start and condition", func(t *testing.T) {
		t.Parallel()
		h := setup(t, 10, callable("a", "")+callable("dep", "condition: su(a)"))
		h.apply(Act{Task: "a", Action: job.ActStart, By: "alice"})
		if _, st, _ := h.e.Task("a"); st.By != "" {
			t.Errorf("a running keeps By %q: the run took it", st.By)
		}
		h.exit("a", 0)
		wantBy(t, h, "a:alice", "dep:-")
	})
	t.Run("a start that waits for a worker survives a restart", func(t *testing.T) {
		t.Parallel()
		h := setup(t, 1, callable("a", "")+callable("b", ""))
		h.apply(Act{Task: "a", Action: job.ActStart, By: "alice"})
		h.apply(Act{Task: "b", Action: job.ActStart, By: "bob"})
		h.want("a", "running", "b", "ready")
		var recs []job.Record
		for _, n := range h.e.Names() {
			def, st, _ := h.e.Task(n)
			recs = append(recs, job.Record{Def: &def, State: st})
		}
		again := New(Config{Workers: 1})
		if err := restore(again, recs, h.e.ActiveRuns(), h.e.lastRun, nil); err != nil {
			t.Fatal(err)
		}
		h.e = again
		h.exit("a", 0)
		wantBy(t, h, "a:alice", "b:bob")
	})
	t.Run("a queued start keeps its identity", func(t *testing.T) {
		t.Parallel()
		h := setup(t, 5, callable("q", "overlap: queue")+callable("w", "overlap: allow"))
		h.apply(Act{Task: "q", Action: job.ActStart, By: "alice"})
		h.apply(Act{Task: "q", Action: job.ActStart, By: "bob"})
		if _, st, _ := h.e.Task("q"); len(st.Pending) != 1 || st.Pending[0].By != "bob" {
			t.Fatalf("pending %+v", st.Pending)
		}
		h.exit("q", 0)
		h.apply(Act{Task: "w", Action: job.ActStart})
		h.apply(Act{Task: "w", Action: job.ActStart, By: "carol"}) // a concurrent run
		wantBy(t, h, "q:alice", "q:bob", "w:-", "w:carol")
	})
	t.Run("bundle", func(t *testing.T) {
		t.Parallel()
		h := setup(t, 10, bundleDefs+callable("k1", "parent: box")+callable("k2", "parent: box\ncondition: su(k1)"))
		h.apply(Act{Task: "box", Action: job.ActStart, By: "carol"})
		h.exit("k1", 0) // k2's condition releases it: still carol's bundle run
		h.exit("k2", 0)
		h.want("box", "success")
		wantBy(t, h, "box:carol", "k1:carol", "k2:carol")
		if _, st, _ := h.e.Task("k2"); st.By != "" {
			t.Errorf("k2 keeps By %q after the bundle run", st.By)
		}
	})
	t.Run("schedule", func(t *testing.T) {
		t.Parallel()
		s := newSim(t, "2026-06-01T00:00:00Z", callable("c", "cron: 0 * * * *\noverlap: queue"))
		s.length["c"] = 90 * time.Minute
		s.apply(Act{Task: "c", Action: job.ActStart, By: "alice"})
		s.advance("2026-06-01T04:00:00Z")
		got := byLog(s.harness)
		if len(got) < 3 || got[0] != "c:alice" {
			t.Fatalf("runs name %v", got)
		}
		for _, g := range got[1:] {
			if g != "c:-" {
				t.Errorf("a run the clock started names %v", got)
				break
			}
		}
	})
	t.Run("data events", func(t *testing.T) {
		t.Parallel()
		h := dataSetup(t, `[{"name":"noop","dependencies":[{"type":"TABLE","resourceId":"t","lifeDuration":0}]},
			{"name":"etl","dependencies":[{"type":"TABLE","resourceId":"t","lifeDuration":0}],"command":"etl.sh","out_log_file":"/tmp/o","err_log_file":"/tmp/e"}]`)
		out := h.apply(Data{Type: job.Table, Resource: "t", At: ts("2021-01-01 10:00:00"), By: "feed"})
		if len(out.Ran) != 1 || out.Ran[0].By != "feed" {
			t.Fatalf("ran %+v", out.Ran)
		}
		wantBy(t, h.harness, "noop:feed", "etl:feed")
		if r := EventRun(9, "noop", Data{Type: job.Table, Resource: "t", By: "feed"}, h.now); r.By != "feed" {
			t.Errorf("the run a restart rebuilds names %q", r.By)
		}
	})
}

// runOf returns the run id that h recorded, failing if none.
func runOf(t *testing.T, h *harness, id int64) job.Run {
	t.Helper()
	r, ok := h.runs[id]
	if !ok {
		t.Fatalf("no run %d", id)
	}
	return r
}

// An abort names who sent it on every run it kills or ends, from the
// moment it is applied; a run that ends by itself names no one.
func TestRunsNameWhoEndedThem(t *testing.T) {
	t.Parallel()
	t.Run("abort", func(t *testing.T) {
		t.Parallel()
		h := setup(t, 10, callable("a", ""))
		h.apply(Act{Task: "a", Action: job.ActStart, By: "bob"})
		id := h.started["a"]
		out := h.apply(Act{Task: "a", Action: job.ActAbort, By: "alice"})
		if len(out.Runs) != 1 || out.Runs[0].Status != job.Running || out.Runs[0].EndedBy != "alice" {
			t.Fatalf("the abort's output holds %+v; want the running run, ended by alice", out.Runs)
		}
		h.exit("a", -1)
		r := runOf(t, h, id)
		if r.Status != job.Aborted || r.By != "bob" || r.EndedBy != "alice" {
			t.Fatalf("run %+v; want aborted, by bob, ended by alice", r)
		}
		if a := job.AuditOf(&r); a.By != "bob" || a.EndedBy != "alice" {
			t.Errorf("audit record %+v", a)
		}
	})
	t.Run("a run that ends by itself", func(t *testing.T) {
		t.Parallel()
		h := setup(t, 10, callable("a", ""))
		h.apply(Act{Task: "a", Action: job.ActStart, By: "bob"})
		id := h.started["a"]
		h.exit("a", 1)
		h.apply(Act{Task: "a", Action: job.ActGreen, By: "alice"}) // settles the task, not the run
		if r := runOf(t, h, id); r.Status != job.Failure || r.By != "bob" || r.EndedBy != "" {
			t.Fatalf("run %+v; want a failure by bob, ended by no one", r)
		}
	})
	t.Run("an abort survives a restart before the run ends", func(t *testing.T) {
		t.Parallel()
		h := setup(t, 10, callable("a", ""))
		h.apply(Act{Task: "a", Action: job.ActStart, By: "bob"})
		id := h.started["a"]
		h.apply(Act{Task: "a", Action: job.ActAbort, By: "alice"})
		var recs []job.Record
		for _, n := range h.e.Names() {
			def, st, _ := h.e.Task(n)
			recs = append(recs, job.Record{Def: &def, State: st})
		}
		// The active runs as the store has them: the abort's output.
		active := []*job.Run{new(runOf(t, h, id))}
		again := New(Config{Workers: 10})
		if err := restore(again, recs, active, h.e.lastRun, nil); err != nil {
			t.Fatal(err)
		}
		h.e = again
		h.exit("a", -1)
		if r := runOf(t, h, id); r.Status != job.Aborted || r.By != "bob" || r.EndedBy != "alice" {
			t.Fatalf("run %+v; want aborted, by bob, ended by alice", r)
		}
	})
	t.Run("overlapping runs", func(t *testing.T) {
		t.Parallel()
		h := setup(t, 10, callable("w", "overlap: allow"))
		h.apply(Act{Task: "w", Action: job.ActStart, By: "bob"})
		h.apply(Act{Task: "w", Action: job.ActStart})
		h.apply(Act{Task: "w", Action: job.ActAbort, By: "alice"})
		for _, r := range h.runs {
			if r.EndedBy != "alice" {
				t.Errorf("run %+v; want ended by alice", r)
			}
		}
	})
	t.Run("bundle", func(t *testing.T) {
		t.Parallel()
		h := setup(t, 10, bundleDefs+callable("k1", "parent: box")+callable("k2", "parent: box\ncondition: su(k1)"))
		h.apply(Act{Task: "box", Action: job.ActStart, By: "carol"})
		h.apply(Act{Task: "box", Action: job.ActAbort, By: "alice"})
		h.exit("k1", -1)
		h.want("box", "aborted", "k1", "aborted")
		for _, r := range h.runs {
			if r.Status != job.Aborted || r.By != "carol" || r.EndedBy != "alice" {
				t.Errorf("run %+v; want aborted, by carol, ended by alice", r)
			}
		}
	})
	t.Run("a member's abort ends its bundle run", func(t *testing.T) {
		t.Parallel()
		h := setup(t, 10, bundleDefs+callable("k1", "parent: box"))
		h.apply(Act{Task: "box", Action: job.ActStart})
		bundle := h.e.lastRun - 1
		h.apply(Act{Task: "k1", Action: job.ActAbort, By: "alice"})
		h.want("box", "failure")
		if r := runOf(t, h, bundle); r.Task != "box" || r.EndedBy != "alice" {
			t.Errorf("bundle run %+v; want ended by alice", r)
		}
		h.apply(Act{Task: "box", Action: job.ActStart}) // a run that ends by itself
		h.exit("k1", 0)
		h.want("box", "success")
		if r := runOf(t, h, h.e.lastRun-1); r.Task != "box" || r.Status != job.Success || r.EndedBy != "" {
			t.Errorf("second bundle run %+v; want a success ended by no one", r)
		}
	})
}
