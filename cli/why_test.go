package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/gnomon-sched/gnomon/api"
)

// TestWhy asks why tasks of the simulated week are not running, and what
// became of their occurrences, on the engine's state and the fire ledger.
func TestWhy(t *testing.T) {
	t.Parallel()
	f := setup(t, simulateFrom("2026-06-01 00:00"))
	f.mustRun("schd_def", "-f", f.file("week.def", week))
	f.mustRun("schd_event", "-j", "cold", "-e", "freeze")
	f.mustRun("gnomon", "clock", "advance", "--to", "2026-06-02 00:00")

	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"-j", "gated"}, []string{
			"gated waits for its condition su(never)\n",
			"\n  su(never) does not hold: never is idle\n",
			"\n    never is idle; nothing starts it by itself",
		}},
		{[]string{"-j", "cold", "--at", "2026-06-01 12:00"}, []string{
			"the occurrence at 2026-06-01 12:00:00 CEST was skipped: the task is frozen\n",
			"cold is frozen",
		}},
		{[]string{"-j", "batch", "--at", "2026-06-01 06:00"}, []string{"the occurrence at 2026-06-01 06:00:00 CEST ran: run ", ", success\n",
			"batch succeeded; its time trigger next fires at 2026-06-03 06:00:00 CEST"}},
		{[]string{"-j", "batch", "--at", "2026-06-01 07:00"}, []string{"batch's time trigger has no occurrence at 2026-06-01 07:00:00 CEST"}},
		{[]string{"-j", "batch", "--at", "2026-06-03 06:00"}, []string{"the occurrence at 2026-06-03 06:00:00 CEST is still to come"}},
		{[]string{"-j", "never", "--at", "2026-06-01 06:00"}, []string{"never has no time trigger"}},
	} {
		out := f.mustRun(append([]string{"gnomon", "why"}, c.args...)...)
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("gnomon why %s lacks %q:\n%s", strings.Join(c.args, " "), w, out)
			}
		}
	}
	var v api.WhyResponse
	if err := json.Unmarshal([]byte(f.mustRun("gnomon", "why", "-j", "gated", "--json")), &v); err != nil || len(v.Reasons) < 3 || v.Reasons[1].Task != "never" {
		t.Errorf("why --json: %+v, %v", v, err)
	}
	if _, stderr, code := f.run("gnomon", "why", "-j", "nosuch"); code == 0 || !strings.Contains(stderr, "nosuch not found") {
		t.Errorf("why of an unknown task: exit %d, %q", code, stderr)
	}
}
