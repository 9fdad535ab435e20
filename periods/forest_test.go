package periods

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// file builds a tree file starting 2024-01-01 00:00 with a lag of 5
// minutes and 3 retries.
func file(trees ...string) string {
	return `{"settings": {"startTimeperiod": "2024010100", "lagMinutes": 5, "maxFailures": 3}, "trees": [` +
		strings.Join(trees, ", ") + `]}`
}

// tr builds a tree; deps is a comma-separated list of quoted names.
func tr(name, deps string, levels ...string) string {
	return fmt.Sprintf(`{"name": %q, "dependentOn": [%s], "levels": [%s]}`, name, deps, strings.Join(levels, ", "))
}

// lv builds a level; extra holds more members, each with a leading comma.
func lv(process, q, extra string) string {
	return fmt.Sprintf(`{"process": %q, "qualifier": %q%s}`, process, q, extra)
}

// finish ends the current run of a process's next node n times.
func finish(process string, n int, o Outcome) step {
	return func(s *sim) {
		s.t.Helper()
		for range n {
			var got *Node
			for _, on := range s.f.Outstanding() {
				if on.Process == process {
					got = &on
					break
				}
			}
			if got == nil {
				s.t.Fatalf("at %v: no outstanding run of %s", s.now, process)
			}
			s.apply(RunResult{Process: process, Timeperiod: got.Timeperiod, RunID: got.RunID, Outcome: o})
		}
	}
}

func check(f func(s *sim)) step { return f }

const afterDay = "2024-01-02T00:05:00.000000001Z" // day 1 and its hour 23 are due

var (
	hourly      = file(tr("site", "", lv("site_hourly", "hourly", "")))
	dayAndHours = func(blocking string) string {
		return file(tr("site", "", lv("site_daily", "daily", `, "blocking": "`+blocking+`"`), lv("site_hourly", "hourly", "")))
	}
	continuousHourly = file(tr("site", "", lv("site_hourly", "hourly", `, "stateMachine": "continuous", "every": "10m"`)))
	// site (daily, hourly) and client (daily, hourly) depending on it.
	siteAndClient = func(clientBlocking string) string {
		return file(
			tr("site", "", lv("site_daily", "daily", ""), lv("site_hourly", "hourly", "")),
			tr("client", `"site"`, lv("client_daily", "daily", `, "blocking": "`+clientBlocking+`"`), lv("client_hourly", "hourly", `, "blocking": "`+clientBlocking+`"`)),
		)
	}
)

