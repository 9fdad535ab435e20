package periods

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// planOf parses a Define's text as a plan is made for forest f (nil: an
// empty one), against its other files, and returns the Define that
// carries the plan as the journal gives it back: encoded, decoded, with
// no text.
func planOf(t testing.TB, f *Forest, d Define) Define {
	t.Helper()
	var opts Options
	if f != nil {
		opts = f.Others(d.File)
	}
	plan, err := Parse(d.File, []byte(d.Text), opts)
	if err != nil {
		t.Fatalf("plan of %s: %v", d.File, err)
	}
	b, err := json.Marshal(Define{File: d.File, Plan: plan})
	if err != nil {
		t.Fatal(err)
	}
	ev, err := DecodeEvent("define", b)
	if err != nil {
		t.Fatal(err)
	}
	return ev.(Define)
}

// refusing is a Config whose lookups refuse every name, function and
// owner: a Define parsed against it fails, a plan does not read it.
func refusing() Config {
	return Config{
		NameTakenFunc:     func(string) bool { return true },
		FunctionKnownFunc: func(string) bool { return false },
		OwnerFunc:         func(o string) error { return fmt.Errorf("no owner %s", o) },
	}
}

// replayPlans replays a sim's events on a fresh forest with every Define
// as its plan, on a forest whose lookups refuse everything, and checks
// that each output and the final state are those of the text's replay.
func replayPlans(t *testing.T, s *sim) {
	t.Helper()
	text, plans := New(Config{}), New(refusing())
	defines := 0
	for i, ev := range s.events {
		want, err := text.Apply(ev, s.times[i])
		if err != nil {
			t.Fatalf("replay %d: %v", i, err)
		}
		if d, ok := ev.(Define); ok {
			ev = planOf(t, plans, d)
			defines++
		}
		got, err := plans.Apply(ev, s.times[i])
		if err != nil {
			t.Fatalf("replay %d with plans: %v", i, err)
		}
		checkForest(t, plans)
		sameOutput(t, i, want, got)
	}
	if defines == 0 {
		t.Fatal("no Define replayed")
	}
	sameSnapshot(t, s.f.Snapshot(), plans.Snapshot())
}

// TestDefinePlan checks that a Define carrying a plan does what the same
// file's text does, step by step, through redefinitions and across
// files: random forests, and trees of two files that depend on each
// other, one file redefined and emptied.
func TestDefinePlan(t *testing.T) {
	t.Parallel()
	for seed := range 4 {
		t.Run(fmt.Sprint("random ", seed), func(t *testing.T) {
			t.Parallel()
			r := rand.New(rand.NewPCG(uint64(seed), 1))
			text := randomFile(r)
			st := &simState{sim: newSim(t, "2023-12-30T18:00"), r: r, live: map[Ref]int64{}, text: text}
			st.step(Define{File: "random.json", Text: text})
			for i := 0; i < 300 && !t.Failed(); i++ {
				st.randomStep()
			}
			replayPlans(t, st.sim)
		})
	}
	t.Run("two files", func(t *testing.T) {
		t.Parallel()
		site := file(tr("site", "", lv("site_daily", "daily", `, "blocking": "children"`), lv("site_hourly", "hourly", "")))
		client := file(tr("client", `"site"`, lv("client_daily", "daily", `, "blocking": "dependencies", "stateMachine": "continuous", "every": "30m"`)))
		s := newSim(t, "2024-01-01T00:00", site, client)
		for _, st := range []step{
			tick("2024-01-01T03:06"),
			finish("site_hourly", 3, OutcomeProcessed),
			check(func(s *sim) {
				s.apply(Define{File: "f0.json", Text: strings.Replace(site, `"maxFailures": 3`, `"maxFailures": 1`, 1)})
			}),
			tick(afterDay),
			finish("site_hourly", 21, OutcomeNoop),
			check(func(s *sim) { s.apply(Define{File: "f1.json", Text: file()}) }),
			tick("2024-01-02T02:00"),
		} {
			st(s)
		}
		replayPlans(t, s)
	})
}

