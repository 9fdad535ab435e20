package periods

import "testing"

// runsOf returns the records of the latest Apply's runs, as
// "process@key status by ended_by" ("-" for no one).
func runsOf(s *sim) []string {
	var out []string
	for _, r := range s.out.Runs {
		by, ended := r.By, r.EndedBy
		if by == "" {
			by = "-"
		}
		if ended == "" {
			ended = "-"
		}
		out = append(out, r.Process+"@"+r.Timeperiod.String()+" "+string(r.Status)+" "+by+" "+ended)
	}
	return out
}

func wantRuns(t *testing.T, s *sim, want ...string) {
	t.Helper()
	got := runsOf(s)
	if len(got) != len(want) {
		t.Fatalf("runs %q, want %q", got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("runs %q, want %q", got, want)
		}
	}
}

// The runs an operator's reprocess or skip requests name the operator;
// the runs it cancels name them as who ended them. Runs the clock, a
// result or a dependency requests name no one.
func TestOperatorNamedOnRuns(t *testing.T) {
	t.Parallel()
	s := newSim(t, "2024-01-01T00:00", file(
		tr("site", "", lv("site_hourly", "hourly", "")),
		tr("client", `"site"`, lv("client_hourly", "hourly", `, "blocking": "dependencies"`)),
	))
	tick("2024-01-01T01:06")(s)
	wantRuns(t, s, "site_hourly@2024010100 requested - -")
	result("site_hourly@2024010100", OutcomeProcessed)(s)
	wantRuns(t, s, "site_hourly@2024010100 processed - -", "client_hourly@2024010100 requested - -")
	result("client_hourly@2024010100", OutcomeProcessed)(s)

	// Reprocessed by alice: the site's node runs again at once, alice's
	// run; the client's waits for it, and its run is the dependency's.
	s.apply(Reprocess{Process: "site_hourly", Timeperiod: "2024010100", By: "alice"})
	wantRuns(t, s, "site_hourly@2024010100 requested alice -")
	// Reprocessed again by bob while that run is outstanding: bob ends
	// alice's run and requests his own.
	s.apply(Reprocess{Process: "site_hourly", Timeperiod: "2024010100", By: "bob"})
	wantRuns(t, s, "site_hourly@2024010100 canceled - bob", "site_hourly@2024010100 requested bob -")
	result("site_hourly@2024010100", OutcomeProcessed)(s)
	wantRuns(t, s, "site_hourly@2024010100 processed - -", "client_hourly@2024010100 requested - -")
	// Skipped by carol: she ends the client's run.
	skipped := Skip{Process: "client_hourly", Timeperiods: []string{"2024010100"}, By: "carol"}
	s.apply(skipped)
	wantRuns(t, s, "client_hourly@2024010100 canceled - carol")
	want("client_hourly@2024010100=skipped-run")(s)
	tick("2024-01-01T02:06")(s)
	wantRuns(t, s, "site_hourly@2024010101 requested - -")
	checkReplay(t, s)
}