// TestStateMachine has a scenario for each row of the state-machine
// table (§3), each gate (§4), both cascades (§5, §6) and restarts (§8).
func TestStateMachine(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		start string // the instant the files are defined
		files []string
		steps []step
	}{
		{"rule 1: a discrete node starts strictly after end plus lag", "2024-01-01T00:00", []string{hourly}, []step{
			want("site_hourly@2024010100=embryo-run"),
			tick("2024-01-01T01:00:00Z"), want("site_hourly@2024010100=embryo"), noRun(),
			tick("2024-01-01T01:05:00Z"), want("site_hourly@2024010100=embryo"), noRun(),
			tick("2024-01-01T01:05:00.000000001Z"), want("site_hourly@2024010100=in_progress+run"),
			changed(1, "site_hourly@2024010100", Embryo, InProgress), started("site_hourly@2024010100"),
			want("site_hourly@2024010101=embryo"), // one node of a process at a time
		}},
		{"rule 2: a continuous node runs while its period is open", "2024-01-01T00:00", []string{continuousHourly}, []step{
			want("site_hourly@2024010100=in_progress+run"), changed(2, "site_hourly@2024010100", Embryo, InProgress),
		}},
		{"rule 3: a closed continuous node goes straight to its final run", "2024-01-01T03:30", []string{continuousHourly}, []step{
			want("site_hourly@2024010100=final_run+run", "site_hourly@2024010101=embryo"),
			changed(3, "site_hourly@2024010100", Embryo, FinalRun),
			result("site_hourly@2024010100", OutcomeProcessed), changed(9, "site_hourly@2024010100", FinalRun, Processed),
			want("site_hourly@2024010101=final_run+run"),
		}},
		{"rule 4: a blocking dependency's skipped counterpart skips the node", "2024-01-01T00:00", []string{siteAndClient("dependencies")}, []step{
			tick("2024-01-01T01:06"),
			finish("site_hourly", 4, OutcomeFailed), want("site_hourly@2024010100=skipped", "client_hourly@2024010100=skipped"),
			changed(11, "site_hourly@2024010100", InProgress, Skipped),
			// Reprocessing the dependant alone: rule 4 skips it again.
			reprocess("client_hourly@2024010100"),
			changed(16, "client_hourly@2024010100", Skipped, Embryo),
			changed(4, "client_hourly@2024010100", Embryo, Skipped),
			want("client_hourly@2024010100=skipped"),
		}},
		{"rule 5: a finalizable discrete node is processed by its run", "2024-01-01T00:00", []string{hourly}, []step{
			tick("2024-01-01T01:06"), result("site_hourly@2024010100", OutcomeProcessed),
			changed(5, "site_hourly@2024010100", InProgress, Processed), want("site_hourly@2024010100=processed-run"),
		}},
		{"rule 5: noop", "2024-01-01T00:00", []string{hourly}, []step{
			tick("2024-01-01T01:06"), result("site_hourly@2024010100", OutcomeNoop),
			changed(5, "site_hourly@2024010100", InProgress, Noop),
		}},
		{"rules 6, 7 and 9: a node whose children are late awaits, then gets one final run", "2024-01-01T00:00", []string{dayAndHours("normal")}, []step{
			tick("2024-01-01T23:05:01Z"), finish("site_hourly", 23, OutcomeProcessed),
			want("site_hourly@2024010122=processed", "site_daily@2024010100=embryo"),
			tick(afterDay), want("site_daily@2024010100=in_progress+run", "site_hourly@2024010123=in_progress+run"),
			result("site_daily@2024010100", OutcomeProcessed),
			changed(6, "site_daily@2024010100", InProgress, InProgress), want("site_daily@2024010100=in_progress-run"),
			result("site_hourly@2024010123", OutcomeProcessed),
			changed(5, "site_hourly@2024010123", InProgress, Processed),
			changed(7, "site_daily@2024010100", InProgress, FinalRun), want("site_daily@2024010100=final_run+run"),
			check(func(s *sim) {
				for _, e := range s.out.Effects {
					if sr, ok := e.(StartRun); ok && sr.Process == "site_daily" && !sr.Final {
						s.t.Errorf("final run not marked Final: %+v", sr)
					}
				}
			}),
			result("site_daily@2024010100", OutcomeNoop), changed(9, "site_daily@2024010100", FinalRun, Noop),
		}},
		{"rule 8: a continuous awaiting node runs once per tick while open", "2024-01-01T00:00", []string{continuousHourly}, []step{
			result("site_hourly@2024010100", OutcomeProcessed), changed(6, "site_hourly@2024010100", InProgress, InProgress),
			check(func(s *sim) {
				if w := s.f.NextWake(); !w.Equal(parseTime(s.t, "2024-01-01T00:10")) {
					s.t.Errorf("NextWake = %v; want the tick at 00:10", w)
				}
			}),
			tick("2024-01-01T00:09:59Z"), noRun(),
			tick("2024-01-01T00:10:00Z"), started("site_hourly@2024010100"), changed(8, "site_hourly@2024010100", InProgress, InProgress),
			tick("2024-01-01T00:20:00Z"), noRun(), // its run is still outstanding
			result("site_hourly@2024010100", OutcomeProcessed),
			tick("2024-01-01T00:35:00Z"), started("site_hourly@2024010100"), // missed ticks count once
			result("site_hourly@2024010100", OutcomeProcessed),
			tick("2024-01-01T01:00:00Z"),
			changed(7, "site_hourly@2024010100", InProgress, FinalRun),
			want("site_hourly@2024010101=embryo"), // the process's next node is still the first
			result("site_hourly@2024010100", OutcomeProcessed), want("site_hourly@2024010100=processed"),
			changed(2, "site_hourly@2024010101", Embryo, InProgress),
		}},
		{"rule 8: ticks that pass while a run is outstanding start nothing after it", "2024-01-01T00:00", []string{continuousHourly}, []step{
			// The loop sleeps until NextWake: no Tick while the run is out.
			at("2024-01-01T00:25"),
			result("site_hourly@2024010100", OutcomeProcessed), changed(6, "site_hourly@2024010100", InProgress, InProgress),
			check(func(s *sim) {
				if w := s.f.NextWake(); !w.Equal(parseTime(s.t, "2024-01-01T00:30")) {
					s.t.Errorf("NextWake = %v; want the next tick, at 00:30", w)
				}
			}),
			tick("2024-01-01T00:25:00Z"), noRun(),
			tick("2024-01-01T00:29:59Z"), noRun(),
			tick("2024-01-01T00:30:00Z"), started("site_hourly@2024010100"),
		}},
		{"ContinuousTick runs a tick at once", "2024-01-01T00:00", []string{continuousHourly}, []step{
			result("site_hourly@2024010100", OutcomeProcessed),
			at("2024-01-01T00:01"),
			check(func(s *sim) {
				s.apply(ContinuousTick{Process: "site_hourly", By: "dave"})
				if len(s.out.Runs) != 1 || s.out.Runs[0].By != "dave" {
					s.t.Errorf("runs %+v, want one that names dave", s.out.Runs)
				}
			}),
			started("site_hourly@2024010100"),
		}},
		{"rules 10 and 11: failures retry at once, the fourth skips and propagates", "2024-01-01T00:00", []string{siteAndClient("normal")}, []step{
			tick("2024-01-01T02:06"),
			finish("site_hourly", 1, OutcomeFailed), changed(10, "site_hourly@2024010100", InProgress, InProgress),
			started("site_hourly@2024010100"),
			check(func(s *sim) {
				if sr := s.out.Effects[0].(StartRun); sr.Attempt != 2 {
					s.t.Errorf("attempt %d; want 2", sr.Attempt)
				}
			}),
			finish("site_hourly", 2, OutcomeFailed), want("site_hourly@2024010100=in_progress+run"),
			check(func(s *sim) {
				if n := s.node("site_hourly@2024010100"); n.Failures != 3 {
					s.t.Errorf("failures %d", n.Failures)
				}
			}),
			finish("site_hourly", 1, OutcomeFailed), changed(11, "site_hourly@2024010100", InProgress, Skipped),
			want("client_hourly@2024010100=skipped"), canceled("client_hourly@2024010100"),
			want("site_hourly@2024010101=in_progress+run"), // the process moves on
		}},
		{"rule 12: a canceled run skips the node and propagates", "2024-01-01T00:00", []string{siteAndClient("normal")}, []step{
			tick("2024-01-01T01:06"), finish("site_hourly", 1, OutcomeCanceled),
			changed(12, "site_hourly@2024010100", InProgress, Skipped),
			changed(12, "client_hourly@2024010100", InProgress, Skipped),
		}},
		{"rule 13: a closed parent whose children are all skipped is skipped", "2024-01-01T00:00", []string{dayAndHours("normal")}, []step{
			at("2024-01-01T23:30"), skip(hoursOf("site_hourly", "20240101")...),
			want("site_hourly@2024010123=skipped", "site_daily@2024010100=embryo"), // not closed yet
			tick("2024-01-01T23:59:59.999999999Z"), want("site_daily@2024010100=embryo"),
			tick("2024-01-02T00:00"), changed(13, "site_daily@2024010100", Embryo, Skipped),
		}},
		{"rule 13: one child not skipped keeps the parent", "2024-01-01T00:00", []string{dayAndHours("normal")}, []step{
			tick("2024-01-01T01:06"), result("site_hourly@2024010100", OutcomeProcessed),
			at("2024-01-01T23:30"), skip(hoursOf("site_hourly", "20240101")[1:]...),
			tick(afterDay), want("site_daily@2024010100=in_progress+run"),
			result("site_daily@2024010100", OutcomeProcessed), want("site_daily@2024010100=processed"),
		}},
		{"rule 14: an operator skips an active node, its run, children and dependants", "2024-01-01T00:00", []string{siteAndClient("normal")}, []step{
			tick("2024-01-01T01:06"), want("site_hourly@2024010100=in_progress+run", "client_hourly@2024010100=in_progress+run"),
			skip("site_daily@2024010100"),
			changed(14, "site_daily@2024010100", Embryo, Skipped),
			changed(14, "site_hourly@2024010100", InProgress, Skipped), // child
			changed(14, "client_daily@2024010100", Embryo, Skipped),    // dependant
			changed(14, "client_hourly@2024010100", InProgress, Skipped),
			canceled("site_hourly@2024010100", "client_hourly@2024010100"),
			want("site_hourly@2024010101=skipped"),
			check(func(s *sim) {
				d := s.node("site_hourly@2024010100")
				if e := d.Log[0]; e.Cause != CauseSkip || e.By != "ops" || e.Origin == nil || e.Origin.Process != "site_daily" {
					s.t.Errorf("cascade entry %+v", e)
				}
			}),
		}},
		{"rule 15: skipping a finished node changes it not but propagates", "2024-01-01T00:00", []string{siteAndClient("normal")}, []step{
			tick("2024-01-01T01:06"), result("site_hourly@2024010100", OutcomeProcessed),
			want("site_hourly@2024010100=processed", "client_hourly@2024010100=in_progress+run"),
			skip("site_hourly@2024010100"),
			changed(15, "site_hourly@2024010100", Processed, Processed),
			changed(14, "client_hourly@2024010100", InProgress, Skipped),
			want("site_hourly@2024010100=processed"),
		}},
		{"rule 16: reprocess resets the node, its parents and dependants, not children or dependencies", "2024-01-01T00:00", []string{siteAndClient("normal")}, []step{
			tick("2024-01-01T01:06"), result("site_hourly@2024010100", OutcomeProcessed),
			result("client_hourly@2024010100", OutcomeFailed), // one failure, retried
			result("client_hourly@2024010100", OutcomeProcessed),
			want("client_hourly@2024010100=processed"),
			at("2024-01-01T01:30"), reprocess("site_hourly@2024010100"),
			changed(16, "site_hourly@2024010100", Processed, Embryo),
			changed(16, "client_hourly@2024010100", Processed, Embryo),
			// The re-opened hour starts again at once (due long ago).
			want("site_hourly@2024010100=in_progress+run", "site_daily@2024010100=embryo", "client_hourly@2024010100=in_progress+run"),
			check(func(s *sim) {
				if n := s.node("client_hourly@2024010100"); n.Failures != 0 {
					s.t.Errorf("failures %d after reprocess", n.Failures)
				}
			}),
			// Reprocessing the client does not touch the site.
			reprocess("client_hourly@2024010100"), canceled("client_hourly@2024010100"),
			want("site_hourly@2024010100=in_progress+run"),
		}},
		{"rule 16: reprocess cascades up to the top and across trees", "2024-01-01T00:00", []string{siteAndClient("normal")}, []step{
			tick(afterDay), finish("site_hourly", 24, OutcomeProcessed), finish("client_hourly", 24, OutcomeProcessed),
			finish("site_daily", 1, OutcomeProcessed), finish("client_daily", 1, OutcomeProcessed),
			want("site_daily@2024010100=processed", "client_daily@2024010100=processed"),
			reprocess("site_hourly@2024010105"),
			check(func(s *sim) {
				var got []string
				for _, c := range s.out.Changes {
					if c.Rule == 16 {
						got = append(got, c.Process+"@"+c.Timeperiod.String())
					}
				}
				want := "site_hourly@2024010105 site_daily@2024010100 client_daily@2024010100 client_hourly@2024010105"
				if strings.Join(got, " ") != want {
					s.t.Errorf("cascade order %v; want %s", got, want)
				}
			}),
			want("site_hourly@2024010104=processed", "client_hourly@2024010106=processed"),
		}},
		{"gate children: the parent starts when every child and counterpart is finished", "2024-01-01T00:00", []string{dayAndHours("children")}, []step{
			tick("2024-01-01T23:05:01Z"), finish("site_hourly", 23, OutcomeProcessed),
			tick(afterDay), want("site_daily@2024010100=embryo", "site_hourly@2024010123=in_progress+run"),
			result("site_hourly@2024010123", OutcomeProcessed),
			changed(1, "site_daily@2024010100", Embryo, InProgress),
			result("site_daily@2024010100", OutcomeProcessed), changed(5, "site_daily@2024010100", InProgress, Processed),
		}},
		{"gate dependencies: waits for processed counterparts and holds later periods back", "2024-01-01T00:00", []string{siteAndClient("dependencies")}, []step{
			tick("2024-01-01T03:06"),
			want("site_hourly@2024010100=in_progress+run", "client_hourly@2024010100=embryo", "client_hourly@2024010101=embryo"),
			result("site_hourly@2024010100", OutcomeProcessed),
			started("site_hourly@2024010101", "client_hourly@2024010100"),
			result("site_hourly@2024010101", OutcomeProcessed), // client 01 still waits for client 00
			want("client_hourly@2024010101=embryo"),
			result("client_hourly@2024010100", OutcomeProcessed),
			want("client_hourly@2024010101=in_progress+run"),
		}},
		{"gate normal: a dependant starts but finalizes only after its counterpart", "2024-01-01T00:00", []string{siteAndClient("normal")}, []step{
			tick("2024-01-01T01:06"), want("client_hourly@2024010100=in_progress+run"),
			result("client_hourly@2024010100", OutcomeProcessed), want("client_hourly@2024010100=in_progress-run"),
			result("site_hourly@2024010100", OutcomeProcessed),
			changed(7, "client_hourly@2024010100", InProgress, FinalRun),
			result("client_hourly@2024010100", OutcomeProcessed), want("client_hourly@2024010100=processed"),
		}},
		{"a level with no counterpart is unconstrained by that tree", "2024-01-01T00:00", []string{file(
			tr("site", "", lv("site_daily", "daily", "")),
			tr("client", `"site"`, lv("client_hourly", "hourly", `, "blocking": "dependencies"`)),
		)}, []step{
			tick("2024-01-01T01:06"), want("client_hourly@2024010100=in_progress+run", "site_daily@2024010100=embryo"),
		}},
		{"a skipped child counts as finished: the parent may still be processed", "2024-01-01T00:00", []string{dayAndHours("children")}, []step{
			tick("2024-01-01T23:05:01Z"), finish("site_hourly", 1, OutcomeProcessed),
			skip(hoursOf("site_hourly", "20240101")[1:]...),
			tick(afterDay), want("site_daily@2024010100=in_progress+run"),
			result("site_daily@2024010100", OutcomeProcessed), want("site_daily@2024010100=processed"),
		}},
		{"reprocessing a parent whose children are all skipped is undone by rule 13", "2024-01-01T00:00", []string{dayAndHours("normal")}, []step{
			at("2024-01-01T23:30"), skip(hoursOf("site_hourly", "20240101")...),
			tick("2024-01-02T00:00"), want("site_daily@2024010100=skipped"),
			reprocess("site_daily@2024010100"),
			changed(16, "site_daily@2024010100", Skipped, Embryo), changed(13, "site_daily@2024010100", Embryo, Skipped),
			// Reprocessing a child revives it: the child runs, then the day.
			reprocess("site_hourly@2024010107"), want("site_daily@2024010100=embryo", "site_hourly@2024010107=in_progress+run"),
			result("site_hourly@2024010107", OutcomeProcessed),
			tick(afterDay), want("site_daily@2024010100=in_progress+run"),
			result("site_daily@2024010100", OutcomeProcessed), want("site_daily@2024010100=processed"),
		}},
		{"reprocessing an open period is harmless", "2024-01-01T00:00", []string{dayAndHours("normal")}, []step{
			tick("2024-01-01T01:10"), reprocess("site_hourly@2024010101"),
			want("site_hourly@2024010101=embryo", "site_daily@2024010100=embryo", "site_hourly@2024010100=in_progress+run"), noRun(),
		}},
		{"a monthly level over an hourly one, across a leap day and a month's end", "2024-02-29T21:00", []string{
			`{"settings": {"startTimeperiod": "2024022922", "lagMinutes": 0}, "trees": [` +
				tr("site", "", lv("site_monthly", "monthly", `, "blocking": "children"`), lv("site_hourly", "hourly", `, "stateMachine": "continuous"`)) + `]}`,
		}, []step{
			check(func(s *sim) {
				if ns, _ := s.f.Nodes("site_monthly", 0, 0); len(ns) != 0 {
					s.t.Errorf("nodes before the start: %v", ns)
				}
			}),
			tick("2024-02-29T22:00"), want("site_hourly@2024022922=in_progress+run"),
			result("site_hourly@2024022922", OutcomeProcessed),
			tick("2024-02-29T23:00"), changed(7, "site_hourly@2024022922", InProgress, FinalRun),
			result("site_hourly@2024022922", OutcomeProcessed), want("site_hourly@2024022923=in_progress+run"),
			result("site_hourly@2024022923", OutcomeNoop),
			tick("2024-03-01T00:00:00Z"), want("site_hourly@2024022923=final_run+run", "site_monthly@2024020000=embryo"),
			result("site_hourly@2024022923", OutcomeNoop), // February's children are done
			want("site_monthly@2024020000=embryo"),        // due strictly after its end, even with no lag
			tick("2024-03-01T00:00:00.000000001Z"), changed(1, "site_monthly@2024020000", Embryo, InProgress),
			result("site_monthly@2024020000", OutcomeProcessed), want("site_monthly@2024020000=processed", "site_monthly@2024030000=embryo"),
			check(func(s *sim) {
				if d := s.node("site_monthly@2024020000"); len(d.Children) != 2 {
					s.t.Errorf("february has %d hours since the start", len(d.Children))
				}
			}),
		}},
		{"a failed final run is retried as a final run", "2024-01-01T03:30", []string{continuousHourly}, []step{
			result("site_hourly@2024010100", OutcomeFailed), changed(10, "site_hourly@2024010100", FinalRun, FinalRun),
			check(func(s *sim) {
				if sr := s.out.Effects[0].(StartRun); !sr.Final || sr.Attempt != 2 || !sr.External {
					s.t.Errorf("retry %+v", sr)
				}
			}),
		}},
		{"stale results are ignored", "2024-01-01T00:00", []string{hourly}, []step{
			tick("2024-01-01T01:06"),
			check(func(s *sim) {
				old := s.node("site_hourly@2024010100").RunID
				s.apply(RunResult{Process: "site_hourly", Timeperiod: 2024010100, RunID: old, Outcome: OutcomeFailed})
				out := s.apply(RunResult{Process: "site_hourly", Timeperiod: 2024010100, RunID: old, Outcome: OutcomeProcessed})
				if !out.Stale || len(out.Changes) > 0 {
					s.t.Errorf("result of the failed run applied again: %+v", out)
				}
				out = s.apply(RunResult{Process: "gone", Timeperiod: 2024010100, RunID: 1, Outcome: OutcomeProcessed})
				if !out.Stale {
					s.t.Error("result for an unknown process not stale")
				}
			}),
			want("site_hourly@2024010100=in_progress+run"),
		}},
		{"restart re-requests outstanding runs with their IDs", "2024-01-01T00:00", []string{siteAndClient("normal")}, []step{
			tick("2024-01-01T01:06"),
			check(func(s *sim) {
				id := s.node("site_hourly@2024010100").RunID
				s.apply(RunStarted{Process: "site_hourly", Timeperiod: 2024010100, RunID: id})
				if n := s.node("site_hourly@2024010100"); n.RunStatus != RunRunning {
					s.t.Errorf("run status %q", n.RunStatus)
				}
				out := s.apply(Restart{})
				var ids []int64
				for _, e := range out.Effects {
					ids = append(ids, e.(StartRun).RunID)
				}
				if len(ids) != 2 || ids[1] != id {
					s.t.Errorf("restart requested %v; want the client's run and %d", ids, id)
				}
				if n := s.node("site_hourly@2024010100"); n.RunStatus != RunRequested || n.RunID != id {
					s.t.Errorf("after restart %+v", n.Node)
				}
			}),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := newSim(t, tt.start, tt.files...)
			for _, st := range tt.steps {
				st(s)
				if t.Failed() {
					t.FailNow()
				}
			}
			checkReplay(t, s)
		})
	}
}

