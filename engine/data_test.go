package engine

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/job"
)

// dataHarness posts data events to an engine defined from JSON
// configurations.
type dataHarness struct {
	*harness
}

func dataSetup(t *testing.T, configs string) *dataHarness {
	t.Helper()
	h := &harness{t: t, e: New(Config{Workers: 4}), now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC),
		started: map[string]int64{}, runs: map[int64]job.Run{}}
	h.apply(file{"c.json", configs})
	return &dataHarness{h}
}

func ts(s string) time.Time {
	t, err := time.Parse("2006-01-02 15:04:05.999999999", s)
	if err != nil {
		panic(err)
	}
	return t
}

// post sends an event and returns the triggered configurations and the
// validated dependencies as "CONFIG:TYPE:resource".
func (h *dataHarness) post(typ job.DataType, resource, at string) (trig, val []string) {
	h.t.Helper()
	out := h.apply(Data{Type: typ, Resource: resource, At: ts(at)})
	for _, v := range out.Data.Validated {
		val = append(val, fmt.Sprintf("%s:%s:%s", v.Configuration, v.Type, v.Resource))
	}
	return out.Data.Triggered, val
}

func (h *dataHarness) expect(typ job.DataType, resource, at string, want ...string) {
	h.t.Helper()
	trig, _ := h.post(typ, resource, at)
	if !slices.Equal(trig, want) && !(len(trig) == 0 && len(want) == 0) {
		h.t.Errorf("%s %s at %s triggered %v, want %v", typ, resource, at, trig, want)
	}
}

