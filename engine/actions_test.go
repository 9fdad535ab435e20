package engine

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/job"
)

// TestRefusalIsTheEnginesAnswer sends every action to tasks in each
// status the engine can put them in, and checks that Refusal predicts the
// engine's answer: refused exactly when it says so, with its words.
func TestRefusalIsTheEnginesAnswer(t *testing.T) {
	t.Parallel()
	defs := callable("plain", "") + callable("queue", "overlap: queue") + callable("gate", "") +
		callable("cond", "condition: su(gate)") +
		"insert_task: box\ntype: bundle\n\n" + callable("kid", "parent: box") +
		"insert_group: grp\njobs: plain\n\ninsert_resource: res\namount: 1\n\n"
	// Each setup leaves the harness's tasks in some statuses.
	setups := map[string]func(h *harness){
		"idle": func(h *harness) {},
		"running": func(h *harness) {
			h.act("plain", job.ActStart)
			h.act("queue", job.ActStart)
			h.act("box", job.ActStart)
		},
		"waiting": func(h *harness) { h.act("gate", job.ActRed); h.act("gate", job.ActReset) },
		"settled": func(h *harness) {
			h.act("plain", job.ActGreen)
			h.act("queue", job.ActRed)
			h.act("box", job.ActFreeze)
			h.act("cond", job.ActFreeze)
		},
	}
	actions := []job.Action{job.ActStart, job.ActAbort, job.ActFreeze, job.ActReset, job.ActGreen, job.ActRed, "bogus"}
	seen, statuses := map[bool]int{}, map[job.Status]bool{}
	for name, set := range setups {
		for _, task := range []string{"plain", "queue", "cond", "box", "kid", "grp", "res"} {
			for _, a := range actions {
				h := setup(t, 10, defs)
				set(h)
				def, st, ok := h.e.Task(task)
				if !ok {
					t.Fatalf("no task %s", task)
				}
				why := Refusal(a, &def, &st, false)
				_, err := h.e.Apply(Act{Task: task, Action: a}, h.now)
				seen[why == ""]++
				statuses[st.Status] = true
				switch {
				case why == "" && err != nil:
					t.Errorf("%s: %s %s (%s): Refusal says it applies, the engine refused: %v", name, a, task, st.Status, err)
				case why != "" && (!errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), why)):
					t.Errorf("%s: %s %s (%s): Refusal says %q, the engine answered %v", name, a, task, st.Status, why, err)
				case why == "" && Describe(a, &def, &st, false) == "":
					t.Errorf("%s: %s %s (%s): no description", name, a, task, st.Status)
				}
			}
		}
	}
	if seen[true] == 0 || seen[false] == 0 {
		t.Errorf("the cases were all taken or all refused: %v", seen)
	}
	for _, s := range []job.Status{job.Idle, job.Running, job.Success, job.Failure, job.Frozen} {
		if !statuses[s] {
			t.Errorf("no task was %s: %v", s, statuses)
		}
	}
}