// hoursOf returns refs of the 24 hours of a day "YYYYMMDD".
func hoursOf(process, day string) []string {
	var out []string
	for h := range 24 {
		out = append(out, fmt.Sprintf("%s@%s%02d", process, day, h))
	}
	return out
}

// checkReplay replays a scenario's events on a fresh forest, and from a
// snapshot taken half way, and compares the outputs and the final state.
func checkReplay(t *testing.T, s *sim) {
	t.Helper()
	mid := len(s.events) / 2
	fresh := New(Config{})
	var outs []*Output
	for i, ev := range s.events {
		out, err := fresh.Apply(ev, s.times[i])
		if err != nil {
			t.Fatalf("replay %d: %v", i, err)
		}
		outs = append(outs, out)
		if i == mid-1 {
			snap := roundTrip(t, fresh.Snapshot())
			restored := New(Config{})
			if err := restored.Restore(snap); err != nil {
				t.Fatalf("restore: %v", err)
			}
			checkForest(t, restored)
			for j := mid; j < len(s.events); j++ {
				out, err := restored.Apply(s.events[j], s.times[j])
				if err != nil {
					t.Fatalf("replay after restore %d: %v", j, err)
				}
				checkForest(t, restored)
				outs = append(outs, out)
			}
			sameSnapshot(t, s.f.Snapshot(), restored.Snapshot())
		}
	}
	sameSnapshot(t, s.f.Snapshot(), fresh.Snapshot())
	if mid > 0 {
		for j := mid; j < len(s.events); j++ {
			sameOutput(t, j, outs[j], outs[len(s.events)+j-mid])
		}
	}
}