func seedConfigs(t *testing.T) string {
	b, err := os.ReadFile("../examples/configurations.json")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

const (
	cfg1 = "SCHEDULING_CONFIGURATION_1"
	cfg2 = "SCHEDULING_CONFIGURATION_2"
	cfg3 = "SCHEDULING_CONFIGURATION_3"
	dir1 = "/scheduling_configuraiton_1/directory/"
)

// TestSeedScenario replays the seed's table for configuration 1.
func TestSeedScenario(t *testing.T) {
	t.Parallel()
	h := dataSetup(t, seedConfigs(t))
	steps := []struct {
		typ       job.DataType
		res, at   string
		validated string
		triggered bool
	}{
		{job.File, dir1 + "path/file_1.txt", "2021-01-01 11:59:59", cfg1 + ":FILE:" + dir1 + "path/", false},
		{job.File, dir1 + "path/file_2.txt", "2021-01-01 12:04:59", cfg1 + ":FILE:" + dir1 + "path/", false},
		{job.File, dir1 + "path/file_3.txt", "2021-01-01 12:14:50", cfg1 + ":FILE:" + dir1 + "path/", false},
		{job.File, dir1 + "an_other_path/file_3.txt", "2021-01-01 12:15:28", "", false},
		{job.TimeBased, "cron", "2021-01-01 12:30:00", cfg1 + ":TIME_BASED:cron", true},
		{job.TimeBased, "cron", "2021-01-01 13:10:00", cfg1 + ":TIME_BASED:cron", true},
		{job.TimeBased, "cron", "2021-01-01 13:30:00", cfg1 + ":TIME_BASED:cron", false},
	}
	for _, s := range steps {
		trig, val := h.post(s.typ, s.res, s.at)
		if got := slices.Contains(trig, cfg1); got != s.triggered {
			t.Errorf("%s %s: triggered %v, want %v", s.at, s.res, trig, s.triggered)
		}
		if s.validated == "" && slices.ContainsFunc(val, func(v string) bool { return strings.HasPrefix(v, cfg1) }) {
			t.Errorf("%s %s validated %v, want nothing of %s", s.at, s.res, val, cfg1)
		}
		if s.validated != "" && !slices.Contains(val, s.validated) {
			t.Errorf("%s %s validated %v, want %s", s.at, s.res, val, s.validated)
		}
	}
	_, st, _ := h.e.Task(cfg1)
	if !st.LastExec.Equal(ts("2021-01-01 13:10:00")) || st.Status != job.Success {
		t.Errorf("state %+v", st)
	}
	var recorded []string
	for _, r := range h.runs {
		if r.Task == cfg1 {
			recorded = append(recorded, r.Scheduled.Format(time.TimeOnly)+" "+r.Status.String())
		}
	}
	slices.Sort(recorded)
	if want := []string{"12:30:00 success", "13:10:00 success"}; !slices.Equal(recorded, want) {
		t.Errorf("executions %v, want %v", recorded, want)
	}
}

// TestSeedConfigurations2And3 follows the seed's prose: both tables on
// day 1 make every cron trigger configuration 2 until day 2 13:00
// inclusive; table 3 makes every table-4 event trigger configuration 3
// until day 2 13:00 inclusive.
func TestSeedConfigurations2And3(t *testing.T) {
	t.Parallel()
	h := dataSetup(t, seedConfigs(t))
	h.expect(job.Table, "BIGQUERY_TABLE_NAME_1", "2021-01-01 13:00:00")
	h.expect(job.TimeBased, "cron", "2021-01-01 14:00:00")
	h.expect(job.Table, "BIGQUERY_TABLE_NAME_2", "2021-01-01 15:00:00")
	h.expect(job.TimeBased, "cron", "2021-01-01 16:00:00", cfg2)
	h.expect(job.TimeBased, "cron", "2021-01-02 12:59:59.999999999", cfg2)
	h.expect(job.TimeBased, "cron", "2021-01-02 13:00:00", cfg2)
	h.expect(job.TimeBased, "cron", "2021-01-02 13:00:00.000000001")

	h.expect(job.Table, "BIGQUERY_TABLE_NAME_3", "2021-01-01 13:00:00")
	h.expect(job.Table, "BIGQUERY_TABLE_NAME_4", "2021-01-01 13:30:00", cfg3)
	h.expect(job.Table, "BIGQUERY_TABLE_NAME_4", "2021-01-02 13:00:00", cfg3)
	h.expect(job.Table, "BIGQUERY_TABLE_NAME_4", "2021-01-02 13:00:01")
}

// TestEdgeCases covers the table of spec/events.md §9.
func TestEdgeCases(t *testing.T) {
	t.Parallel()
	const two = `[{"name":"A","dependencies":[{"type":"TABLE","resourceId":"t","lifeDuration":"60"},{"type":"TIME_BASED","resourceId":"cron","lifeDuration":0}]},
		{"name":"B","dependencies":[{"type":"TIME_BASED","resourceId":"cron","lifeDuration":0}]}]`
	t.Run("duplicate without trigger", func(t *testing.T) {
		h := dataSetup(t, two)
		for range 2 {
			trig, val := h.post(job.Table, "t", "2021-01-01 10:00:00")
			if len(trig) != 0 || !slices.Equal(val, []string{"A:TABLE:t"}) {
				t.Errorf("triggered %v validated %v", trig, val)
			}
		}
		if h.e.tasks["A"].win.seen.Len(0) != 1 {
			t.Errorf("stored %d", h.e.tasks["A"].win.seen.Len(0))
		}
	})
	t.Run("duplicate of a triggering event", func(t *testing.T) {
		h := dataSetup(t, two)
		h.expect(job.TimeBased, "cron", "2021-01-01 10:00:00", "B")
		trig, val := h.post(job.TimeBased, "cron", "2021-01-01 10:00:00")
		if len(trig) != 0 || slices.Contains(val, "B:TIME_BASED:cron") {
			t.Errorf("duplicate: triggered %v validated %v", trig, val)
		}
	})
	t.Run("life boundaries", func(t *testing.T) {
		h := dataSetup(t, two)
		h.post(job.Table, "t", "2021-01-01 10:00:00")
		h.expect(job.TimeBased, "cron", "2021-01-01 10:01:00", "A", "B")   // exactly 60 s old
		h.expect(job.TimeBased, "cron", "2021-01-01 10:01:00.000001", "B") // one microsecond beyond
		h.expect(job.TimeBased, "cron", "2021-01-01 10:01:00.000000001")   // B ran at .000001: older now
		h.expect(job.TimeBased, "cron", "2021-01-01 10:01:00.000002", "B") // still beyond for A
		// A late table event, newer than A's last execution (10:01:00),
		// stamped before the last cron received: no retroactive trigger,
		// but it counts for later instants.
		_, val := h.post(job.Table, "t", "2021-01-01 10:01:00.0000015")
		if !slices.Equal(val, []string{"A:TABLE:t"}) {
			t.Errorf("late event validated %v", val)
		}
		h.expect(job.TimeBased, "cron", "2021-01-01 10:01:00.000003", "A", "B")
	})
	t.Run("very late event", func(t *testing.T) {
		h := dataSetup(t, two)
		h.post(job.Table, "t", "2021-01-01 10:00:00")
		h.expect(job.TimeBased, "cron", "2021-01-01 10:00:30", "A", "B")
		// Older than A's last execution: ignored for A only.
		_, val := h.post(job.Table, "t", "2021-01-01 10:00:10")
		if len(val) != 0 {
			t.Errorf("late event validated %v", val)
		}
		_, val = h.post(job.TimeBased, "cron", "2021-01-01 10:00:20")
		if len(val) != 0 {
			t.Errorf("late cron validated %v", val)
		}
		// A file stamped after R does not count towards R.
		h2 := dataSetup(t, two)
		h2.post(job.Table, "t", "2021-01-01 12:30:00")
		h2.expect(job.TimeBased, "cron", "2021-01-01 12:00:00", "B")
	})
	t.Run("earlier-received event with the same timestamp", func(t *testing.T) {
		h := dataSetup(t, `{"name":"C","dependencies":[{"type":"TABLE","resourceId":"a","lifeDuration":0},{"type":"TABLE","resourceId":"b","lifeDuration":0}]}`)
		h.expect(job.Table, "a", "2021-01-01 10:00:00")
		h.expect(job.Table, "b", "2021-01-01 10:00:00", "C")
	})
	t.Run("far future, then reset", func(t *testing.T) {
		h := dataSetup(t, two)
		h.expect(job.TimeBased, "cron", "2099-01-01 00:00:00", "B") // a producer with a broken clock
		h.expect(job.TimeBased, "cron", "2021-01-01 10:00:00")      // muted
		h.act("B", job.ActReset)
		if _, st, _ := h.e.Task("B"); !st.LastExec.IsZero() || st.Status != job.Idle || h.e.tasks["B"].win.seen.Len(0) != 0 {
			t.Errorf("after reset: %+v", st)
		}
		h.expect(job.TimeBased, "cron", "2021-01-01 10:00:01", "B")
	})
	t.Run("matches nothing", func(t *testing.T) {
		h := dataSetup(t, two)
		out := h.apply(Data{Type: job.File, Resource: "/x", At: ts("2021-01-01 10:00:00")})
		if out.Data == nil || len(out.Data.Triggered) != 0 || len(out.Data.Validated) != 0 || out.Data.Triggered == nil {
			t.Errorf("result %+v", out.Data)
		}
	})
	t.Run("invalid events are refused", func(t *testing.T) {
		h := dataSetup(t, two)
		for _, ev := range []Data{{Type: "DIR", Resource: "x", At: ts("2021-01-01 10:00:00")}, {Type: job.Table, At: ts("2021-01-01 10:00:00")},
			{Type: job.Table, Resource: "t", At: time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)}} {
			if _, err := h.e.Apply(ev, h.now); err == nil {
				t.Errorf("%+v accepted", ev)
			}
		}
	})
}

