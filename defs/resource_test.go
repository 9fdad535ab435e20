package defs

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gnomon-sched/gnomon/job"
)

const resourceDefs = `insert_resource: warehouse
amount: 2
label: loads of the warehouse

insert_resource: ledger
amount: 1

insert_task: load
type: callable
command: load.sh
out_log_file: o
err_log_file: e
resources: warehouse, ledger=shared

insert_task: close
type: callable
command: close.sh
out_log_file: o
err_log_file: e
resources: ledger=exclusive, warehouse=2
`

func TestResources(t *testing.T) {
	t.Parallel()
	cur := load(t, resourceDefs)
	if r := cur["warehouse"]; r.Type != job.Resource || r.Extras().Amount != 2 || r.Extras().Label != "loads of the warehouse" {
		t.Errorf("warehouse = %+v %+v", r, r.Extra)
	}
	want := []job.Claim{{Resource: "ledger", Mode: job.ClaimExclusive}, {Resource: "warehouse", Units: 2}}
	if diff := cmp.Diff(want, cur["close"].Extras().Claims); diff != "" {
		t.Errorf("claims of close (-want +got):\n%s", diff)
	}
	var b strings.Builder
	var list []*job.Task
	for _, t := range cur {
		list = append(list, t)
	}
	if err := Format(&b, list); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(b.String(), "insert_resource: ledger\namount: 1\n") || !strings.Contains(b.String(), "resources: warehouse=1, ledger=shared\n") {
		t.Errorf("format: resources first, claims written whole:\n%s", b.String())
	}
	again := load(t, b.String())
	if diff := cmp.Diff(cur, again); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	// Applied declaratively, the same file changes nothing.
	acts, err := Parse("f.def", b.String())
	if err != nil {
		t.Fatal(err)
	}
	same, err := Apply("f.def", cur, Declarative("f.def", cur, acts), nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, got := range same.Tasks {
		if diff := cmp.Diff(cur[name], got); diff != "" {
			t.Errorf("declarative apply of the same file changed %s (-want +got):\n%s", name, diff)
		}
	}
	res, err := run(cur, "update_resource: warehouse\namount: 5\n")
	if err != nil || res.Tasks["warehouse"].Extras().Amount != 5 {
		t.Errorf("update: %v", err)
	}
}

func TestResourceErrors(t *testing.T) {
	t.Parallel()
	cur := load(t, resourceDefs)
	for _, tt := range []struct{ text, want string }{
		{"insert_resource: r\n", "f.def:1: insert_resource r: amount: field is required"},
		{"insert_resource: r\namount: 0\n", `amount: "0" is not a number of units from 1 to 1000000`},
		{"insert_resource: r\namount: 2\ncommand: x\n", "command: field is not allowed for a resource"},
		{"insert_task: x\n" + callable + "amount: 2\n", "amount: field is only allowed for a resource"},
		{"insert_task: x\n" + callable + "resources: nowhere\n", "resources: nowhere is not defined (define it with insert_resource: nowhere and amount: N)"},
		{"insert_task: x\n" + callable + "resources: load\n", "resources: load is a task, not a resource"},
		{"insert_task: x\n" + callable + "resources: warehouse=3\n", "resources: x asks 3 units of warehouse, which has 2: it would never run"},
		{"insert_task: x\n" + callable + "resources: warehouse=lots\n", "resources: warehouse=lots: want a number of units from 1 to 1000000, exclusive or shared"},
		{"insert_task: x\n" + callable + "resources: ledger, ledger=shared\n", "resources: ledger given more than once"},
		{"insert_task: x\n" + callable + "condition: su(ledger)\n", "condition refers to ledger, which is a resource, not a task"},
		{"insert_task: b\ntype: bundle\nresources: ledger\n", "resources: field is not allowed for bundle"},
		{"update_resource: warehouse\namount: 1\n", "amount: close asks 2 units of warehouse: keep at least that many"},
		{"delete_resource: ledger\n", "resource ledger is taken by close, load (remove it from their resources first)"},
		{"update_task: warehouse\nlabel: x\n", "warehouse is a resource, not a task (use update_resource)"},
		{"update_resource: load\namount: 1\n", "load is a task, not a resource (use update_task)"},
		{"insert_resource: load\namount: 1\n", "name load is already taken by a task"},
		{"update_resource: nope\namount: 1\n", "resource nope does not exist"},
	} {
		_, err := run(cur, tt.text)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: got %v, want %q", tt.text, err, tt.want)
		}
	}
}