func TestDefineRemove(t *testing.T) {
	t.Parallel()
	s := newSim(t, "2024-01-01T02:30", siteAndClient("normal"))
	if got := len(s.out.Nodes); got != 2*(1+3) {
		t.Errorf("nodes created: %d", got)
	}
	if got := strings.Join(s.out.Trees, ","); got != "client,site" {
		t.Errorf("trees %s", got)
	}
	// Remove refuses a tree another depends on.
	if _, err := s.f.Apply(Remove{Tree: "site"}, s.now); !errors.Is(err, ErrRefused) {
		t.Fatalf("remove site: %v", err)
	}
	if _, err := s.f.Apply(Remove{Tree: "nope"}, s.now); !errors.Is(err, ErrNotFound) {
		t.Fatalf("remove nope: %v", err)
	}
	// A file may not drop a tree another file depends on.
	s.apply(Define{File: "other.json", Text: file(tr("extra", `"site"`, lv("extra_daily", "daily", "")))})
	_, err := s.f.Apply(Define{File: "f0.json", Text: file(tr("client", "", lv("client_daily", "daily", "")))}, s.now)
	var ps Problems
	if !errors.As(err, &ps) || len(ps) != 1 || !strings.Contains(ps[0].Msg, `tree "site" is no longer defined, but tree "extra" of other.json depends on it`) {
		t.Fatalf("define dropping site: %v", err)
	}
	// Nor define a process or tree another file has.
	_, err = s.f.Apply(Define{File: "third.json", Text: file(tr("site", "", lv("extra_daily", "daily", "")))}, s.now)
	if !errors.As(err, &ps) || len(ps) != 2 {
		t.Fatalf("define clashing: %v", err)
	}
	s.apply(Remove{Tree: "extra"})
	if _, ok := s.f.Definition("other.json"); ok {
		t.Error("other.json still defined with no tree left")
	}
	if got := strings.Join(s.out.Removed, ","); got != "extra" {
		t.Errorf("removed %s", got)
	}

	// Redefine: the client loses its hourly level, the site's start moves
	// later by an hour; outstanding runs of dropped nodes are canceled.
	tick("2024-01-01T02:06")(s)
	want("site_hourly@2024010100=in_progress+run", "client_hourly@2024010100=in_progress+run")(s)
	s.apply(Define{File: "f0.json", Text: `{"settings": {"startTimeperiod": "2024010101"}, "trees": [` +
		tr("site", "", lv("site_daily", "daily", ""), lv("site_hourly", "hourly", "")) + `, ` +
		tr("client", `"site"`, lv("client_daily", "daily", `, "blocking": "children"`)) + `]}`})
	canceled("client_hourly@2024010100", "site_hourly@2024010100")(s)
	if got := fmt.Sprint(s.out.Dropped); got != "[{client_hourly 0000000000} {site_hourly 2024010101}]" {
		t.Errorf("dropped %s", got)
	}
	if _, err := s.f.Node("client_hourly", "2024010100"); !errors.Is(err, ErrNotFound) {
		t.Errorf("dropped process still there: %v", err)
	}
	want("site_hourly@2024010101=in_progress+run")(s)
	if ns, _ := s.f.Nodes("site_hourly", 0, 0); len(ns) != 2 {
		t.Errorf("site_hourly nodes %v", ns)
	}
	// The start moves back: the hour returns as an embryo, the process's
	// earliest active node, and starts at once (it is long due).
	s.apply(Define{File: "f0.json", Text: siteAndClient("normal")})
	changed(1, "site_hourly@2024010100", Embryo, InProgress)(s)
	want("site_hourly@2024010101=in_progress+run", "client_hourly@2024010100=in_progress+run")(s)
	// An identical file changes nothing.
	if out := s.apply(Define{File: "f0.json", Text: siteAndClient("normal")}); len(out.Trees)+len(out.Changes)+len(out.Nodes) != 0 {
		t.Errorf("identical define: %+v", out)
	}
	// Defining the client alone in its file leaves the site's file as it is.
	info, _ := s.f.Tree("client")
	if info.File != "f0.json" || info.Levels[1].Blocking != Normal || info.DependentOn[0] != "site" {
		t.Errorf("tree info %+v", info)
	}
	checkReplay(t, s)
}

