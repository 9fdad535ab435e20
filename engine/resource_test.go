package engine

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/job"
)

// running returns the names of the running tasks, sorted.
func (h *harness) running() []string {
	var out []string
	for _, n := range h.e.Names() {
		if _, st, _ := h.e.Task(n); st.Status == job.Running {
			out = append(out, n)
		}
	}
	return out
}

// A warehouse of 2 contended by 20 tasks of mixed priorities: 2 run at a
// time, in priority then readiness order; the tasks that need something
// else run meanwhile; why names the resource and who holds it.
func TestResourceContention(t *testing.T) {
	t.Parallel()
	text := "insert_resource: warehouse\namount: 2\n\ninsert_resource: ledger\namount: 1\n\n"
	for i := range 20 {
		text += callable(fmt.Sprintf("load%02d", i), fmt.Sprintf("priority: %d\nresources: warehouse", i%4))
	}
	text += callable("other", "resources: ledger") + callable("vacuum", "resources: warehouse=exclusive")
	h := setup(t, 10, text)
	h.act("vacuum", job.ActStart) // holds the warehouse while the others become ready
	for i := range 20 {
		h.act(fmt.Sprintf("load%02d", i), job.ActStart)
	}
	h.act("other", job.ActStart)
	if got, want := h.running(), []string{"other", "vacuum"}; !slices.Equal(got, want) {
		t.Fatalf("running %v, want %v", got, want)
	}
	h.exit("vacuum", 0)
	// The two critical ones that became ready first.
	if got, want := h.running(), []string{"load03", "load07", "other"}; !slices.Equal(got, want) {
		t.Fatalf("running %v, want %v", got, want)
	}
	reasons, _ := h.e.Why("load00", h.now)
	if len(reasons) == 0 || reasons[0].Kind != WhyResource ||
		reasons[0].Text != "load00 is ready and waits for resource warehouse: 2 of 2 held by load03, load07; it needs 1, after 13 task(s) before it in priority order that wait for it too" {
		t.Errorf("why load00: %+v", reasons)
	}
	if _, st, _ := h.e.Task("load00"); st.Status != job.Ready || st.WaitsFor != "warehouse" {
		t.Errorf("load00: %s, waits for %q", st.Status, st.WaitsFor)
	}
	for len(h.running()) > 0 {
		h.exit(h.running()[0], 0)
	}
	// The runs, in the order they started.
	var order []string
	for id := int64(1); id <= h.e.lastRun; id++ {
		if r, ok := h.runs[id]; ok && strings.HasPrefix(r.Task, "load") {
			order = append(order, r.Task)
		}
	}
	want := []string{"load03", "load07", "load11", "load15", "load19", "load02", "load06", "load10", "load14", "load18",
		"load01", "load05", "load09", "load13", "load17", "load00", "load04", "load08", "load12", "load16"}
	if !slices.Equal(order, want) {
		t.Errorf("ran in the order %v, want %v", order, want)
	}
	if r := h.e.Resources(); r[1].Name != "warehouse" || r[1].Held != 0 || r[1].Waiting != 0 || len(h.e.holds) != 0 {
		t.Errorf("after every run: %+v, holds %v", r, h.e.holds)
	}
}

// Exclusive and shared claims: shared holders run together, an exclusive
// one alone, and a waiting exclusive claim keeps later shared ones out.
func TestResourceLocks(t *testing.T) {
	t.Parallel()
	h := setup(t, 10, "insert_resource: ledger\namount: 1\n\n"+
		callable("read1", "resources: ledger=shared")+callable("read2", "resources: ledger=shared")+
		callable("close", "resources: ledger=exclusive\npriority: 3")+callable("read3", "resources: ledger=shared"))
	h.act("read1", job.ActStart)
	h.act("read2", job.ActStart)
	h.act("close", job.ActStart)
	h.act("read3", job.ActStart)
	if got := h.running(); !slices.Equal(got, []string{"read1", "read2"}) {
		t.Fatalf("running %v", got)
	}
	h.exit("read1", 0)
	h.exit("read2", 0)
	if got := h.running(); !slices.Equal(got, []string{"close"}) {
		t.Fatalf("after the readers: running %v", got)
	}
	h.exit("close", 0)
	if got := h.running(); !slices.Equal(got, []string{"read3"}) {
		t.Fatalf("after close: running %v", got)
	}
	if _, err := h.e.Apply(Act{Task: "ledger", Action: job.ActStart}, h.now); err == nil || !strings.Contains(err.Error(), "ledger is a resource") {
		t.Errorf("start of a resource: %v", err)
	}
}

