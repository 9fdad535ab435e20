package scheduler

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/engine"
	"github.com/gnomon-sched/gnomon/job"
)

// TestJournalRecordsThePlan checks that a definition file reaches the
// engine as a plan, planned on the loop against the definitions of its
// turn, and that the journal records the plan, not the text: what the
// file meant then, whatever a later parser makes of the text.
func TestJournalRecordsThePlan(t *testing.T) {
	m := openSim(t, t.TempDir(), time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC), nil)
	defer m.stop()
	ctx := context.Background()
	m.define(DefineFile{File: "a.def", Text: "insert_task: a\ntype: callable\ncommand: true\nout_log_file: /dev/null\nerr_log_file: /dev/null\ncron: 0 * * * *\n\ninsert_calendar: hol\ndates: 2026-12-25\n", By: "ada"})
	m.define(DefineFile{File: "b.def", Text: "update_task: a\nlabel: nightly\n\ninsert_task: b\ntype: callable\ncommand: true\nout_log_file: /dev/null\nerr_log_file: /dev/null\n"})
	m.define(DefineFile{File: "c.def", Text: "delete_task: b\n\ndelete_calendar: hol\n"})
	// A check plans and stops there; a refused file stops at its plan.
	d, err := m.s.Define(ctx, DefineFile{File: "d.def", Text: "insert_task: d\ntype: callable\ncommand: true\nout_log_file: /dev/null\nerr_log_file: /dev/null\n\nupdate_task: a\nlabel: x\n", Check: true})
	if err != nil {
		t.Fatal(err)
	}
	// A check says what the file would do, and what it would change.
	if d.Task("d") == nil || d.Task("a").Extras().Label != "x" || d.Before["a"] == nil || d.Before["a"].Extras().Label != "nightly" || d.Before["d"] != nil {
		t.Errorf("a check planned %+v, before %+v", d.Plan, d.Before)
	}
	if _, err := m.s.Define(ctx, DefineFile{File: "e.def", Text: "update_task: nobody\nlabel: x\n"}); err == nil || !strings.Contains(err.Error(), "e.def:1") {
		t.Fatalf("an update of a task that does not exist: %v", err)
	}
	// Plans are made by Define only: one sent as an event is refused.
	if err := m.s.Submit(ctx, engine.Define{File: "f", Plan: job.Plan{Deleted: []string{"a"}}}); err == nil {
		t.Fatal("a plan submitted as an event was accepted")
	}
	entries, err := m.st.Journal(ctx, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	var plans []map[string]json.RawMessage
	for _, en := range entries {
		if en.Kind != "define" {
			continue
		}
		var body map[string]json.RawMessage
		if err := json.Unmarshal(en.Body, &body); err != nil {
			t.Fatal(err)
		}
		plans = append(plans, body)
	}
	if len(plans) != 3 {
		t.Fatalf("%d definitions journaled, want 3 (a check and a refused file write nothing)", len(plans))
	}
	for i, p := range plans {
		if _, ok := p["text"]; ok {
			t.Errorf("entry %d records the text", i)
		}
	}
	var first engine.Define
	raw, _ := json.Marshal(plans[0])
	if err := json.Unmarshal(raw, &first); err != nil {
		t.Fatal(err)
	}
	if first.File != "a.def" || first.By != "ada" || len(first.Tasks) != 1 || first.Tasks[0].Name != "a" || first.Tasks[0].Cron != "0 * * * *" ||
		len(first.Calendars) != 1 || first.Calendars[0].Name != "hol" {
		t.Errorf("first entry %s", raw)
	}
	var second engine.Define
	raw, _ = json.Marshal(plans[1])
	if err := json.Unmarshal(raw, &second); err != nil {
		t.Fatal(err)
	}
	// The update is recorded whole: the task as the file left it.
	if a := second.Task("a"); a == nil || a.Extras().Label != "nightly" || a.Cron != "0 * * * *" || second.Task("b") == nil {
		t.Errorf("second entry %s", raw)
	}
	var third engine.Define
	raw, _ = json.Marshal(plans[2])
	if err := json.Unmarshal(raw, &third); err != nil {
		t.Fatal(err)
	}
	if len(third.Tasks) != 0 || len(third.Deleted) != 1 || third.Deleted[0] != "b" || len(third.DeletedCalendars) != 1 {
		t.Errorf("third entry %s", raw)
	}
	if _, _, ok := m.s.View().Task("d"); ok {
		t.Error("a check defined its task")
	}
}