// TestRedefineAlerts checks that a level redefined with only its alert
// settings changed keeps its nodes and its outstanding run, and takes the
// new settings.
func TestRedefineAlerts(t *testing.T) {
	t.Parallel()
	alerts := func(on, to string) string {
		return file(tr("site", "", lv("site_daily", "daily", on), lv("site_hourly", "hourly", to)))
	}
	s := newSim(t, "2024-01-01T00:00", alerts("", `, "alertOn": ["failure"], "alertTo": ["ops@example.com"]`))
	tick("2024-01-01T02:06")(s)
	result("site_hourly@2024010100", OutcomeProcessed)(s)
	want("site_hourly@2024010100=processed", "site_hourly@2024010101=in_progress+run", "site_daily@2024010100=embryo")(s)
	nodes := func() []Node {
		var all []Node
		for _, p := range []string{"site_daily", "site_hourly"} {
			ns, err := s.f.Nodes(p, 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, ns...)
		}
		return all
	}
	before := nodes()
	for i, text := range []string{
		// Other outcomes and addresses, and alerts on the daily level too.
		alerts(`, "alertOn": ["success", "failure"], "alertTo": ["boss@example.com"]`,
			`, "alertOn": ["failure", "success"], "alertTo": ["ops@example.com", "oncall@example.com"]`),
		// No alerts at all.
		alerts("", ""),
	} {
		out := s.apply(Define{File: "f0.json", Text: text})
		if len(out.Dropped)+len(out.Effects)+len(out.Changes)+len(out.Nodes) != 0 {
			t.Errorf("redefine %d: dropped %v, effects %v, changes %s, nodes %v", i, out.Dropped, out.Effects, changes(out), out.Nodes)
		}
		if got := strings.Join(out.Trees, ","); got != "site" {
			t.Errorf("redefine %d: trees %q", i, got)
		}
		if d := cmp.Diff(before, nodes()); d != "" {
			t.Errorf("redefine %d: nodes (-before +after):\n%s", i, d)
		}
		want("site_hourly@2024010101=in_progress+run")(s)
		_, hourly, _ := s.f.Process("site_hourly")
		_, daily, _ := s.f.Process("site_daily")
		got := fmt.Sprint(daily.AlertOn, daily.AlertTo, hourly.AlertOn, hourly.AlertTo)
		if w := []string{"[success failure] [boss@example.com] [failure success] [ops@example.com oncall@example.com]", "[] [] [] []"}[i]; got != w {
			t.Errorf("redefine %d: alerts %s, want %s", i, got, w)
		}
	}
	// The run that was outstanding before still ends its node.
	result("site_hourly@2024010101", OutcomeProcessed)(s)
	want("site_hourly@2024010101=processed")(s)
	checkReplay(t, s)
}