// What runs in flight hold is rebuilt from them after a restart: nothing
// leaks, nothing is held twice; an abort of a waiting task lets the next
// one go; a definition that raises the amount lets more run at once.
func TestResourceRestartAbortAndAmount(t *testing.T) {
	t.Parallel()
	h := setup(t, 10, "insert_resource: w\namount: 1\n\n"+callable("a", "resources: w")+callable("b", "resources: w")+
		callable("c", "resources: w")+callable("d", "resources: w"))
	for _, n := range []string{"a", "b", "c", "d"} {
		h.act(n, job.ActStart)
	}
	var recs []job.Record
	for _, n := range h.e.Names() {
		def, st, _ := h.e.Task(n)
		recs = append(recs, job.Record{Def: &def, State: st})
	}
	again := New(Config{Workers: 10})
	if err := restore(again, recs, h.e.ActiveRuns(), h.e.lastRun, nil); err != nil {
		t.Fatal(err)
	}
	h.e = again
	if r := h.e.Resources(); r[0].Held != 1 || !slices.Equal(r[0].Holders, []string{"a"}) {
		t.Fatalf("after the restart: %+v", r)
	}
	h.act("b", job.ActAbort) // it waits: c goes next
	h.exit("a", 0)
	if got := h.running(); !slices.Equal(got, []string{"c"}) {
		t.Fatalf("after a: running %v", got)
	}
	h.apply(file{"more.def", "update_resource: w\namount: 2\n"})
	if got := h.running(); !slices.Equal(got, []string{"c", "d"}) {
		t.Fatalf("with amount 2: running %v", got)
	}
	h.exit("c", 0)
	h.exit("d", 0)
	if r := h.e.Resources(); r[0].Held != 0 || len(h.e.holds) != 0 || len(h.e.parked) != 0 {
		t.Errorf("at the end: %+v", r)
	}
}

// ref is the reference dispatch: at each decision, the ready tasks in
// priority then readiness order, each started if a worker is free and
// every resource it claims has room and is claimed by no task before it
// that waits; a task that waits keeps every resource it claims from those
// after it.
type ref struct {
	workers int
	amount  map[string]int
	defs    map[string]refTask
	status  map[string]string // idle, ready, running
	seq     map[string]int
	next    int
	units   map[string]int
	shared  map[string]int
	excl    map[string]int
}

type refTask struct {
	prio   int
	claims []job.Claim
}

func (m *ref) fits(c job.Claim) bool {
	r := c.Resource
	switch c.Mode {
	case job.ClaimExclusive:
		return m.excl[r] == 0 && m.units[r] == 0 && m.shared[r] == 0
	case job.ClaimShared:
		return m.excl[r] == 0
	}
	return m.excl[r] == 0 && m.units[r]+c.Units <= m.amount[r]
}

func (m *ref) take(name string, n int) {
	for _, c := range m.defs[name].claims {
		switch c.Mode {
		case job.ClaimExclusive:
			m.excl[c.Resource] += n
		case job.ClaimShared:
			m.shared[c.Resource] += n
		default:
			m.units[c.Resource] += n * c.Units
		}
	}
}

