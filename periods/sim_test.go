package periods

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// randomFile makes a file of one to three trees with random levels,
// dependencies, blocking kinds, state machines, lags and retries. The
// trees start around a month's and a year's end.
func randomFile(r *rand.Rand) string {
	quals := []string{"yearly", "monthly", "daily", "hourly"}
	var trees []string
	n := 1 + r.IntN(3)
	for i := range n {
		var levels []string
		for j, q := range quals {
			if r.IntN(2) == 0 && (len(levels) > 0 || j < len(quals)-1) {
				continue
			}
			extra := ""
			if r.IntN(3) == 0 {
				extra += fmt.Sprintf(`, "stateMachine": "continuous", "every": "%dm"`, 10*(1+r.IntN(6)))
			}
			extra += fmt.Sprintf(`, "blocking": %q`, []string{"normal", "children", "dependencies"}[r.IntN(3)])
			levels = append(levels, lv(fmt.Sprintf("t%d_%s", i, q), q, extra))
		}
		var deps []string
		for j := range i {
			if r.IntN(2) == 0 {
				deps = append(deps, fmt.Sprintf(`"t%d"`, j))
			}
		}
		trees = append(trees, fmt.Sprintf(`{"name": "t%d", "dependentOn": [%s], "settings": {"startTimeperiod": "%s", "lagMinutes": %d, "maxFailures": %d}, "levels": [%s]}`,
			i, strings.Join(deps, ", "), []string{"2023123020", "2023123100", "2023123022"}[r.IntN(3)], r.IntN(31), r.IntN(4), strings.Join(levels, ", ")))
	}
	return `{"trees": [` + strings.Join(trees, ", ") + `]}`
}

// TestRandomSimulation drives random forests with random events on a
// simulated clock and checks invariants after every step.
func TestRandomSimulation(t *testing.T) {
	t.Parallel()
	seeds := 16
	if testing.Short() {
		seeds = 6
	}
	for seed := range seeds {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			t.Parallel()
			runSimulation(t, uint64(seed), 600)
		})
	}
}

type simState struct {
	*sim
	r    *rand.Rand
	live map[Ref]int64 // the run each node has outstanding, from effects
	old  []RunResult   // results of ended runs, replayed as stale
	text string        // the file, as last defined
}

var blockingRE = regexp.MustCompile(`"blocking": "[a-z]+"|"maxFailures": [0-9]+`)

// redefine changes one level's blocking kind or one tree's retries: what
// may change under nodes without breaking the invariants (a new
// dependency or a longer lag would make finished nodes unfinalizable).
func (st *simState) redefine() {
	ms := blockingRE.FindAllStringIndex(st.text, -1)
	m := ms[st.r.IntN(len(ms))]
	repl := fmt.Sprintf(`"blocking": %q`, []string{"normal", "children", "dependencies"}[st.r.IntN(3)])
	if strings.HasPrefix(st.text[m[0]:], `"maxFailures"`) {
		repl = fmt.Sprintf(`"maxFailures": %d`, st.r.IntN(4))
	}
	st.text = st.text[:m[0]] + repl + st.text[m[1]:]
	st.step(Define{File: "random.json", Text: st.text})
}

func runSimulation(t *testing.T, seed uint64, steps int) {
	r := rand.New(rand.NewPCG(seed, 1))
	text := randomFile(r)
	st := &simState{sim: newSim(t, "2023-12-30T18:00"), r: r, live: map[Ref]int64{}, text: text}
	st.step(Define{File: "random.json", Text: text})
	for i := 0; i < steps && !t.Failed(); i++ {
		st.randomStep()
	}
	if t.Failed() {
		t.Logf("seed %d, file %s", seed, text)
		return
	}
	checkReplay(t, st.sim)
}

func (st *simState) randomStep() {
	r := st.r
	out := st.f.Outstanding()
	p := r.IntN(100)
	if len(out) == 0 && p >= 35 && p < 84 {
		p = 0 // nothing to finish: move the clock
	}
	switch {
	case p < 35:
		// The clock moves. Half of the time, first check that a Tick
		// before NextWake has nothing to do.
		if w := st.f.NextWake(); r.IntN(2) == 0 && w.After(st.now.Add(2*time.Nanosecond)) {
			st.now = st.now.Add(w.Sub(st.now) / 2)
			o := st.step(Tick{})
			if len(o.Changes)+len(o.Effects)+len(o.Nodes) > 0 {
				st.t.Fatalf("a Tick at %v, before NextWake %v, did something:%s", st.now, w, changes(o))
			}
		}
		st.now = st.now.Add(time.Duration(1+r.IntN(180)) * time.Minute)
		if r.IntN(4) == 0 {
			if w := st.f.NextWake(); !w.IsZero() && w.After(st.now) {
				st.now = w // land exactly on the boundary
			}
		}
		st.step(Tick{})
	case p < 80:
		n := out[r.IntN(len(out))]
		o := []Outcome{OutcomeProcessed, OutcomeProcessed, OutcomeProcessed, OutcomeProcessed, OutcomeProcessed,
			OutcomeNoop, OutcomeFailed, OutcomeFailed, OutcomeCanceled}[r.IntN(9)]
		ev := RunResult{Process: n.Process, Timeperiod: n.Timeperiod, RunID: n.RunID, Outcome: o}
		st.step(ev)
		st.old = append(st.old, ev)
	case p < 84:
		n := out[r.IntN(len(out))]
		st.step(RunStarted{Process: n.Process, Timeperiod: n.Timeperiod, RunID: n.RunID})
	case p < 87 && len(st.old) > 0:
		ev := st.old[r.IntN(len(st.old))]
		ev.Outcome = OutcomeProcessed
		if o := st.step(ev); !o.Stale {
			st.t.Fatalf("an ended run's result was accepted: %+v", ev)
		}
	case p < 91:
		if n, ok := st.randomNode(); ok {
			st.step(Skip{Process: n.Process, Timeperiods: []string{n.Timeperiod.String()}, By: "sim", DryRun: r.IntN(4) == 0})
		}
	case p < 96:
		if n, ok := st.randomNode(); ok {
			st.step(Reprocess{Process: n.Process, Timeperiod: n.Timeperiod.String(), By: "sim", DryRun: r.IntN(4) == 0})
		}
	case p < 97:
		st.step(ContinuousTick{})
	case p < 98:
		st.redefine()
	default:
		st.step(Restart{})
	}
}