func TestDryRun(t *testing.T) {
	t.Parallel()
	s := newSim(t, "2024-01-01T00:00", siteAndClient("normal"))
	tick("2024-01-01T01:06")(s)
	before := s.f.Snapshot()
	out := s.apply(Skip{Process: "site_daily", Timeperiods: []string{"2024010105"}, DryRun: true})
	if !out.DryRun || len(out.Changes) != 6 || len(out.Effects)+len(out.Log)+len(out.Nodes)+len(out.Runs) != 0 {
		t.Fatalf("dry skip: %+v", out)
	}
	sameSnapshot(t, before, s.f.Snapshot())
	result("site_hourly@2024010100", OutcomeProcessed)(s)
	before = s.f.Snapshot()
	out = s.apply(Reprocess{Process: "site_hourly", Timeperiod: "2024010100", DryRun: true})
	if !out.DryRun || len(out.Changes) != 2 || out.Changes[1].Process != "client_hourly" || out.Changes[1].To != Embryo {
		t.Fatalf("dry reprocess: %s", changes(out))
	}
	sameSnapshot(t, before, s.f.Snapshot())
	// A dry run does not see nodes the clock has not built yet.
	s.now = parseTime(t, "2024-01-01T05:00")
	if _, err := s.f.Apply(Skip{Process: "site_hourly", Timeperiods: []string{"2024010104"}, DryRun: true}, s.now); !errors.Is(err, ErrNotFound) {
		t.Errorf("dry skip of an unbuilt node: %v", err)
	}
	// A real one does.
	s.apply(Skip{Process: "site_hourly", Timeperiods: []string{"2024010104"}})
	want("site_hourly@2024010104=skipped")(s)
}

