package scheduler

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gnomon-sched/gnomon/engine"
	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/periods"
	"github.com/gnomon-sched/gnomon/store"
)

// siteTrees is a tree file whose hourly level runs a command that writes
// its environment to a file and finds nothing to do at 03:00, under a
// daily level that an external worker handles.
func siteTrees(dir string) string {
	cmd := `echo "$GNOMON_PROCESS $GNOMON_TIMEPERIOD $GNOMON_PERIOD_START $GNOMON_PERIOD_END" >> ` + filepath.Join(dir, "env.out") +
		`; test "$GNOMON_TIMEPERIOD" != 2026030803 || exit 99`
	text, _ := json.Marshal(map[string]any{
		"settings": map[string]any{"startTimeperiod": "2026030800", "lagMinutes": 5, "maxFailures": 3, "timezone": "UTC"},
		"trees": []any{map[string]any{"name": "site", "levels": []any{
			map[string]any{"process": "site_daily", "qualifier": "daily", "blocking": "children"},
			map[string]any{"process": "site_hourly", "qualifier": "hourly", "command": cmd},
		}}},
	})
	return string(text)
}

func (m *sim) nodes(process string) map[string]periods.Node {
	m.t.Helper()
	out := map[string]periods.Node{}
	var err error
	if rerr := m.s.readTrees(context.Background(), func(f *periods.Forest, _ *engine.Engine) {
		var ns []periods.Node
		ns, err = f.Nodes(process, 0, 0)
		for _, n := range ns {
			out[n.Timeperiod.String()] = n
		}
	}); rerr != nil {
		m.t.Fatal(rerr)
	}
	if err != nil {
		m.t.Fatal(err)
	}
	return out
}

func (m *sim) snapshot() periods.Snapshot {
	m.t.Helper()
	var snap periods.Snapshot
	if err := m.s.readTrees(context.Background(), func(f *periods.Forest, _ *engine.Engine) { snap = f.Snapshot() }); err != nil {
		m.t.Fatal(err)
	}
	return snap
}