// TestConfigurationWithCommand checks that a configuration with a command
// starts a run like a task, and that a trigger while it runs is skipped.
func TestConfigurationWithCommand(t *testing.T) {
	t.Parallel()
	h := dataSetup(t, `{"name":"ETL","dependencies":[{"type":"TIME_BASED","resourceId":"cron","lifeDuration":0}],"command":"etl.sh","out_log_file":"/tmp/o","err_log_file":"/tmp/e"}`)
	h.expect(job.TimeBased, "cron", "2021-01-01 10:00:00", "ETL")
	run := h.started["ETL"]
	if run == 0 || h.runs[run].Trigger != "event" || !h.runs[run].Scheduled.Equal(ts("2021-01-01 10:00:00")) {
		t.Fatalf("run %+v", h.runs[run])
	}
	out := h.apply(Data{Type: job.TimeBased, Resource: "cron", At: ts("2021-01-01 11:00:00")})
	if len(out.Data.Triggered) != 0 || len(out.Fires) != 1 || out.Fires[0].Fate != job.FateSkipped {
		t.Errorf("trigger while running: %+v fires %+v", out.Data, out.Fires)
	}
	h.exit("ETL", 0)
	h.expect(job.TimeBased, "cron", "2021-01-01 12:00:00", "ETL")
}

// TestRedefinitionKeepsWindows checks that a configuration redefined
// keeps the validations of the dependencies it still has.
func TestRedefinitionKeepsWindows(t *testing.T) {
	t.Parallel()
	h := dataSetup(t, `{"name":"A","dependencies":[{"type":"TABLE","resourceId":"t","lifeDuration":3600},{"type":"TABLE","resourceId":"u","lifeDuration":3600},{"type":"TIME_BASED","resourceId":"cron","lifeDuration":0}]}`)
	h.post(job.Table, "t", "2021-01-01 10:00:00")
	h.post(job.Table, "u", "2021-01-01 10:00:00")
	out := h.apply(file{"c.json", `{"name":"A","dependencies":[{"type":"TIME_BASED","resourceId":"cron","lifeDuration":0},{"type":"TABLE","resourceId":"t","lifeDuration":7200}]}`})
	if len(out.Validations) != 1 || !out.Validations[0].Expire || out.Validations[0].Dep != "TABLE:u" {
		t.Errorf("expired %+v", out.Validations)
	}
	h.expect(job.TimeBased, "cron", "2021-01-01 11:30:00", "A")
}