func (st *simState) randomNode() (Node, bool) {
	trees := st.f.Trees()
	t := trees[st.r.IntN(len(trees))]
	l := t.Levels[st.r.IntN(len(t.Levels))]
	ns, _ := st.f.Nodes(l.Process, 0, 0)
	if len(ns) == 0 {
		return Node{}, false
	}
	return ns[st.r.IntN(len(ns))], true
}

// step applies an event and checks the invariants.
func (st *simState) step(ev Event) *Output {
	st.t.Helper()
	o := st.apply(ev)
	if o.DryRun {
		return o
	}
	f := st.f
	// One outstanding run per node, as the effects tell it.
	for _, rn := range o.Runs {
		k := Ref{rn.Process, rn.Timeperiod}
		switch {
		case rn.Status == RunRequested:
			if id, ok := st.live[k]; ok && id != rn.ID {
				st.t.Fatalf("%v: run %d requested while run %d is outstanding", k, rn.ID, id)
			}
			st.live[k] = rn.ID
		case rn.Status == RunRunning:
		default:
			if st.live[k] != rn.ID {
				st.t.Fatalf("%v: run %d ended, not the outstanding %d", k, rn.ID, st.live[k])
			}
			delete(st.live, k)
		}
	}
	if len(st.live) != len(f.outstanding) {
		st.t.Fatalf("%d runs outstanding by the effects, %d in the forest", len(st.live), len(f.outstanding))
	}
	starts := map[*node]bool{}
	for _, c := range o.Changes {
		n := f.procs[c.Process].at(c.Timeperiod)
		switch c.Rule {
		case 1, 2, 3:
			starts[n] = true
		case 8:
			if f.closed(n) {
				st.t.Fatalf("%s@%s: a tick ran a closed period", c.Process, c.Timeperiod)
			}
		case 13:
			if c.Cause == CauseScheduler && (!f.closed(n) || n.kids == 0) {
				st.t.Fatalf("%s@%s: rule 13 on an open or childless node", c.Process, c.Timeperiod)
			}
		}
	}
	for n := range starts {
		l := n.lvl
		for _, e := range l.nodes {
			if e.key < n.key && e.state == Embryo {
				st.t.Fatalf("%s@%s started before %s", l.name, n.key, e.key)
			}
		}
		if !n.state.Active() || n.state == Embryo {
			continue // finished or reset later in the same Apply
		}
		switch l.def.Blocking {
		case Children:
			if n.kidsDone != n.kids || !f.counterpartsFinished(n) {
				st.t.Fatalf("%s@%s started with its children gate closed", l.name, n.key)
			}
		case Dependencies:
			if open, _ := f.dependencies(n); !open {
				st.t.Fatalf("%s@%s started with its dependencies gate closed", l.name, n.key)
			}
		}
	}
	for _, l := range f.levelOrder {
		for _, n := range l.nodes {
			if n.state != Processed && n.state != Noop {
				continue
			}
			// No node is processed before its period ends (plus the lag
			// for a discrete one), nor before its children and
			// counterparts are finished.
			if !f.closed(n) || !l.continuous() && !f.due(n) {
				st.t.Fatalf("%s@%s %s at %v, before its end (plus lag)", l.name, n.key, n.state, f.now)
			}
			if n.kidsDone != n.kids {
				st.t.Fatalf("%s@%s %s with unfinished children", l.name, n.key, n.state)
			}
			if !f.counterpartsFinished(n) {
				st.t.Fatalf("%s@%s %s with unfinished counterparts", l.name, n.key, n.state)
			}
		}
	}
	// Output.Nodes are sorted and unique.
	if !slices.IsSortedFunc(o.Nodes, func(a, b Node) int {
		if a.Process != b.Process {
			return strings.Compare(a.Process, b.Process)
		}
		return cmpKey(a.Timeperiod, b.Timeperiod)
	}) {
		st.t.Fatal("Output.Nodes not sorted")
	}
	return o
}

// FuzzSimulation runs the random simulation from fuzzed seeds.
func FuzzSimulation(f *testing.F) {
	f.Add(uint64(1), uint16(200))
	f.Add(uint64(7), uint16(50))
	f.Fuzz(func(t *testing.T, seed uint64, steps uint16) {
		runSimulation(t, seed, int(steps%400))
	})
}