// TestDefinePlanForestChecks checks what the forest still checks of a
// plan, with the errors it gives for the text: the periods a start would
// build at once, a dropped tree another file depends on, a file without a
// name. What the plan was checked against where it was made (the names of
// jobs, functions, owners) is not read again, nor is the text.
func TestDefinePlanForestChecks(t *testing.T) {
	t.Parallel()
	now := parseTime(t, "2024-01-02T23:30")
	both := func(f *Forest, d Define) (error, error) {
		textErr := f.Check(d)
		_, planErr := f.Apply(planOf(t, f, d), f.Now())
		return textErr, planErr
	}

	f := New(Config{MaxPeriods: 48})
	if _, err := f.Apply(planOf(t, f, Define{File: "a.json", Text: hourly}), now); err != nil {
		t.Fatalf("48 hours: %v", err)
	}
	if _, err := f.Apply(Tick{}, now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	textErr, planErr := both(f, Define{File: "b.json", Text: file(tr("other", "", lv("other_hourly", "hourly", "")))})
	if textErr == nil || planErr == nil || textErr.Error() != planErr.Error() ||
		!strings.Contains(planErr.Error(), "b.json: trees[0]: starting at 2024010100, the hourly level would have 49 periods already, more than 48") {
		t.Errorf("49 hours: text %v, plan %v", textErr, planErr)
	}

	f = New(Config{})
	if _, err := f.Apply(planOf(t, f, Define{File: "a.json", Text: hourly}), now); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Apply(planOf(t, f, Define{File: "b.json", Text: file(tr("client", `"site"`, lv("client_daily", "daily", "")))}), now); err != nil {
		t.Fatal(err)
	}
	textErr, planErr = both(f, Define{File: "a.json", Text: file()})
	var ps Problems
	if !errors.As(planErr, &ps) || textErr == nil || textErr.Error() != planErr.Error() ||
		ps.Error() != `a.json: trees: tree "site" is no longer defined, but tree "client" of b.json depends on it` {
		t.Errorf("a tree dropped under a dependant: text %v, plan %v", textErr, planErr)
	}

	plan := planOf(t, nil, Define{File: "a.json", Text: hourly})
	if _, err := f.Apply(Define{Plan: plan.Plan}, now); !errors.Is(err, ErrInvalid) {
		t.Errorf("no file name: %v", err)
	}

	// A plan is taken as it stands: not against Config's lookups, nor
	// its text, which is not read.
	f = New(refusing())
	d := Define{File: "c.json", Text: file(tr("c", "", lv("c_hourly", "hourly", `, "function": "f"`)))}
	if _, err := f.Apply(d, now); err == nil {
		t.Fatal("the text passed lookups that refuse everything")
	}
	plan = planOf(t, f, d)
	plan.Text = "not JSON"
	if err := f.Check(plan); err != nil {
		t.Errorf("check of a plan: %v", err)
	}
	if out, err := f.Apply(plan, now); err != nil || len(out.Trees) != 1 {
		t.Errorf("a plan: %+v, %v", out, err)
	}
}

// TestDefineJournalForms reads a Define as the journal holds it: a plan,
// and the text an entry of an earlier build holds, which is parsed when
// applied.
func TestDefineJournalForms(t *testing.T) {
	t.Parallel()
	d := planOf(t, nil, Define{File: "a.json", Text: sitesJSON})
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), `"text"`) || !strings.HasPrefix(string(b), `{"file":"a.json","plan":{"settings":{"start_timeperiod":"2024010100"`) {
		t.Errorf("a plan journaled as %s", b)
	}
	ev, err := DecodeEvent("define", b)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(d, ev); diff != "" {
		t.Errorf("the plan decodes differently (-want +got):\n%s", diff)
	}

	// An entry of an earlier build, as it was written.
	old := `{"file":"a.json","text":"{\"settings\": {\"startTimeperiod\": \"2024010100\"}, \"trees\": [{\"name\": \"site\", \"levels\": [{\"process\": \"site_hourly\", \"qualifier\": \"hourly\"}]}]}"}`
	ev, err = DecodeEvent("define", []byte(old))
	if err != nil {
		t.Fatal(err)
	}
	od, ok := ev.(Define)
	if !ok || od.Plan != nil || od.File != "a.json" || !strings.HasPrefix(od.Text, `{"settings"`) {
		t.Fatalf("the old entry reads as %#v", ev)
	}
	now := parseTime(t, "2024-01-01T03:00")
	fromText, fromPlan := New(Config{}), New(Config{})
	if _, err := fromText.Apply(od, now); err != nil {
		t.Fatal(err)
	}
	if _, err := fromPlan.Apply(planOf(t, fromPlan, od), now); err != nil {
		t.Fatal(err)
	}
	sameSnapshot(t, fromPlan.Snapshot(), fromText.Snapshot())
	if len(fromText.Snapshot().Nodes) != 4 {
		t.Errorf("the old entry built %d nodes, want 4 (hours 00 to 03)", len(fromText.Snapshot().Nodes))
	}
}
