package engine

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gnomon-sched/gnomon/job"
)

// paramsOf returns the parameters each run records, by run id order, as
// "task:name=value,..." ("task:-" for none).
func paramsOf(h *harness) []string {
	var out []string
	for id := int64(1); id <= h.e.lastRun; id++ {
		r, ok := h.runs[id]
		if !ok {
			continue
		}
		s := r.Task + ":"
		if len(r.Params) == 0 {
			s += "-"
		}
		for i, p := range r.Params {
			if i > 0 {
				s += ","
			}
			s += p.Name + "=" + p.Value
		}
		out = append(out, s)
	}
	return out
}

// A start's parameters go with the run it makes, however long that run
// waits (for a worker, behind a queued run, for a retry), and only with
// it: the next trigger's run has none.
func TestStartParameters(t *testing.T) {
	t.Parallel()
	p := func(kv ...string) []job.Var {
		var out []job.Var
		for i := 0; i < len(kv); i += 2 {
			out = append(out, job.Var{Name: kv[i], Value: kv[i+1]})
		}
		return out
	}
	t.Run("waiting for a worker and queued behind a run", func(t *testing.T) {
		t.Parallel()
		h := setup(t, 1, callable("a", "params: region=eu, day")+callable("q", "params: n=0\noverlap: queue"))
		h.apply(Act{Task: "a", Action: job.ActStart, Params: p("region", "us")})
		h.apply(Act{Task: "q", Action: job.ActStart, Params: p("n", "1")})
		h.want("a", "running", "q", "ready")
		h.apply(Act{Task: "q", Action: job.ActStart, Params: p("n", "2")})
		if _, st, _ := h.e.Task("q"); len(st.Pending) != 1 || !cmp.Equal(st.Pending[0].Params, p("n", "2")) {
			t.Fatalf("pending %+v", st.Pending)
		}
		h.exit("a", 0)
		h.exit("q", 0)
		h.exit("q", 0)
		h.act("a", job.ActStart)
		want := []string{"a:region=us", "q:n=1", "q:n=2", "a:-"}
		if got := paramsOf(h); !cmp.Equal(got, want) {
			t.Errorf("runs record %v, want %v", got, want)
		}
		if _, st, _ := h.e.Task("a"); st.Params != nil {
			t.Errorf("a running keeps %v: the run took them", st.Params)
		}
	})
	t.Run("a retry runs with the same parameters", func(t *testing.T) {
		t.Parallel()
		h := setup(t, 5, callable("r", "params: x=1\nn_retrys: 1"))
		h.apply(Act{Task: "r", Action: job.ActStart, Params: p("x", "7")})
		h.exit("r", 1)
		h.exit("r", 0)
		if got, want := paramsOf(h), []string{"r:x=7", "r:x=7"}; !cmp.Equal(got, want) {
			t.Errorf("runs record %v, want %v", got, want)
		}
	})
	t.Run("a backfill's runs", func(t *testing.T) {
		t.Parallel()
		s := newSim(t, "2026-06-02T09:30:00Z", callable("h", "cron: 0 * * * *\nparams: day=today"))
		s.apply(Backfill{Task: "h", From: instant(t, "2026-06-01T00:00:00Z"), To: instant(t, "2026-06-01T01:00:00Z"), MaxParallel: 1,
			Params: p("day", "2026-06-01")})
		s.advance("2026-06-02T09:45:00Z")
		got := paramsOf(s.harness)
		if len(got) != 2 || got[0] != "h:day=2026-06-01" || got[1] != "h:day=2026-06-01" {
			t.Errorf("runs record %v, want two backfill runs with day=2026-06-01", got)
		}
	})
	t.Run("refused", func(t *testing.T) {
		t.Parallel()
		h := setup(t, 5, callable("a", "params: region=eu, day")+callable("none", "")+"insert_task: box\ntype: bundle\n\n")
		for _, c := range []struct {
			ev   Event
			want string
		}{
			{Act{Task: "a", Action: job.ActStart, Params: p("zone", "x")}, `a declares no parameter "zone" (it declares region, day)`},
			{Act{Task: "none", Action: job.ActStart, Params: p("zone", "x")}, "none declares no parameters (add params: zone=DEFAULT to its definition)"},
			{Act{Task: "box", Action: job.ActStart, Params: p("zone", "x")}, "box declares no parameters"},
			{Act{Task: "a", Action: job.ActStart, Params: p("day", "1", "day", "2")}, "parameter day given more than once"},
			{Act{Task: "a", Action: job.ActStart, Params: p("day", "a\x00b")}, "parameter day: a value cannot hold a NUL byte"},
			{Act{Task: "a", Action: job.ActStart, Params: p("day", strings.Repeat("x", MaxParamValue+1))}, "parameter day: value longer than 4096 bytes"},
			{Act{Task: "a", Action: job.ActFreeze, Params: p("day", "1")}, "parameters go with a start, not with freeze"},
		} {
			_, err := h.e.Apply(c.ev, h.now)
			if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%+v: %v, want refused: %q", c.ev, err, c.want)
			}
		}
		h.want("a", "idle", "none", "idle", "box", "idle")
	})
}
