package cli

import (
	"strings"
	"testing"
)

const resourceDefs = `insert_resource: warehouse
amount: 2
label: loads into the warehouse

insert_task: hold
type: callable
command: while [ ! -f @DIR@/go ]; do sleep 0.02; done
out_log_file: @DIR@/hold.out
err_log_file: @DIR@/hold.err
resources: warehouse=2

insert_task: load_a
type: callable
command: true
out_log_file: @DIR@/a.out
err_log_file: @DIR@/a.err
priority: critical
resources: warehouse

insert_task: load_b
type: callable
command: true
out_log_file: @DIR@/b.out
err_log_file: @DIR@/b.err
resources: warehouse
`

// A task that waits for a resource says so in gnomon status and why, and
// runs once the holder ends; export writes the resource before the tasks
// that take it.
func TestResourcesFromTheCommandLine(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.mustRun("gnomon", "def", "-f", f.file("res.def", resourceDefs))
	f.mustRun("gnomon", "start", "-j", "hold")
	f.waitStatus("hold", "running")
	f.mustRun("gnomon", "start", "-j", "load_b")
	f.mustRun("gnomon", "start", "-j", "load_a")
	f.waitFor("load_a to wait for the warehouse", func() bool {
		return strings.Contains(f.mustRun("gnomon", "status", "-j", "load_a"), "load_a: waits for resource warehouse")
	})
	why := f.mustRun("gnomon", "why", "-j", "load_b")
	if !strings.Contains(why, "load_b is ready and waits for resource warehouse: 2 of 2 held by hold; it needs 1, after 1 task(s) before it in priority order that wait for it too") {
		t.Errorf("why load_b:\n%s", why)
	}
	export := f.mustRun("gnomon", "export")
	if !strings.HasPrefix(export, "insert_resource: warehouse\namount: 2\nlabel: loads into the warehouse\n") ||
		!strings.Contains(export, "resources: warehouse=2\n") {
		t.Errorf("export:\n%s", export)
	}
	f.file("go", "")
	f.waitStatus("load_b", "success")
	f.waitStatus("load_a", "success")
	// The critical one went first.
	a := f.mustRun("gnomon", "runs", "-j", "load_a", "-o", "json")
	b := f.mustRun("gnomon", "runs", "-j", "load_b", "-o", "json")
	if !strings.Contains(a, `"id": 2`) || !strings.Contains(b, `"id": 3`) {
		t.Errorf("load_a should be run 2 and load_b run 3:\n%s\n%s", a, b)
	}
	_, errs, code := f.run("gnomon", "def", "-f", f.file("bad.def", "delete_resource: warehouse\n"))
	if code == 0 || !strings.Contains(errs, "resource warehouse is taken by hold, load_a, load_b (remove it from their resources first)") {
		t.Errorf("deleting a resource in use: exit %d\n%s", code, errs)
	}
}