// TestLatenessBoundsMemory checks that a configuration that never triggers
// keeps only the validations an event within the allowed lateness could
// still use.
func TestLatenessBoundsMemory(t *testing.T) {
	t.Parallel()
	h := dataSetup(t, `{"name":"A","dependencies":[{"type":"FILE","resourceId":"/in","lifeDuration":3600},{"type":"TABLE","resourceId":"never","lifeDuration":0}]}`)
	start := ts("2021-01-01 00:00:00")
	for i := range 60 * 24 * 30 { // a file a minute for 30 days
		h.apply(Data{Type: job.File, Resource: "/in/f", At: start.Add(time.Duration(i) * time.Minute)})
	}
	n := h.e.tasks["A"].win.seen.Len(0)
	// Seven days of lateness, an hour of life, an eighth of slack.
	if limit := (7*24+1)*60 + 7*24*60/8 + 1; n > limit || n < 7*24*60 {
		t.Errorf("%d validations kept, want between %d and %d", n, 7*24*60, limit)
	}
	// Too late for A: older than the newest by more than seven days.
	_, val := (&dataHarness{h.harness}).post(job.File, "/in/g", "2021-01-10 00:00:00")
	if len(val) != 0 {
		t.Errorf("an event 20 days late validated %v", val)
	}
}

// TestRanReplays checks that a configuration that runs without a command
// reports its run in Ran and not its fire in Fires nor its state in
// Tasks, and that Replay of that run on the state before rebuilds the
// state after, once.
func TestRanReplays(t *testing.T) {
	t.Parallel()
	h := dataSetup(t, `[{"name":"L","dependencies":[{"type":"TABLE","resourceId":"t","lifeDuration":0}]},
		{"name":"C","command":"true","out_log_file":"/tmp/o","err_log_file":"/tmp/e","dependencies":[{"type":"TABLE","resourceId":"t","lifeDuration":0}]}]`)
	for i := range 3 {
		_, before, _ := h.e.Task("L")
		h.now = h.now.Add(time.Minute)
		out := h.apply(Data{Type: job.Table, Resource: "t", At: ts(fmt.Sprintf("2021-01-01 00:00:0%d", i))})
		_, after, _ := h.e.Task("L")
		if len(out.Ran) != 1 || out.Ran[0].Task != "L" || !slices.Contains(out.Runs, out.Ran[0]) {
			t.Fatalf("event %d: ran %+v, want L's run", i, out.Ran)
		}
		f := out.Ran[0]
		if want := EventRun(f.ID, "L", Data{Type: job.Table, Resource: "t", At: f.Scheduled}, h.now); !reflect.DeepEqual(f, want) {
			t.Errorf("event %d: run %+v, want %+v", i, f, want)
		}
		if slices.Contains(out.Tasks, "L") {
			t.Errorf("event %d: tasks %v hold L", i, out.Tasks)
		}
		if len(out.Fires) != 1 || out.Fires[0].Task != "C" {
			t.Errorf("event %d: fires %+v, want C's alone", i, out.Fires)
		}
		replayed := before
		if !Replay(&replayed, f) || !reflect.DeepEqual(replayed, after) {
			t.Errorf("event %d: replayed on %+v gives\n%+v, want\n%+v", i, before, replayed, after)
		}
		if Replay(&replayed, f) || !reflect.DeepEqual(replayed, after) {
			t.Errorf("event %d: replayed twice: %+v", i, replayed)
		}
	}
	// A reset is later than the runs before it; a run after it is not.
	h.apply(Act{Task: "L", Action: job.ActReset})
	_, reset, _ := h.e.Task("L")
	out := h.apply(Data{Type: job.Table, Resource: "t", At: ts("2020-01-01 00:00:00")})
	if len(out.Ran) != 1 {
		t.Fatalf("after a reset: ran %+v", out.Ran)
	}
	_, after, _ := h.e.Task("L")
	if !Replay(&reset, out.Ran[0]) || !reflect.DeepEqual(reset, after) {
		t.Errorf("after a reset: replayed %+v, want %+v", reset, after)
	}
}

// TestStartConfigurationWithoutCommand: an operator's start of a
// configuration that runs nothing is refused, and leaves it idle (it
// used to wait in Ready for a run that never came, and refuse its data
// events meanwhile).
func TestStartConfigurationWithoutCommand(t *testing.T) {
	t.Parallel()
	h := dataSetup(t, `{"name":"C","dependencies":[{"type":"TABLE","resourceId":"a","lifeDuration":0}]}`)
	_, err := h.e.Apply(Act{Task: "C", Action: job.ActStart}, h.now)
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "no command or function to start") {
		t.Fatalf("start of C: %v, want a refusal", err)
	}
	if _, st, _ := h.e.Task("C"); st.Status != job.Idle {
		t.Errorf("C is %s after the refused start", st.Status)
	}
	out := h.apply(Data{Type: job.Table, Resource: "a", At: h.now})
	if out.Data == nil || len(out.Data.Triggered) != 1 {
		t.Errorf("C's event after the refused start: %+v", out.Data)
	}
}