func TestDescribe(t *testing.T) {
	t.Parallel()
	queue := &job.Task{Name: "q", Type: job.Callable, Extra: &job.Extra{Overlap: job.OverlapQueue}}
	allow := &job.Task{Name: "w", Type: job.Callable, Extra: &job.Extra{Overlap: job.OverlapAllow}}
	plain := &job.Task{Name: "p", Type: job.Callable}
	box := &job.Task{Name: "b", Type: job.Bundle}
	conf := &job.Task{Name: "c", Type: job.Configuration}
	running := &job.State{Status: job.Running, RunID: 7, Pending: []job.Pending{{Trigger: "start"}}}
	for _, c := range []struct {
		a     job.Action
		t     *job.Task
		st    *job.State
		bf    bool
		words string
	}{
		{job.ActStart, plain, &job.State{}, false, "Starts a run of p now, whatever its condition."},
		{job.ActStart, plain, &job.State{Status: job.Waiting}, false, "p is waiting: this makes it ready at once"},
		{job.ActStart, queue, running, false, "runs when the active run ends (overlap queue)"},
		{job.ActStart, allow, running, false, "a second run beside it (overlap allow)"},
		{job.ActStart, box, &job.State{}, false, "Starts a run of bundle b now"},
		{job.ActAbort, plain, running, true, "Stops p's run 7: its processes get TERM, then KILL after the grace; p is aborted at once. The 1 starts waiting for it are dropped. Its backfill is cancelled too."},
		{job.ActAbort, plain, &job.State{Status: job.Idle}, true, "Cancels the backfill of p"},
		{job.ActAbort, box, &job.State{Status: job.Running}, false, "Aborts every active task of bundle b"},
		{job.ActFreeze, plain, &job.State{}, false, "the tasks waiting for it may start"},
		{job.ActFreeze, plain, &job.State{Status: job.Frozen}, false, "frozen already"},
		{job.ActReset, box, &job.State{}, false, "Its settled tasks go back to idle too"},
		{job.ActReset, conf, &job.State{}, false, "The data events it holds are dropped."},
		{job.ActGreen, plain, &job.State{}, false, "Marks p as succeeded"},
		{job.ActRed, plain, &job.State{}, false, "Marks p as failed"},
	} {
		if got := Describe(c.a, c.t, c.st, c.bf); !strings.Contains(got, c.words) {
			t.Errorf("Describe(%s, %s, %s) = %q, want it to say %q", c.a, c.t.Name, c.st.Status, got, c.words)
		}
	}
	if got := Refusal(job.ActAbort, plain, &job.State{}, true); got != "" {
		t.Errorf("abort of an idle task with a backfill under way refused: %q", got)
	}
	if got := Refusal(job.ActStart, conf, &job.State{}, false); !strings.Contains(got, "its data events trigger it") {
		t.Errorf("start of a configuration without a command: %q", got)
	}
}

// A settled status an operator's event set says which event, who sent it
// and when, until the task is active again.
func TestSetBy(t *testing.T) {
	t.Parallel()
	h := setup(t, 10, callable("a", ""))
	h.apply(Act{Task: "a", Action: job.ActFreeze, By: "ada"})
	_, st, _ := h.e.Task("a")
	if st.SetBy == nil || *st.SetBy != (job.StatusEvent{Action: job.ActFreeze, By: "ada", At: job.At(h.now)}) {
		t.Fatalf("after ada's freeze: %+v", st.SetBy)
	}
	if rs, _ := h.e.Why("a", h.now); len(rs) == 0 || !strings.HasPrefix(rs[0].Text, "a is frozen since "+h.now.UTC().Format(time.RFC3339)+", by ada: ") {
		t.Errorf("why of a task ada froze: %+v", rs)
	}
	h.now = h.now.Add(time.Minute)
	h.apply(Act{Task: "a", Action: job.ActReset, By: "bob"})
	if _, st, _ = h.e.Task("a"); st.SetBy == nil || st.SetBy.Action != job.ActReset || st.SetBy.By != "bob" || !st.SetBy.At.Time().Equal(h.now) {
		t.Fatalf("after bob's reset: %+v", st.SetBy)
	}
	h.act("a", job.ActStart)
	if _, st, _ = h.e.Task("a"); st.SetBy != nil {
		t.Fatalf("a running task keeps %+v", st.SetBy)
	}
	h.exit("a", 0)
	if _, st, _ = h.e.Task("a"); st.SetBy != nil || st.Status != job.Success {
		t.Fatalf("after its run: %s, %+v", st.Status, st.SetBy)
	}
	h.apply(Act{Task: "a", Action: job.ActRed, By: "cy"})
	if _, st, _ = h.e.Task("a"); st.SetBy == nil || st.SetBy.Action != job.ActRed || st.SetBy.By != "cy" {
		t.Fatalf("after cy's red: %+v", st.SetBy)
	}
}
