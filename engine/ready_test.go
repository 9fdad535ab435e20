package engine

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/gnomon-sched/gnomon/job"
)

// TestDispatchOrderIsASort checks the ready queue against the plainest
// model of the documented order: every time runs start, they are the first
// of the ready tasks sorted by priority (highest first), then by when they
// became ready, then by name, however tasks became ready, ended or had
// their priority changed meanwhile.
func TestDispatchOrderIsASort(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.IntRange(1, 40).Draw(rt, "tasks")
		workers := rapid.IntRange(1, 4).Draw(rt, "workers")
		prio := make([]int, n)
		var text strings.Builder
		for i := range n {
			prio[i] = rapid.IntRange(0, 3).Draw(rt, "priority")
			fmt.Fprintf(&text, "insert_task: t%02d\ntype: callable\ncommand: true\nout_log_file: o\nerr_log_file: e\npriority: %d\n", i, prio[i])
		}
		e := New(Config{Workers: workers})
		now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
		if _, err := apply(e, file{"t.def", text.String()}, now); err != nil {
			rt.Fatal(err)
		}
		// The model: each task's state, and when it became ready.
		const idle, ready, running = 0, 1, 2
		state := make([]int, n)
		seq := make([]int, n)
		runOf := map[int64]int{}
		next := 0
		for range rapid.IntRange(1, 200).Draw(rt, "steps") {
			now = now.Add(time.Second)
			var ev Event
			var runsIn []int64
			for id := range runOf {
				runsIn = append(runsIn, id)
			}
			slices.Sort(runsIn)
			switch k := rapid.IntRange(0, 2).Draw(rt, "kind"); {
			case k == 0 || len(runsIn) == 0 && k == 1:
				i := rapid.IntRange(0, n-1).Draw(rt, "start")
				if state[i] != idle {
					continue
				}
				ev = Act{Task: fmt.Sprintf("t%02d", i), Action: job.ActStart}
				state[i], seq[i] = ready, next
				next++
			case k == 1:
				id := runsIn[rapid.IntRange(0, len(runsIn)-1).Draw(rt, "exit")]
				ev = RunExited{RunID: id, Result: job.ResultNormal}
				state[runOf[id]] = idle
				delete(runOf, id)
			default:
				i := rapid.IntRange(0, n-1).Draw(rt, "redefine")
				prio[i] = rapid.IntRange(0, 3).Draw(rt, "new priority")
				ev = file{"u.def", fmt.Sprintf("update_task: t%02d\npriority: %d\n", i, prio[i])}
			}
			out, err := apply(e, ev, now)
			if err != nil {
				rt.Fatalf("%#v: %v", ev, err)
			}
			var waiting []int
			for i := range n {
				if state[i] == ready {
					waiting = append(waiting, i)
				}
			}
			slices.SortFunc(waiting, func(a, b int) int {
				if c := cmp.Compare(prio[b], prio[a]); c != 0 {
					return c
				}
				return cmp.Compare(seq[a], seq[b])
			})
			var want, got []string
			for _, i := range waiting[:min(len(waiting), workers-len(runOf))] {
				want = append(want, fmt.Sprintf("t%02d", i))
			}
			for _, ef := range out.Effects {
				if s, ok := ef.(StartRun); ok {
					got = append(got, s.Run.Task)
					var i int
					fmt.Sscanf(s.Run.Task, "t%d", &i)
					state[i] = running
					runOf[s.Run.ID] = i
				}
			}
			if !slices.Equal(got, want) {
				rt.Fatalf("after %#v started %v, want %v", ev, got, want)
			}
			checkInvariants(t, e)
		}
	})
}