func TestOperatorErrors(t *testing.T) {
	t.Parallel()
	s := newSim(t, "2024-01-01T00:00", siteAndClient("normal"))
	tests := []struct {
		ev   Event
		want error
	}{
		{Skip{Process: "nope", Timeperiods: []string{"2024010100"}}, ErrNotFound},
		{Skip{Process: "site_hourly"}, ErrInvalid},
		{Skip{Process: "site_hourly", Timeperiods: []string{"2023123100"}}, ErrNotFound},
		{Skip{Process: "site_hourly", Timeperiods: []string{"2024010200"}}, ErrNotFound}, // the future
		{Skip{Process: "site_daily", Timeperiods: []string{"2024010000"}}, ErrInvalid},   // a month for a day
		{Reprocess{Process: "site_hourly", Timeperiod: "x"}, ErrInvalid},
		{ContinuousTick{Process: "site_hourly"}, ErrInvalid},
		{ContinuousTick{Process: "nope"}, ErrNotFound},
		{RunResult{Process: "site_hourly", Timeperiod: 2024010100, RunID: 1, Outcome: "done"}, ErrInvalid},
	}
	before := s.f.Snapshot()
	for _, tt := range tests {
		if _, err := s.f.Apply(tt.ev, s.now.Add(time.Hour)); !errors.Is(err, tt.want) {
			t.Errorf("Apply(%#v) = %v; want %v", tt.ev, err, tt.want)
		}
	}
	sameSnapshot(t, before, s.f.Snapshot()) // rejected events change nothing, not even the clock
}

func TestNextWake(t *testing.T) {
	t.Parallel()
	s := newSim(t, "2024-01-01T00:20", hourly)
	// The next hour builds a node; the first hour is due at 01:05 + 1 ns.
	if w := s.f.NextWake(); !w.Equal(parseTime(t, "2024-01-01T01:00")) {
		t.Errorf("NextWake = %v", w)
	}
	tick("2024-01-01T01:00")(s)
	if w := s.f.NextWake(); !w.Equal(parseTime(t, "2024-01-01T01:05:00.000000001Z")) {
		t.Errorf("NextWake = %v", w)
	}
	tick("2024-01-01T01:05:00.000000001Z")(s)
	if w := s.f.NextWake(); !w.Equal(parseTime(t, "2024-01-01T02:00")) {
		t.Errorf("NextWake = %v with a run outstanding", w)
	}
	// A tree that starts in the future wakes at its start.
	f := New(Config{})
	if _, err := f.Apply(Define{File: "a.json", Text: hourly}, parseTime(t, "2023-12-31T12:00")); err != nil {
		t.Fatal(err)
	}
	if w := f.NextWake(); !w.Equal(parseTime(t, "2024-01-01T00:00")) {
		t.Errorf("NextWake before the start = %v", w)
	}
	if ns, _ := f.Nodes("site_hourly", 0, 0); len(ns) != 0 {
		t.Errorf("nodes before the start: %v", ns)
	}
	if w := New(Config{}).NextWake(); !w.IsZero() {
		t.Errorf("empty forest wakes at %v", w)
	}
}

