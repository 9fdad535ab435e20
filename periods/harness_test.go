package periods

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// sim drives a forest on a simulated clock.
type sim struct {
	t   *testing.T
	f   *Forest
	now time.Time
	out *Output // of the latest Apply
	// events and instants applied, for replays.
	events []Event
	times  []time.Time
}

func newSim(t *testing.T, at string, files ...string) *sim {
	t.Helper()
	s := &sim{t: t, f: New(Config{}), now: parseTime(t, at)}
	for i, text := range files {
		s.apply(Define{File: fmt.Sprintf("f%d.json", i), Text: text})
	}
	return s
}

func parseTime(t testing.TB, s string) time.Time {
	t.Helper()
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04"} {
		if v, err := time.Parse(layout, s); err == nil {
			return v
		}
	}
	t.Fatalf("bad time %q", s)
	return time.Time{}
}

func (s *sim) apply(ev Event) *Output {
	s.t.Helper()
	out, err := s.f.Apply(ev, s.now)
	if err != nil {
		s.t.Fatalf("Apply(%#v) at %v: %v", ev, s.now, err)
	}
	s.out = out
	s.events = append(s.events, ev)
	s.times = append(s.times, s.now)
	checkForest(s.t, s.f)
	return out
}

// ref splits "process@key".
func ref(t testing.TB, r string) (string, Key) {
	t.Helper()
	p, k, ok := strings.Cut(r, "@")
	if !ok {
		t.Fatalf("bad ref %q", r)
	}
	key, err := ParseKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return p, key
}

func (s *sim) node(r string) NodeDetail {
	s.t.Helper()
	p, k := ref(s.t, r)
	d, err := s.f.Node(p, k.String())
	if err != nil {
		s.t.Fatalf("node %s: %v", r, err)
	}
	return d
}

// step is one action or check of a scenario.
type step func(s *sim)

func at(ts string) step {
	return func(s *sim) { s.now = parseTime(s.t, ts) }
}

func tick(ts string) step {
	return func(s *sim) {
		s.now = parseTime(s.t, ts)
		s.apply(Tick{})
	}
}

func result(r string, o Outcome) step {
	return func(s *sim) {
		s.t.Helper()
		p, k := ref(s.t, r)
		n := s.node(r)
		if n.RunID == 0 {
			s.t.Fatalf("result for %s: no run (state %s)", r, n.State)
		}
		s.apply(RunResult{Process: p, Timeperiod: k, RunID: n.RunID, Outcome: o})
	}
}

func skip(refs ...string) step {
	return func(s *sim) {
		p, _ := ref(s.t, refs[0])
		ev := Skip{Process: p, By: "ops"}
		for _, r := range refs {
			_, k := ref(s.t, r)
			ev.Timeperiods = append(ev.Timeperiods, k.String())
		}
		s.apply(ev)
	}
}

func reprocess(r string) step {
	return func(s *sim) {
		p, k := ref(s.t, r)
		s.apply(Reprocess{Process: p, Timeperiod: k.String(), By: "ops"})
	}
}

// want checks the states of nodes: "p@k=state" (with "+run" when a run
// must be outstanding, "-run" when none may be).
func want(specs ...string) step {
	return func(s *sim) {
		s.t.Helper()
		for _, spec := range specs {
			r, st, _ := strings.Cut(spec, "=")
			run := ""
			if i := strings.IndexAny(st, "+-"); i >= 0 {
				st, run = st[:i], st[i:]
			}
			n := s.node(r)
			if n.State.String() != st {
				s.t.Errorf("at %v: %s is %s; want %s", s.now.Format(time.RFC3339Nano), r, n.State, st)
			}
			if run == "+run" && n.RunID == 0 || run == "-run" && n.RunID != 0 {
				s.t.Errorf("at %v: %s has run %d; want %s", s.now.Format(time.RFC3339Nano), r, n.RunID, run)
			}
		}
	}
}

// changed checks that the latest Apply made a change: "rule N p@k from→to".
func changed(rule int, r string, from, to State) step {
	return func(s *sim) {
		s.t.Helper()
		p, k := ref(s.t, r)
		for _, c := range s.out.Changes {
			if c.Rule == rule && c.Process == p && c.Timeperiod == k && c.From == from && c.To == to {
				return
			}
		}
		s.t.Errorf("at %v: no change rule %d %s %s→%s in %s", s.now.Format(time.RFC3339Nano), rule, r, from, to, changes(s.out))
	}
}