func (m *ref) dispatch() {
	var ready []string
	running := 0
	for n, s := range m.status {
		switch s {
		case "ready":
			ready = append(ready, n)
		case "running":
			running++
		}
	}
	slices.SortFunc(ready, func(a, b string) int {
		if d := m.defs[b].prio - m.defs[a].prio; d != 0 {
			return d
		}
		if d := m.seq[a] - m.seq[b]; d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	blocked := map[string]bool{}
	for _, n := range ready {
		if running >= m.workers {
			return
		}
		ok := true
		for _, c := range m.defs[n].claims {
			if blocked[c.Resource] || !m.fits(c) {
				ok = false
			}
		}
		if !ok {
			for _, c := range m.defs[n].claims {
				blocked[c.Resource] = true
			}
			continue
		}
		m.take(n, 1)
		m.status[n] = "running"
		running++
	}
}

func (m *ref) running() []string {
	var out []string
	for n, s := range m.status {
		if s == "running" {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// TestResourceDispatchMatchesReference: on random definitions and random
// starts, ends and aborts, the tasks the engine runs after each event are
// those the reference runs.
func TestResourceDispatchMatchesReference(t *testing.T) {
	t.Parallel()
	for seed := range uint64(300) {
		rng := rand.New(rand.NewPCG(seed, 49))
		m := &ref{workers: 1 + rng.IntN(5), amount: map[string]int{}, defs: map[string]refTask{}, status: map[string]string{},
			seq: map[string]int{}, units: map[string]int{}, shared: map[string]int{}, excl: map[string]int{}}
		var text strings.Builder
		for _, r := range []string{"r0", "r1", "r2"} {
			m.amount[r] = 1 + rng.IntN(3)
			fmt.Fprintf(&text, "insert_resource: %s\namount: %d\n\n", r, m.amount[r])
		}
		var names []string
		for i := range 12 {
			name := fmt.Sprintf("t%02d", i)
			names = append(names, name)
			rt := refTask{prio: rng.IntN(4)}
			var cs []string
			for _, r := range []string{"r0", "r1", "r2"} {
				if rng.IntN(10) >= 4 {
					continue
				}
				c := job.Claim{Resource: r, Units: 1 + rng.IntN(m.amount[r])}
				switch rng.IntN(4) {
				case 0:
					c.Units, c.Mode = 0, job.ClaimExclusive
				case 1:
					c.Units, c.Mode = 0, job.ClaimShared
				}
				rt.claims = append(rt.claims, c)
				cs = append(cs, c.String())
			}
			rng.Shuffle(len(rt.claims), func(i, j int) {
				rt.claims[i], rt.claims[j] = rt.claims[j], rt.claims[i]
				cs[i], cs[j] = cs[j], cs[i]
			})
			m.defs[name] = rt
			m.status[name] = "idle"
			extra := fmt.Sprintf("priority: %d", rt.prio)
			if len(cs) > 0 {
				extra += "\nresources: " + strings.Join(cs, ", ")
			}
			text.WriteString(callable(name, extra))
		}
		h := setup(t, m.workers, text.String())
		var log []string
		for step := range 200 {
			name := names[rng.IntN(len(names))]
			switch k := rng.IntN(10); {
			case k < 5 && m.status[name] == "idle":
				h.act(name, job.ActStart)
				m.next++
				m.status[name], m.seq[name] = "ready", m.next
				log = append(log, "start "+name)
			case k < 9 && m.status[name] == "running":
				h.exit(name, 0)
				m.take(name, -1)
				m.status[name] = "idle"
				log = append(log, "end "+name)
			case k == 9 && m.status[name] == "ready":
				h.act(name, job.ActAbort)
				m.status[name] = "idle"
				log = append(log, "abort "+name)
			default:
				continue
			}
			m.dispatch()
			if got, want := h.running(), m.running(); !slices.Equal(got, want) {
				t.Fatalf("seed %d, step %d: engine runs %v, reference %v\nevents: %s\ndefinitions:\n%s", seed, step, got, want,
					strings.Join(log, ", "), text.String())
			}
			for _, r := range h.e.Resources() {
				if r.Held != m.units[r.Name] || r.Shared != m.shared[r.Name] || r.Exclusive != m.excl[r.Name] || r.Held > r.Amount || r.Exclusive > 1 {
					t.Fatalf("seed %d, step %d: %+v, reference holds %d units, %d shared, %d exclusive", seed, step, r,
						m.units[r.Name], m.shared[r.Name], m.excl[r.Name])
				}
			}
		}
	}
}

// The runs that do not go through the ready queue, a backfill's and the
// concurrent runs of overlap allow, take a resource only when no ready
// task waits for it: those go first, in dispatch order, and are not
// starved by runs that need less.
func TestResourceWaitersBeforeBackfillAndOverlap(t *testing.T) {
	t.Parallel()
	h := setup(t, 10, "insert_resource: ledger\namount: 2\n\n"+
		callable("holder", "resources: ledger")+callable("waiter", "resources: ledger=2")+
		callable("hourly", "cron: 0 * * * *\nresources: ledger")+
		callable("often", "overlap: allow\nresources: ledger"))
	// The runs in flight, by task (a backfill run leaves its task idle).
	active := func() []string {
		var out []string
		for _, r := range h.runs {
			if r.Status == job.Running {
				out = append(out, r.Task)
			}
		}
		slices.Sort(out)
		return out
	}
	end := func(task string) {
		t.Helper()
		for id, r := range h.runs {
			if r.Task == task && r.Status == job.Running {
				h.apply(RunExited{RunID: id, Result: job.ResultNormal})
				return
			}
		}
		t.Fatalf("%s has no run in flight", task)
	}
	h.act("holder", job.ActStart)
	h.act("often", job.ActStart)
	h.act("waiter", job.ActStart)
	if _, st, _ := h.e.Task("waiter"); st.WaitsFor != "ledger" {
		t.Fatalf("waiter: %s, waits for %q, want it held by the ledger", st.Status, st.WaitsFor)
	}
	from := h.now.Add(-3 * time.Hour).Truncate(time.Hour)
	h.apply(Backfill{Task: "hourly", From: from, To: from.Add(time.Hour), By: "alice"})
	h.act("often", job.ActStart) // a second, concurrent run of often
	end("holder")
	if got, want := active(), []string{"often"}; !slices.Equal(got, want) {
		t.Fatalf("after holder: runs of %v, want %v: the unit freed stays for the task that waits for two", got, want)
	}
	end("often")
	if got, want := active(), []string{"waiter"}; !slices.Equal(got, want) {
		t.Fatalf("after often: runs of %v, want %v", got, want)
	}
	end("waiter")
	if got, want := active(), []string{"hourly", "often"}; !slices.Equal(got, want) {
		t.Fatalf("after waiter: runs of %v, want %v", got, want)
	}
}