func TestQueries(t *testing.T) {
	t.Parallel()
	s := newSim(t, "2024-01-01T00:00", siteAndClient("normal"))
	tick("2024-01-02T03:06")(s)
	d := s.node("client_daily@2024010114") // cast from an hour
	if d.Timeperiod != 2024010100 || d.Parent != nil || len(d.Children) != 24 || len(d.Counterparts) != 1 ||
		d.Counterparts[0].Process != "site_daily" || len(d.Dependants) != 0 || !d.End.Equal(parseTime(t, "2024-01-02T00:00")) {
		t.Errorf("node detail %+v", d)
	}
	d = s.node("site_hourly@2024010105")
	if d.Parent == nil || d.Parent.Timeperiod != 2024010100 || len(d.Dependants) != 1 || d.Dependants[0].Process != "client_hourly" {
		t.Errorf("node detail %+v", d)
	}
	ns, err := s.f.Nodes("site_hourly", 2024010122, 2024010201)
	if err != nil || len(ns) != 4 || ns[0].Timeperiod != 2024010122 || ns[3].Timeperiod != 2024010201 {
		t.Errorf("Nodes = %v, %v", ns, err)
	}
	if ns, _ := s.f.Nodes("site_daily", 2024010205, 0); len(ns) != 1 {
		t.Errorf("Nodes from a finer key = %v", ns)
	}
	if _, err := s.f.Nodes("site_daily", 2024010000, 0); !errors.Is(err, ErrInvalid) {
		t.Errorf("Nodes from a coarser key: %v", err)
	}
	if o := s.f.Outstanding(); len(o) != 4 || o[0].Process != "client_daily" || o[3].Process != "site_hourly" {
		t.Errorf("Outstanding = %v", o)
	}
	trees := s.f.Trees()
	if len(trees) != 2 || trees[1].Name != "site" || trees[1].Dependants[0] != "client" ||
		trees[1].Levels[1].Counts[InProgress] != 1 || trees[1].Levels[1].Counts[Embryo] != 27 || trees[1].Levels[1].Next != 2024010100 {
		t.Errorf("Trees = %+v", trees)
	}
	if tree, def, ok := s.f.Process("client_hourly"); !ok || tree != "client" || def.Qualifier != Hourly {
		t.Errorf("Process = %v %v %v", tree, def, ok)
	}
	if got := s.f.Files(); len(got) != 1 || got[0] != "f0.json" {
		t.Errorf("Files = %v", got)
	}
}

func TestEventLog(t *testing.T) {
	t.Parallel()
	s := newSim(t, "2024-01-01T00:00", file(`{"name": "site", "settings": {"maxFailures": 1000}, "levels": [{"process": "site_hourly", "qualifier": "hourly"}]}`))
	tick("2024-01-01T01:06")(s)
	s.apply(RunResult{Process: "site_hourly", Timeperiod: 2024010100, RunID: s.node("site_hourly@2024010100").RunID,
		Outcome: OutcomeFailed, Message: "disk full"})
	d := s.node("site_hourly@2024010100")
	if len(d.Log) != 2 || d.Log[0].Rule != 10 || d.Log[0].Message != "disk full" || d.Log[1].Rule != 1 || d.Log[1].Cause != CauseScheduler {
		t.Fatalf("log %+v", d.Log)
	}
	finish("site_hourly", 200, OutcomeFailed)(s)
	d = s.node("site_hourly@2024010100")
	if len(d.Log) != MaxLog || d.Log[0].RunID != d.RunID || d.Failures != 201 {
		t.Fatalf("log of %d, newest %+v, failures %d", len(d.Log), d.Log[0], d.Failures)
	}
	if len(s.out.Log) != 1 || s.out.Log[0].Entry.Rule != 10 {
		t.Errorf("output log %+v", s.out.Log)
	}
	checkReplay(t, s)
}

func TestJournalEvents(t *testing.T) {
	t.Parallel()
	events := []Event{
		Define{File: "a.json", Text: hourly},
		Remove{Tree: "site"},
		Tick{},
		ContinuousTick{Process: "p", By: "ops"},
		RunStarted{Process: "p", Timeperiod: 2024010100, RunID: 3},
		RunResult{Process: "p", Timeperiod: 2024010100, RunID: 3, Outcome: OutcomeFailed, Message: "m"},
		Skip{Process: "p", Timeperiods: []string{"2024010100", "2024010101"}, By: "ops", DryRun: true},
		Reprocess{Process: "p", Timeperiod: "2024010100", By: "ops"},
		Backfill{Process: "p", From: "2024010100", To: "2024010200", By: "ops", DryRun: true},
		Restart{},
	}
	for _, ev := range events {
		b, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		back, err := DecodeEvent(Kind(ev), b)
		if err != nil {
			t.Fatalf("%s: %v", Kind(ev), err)
		}
		if d := cmp.Diff(ev, back); d != "" {
			t.Errorf("%s (-want +got):\n%s", Kind(ev), d)
		}
	}
	if _, err := DecodeEvent("nope", nil); !errors.Is(err, ErrInvalid) {
		t.Errorf("unknown kind: %v", err)
	}
	if _, err := DecodeEvent("run_result", []byte(`{"timeperiod": "x"}`)); err == nil {
		t.Error("bad key decoded")
	}
}

func TestMaxPeriods(t *testing.T) {
	t.Parallel()
	f := New(Config{MaxPeriods: 48})
	now := parseTime(t, "2024-01-02T23:30")
	if _, err := f.Apply(Define{File: "a.json", Text: hourly}, now); err != nil {
		t.Fatalf("48 hours: %v", err)
	}
	// The tree grows past the limit, and may be redefined.
	if _, err := f.Apply(Define{File: "a.json", Text: strings.ReplaceAll(hourly, `"maxFailures": 3`, `"maxFailures": 2`)}, now.Add(time.Hour)); err != nil {
		t.Fatalf("redefine: %v", err)
	}
	_, err := f.Apply(Define{File: "b.json", Text: file(tr("other", "", lv("other_hourly", "hourly", "")))}, now.Add(time.Hour))
	var ps Problems
	if !errors.As(err, &ps) || !strings.Contains(ps.Error(), "b.json: trees[0]: starting at 2024010100, the hourly level would have 49 periods already, more than 48") {
		t.Errorf("49 hours: %v", err)
	}
	if _, err := f.Apply(Define{Text: hourly}, now); !errors.Is(err, ErrInvalid) {
		t.Errorf("no file name: %v", err)
	}
}
