package periods

import (
	"errors"
	"fmt"
	"testing"
)

// periodsOf renders a Backfill's periods as "key state reprocessed".
func periodsOf(out *Output) string {
	s := ""
	for _, p := range out.Backfill {
		s += fmt.Sprintf("%s %s %v\n", p.Timeperiod, p.State, p.Reprocessed)
	}
	return s
}

func TestBackfill(t *testing.T) {
	t.Parallel()
	s := newSim(t, "2024-01-01T00:00", dayAndHours("normal"))
	tick("2024-01-01T04:06")(s)
	finish("site_hourly", 4, OutcomeProcessed)(s)
	want("site_hourly@2024010100=processed", "site_hourly@2024010103=processed", "site_daily@2024010100=embryo")(s)

	// A dry run says what it would do, and changes nothing.
	before := s.f.Snapshot()
	out := s.apply(Backfill{Process: "site_hourly", From: "2024010101", To: "2024010102", By: "ops", DryRun: true})
	if !out.DryRun || len(out.Changes) != 2 || periodsOf(out) != "2024010101 processed true\n2024010102 processed true\n" {
		t.Fatalf("dry run: %s\n%s", periodsOf(out), changes(out))
	}
	sameSnapshot(t, before, s.f.Snapshot())

	out = s.apply(Backfill{Process: "site_hourly", From: "2024010101", To: "2024010102", By: "ops"})
	if periodsOf(out) != "2024010101 processed true\n2024010102 processed true\n" {
		t.Fatalf("backfill: %s", periodsOf(out))
	}
	// Each goes back to embryo with the cascade (rule 16); the rules then
	// run them again, in order.
	want("site_hourly@2024010100=processed", "site_hourly@2024010101=in_progress+run", "site_hourly@2024010102=embryo",
		"site_hourly@2024010103=processed")(s)
	for _, r := range out.Runs {
		if r.By != "ops" {
			t.Errorf("run %+v", r)
		}
	}

	// Asked again while they are under way: nothing changes.
	out = s.apply(Backfill{Process: "site_hourly", From: "2024010100", To: "2024010102", By: "ops"})
	if periodsOf(out) != "2024010100 processed true\n2024010101 in_progress false\n2024010102 embryo false\n" {
		t.Errorf("backfill again: %s", periodsOf(out))
	}
	finish("site_hourly", 3, OutcomeProcessed)(s)
	want("site_hourly@2024010100=processed", "site_hourly@2024010101=processed", "site_hourly@2024010102=processed")(s)

	// Periods without a node are not in the range; a day's key reaches
	// its hours that exist.
	out = s.apply(Backfill{Process: "site_daily", From: "2023120100", To: "2024020100", DryRun: true})
	if periodsOf(out) != "2024010100 embryo false\n" {
		t.Errorf("days: %s", periodsOf(out))
	}
	checkReplay(t, s)
}

func TestBackfillErrors(t *testing.T) {
	t.Parallel()
	s := newSim(t, "2024-01-01T00:00", dayAndHours("normal"))
	for _, tt := range []struct {
		ev   Backfill
		want error
	}{
		{Backfill{Process: "nope", From: "2024010100", To: "2024010100"}, ErrNotFound},
		{Backfill{Process: "site_hourly", From: "x", To: "2024010100"}, ErrInvalid},
		{Backfill{Process: "site_hourly", From: "2024010102", To: "2024010100"}, ErrInvalid},
		{Backfill{Process: "site_hourly", From: "2020010100", To: "2024010100"}, ErrInvalid},
		{Backfill{Process: "site_daily", From: "2024010000", To: "2024010100"}, ErrInvalid}, // a month for a day
	} {
		if _, err := s.f.Apply(tt.ev, s.now); !errors.Is(err, tt.want) {
			t.Errorf("Apply(%#v) = %v; want %v", tt.ev, err, tt.want)
		}
	}
}
