package cli

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/store"
)

// overlap: allow runs real commands concurrently, each with its own run row
// and its own lines in the log file; overlap: queue runs them in turn.
func TestOverlapWithRealCommands(t *testing.T) {
	t.Parallel()
	f := setup(t)
	gate := filepath.Join(f.dir, "gate")
	f.mustRun("gnomon", "def", "-f", f.file("o.def", `insert_task: par
type: callable
command: echo "start $GNOMON_RUN_ID"; while [ ! -e @DIR@/gate ]; do sleep 0.02; done; echo "end $GNOMON_RUN_ID"
out_log_file: @DIR@/par.out
err_log_file: @DIR@/par.err
overlap: allow

insert_task: seq
type: callable
command: echo "start $GNOMON_RUN_ID"; while [ ! -e @DIR@/gate ]; do sleep 0.02; done; echo "end $GNOMON_RUN_ID"
out_log_file: @DIR@/seq.out
err_log_file: @DIR@/seq.err
overlap: queue
`))
	for range 3 {
		f.mustRun("schd_event", "-j", "par", "-e", "start")
		f.mustRun("schd_event", "-j", "seq", "-e", "start")
	}
	ctx := context.Background()
	st := f.store()
	// Three runs of par are in flight at once; one of seq, two wait.
	f.waitFor("three concurrent runs of par", func() bool {
		b, _ := os.ReadFile(filepath.Join(f.dir, "par.out"))
		return strings.Count(string(b), "start ") == 3
	})
	active := func(task string) int {
		rs, _ := st.Runs(ctx, store.RunQuery{Task: task})
		n := 0
		for _, r := range rs {
			if !r.Done() {
				n++
			}
		}
		return n
	}
	if n := active("par"); n != 3 {
		t.Errorf("%d runs of par in flight, want 3", n)
	}
	if n := active("seq"); n != 1 {
		t.Errorf("%d runs of seq in flight, want 1 (the others queue)", n)
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	f.waitFor("every run to end", func() bool {
		rs, _ := st.Runs(ctx, store.RunQuery{Task: "seq", Done: true})
		return len(rs) == 3 && active("par") == 0
	})
	f.waitStatus("par", "success")
	for _, task := range []string{"par", "seq"} {
		rs, _ := st.Runs(ctx, store.RunQuery{Task: task})
		if len(rs) != 3 {
			t.Fatalf("%s: %d runs, want 3", task, len(rs))
		}
		b, _ := os.ReadFile(filepath.Join(f.dir, task+".out"))
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		if len(lines) != 6 {
			t.Errorf("%s.out:\n%s", task, b)
		}
		for _, r := range rs {
			if r.Status.String() != "success" || !slices.Contains(lines, "end "+strconv.FormatInt(r.ID, 10)) {
				t.Errorf("%s run %+v: no end line of its own in\n%s", task, r, b)
			}
		}
		if task == "seq" { // one after the other
			slices.SortFunc(rs, func(a, b job.Run) int { return int(a.ID - b.ID) })
			for i := 1; i < len(rs); i++ {
				if rs[i].Start.Before(rs[i-1].End) {
					t.Errorf("queued runs overlap: %+v then %+v", rs[i-1], rs[i])
				}
			}
		}
	}
}
