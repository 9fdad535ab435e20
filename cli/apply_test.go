package cli

import (
	"strings"
	"testing"
)

// without returns definition text without the actions whose first line is
// one of headers (Format separates actions by a blank line).
func without(text string, headers ...string) string {
	var keep []string
	for block := range strings.SplitSeq(strings.TrimSuffix(text, "\n"), "\n\n") {
		first, _, _ := strings.Cut(block, "\n")
		drop := false
		for _, h := range headers {
			drop = drop || first == h
		}
		if !drop {
			keep = append(keep, block)
		}
	}
	return strings.Join(keep, "\n\n") + "\n"
}

// TestExportEditApply checks the declarative workflow: what gnomon export
// writes applies again to the server it came from (--apply), changes
// nothing there, and an edit shows as the attributes it changes; --sync
// deletes what the file does not define, of the kinds the file owns.
func TestExportEditApply(t *testing.T) {
	t.Parallel()
	f := setup(t, simulateFrom("2026-06-01T09:00:00Z")) // nothing fires by itself
	f.mustRun("schd_def", "-f", f.file("flow.def", flow+`
insert_task: spare
type: callable
command: true
out_log_file: @DIR@/spare.out
err_log_file: @DIR@/spare.err

insert_group: team
jobs: extract,load
label: the team
`))
	f.mustRun("schd_def", "-f", f.file("cfg.json", `[{"name": "landing", "dependencies": [{"type": "FILE", "resourceId": "/landing/", "lifeDuration": 60}]}]`))
	exported := f.mustRun("gnomon", "export")
	all := f.file("all.def", exported)

	// As written, inserts of existing tasks are errors.
	if _, errs, code := f.run("schd_def", "-f", all); code != 1 || !strings.Contains(errs, "ERROR "+all+":1: insert_task nightly: task already exist") {
		t.Errorf("def of the export: exit %d\n%s", code, errs)
	}
	// Declaratively, the export is what the server holds.
	for _, args := range [][]string{
		{"schd_def", "--apply", "-c", "-f", all},
		{"gnomon", "def", "--apply", "-f", all},
	} {
		if out := f.mustRun(args...); !strings.HasPrefix(out, "no changes\nSuccessfully ") {
			t.Errorf("%v:\n%s", args, out)
		}
	}
	if out := f.mustRun("gnomon", "def", "--sync", "-c", "-f", all); out != "sync: the file owns the tasks, groups and configurations\nno changes\nSuccessfully validated\n" {
		t.Errorf("sync of the export:\n%s", out)
	}

	// Edit one field: the diff names it, and -c changes nothing.
	edited := f.file("edited.def", strings.Replace(exported, "label: pull the data\n", "label: pull the data twice\n", 1))
	want := "changed: extract (callable)\n    label: \"pull the data\" -> \"pull the data twice\"\n"
	if out := f.mustRun("gnomon", "def", "--apply", "-c", "-f", edited); out != want+"Successfully validated\n" {
		t.Errorf("--apply -c of an edit:\n%s", out)
	}
	if out := f.mustRun("gnomon", "export"); out != exported {
		t.Errorf("--apply -c changed the definitions:\n%s", out)
	}
	if out := f.mustRun("gnomon", "def", "--apply", "-f", edited); out != want+"Successfully processed\n" {
		t.Errorf("--apply of an edit:\n%s", out)
	}
	if out := f.mustRun("schd_task", "-j", "extract"); !strings.Contains(out, "Label: pull the data twice\n") {
		t.Errorf("the edit was not applied:\n%s", out)
	}
	if out := f.mustRun("gnomon", "def", "--apply", "-c", "-f", edited); out != "no changes\nSuccessfully validated\n" {
		t.Errorf("--apply -c after the edit:\n%s", out)
	}

	// An attribute set and one cleared.
	cleared := f.file("cleared.def", strings.Replace(strings.Replace(exported, "label: the nightly bundle\n", "", 1), "priority: 2\n", "priority: 3\n", 1))
	if out := f.mustRun("gnomon", "def", "--apply", "-c", "-f", cleared); out != "changed: extract (callable)\n    label: \"pull the data twice\" -> \"pull the data\"\n    priority: \"2\" -> \"3\"\nchanged: nightly (bundle)\n    label: \"the nightly bundle\" -> unset\nSuccessfully validated\n" {
		t.Errorf("--apply -c of a cleared attribute:\n%s", out)
	}

	// Sync: spare goes, fresh comes, the rest stays.
	synced := f.file("synced.def", without(exported, "insert_task: spare")+`
insert_task: fresh
type: callable
command: true
out_log_file: @DIR@/fresh.out
err_log_file: @DIR@/fresh.err
`)
	want = "sync: the file owns the tasks, groups and configurations\nadded:   fresh (callable)\nchanged: extract (callable)\n    label: \"pull the data twice\" -> \"pull the data\"\ndeleted: spare (callable)\n"
	if out := f.mustRun("gnomon", "def", "--sync", "-c", "-f", synced); out != want+"Successfully validated\n" {
		t.Errorf("--sync -c:\n%s", out)
	}
	if _, _, code := f.run("schd_status", "-j", "spare"); code != 0 {
		t.Errorf("--sync -c deleted spare")
	}
	if out := f.mustRun("schd_def", "--sync", "-f", synced); out != want+"Successfully processed\n" {
		t.Errorf("--sync:\n%s", out)
	}
	if _, _, code := f.run("schd_status", "-j", "spare"); code != 1 {
		t.Errorf("spare survived the sync")
	}

	// A file without configurations owns none: landing stays.
	tasksOnly := f.file("tasks.def", without(f.mustRun("gnomon", "export"), "insert_task: landing", "insert_task: fresh"))
	if out := f.mustRun("gnomon", "def", "--sync", "-f", tasksOnly); out != "sync: the file owns the tasks and groups; configurations are left alone (it defines none)\ndeleted: fresh (callable)\nSuccessfully processed\n" {
		t.Errorf("--sync of tasks only:\n%s", out)
	}
	// A JSON file of configurations owns the configurations only.
	cfgs := f.file("cfg2.json", `[{"name": "landing2", "dependencies": [{"type": "TABLE", "resourceId": "orders", "lifeDuration": 60}]}]`)
	if out := f.mustRun("gnomon", "def", "--sync", "-f", cfgs); out != "sync: the file owns the configurations; tasks and groups are left alone (it defines none)\nadded:   landing2 (configuration)\ndeleted: landing (configuration)\nSuccessfully processed\n" {
		t.Errorf("--sync of configurations:\n%s", out)
	}
	if out := f.mustRun("gnomon", "export"); !strings.Contains(out, "insert_task: landing2\n") || strings.Contains(out, "insert_task: landing\n") || !strings.Contains(out, "insert_task: extract\n") {
		t.Errorf("after the sync of configurations:\n%s", out)
	}

	// An error the engine finds in a JSON file it was given in the task
	// language names the line of the JSON file.
	bad := f.file("cfg3.json", `[{"name": "landing4", "dependencies": [{"type": "TABLE", "resourceId": "orders", "lifeDuration": 60}]},
{"name": "landing3", "function": "nope", "dependencies": [{"type": "TABLE", "resourceId": "orders", "lifeDuration": 60}]}]`)
	if _, errs, code := f.run("gnomon", "def", "--sync", "-f", bad); code != 1 || errs != "ERROR "+bad+":2: insert_task landing3: function: nope is not registered with this scheduler\n" {
		t.Errorf("--sync of a JSON file the engine refuses: exit %d\n%s", code, errs)
	}

	// What the sync would delete but cannot is said at its delete, with why.
	orphans := f.file("orphans.def", without(f.mustRun("gnomon", "export"), "insert_task: nightly", "insert_task: landing2"))
	_, errs, code := f.run("gnomon", "def", "--sync", "-c", "-f", orphans)
	if code != 1 || errs != "ERROR "+orphans+": delete_task nightly: bundle nightly still has child tasks: n1, n2 (the sync deletes nightly: "+orphans+" does not define it)\n" {
		t.Errorf("--sync of a bundle's children without it: exit %d\n%s", code, errs)
	}
	// Usage.
	if _, errs, code := f.run("gnomon", "def", "--apply", "--sync", "-f", all); code != 2 || !strings.Contains(errs, "--apply and --sync exclude each other") {
		t.Errorf("--apply --sync: exit %d %q", code, errs)
	}
}