// TestTreesRunOnTheEngineClock drives a tree through the scheduler on a
// virtual clock: hours run their command with the period in its
// environment, in key order, strictly after end + lag; exit 99 is noop;
// the day waits for an external worker; runs and fires are recorded.
func TestTreesRunOnTheEngineClock(t *testing.T) {
	dir := t.TempDir()
	m := openSim(t, dir, t0, nil) // 2026-03-08 06:00 UTC
	defer m.stop()
	m.define(DefineFile{File: "site.json", Text: siteTrees(dir)})
	m.advance(t0)

	hours := m.nodes("site_hourly")
	for h, want := range map[string]periods.State{"2026030800": periods.Processed, "2026030803": periods.Noop,
		"2026030804": periods.Processed, "2026030805": periods.Embryo} {
		if got := hours[h].State; got != want {
			t.Errorf("hour %s: %s, want %s", h, got, want)
		}
	}
	env, err := os.ReadFile(filepath.Join(dir, "env.out"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(env)), "\n")
	if len(lines) != 5 || lines[0] != "site_hourly 2026030800 2026-03-08T00:00:00Z 2026-03-08T01:00:00Z" {
		t.Fatalf("the commands saw:\n%s", env)
	}

	// 06:05 is the end of 05:00 plus the lag: not yet due, strictly.
	m.advance(t0.Add(5 * time.Minute))
	if got := m.nodes("site_hourly")["2026030805"].State; got != periods.Embryo {
		t.Fatalf("hour 05 at end + lag: %s, want embryo", got)
	}
	m.advance(t0.Add(5*time.Minute + time.Second))
	if got := m.nodes("site_hourly")["2026030805"].State; got != periods.Processed {
		t.Fatalf("hour 05 after end + lag: %s, want processed", got)
	}

	// The day closes at midnight and is due five minutes later; the
	// external worker's run is then outstanding until it reports.
	m.advance(time.Date(2026, 3, 9, 0, 6, 0, 0, time.UTC))
	day := m.nodes("site_daily")["2026030800"]
	if day.State != periods.InProgress || day.RunStatus != periods.RunRequested {
		t.Fatalf("day: %+v, want in_progress with its run requested", day)
	}
	if _, err := m.s.Trees(context.Background(), periods.RunResult{Process: "site_daily", Timeperiod: day.Timeperiod,
		RunID: day.RunID + 1000, Outcome: periods.OutcomeProcessed}); err != nil {
		t.Fatal(err)
	}
	if got := m.nodes("site_daily")["2026030800"].State; got != periods.InProgress {
		t.Fatalf("a result for another run changed the day: %s", got)
	}
	if _, err := m.s.Trees(context.Background(), periods.RunResult{Process: "site_daily", Timeperiod: day.Timeperiod,
		RunID: day.RunID, Outcome: periods.OutcomeProcessed}); err != nil {
		t.Fatal(err)
	}
	if got := m.nodes("site_daily")["2026030800"].State; got != periods.Processed {
		t.Fatalf("day after its result: %s, want processed", got)
	}

	runs, err := m.s.Store().Runs(context.Background(), store.RunQuery{Task: "site_hourly"})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 24 {
		t.Fatalf("%d runs of site_hourly, want 24", len(runs))
	}
	noop := runs[len(runs)-4]
	if noop.Timeperiod != "2026030803" || noop.Outcome != "noop" || noop.Status != job.Success || noop.ExitCode != job.ExitNoop {
		t.Errorf("the run of hour 03: %+v", noop)
	}
	fires, err := m.s.Store().Fires(context.Background(), store.FireQuery{Task: "site_daily"})
	if err != nil {
		t.Fatal(err)
	}
	if len(fires) != 1 || fires[0].Fate != job.FateRan || fires[0].RunID != day.RunID ||
		!fires[0].Scheduled.Equal(time.Date(2026, 3, 8, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("fires of site_daily: %+v", fires)
	}
}

// TestTreesSurviveRestartAndReplay stops a scheduler with an external run
// outstanding: the forest loads as it was, the run is still outstanding
// with the same ID, and the journal's tree entries replayed into an empty
// forest rebuild the same nodes.
func TestTreesSurviveRestartAndReplay(t *testing.T) {
	dir := t.TempDir()
	m := openSim(t, dir, t0, nil)
	m.define(DefineFile{File: "site.json", Text: siteTrees(dir)})
	m.advance(time.Date(2026, 3, 9, 0, 6, 0, 0, time.UTC))
	if _, err := m.s.Trees(context.Background(), periods.Skip{Process: "site_hourly", Timeperiods: []string{"2026030900"}, By: "test"}); err != nil {
		t.Fatal(err)
	}
	before := m.snapshot()
	m.stop()

	m = openSim(t, dir, t0, nil)
	defer m.stop()
	m.advance(time.Date(2026, 3, 9, 0, 6, 0, 0, time.UTC)) // settles the restart
	after := m.snapshot()
	if !equalNodes(t, before.Nodes, after.Nodes, true) {
		t.Fatal("the restarted forest differs")
	}
	day := m.nodes("site_daily")["2026030800"]
	if day.RunStatus != periods.RunRequested {
		t.Fatalf("the external run after a restart: %+v", day)
	}

	// Replay the journal into an empty forest.
	entries, err := m.st.Journal(context.Background(), 0, 1_000_000)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	replayed := periods.New(periods.Config{NextRunIDFunc: func() int64 {
		id := ids[0]
		ids = ids[1:]
		return id
	}})
	n := 0
	for _, e := range entries {
		ev, runs, ok := journalTreeEntry(t, e)
		if !ok {
			continue
		}
		ids = runs
		if _, err := replayed.Apply(ev, e.At); err != nil {
			t.Fatalf("entry %d (%s): %v", e.Seq, e.Kind, err)
		}
		if len(ids) != 0 {
			t.Fatalf("entry %d (%s) recorded %d run IDs its replay did not use", e.Seq, e.Kind, len(ids))
		}
		n++
	}
	if n == 0 {
		t.Fatal("no tree entries in the journal")
	}
	if !equalNodes(t, replayed.Snapshot().Nodes, after.Nodes, false) {
		t.Fatal("the journal replays to a different forest")
	}
}

// equalNodes compares the nodes of two snapshots, with their logs when
// logs is set.
func equalNodes(t *testing.T, a, b []periods.NodeRecord, logs bool) bool {
	t.Helper()
	if len(a) != len(b) {
		t.Errorf("%d nodes, then %d", len(a), len(b))
		return false
	}
	for i := range a {
		if a[i].Node != b[i].Node {
			t.Errorf("node %d: %+v, then %+v", i, a[i].Node, b[i].Node)
			return false
		}
		// A restart logs itself on the nodes whose run it asks for again.
		restart := func(e periods.LogEntry) bool { return e.Cause == periods.CauseRestart }
		alog, blog := slices.DeleteFunc(slices.Clone(a[i].Log), restart), slices.DeleteFunc(slices.Clone(b[i].Log), restart)
		if logs && !slices.EqualFunc(alog, blog, func(x, y periods.LogEntry) bool {
			return x.At.Equal(y.At) && x.From == y.From && x.To == y.To && x.Rule == y.Rule && x.Cause == y.Cause && x.RunID == y.RunID
		}) {
			t.Errorf("log of %s %s: %+v, then %+v", a[i].Process, a[i].Timeperiod, a[i].Log, b[i].Log)
			return false
		}
	}
	return true
}

// TestTaskAndProcessNamesAreOneSpace refuses a task named like a process,
// and a process named like a task, each naming the other.
func TestTaskAndProcessNamesAreOneSpace(t *testing.T) {
	dir := t.TempDir()
	m := openSim(t, dir, t0, nil)
	defer m.stop()
	m.define(DefineFile{File: "site.json", Text: siteTrees(dir)})
	_, err := m.s.Define(context.Background(), DefineFile{File: "t.def", Text: "insert_task: site_daily\ntype: callable\ncommand: true\nout_log_file: /dev/null\nerr_log_file: /dev/null\n"})
	if err == nil || !strings.Contains(err.Error(), "a timeperiod process of tree site") {
		t.Fatalf("a task named like a process: %v", err)
	}
	m.define(DefineFile{File: "t.def", Text: "insert_task: report\ntype: callable\ncommand: true\nout_log_file: /dev/null\nerr_log_file: /dev/null\n"})
	text := strings.Replace(siteTrees(dir), `"site_daily"`, `"report"`, 1)
	_, err = m.s.Define(context.Background(), DefineFile{File: "other.json", Text: strings.Replace(text, `"site"`, `"other"`, 1)})
	var probs periods.Problems
	if !errors.As(err, &probs) {
		t.Fatalf("a process named like a task: %v", err)
	}
}

// TestNodeRunsAreAlertedAndAudited gives a level alert settings, and a
// group that names its process others: a failed run of one of its nodes
// raises one alert to the recipients of both, and its end is in the audit
// trail like a task's.
func TestNodeRunsAreAlertedAndAudited(t *testing.T) {
	dir := t.TempDir()
	m := openSim(t, dir, t0, nil)
	defer m.stop()
	text := `{"settings": {"startTimeperiod": "2026030805", "lagMinutes": 0, "maxFailures": 0},
	  "trees": [{"name": "load", "levels": [{"process": "load_hourly", "qualifier": "hourly", "command": "exit 3",
	    "alertOn": ["failure"], "alertTo": ["ops@example.com"]}]}]}`
	m.define(DefineFile{File: "load.json", Text: text})
	m.define(DefineFile{File: "groups.def", Text: "insert_group: oncall\njobs: load_hourly\nalert_on: failure\nalert_to: oncall@example.com, ops@example.com\n"})
	m.advance(t0.Add(time.Second))
	if got := m.nodes("load_hourly")["2026030805"].State; got != periods.Skipped {
		t.Fatalf("the hour after its one failure allowed: %s, want skipped", got)
	}
	ctx := context.Background()
	alerts, err := m.st.Alerts(ctx, store.AlertQuery{Task: "load_hourly"})
	if err != nil {
		t.Fatal(err)
	}
	if len(alerts) != 1 || alerts[0].Outcome != job.OutcomeFailure ||
		!slices.Equal(alerts[0].To, []string{"ops@example.com", "oncall@example.com"}) ||
		!slices.Equal(alerts[0].Sources, []string{"load_hourly", "oncall"}) ||
		!strings.Contains(alerts[0].Message, "timeperiod 2026030805: failed") {
		t.Fatalf("alerts: %+v", alerts)
	}
	audit, err := m.st.Audit(ctx, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(audit) != 1 || audit[0].Task != "load_hourly" || audit[0].RunID != alerts[0].RunID || audit[0].Status != job.Failure {
		t.Fatalf("audit: %+v", audit)
	}
}

// plainTrees is a tree file whose hourly level runs true under a daily
// level an external worker handles, from 2026-03-08 06:00: nothing is due
// when it is defined at t0.
const plainTrees = `{"settings": {"startTimeperiod": "2026030806", "lagMinutes": 5}, "trees": [{"name": "plain", "levels": [` +
	`{"process": "plain_daily", "qualifier": "daily"}, {"process": "plain_hourly", "qualifier": "hourly", "command": "true"}]}]}`

// oldPlainDefine is the journal body of plainTrees's definition as builds
// before plans were journaled wrote it: the file's text.
const oldPlainDefine = `{"event":{"file":"plain.json","text":"{\"settings\": {\"startTimeperiod\": \"2026030806\", \"lagMinutes\": 5}, \"trees\": [{\"name\": \"plain\", \"levels\": [{\"process\": \"plain_daily\", \"qualifier\": \"daily\"}, {\"process\": \"plain_hourly\", \"qualifier\": \"hourly\", \"command\": \"true\"}]}]}"}}`

// replayTrees applies the tree entries of a journal to an empty forest
// made with cfg, with the run IDs each entry recorded.
func replayTrees(t *testing.T, entries []store.Entry, cfg periods.Config) *periods.Forest {
	t.Helper()
	var ids []int64
	cfg.NextRunIDFunc = func() int64 {
		id := ids[0]
		ids = ids[1:]
		return id
	}
	f := periods.New(cfg)
	for _, e := range entries {
		ev, runs, ok := journalTreeEntry(t, e)
		if !ok {
			continue
		}
		ids = runs
		if _, err := f.Apply(ev, e.At); err != nil {
			t.Fatalf("entry %d (%s): %v", e.Seq, e.Kind, err)
		}
	}
	return f
}

// TestTreeDefineJournalsThePlan checks that a tree file is journaled as
// the plan the loop made of it, which replays without being parsed or
// checked again (on a forest whose lookups refuse every name, function
// and owner), and that a journal written before plans were, whose entry
// holds the file's text, replays to the same forest.
func TestTreeDefineJournalsThePlan(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	m := openSim(t, dir, t0, nil)
	defer m.stop()
	m.define(DefineFile{File: "./plain.json", Text: plainTrees})
	m.advance(t0.Add(5*time.Hour + 10*time.Minute))
	live := m.snapshot()
	if n := len(m.runs("plain_hourly")); n != 5 {
		t.Fatalf("%d runs of plain_hourly, want 5 (06:00 to 10:00)", n)
	}

	entries, err := m.st.Journal(context.Background(), 0, 1_000_000)
	if err != nil {
		t.Fatal(err)
	}
	var old []store.Entry
	defines := 0
	for _, e := range entries {
		if e.Kind == "tree.define" {
			defines++
			var body struct {
				Event map[string]json.RawMessage `json:"event"`
			}
			if err := json.Unmarshal(e.Body, &body); err != nil {
				t.Fatal(err)
			}
			if _, ok := body.Event["plan"]; !ok || body.Event["text"] != nil || string(body.Event["file"]) != `"plain.json"` {
				t.Fatalf("the definition is journaled as %s", e.Body)
			}
			e.Body = []byte(oldPlainDefine)
		}
		old = append(old, e)
	}
	if defines != 1 {
		t.Fatalf("%d tree.define entries, want 1", defines)
	}

	refusing := periods.Config{
		NameTakenFunc:     func(string) bool { return true },
		FunctionKnownFunc: func(string) bool { return false },
		OwnerFunc:         func(o string) error { return errors.New("no owner " + o) },
	}
	fromPlans := replayTrees(t, entries, refusing)
	if !equalNodes(t, fromPlans.Snapshot().Nodes, live.Nodes, false) {
		t.Error("the journal's plans replay to a different forest")
	}
	fromText := replayTrees(t, old, periods.Config{})
	if !equalNodes(t, fromText.Snapshot().Nodes, live.Nodes, false) {
		t.Error("the journal of an earlier build replays to a different forest")
	}
	if diff := cmp.Diff(fromPlans.Snapshot(), fromText.Snapshot()); diff != "" {
		t.Errorf("the two journals replay differently (-plans +text):\n%s", diff)
	}
}

// TestTreesPlansOnTheLoop checks that the text of a tree file sent as a
// Define to Trees or CheckTrees is planned on the loop as Define plans it,
// that a plan made elsewhere is refused, and that a bad file's problems
// keep their file and line.
func TestTreesPlansOnTheLoop(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	m := openSim(t, dir, t0, nil)
	defer m.stop()
	ctx := context.Background()
	facts, err := m.s.CheckTrees(ctx, periods.Define{File: "plain.json", Text: plainTrees})
	if err != nil {
		t.Fatal(err)
	}
	want, err := periods.Parse("plain.json", []byte(plainTrees), periods.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, facts.Plan); diff != "" {
		t.Errorf("the checked plan (-want +got):\n%s", diff)
	}
	if _, err := m.s.Trees(ctx, periods.Define{File: "plain.json", Plan: want}); !errors.Is(err, errTreePlan) {
		t.Errorf("a plan made off the loop: %v", err)
	}
	if _, err := m.s.CheckTrees(ctx, periods.Define{File: "plain.json", Plan: want}); !errors.Is(err, errTreePlan) {
		t.Errorf("a plan made off the loop, checked: %v", err)
	}
	out, err := m.s.Trees(ctx, periods.Define{File: "plain.json", Text: plainTrees})
	if err != nil || !slices.Equal(out.Trees, []string{"plain"}) {
		t.Fatalf("the text sent to Trees: %+v, %v", out, err)
	}
	bad := strings.Replace(plainTrees, `"command": "true"`, `"function": "nope"`, 1)
	_, err = m.s.Define(ctx, DefineFile{File: "plain.json", Text: bad, Check: true})
	if err == nil || err.Error() != `plain.json:1: trees[0].levels[1].function: function "nope" is not registered` {
		t.Errorf("an unregistered function: %v", err)
	}
	if _, err := m.s.Trees(ctx, periods.Define{Text: plainTrees}); !errors.Is(err, periods.ErrInvalid) {
		t.Errorf("a file without a name: %v", err)
	}
}

// journalTreeEntry decodes a journal entry of the forest: its event and the IDs
// of the runs it requested; ok is false for an entry of another kind.
func journalTreeEntry(t *testing.T, e store.Entry) (periods.Event, []int64, bool) {
	t.Helper()
	kind, ok := strings.CutPrefix(e.Kind, "tree.")
	if !ok {
		return nil, nil, false
	}
	var raw struct {
		Event json.RawMessage `json:"event"`
		Runs  []int64         `json:"runs"`
	}
	if err := json.Unmarshal(e.Body, &raw); err != nil {
		t.Fatal(err)
	}
	ev, err := periods.DecodeEvent(kind, raw.Event)
	if err != nil {
		t.Fatal(err)
	}
	return ev, raw.Runs, true
}