// noRun checks that the latest Apply requested no run.
func noRun() step {
	return func(s *sim) {
		s.t.Helper()
		for _, e := range s.out.Effects {
			if sr, ok := e.(StartRun); ok {
				s.t.Errorf("at %v: unexpected run of %s@%s", s.now, sr.Process, sr.Timeperiod)
			}
		}
	}
}

// started checks the runs the latest Apply requested, "p@k" each, in order.
func started(refs ...string) step {
	return func(s *sim) {
		s.t.Helper()
		var got []string
		for _, e := range s.out.Effects {
			if sr, ok := e.(StartRun); ok {
				got = append(got, sr.Process+"@"+sr.Timeperiod.String())
			}
		}
		if !slices.Equal(got, refs) {
			s.t.Errorf("at %v: runs %v; want %v", s.now.Format(time.RFC3339Nano), got, refs)
		}
	}
}

func canceled(refs ...string) step {
	return func(s *sim) {
		s.t.Helper()
		var got []string
		for _, e := range s.out.Effects {
			if c, ok := e.(CancelRun); ok {
				got = append(got, c.Process+"@"+c.Timeperiod.String())
			}
		}
		if !slices.Equal(got, refs) {
			s.t.Errorf("at %v: cancels %v; want %v", s.now, got, refs)
		}
	}
}

func changes(out *Output) string {
	var b strings.Builder
	for _, c := range out.Changes {
		fmt.Fprintf(&b, "\n  rule %d %s %s@%s %s→%s run %d", c.Rule, c.Cause, c.Process, c.Timeperiod, c.From, c.To, c.RunID)
	}
	return b.String()
}

// checkForest verifies the forest's internal bookkeeping against a
// recount: state counts, child counts, the heap holding every active
// node, the outstanding runs.
func checkForest(t testing.TB, f *Forest) {
	t.Helper()
	runs := 0
	for _, l := range f.levelOrder {
		var counts [numStates]int
		inHeap := map[*node]bool{}
		for _, n := range l.heap {
			inHeap[n] = true
		}
		for i, n := range l.nodes {
			counts[n.state]++
			if n.key != l.q.Add(l.first, int64(i)) {
				t.Fatalf("%s: node %d has key %v", l.name, i, n.key)
			}
			if n.state.Active() && (!inHeap[n] || !n.inHeap) {
				t.Fatalf("%s@%s active but not in the heap", l.name, n.key)
			}
			if n.queued || n.dirty {
				t.Fatalf("%s@%s left queued or dirty", l.name, n.key)
			}
			var kids, done, skipped int32
			for _, c := range f.children(n) {
				kids++
				if c.state.Finished() {
					done++
				}
				if c.state == Skipped {
					skipped++
				}
			}
			if kids != n.kids || done != n.kidsDone || skipped != n.kidsSkipped {
				t.Fatalf("%s@%s child counts %d/%d/%d; recount %d/%d/%d", l.name, n.key, n.kids, n.kidsDone, n.kidsSkipped, kids, done, skipped)
			}
			switch {
			case n.run != 0:
				runs++
				if f.outstanding[n.run] != n {
					t.Fatalf("%s@%s run %d not outstanding", l.name, n.key, n.run)
				}
				if n.state != InProgress && n.state != FinalRun {
					t.Fatalf("%s@%s has run %d in state %s", l.name, n.key, n.run, n.state)
				}
			case n.state == FinalRun:
				t.Fatalf("%s@%s final_run without a run", l.name, n.key)
			}
			if len(n.log) > MaxLog {
				t.Fatalf("%s@%s log of %d", l.name, n.key, len(n.log))
			}
		}
		if counts != l.counts {
			t.Fatalf("%s: counts %v; recount %v", l.name, l.counts, counts)
		}
	}
	if runs != len(f.outstanding) {
		t.Fatalf("%d runs on nodes, %d outstanding", runs, len(f.outstanding))
	}
}