// TestDefSyntax: --syntax declares the file's syntax, which is then the
// only one it is read in; a name that is not a syntax is a usage error.
func TestDefSyntax(t *testing.T) {
	t.Parallel()
	f := setup(t, simulateFrom("2026-06-01T09:00:00Z"))
	cfg := f.file("landing.cfg", `[{"name": "landing", "dependencies": [{"type": "FILE", "resourceId": "/landing/", "lifeDuration": 60}]}]`)
	if _, errs, code := f.run("gnomon", "def", "--syntax", "language", "-f", cfg); code != ExitRejected || !strings.Contains(errs, cfg+":1:") {
		t.Errorf("JSON declared the task language: exit %d\n%s", code, errs)
	}
	if _, errs, code := f.run("gnomon", "def", "--syntax", "yaml", "-f", cfg); code != ExitUsage || !strings.Contains(errs, `--syntax: "yaml" is not a syntax`) {
		t.Errorf("--syntax yaml: exit %d\n%s", code, errs)
	}
	if out := f.mustRun("gnomon", "export"); out != "" {
		t.Errorf("refused files defined something:\n%s", out)
	}
	if out := f.mustRun("gnomon", "def", "--syntax", "configurations", "--apply", "-f", cfg); !strings.Contains(out, "landing (configuration)") {
		t.Errorf("declared configurations:\n%s", out)
	}
}
