package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/gnomon-sched/gnomon/api"
	"github.com/gnomon-sched/gnomon/job"
)

// TestStatusAndTaskJSON decodes gnomon status -o json and gnomon task -o
// json: the API's answers, a bundle with its children.
func TestStatusAndTaskJSON(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.mustRun("schd_def", "-f", f.file("flow.def", `insert_task: flow
type: bundle

insert_task: step
type: callable
parent: flow
command: true
out_log_file: @DIR@/s.out
err_log_file: @DIR@/s.err
`))
	var st api.StatusResponse
	if err := json.Unmarshal([]byte(f.mustRun("schd_status", "-j", "flow", "-o", "json")), &st); err != nil {
		t.Fatal(err)
	}
	if len(st.Rows) != 2 || st.Rows[0].Name != "flow" || st.Rows[0].Level != 0 || st.Rows[1].Name != "step" || st.Rows[1].Level != 1 ||
		st.Rows[0].Status != job.Idle || st.Rows[1].Status != job.Idle {
		t.Errorf("status -o json: %+v", st)
	}
	var tv api.TaskView
	if err := json.Unmarshal([]byte(f.mustRun("gnomon", "task", "-j", "flow", "-o", "json")), &tv); err != nil {
		t.Fatal(err)
	}
	if tv.Task.Name != "flow" || tv.State.Status != job.Idle || len(tv.Children) != 1 || tv.Children[0].Task.Name != "step" || tv.Children[0].Task.Command != "true" {
		t.Errorf("task -o json: %+v", tv)
	}
	if y := f.mustRun("gnomon", "status", "flow", "-o", "yaml"); y != "rows:\n- name: flow\n  level: 0\n  status: idle\n- name: step\n  level: 1\n  status: idle\n" {
		t.Errorf("status -o yaml:\n%s", y)
	}
	if y := f.mustRun("gnomon", "task", "flow", "-o", "yaml"); !strings.HasPrefix(y, "task:\n  name: flow\n  type: bundle\n") || !strings.Contains(y, "\nchildren:\n- task:\n    name: step\n") {
		t.Errorf("task -o yaml:\n%s", y)
	}
	for _, cmd := range []string{"status", "task"} {
		if _, errs, code := f.run("gnomon", cmd, "-j", "flow", "-o", "xml"); code != ExitUsage || !strings.Contains(errs, `invalid argument "xml" for "-o, --output" flag: want json, yaml or wide`) {
			t.Errorf("%s -o xml: exit %d, %q", cmd, code, errs)
		}
	}
}
