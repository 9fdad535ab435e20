package engine

import (
	"strings"
	"testing"

	"github.com/gnomon-sched/gnomon/job"
)

func TestWhy(t *testing.T) {
	t.Parallel()
	defs := "insert_task: flow\ntype: bundle\n\n" +
		callable("b1", "parent: flow") + callable("b2", "parent: flow\ncondition: su(b1)") +
		callable("x", "") + callable("y", "") + callable("z", "") + callable("lone", "") +
		callable("after", "condition: su(x) & nr(y)")
	h := setup(t, 1, defs)
	h.act("flow", job.ActStart)
	h.act("y", job.ActStart) // b1 holds the only worker slot
	h.act("z", job.ActFreeze)

	why := func(name string) string {
		t.Helper()
		rs, ok := h.e.Why(name, h.now)
		if !ok {
			t.Fatalf("Why(%s): unknown", name)
		}
		var b strings.Builder
		for _, r := range rs {
			b.WriteString(strings.Repeat("  ", r.Depth) + string(r.Kind) + ": " + r.Text + "\n")
		}
		return b.String()
	}
	for name, want := range map[string][]string{
		// b2 waits on b1, which runs: the chain says both.
		"b2":   {"condition: b2 waits for its condition su(b1)", "  clause: su(b1) does not hold: b1 is running", "    running: b1 is running since"},
		"y":    {"worker: y is ready and waits for a worker slot: 1 of 1 are busy"},
		"z":    {"frozen: z is frozen"},
		"lone": {"nothing: lone is idle; nothing starts it by itself"},
		"after": {"trigger: after is idle; it starts when its condition su(x)&nr(y) holds", "  clause: su(x) does not hold: x is idle",
			"    nothing: x is idle; nothing starts it by itself", "  clause: nr(y) does not hold: y is ready", "    worker: y is ready"},
		"b1": {"running: b1 is running"},
	} {
		got := why(name)
		for _, w := range want {
			if !strings.Contains(got, w) {
				t.Errorf("Why(%s) lacks %q:\n%s", name, w, got)
			}
		}
	}
	if _, ok := h.e.Why("nosuch", h.now); ok {
		t.Error("Why of an unknown task answered")
	}
}

// A task two clauses lead to is explained once.
func TestWhyExplainsOnce(t *testing.T) {
	t.Parallel()
	h := setup(t, 10, "insert_task: f\ntype: bundle\n\n"+callable("c", "parent: f")+callable("a", "parent: f\ncondition: su(c)")+
		callable("b", "parent: f\ncondition: su(c)")+callable("d", "parent: f\ncondition: su(a) & su(b)"))
	h.act("f", job.ActStart)
	rs, _ := h.e.Why("d", h.now)
	running, above := 0, 0
	for _, r := range rs {
		switch r.Kind {
		case WhyRunning:
			running++
		case WhyAbove:
			above++
		}
	}
	if running != 1 || above != 1 {
		t.Errorf("c explained %d times and referred to above %d times, want once each: %+v", running, above, rs)
	}
}
