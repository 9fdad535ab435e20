package periods

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gnomon-sched/gnomon/internal/termsafe"
)

const sitesJSON = `{
  "settings": {"startTimeperiod": "2024010100", "lagMinutes": 5, "maxFailures": 3, "timezone": "UTC"},
  "trees": [
    {"name": "site", "dependentOn": [], "levels": [
      {"process": "site_daily", "qualifier": "daily", "stateMachine": "discrete", "blocking": "children"},
      {"process": "site_hourly", "qualifier": "hourly", "command": "aggregate --hour {{.Timeperiod}}",
       "alertOn": ["failure", "success"], "alertTo": ["ops@example.com", "site.owner+alerts@example.org"]}
    ]},
    {"name": "client", "dependentOn": ["site"], "settings": {"lagMinutes": 10}, "levels": [
      {"process": "client_daily", "qualifier": "daily", "stateMachine": "continuous", "every": "15m",
       "blocking": "dependencies", "function": "client_rollup"}
    ]}
  ]
}`

func intp(n int) *int { return &n }

func TestParse(t *testing.T) {
	t.Parallel()
	f, err := Parse("sites.json", []byte(sitesJSON), Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := &File{
		Settings: Settings{StartTimeperiod: 2024010100, LagMinutes: intp(5), MaxFailures: intp(3), Timezone: "UTC"},
		Trees: []Tree{
			{Name: "site", Levels: []Level{
				{Process: "site_daily", Qualifier: Daily, Blocking: Children},
				{Process: "site_hourly", Qualifier: Hourly, Command: "aggregate --hour {{.Timeperiod}}",
					AlertOn: []string{"failure", "success"}, AlertTo: []string{"ops@example.com", "site.owner+alerts@example.org"}},
			}},
			{Name: "client", DependentOn: []string{"site"}, Settings: Settings{LagMinutes: intp(10)}, Levels: []Level{
				{Process: "client_daily", Qualifier: Daily, StateMachine: Continuous, Blocking: Dependencies,
					Function: "client_rollup", Every: 15 * time.Minute},
			}},
		},
	}
	if d := cmp.Diff(want, f); d != "" {
		t.Fatalf("Parse (-want +got):\n%s", d)
	}
	back, err := Parse("sites.json", Format(f), Options{})
	if err != nil {
		t.Fatalf("Parse(Format): %v\n%s", err, Format(f))
	}
	if d := cmp.Diff(f, back); d != "" {
		t.Fatalf("round trip (-want +got):\n%s", d)
	}
}

func TestFormat(t *testing.T) {
	t.Parallel()
	f := &File{
		Settings: Settings{StartTimeperiod: 2024010100},
		Trees: []Tree{{Name: "a", Levels: []Level{
			{Process: "a_hourly", Qualifier: Hourly, StateMachine: Continuous, Every: 90 * time.Second,
				Command: `run > "$GNOMON_TIMEPERIOD" && done`, Owner: "batch",
				AlertOn: []string{"failure"}, AlertTo: []string{"ops@example.com"}},
		}}},
	}
	want := `{
  "settings": {
    "startTimeperiod": "2024010100"
  },
  "trees": [
    {
      "name": "a",
      "levels": [
        {
          "process": "a_hourly",
          "qualifier": "hourly",
          "stateMachine": "continuous",
          "command": "run > \"$GNOMON_TIMEPERIOD\" && done",
          "owner": "batch",
          "every": "1m30s",
          "alertOn": [
            "failure"
          ],
          "alertTo": [
            "ops@example.com"
          ]
        }
      ]
    }
  ]
}
`
	if got := string(Format(f)); got != want {
		t.Errorf("Format:\n%s\nwant:\n%s", got, want)
	}
	back, err := Parse("a.json", Format(f), Options{})
	if err != nil {
		t.Fatalf("Parse(Format): %v", err)
	}
	if d := cmp.Diff(f, back); d != "" {
		t.Errorf("round trip (-want +got):\n%s", d)
	}
}

// problems parses text and returns its problems as strings.
func problems(t *testing.T, text string, opts Options) []string {
	t.Helper()
	_, err := Parse("sites.json", []byte(text), opts)
	if err == nil {
		return nil
	}
	var ps Problems
	if !errors.As(err, &ps) {
		t.Fatalf("error %T is not Problems: %v", err, err)
	}
	var out []string
	for _, p := range ps {
		out = append(out, p.String())
	}
	return out
}

func TestParseProblems(t *testing.T) {
	t.Parallel()
	level := func(extra string) string {
		return `{"settings": {"startTimeperiod": "2024010100"}, "trees": [{"name": "t", "levels": [{"process": "p", "qualifier": "hourly"` + extra + `}]}]}`
	}
	tests := []struct {
		name string
		text string
		opts Options
		want []string
	}{
		{"syntax", "{\n  \"trees\": [\n  }", Options{}, []string{`sites.json:3: invalid JSON: invalid character '}' looking for beginning of value`}},
		{"truncated", `{"trees": [`, Options{}, []string{`sites.json:1: invalid JSON: unexpected end of input`}},
		{"trailing", `{"trees": []} {}`, Options{}, []string{`sites.json:1: unexpected data after the top-level value`}},
		{"duplicate key", `{"trees": [], "trees": []}`, Options{}, []string{`sites.json:1: duplicate key "trees"`}},
		{"not an object", `[]`, Options{}, []string{`sites.json:1: expected an object, not an array`}},
		{"deep", strings.Repeat("[", 100), Options{}, []string{`sites.json:1: JSON nested deeper than 32 levels`}},
		{"unknown key top", `{"trees": [], "treez": 1}`, Options{}, []string{`sites.json:1: treez: unknown key (want one of settings, trees)`}},
		{"missing trees", `{}`, Options{}, []string{`sites.json:1: trees: missing`}},
		{"unknown qualifier", level(`, "qualifier2": 1`), Options{},
			[]string{`sites.json:1: trees[0].levels[0].qualifier2: unknown key (want one of process, qualifier, stateMachine, blocking, command, owner, function, every, alertOn, alertTo)`}},
		{"weekly", `{"settings": {"startTimeperiod": "2024010100"}, "trees": [{"name": "t", "levels": [
			{"process": "p", "qualifier": "daily"},
			{"process": "q", "qualifier": "weekly"}]}]}`, Options{},
			[]string{`sites.json:3: trees[0].levels[1].qualifier: unknown qualifier "weekly" (want hourly, daily, monthly or yearly)`}},
		{"bad machine and blocking", level(`, "stateMachine": "recomputing", "blocking": "strict"`), Options{}, []string{
			`sites.json:1: trees[0].levels[0].blocking: unknown blocking "strict" (want normal, children or dependencies)`,
			`sites.json:1: trees[0].levels[0].stateMachine: unknown stateMachine "recomputing" (want discrete or continuous)`,
		}},
		{"command and function", level(`, "command": "x", "function": "f"`), Options{},
			[]string{`sites.json:1: trees[0].levels[0]: command and function are both set: a level runs one of them, or neither for an external worker`}},
		{"empty command", level(`, "command": " "`), Options{},
			[]string{`sites.json:1: trees[0].levels[0].command: empty command: leave the key out for an external worker`}},
		{"unregistered function", level(`, "function": "nope"`), Options{FunctionKnownFunc: func(n string) bool { return n == "yes" }},
			[]string{`sites.json:1: trees[0].levels[0].function: function "nope" is not registered`}},
		{"owner", level(`, "command": "x", "owner": "batch:staff"`), Options{}, nil},
		{"bad owner", level(`, "command": "x", "owner": "0"`), Options{},
			[]string{`sites.json:1: trees[0].levels[0].owner: owner: "0" is not a user name (write owner: USER or owner: USER:GROUP, names of 1 to 32 lower-case letters, digits, '_', '.' and '-', starting with a letter or '_')`}},
		{"owner without a command", level(`, "owner": "batch"`), Options{},
			[]string{`sites.json:1: trees[0].levels[0].owner: owner: a level without a command runs nothing as its owner (give it a command, or remove owner)`}},
		{"owner refused", level(`, "command": "x", "owner": "batch"`), Options{OwnerFunc: func(o string) error { return fmt.Errorf("no user %s on this machine", o) }},
			[]string{`sites.json:1: trees[0].levels[0].owner: owner: no user batch on this machine`}},
		{"every on discrete", level(`, "every": "1m"`), Options{},
			[]string{`sites.json:1: trees[0].levels[0].every: every applies only to continuous levels (a discrete period runs when it is due)`}},
		{"bad every", level(`, "stateMachine": "continuous", "every": "1.5s"`), Options{},
			[]string{`sites.json:1: trees[0].levels[0].every: every 1.5s: want whole seconds from 1s to 24h`}},
		{"every not a duration", level(`, "stateMachine": "continuous", "every": 60`), Options{},
			[]string{`sites.json:1: trees[0].levels[0].every: expected a string, not a number`}},
		{"alerts", level(`, "alertOn": ["success"], "alertTo": ["ops@example.com"]`), Options{}, nil},
		{"unknown outcome", level(`, "alertOn": ["failure", "not_started", "Success"], "alertTo": ["ops@example.com"]`), Options{}, []string{
			`sites.json:1: trees[0].levels[0].alertOn[1]: unknown outcome "not_started" (want success or failure)`,
			`sites.json:1: trees[0].levels[0].alertOn[2]: unknown outcome "Success" (want success or failure)`,
		}},
		{"duplicate outcome", level(`, "alertOn": ["failure", "success", "failure"], "alertTo": ["ops@example.com"]`), Options{},
			[]string{`sites.json:1: trees[0].levels[0].alertOn[2]: outcome "failure" listed twice (also [0])`}},
		{"empty alertOn", level(`, "alertOn": [], "alertTo": ["ops@example.com"]`), Options{},
			[]string{`sites.json:1: trees[0].levels[0].alertOn: empty list: leave out alertOn and alertTo for no alerts`}},
		{"bad address", level(`, "alertOn": ["failure"], "alertTo": ["ops", "Ops <ops@example.com>", "<ops@example.com>", " ops@example.com", ""]`), Options{}, []string{
			`sites.json:1: trees[0].levels[0].alertTo[0]: "ops" is not an email address such as ops@example.com`,
			`sites.json:1: trees[0].levels[0].alertTo[1]: "Ops <ops@example.com>" is not an email address such as ops@example.com`,
			`sites.json:1: trees[0].levels[0].alertTo[2]: "<ops@example.com>" is not an email address such as ops@example.com`,
			`sites.json:1: trees[0].levels[0].alertTo[3]: " ops@example.com" is not an email address such as ops@example.com`,
			`sites.json:1: trees[0].levels[0].alertTo[4]: "" is not an email address such as ops@example.com`,
		}},
		{"duplicate address", level(`, "alertOn": ["failure"], "alertTo": ["a@example.com", "b@example.com", "a@example.com"]`), Options{},
			[]string{`sites.json:1: trees[0].levels[0].alertTo[2]: address "a@example.com" listed twice (also [0])`}},
		{"empty alertTo", level(`, "alertOn": ["failure"], "alertTo": []`), Options{},
			[]string{`sites.json:1: trees[0].levels[0].alertTo: empty list: leave out alertOn and alertTo for no alerts`}},
		{"alertOn without alertTo", `{"settings": {"startTimeperiod": "2024010100"}, "trees": [{"name": "t", "levels": [
			{"process": "p", "qualifier": "daily"},
			{"process": "q", "qualifier": "hourly",
			 "alertOn": ["failure"]}]}]}`, Options{},
			[]string{`sites.json:3: trees[0].levels[1].alertTo: missing: alertOn needs alertTo, the addresses to email`}},
		{"alertTo without alertOn", `{"settings": {"startTimeperiod": "2024010100"}, "trees": [{"name": "t", "levels": [
			{"process": "p", "qualifier": "daily"},
			{"process": "q", "qualifier": "hourly",
			 "alertTo": ["ops@example.com"]}]}]}`, Options{},
			[]string{`sites.json:3: trees[0].levels[1].alertOn: missing: alertTo needs alertOn, the outcomes to email on (success, failure)`}},
		{"alerts not arrays", level(`, "alertOn": "failure", "alertTo": {"to": "ops@example.com"}`), Options{}, []string{
			`sites.json:1: trees[0].levels[0].alertOn: expected an array, not a string`,
			`sites.json:1: trees[0].levels[0].alertTo: expected an array, not an object`,
		}},
		{"alert items not strings", level(`, "alertOn": [1, null], "alertTo": [["ops@example.com"], true]`), Options{}, []string{
			`sites.json:1: trees[0].levels[0].alertOn[0]: expected a string, not a number`,
			`sites.json:1: trees[0].levels[0].alertOn[1]: expected a string, not null`,
			`sites.json:1: trees[0].levels[0].alertTo[0]: expected a string, not an array`,
			`sites.json:1: trees[0].levels[0].alertTo[1]: expected a string, not a boolean`,
		}},
		{"bad start", `{"settings": {"startTimeperiod": "2024010000"}, "trees": []}`, Options{},
			[]string{`sites.json:1: settings.startTimeperiod: bad timeperiod key "2024010000": not an hourly key (YYYYMMDDHH)`}},
		{"start not a date", `{"settings": {"startTimeperiod": "2024023000"}, "trees": []}`, Options{},
			[]string{`sites.json:1: settings.startTimeperiod: bad timeperiod key "2024023000": day 30 out of range for 2024-02`}},
		{"zone", `{"settings": {"startTimeperiod": "2024010100", "timezone": "Europe/Paris"}, "trees": []}`, Options{},
			[]string{`sites.json:1: settings.timezone: time zone "Europe/Paris": only UTC is supported (keys are UTC; displays may convert)`}},
		{"lag", `{"settings": {"startTimeperiod": "2024010100", "lagMinutes": -1, "maxFailures": 2.5}, "trees": []}`, Options{}, []string{
			`sites.json:1: settings.lagMinutes: -1 out of range 0..527040`,
			`sites.json:1: settings.maxFailures: expected an integer, not 2.5`,
		}},
		{"no start", `{"trees": [{"name": "t", "levels": [{"process": "p", "qualifier": "hourly"}]}]}`, Options{},
			[]string{`sites.json:1: trees[0].settings.startTimeperiod: missing: set it in the tree's settings or the file's`}},
		{"duplicate qualifier", `{"settings": {"startTimeperiod": "2024010100"}, "trees": [{"name": "t", "levels": [
			{"process": "p", "qualifier": "daily"}, {"process": "q", "qualifier": "daily"}]}]}`, Options{},
			[]string{`sites.json:2: trees[0].levels[1].qualifier: duplicate qualifier daily (also levels[0])`}},
		{"a problem of a level listed out of order names it where it is", `{"settings": {"startTimeperiod": "2024010100"}, "trees": [
			{"name": "a", "levels": [{"process": "p", "qualifier": "daily"}]},
			{"name": "t", "levels": [{"process": "q", "qualifier": "hourly"}, {"process": "p", "qualifier": "daily"}]}]}`, Options{},
			[]string{`sites.json:3: trees[1].levels[1].process: duplicate process name "p" (also trees[0].levels[0])`}},
		{"levels", `{"settings": {"startTimeperiod": "2024010100"}, "trees": [{"name": "t", "levels": []}]}`, Options{},
			[]string{`sites.json:1: trees[0].levels: a tree has 1 to 4 levels, not 0`}},
		{"duplicate process", `{"settings": {"startTimeperiod": "2024010100"}, "trees": [
			{"name": "a", "levels": [{"process": "p", "qualifier": "daily"}]},
			{"name": "b", "levels": [{"process": "p", "qualifier": "daily"}]}]}`, Options{},
			[]string{`sites.json:3: trees[1].levels[0].process: duplicate process name "p" (also trees[0].levels[0])`}},
		{"duplicate tree", `{"settings": {"startTimeperiod": "2024010100"}, "trees": [
			{"name": "a", "levels": [{"process": "p", "qualifier": "daily"}]},
			{"name": "a", "levels": [{"process": "q", "qualifier": "daily"}]}]}`, Options{},
			[]string{`sites.json:3: trees[1].name: duplicate tree name "a" (also trees[0])`}},
		{"bad names", `{"settings": {"startTimeperiod": "2024010100"}, "trees": [
			{"name": "a b", "levels": [{"process": "", "qualifier": "daily", "function": "x.y"}]}]}`, Options{}, []string{
			`sites.json:2: trees[0].levels[0].function: function name "x.y": use only letters, digits and underscores`,
			`sites.json:2: trees[0].levels[0].process: empty process name`,
			`sites.json:2: trees[0].name: tree name "a b": use only letters, digits and underscores`,
		}},
		{"name taken", level(``), Options{NameTakenFunc: func(n string) bool { return n == "p" }},
			[]string{`sites.json:1: trees[0].levels[0].process: name "p" is already taken by another job`}},
		{"unknown dependency", `{"settings": {"startTimeperiod": "2024010100"}, "trees": [
			{"name": "a", "dependentOn": ["b", "a", "c", "c"], "levels": [{"process": "p", "qualifier": "daily"}]}]}`, Options{}, []string{
			`sites.json:2: trees[0].dependentOn[0]: unknown tree "b"`,
			`sites.json:2: trees[0].dependentOn[1]: tree "a" depends on itself`,
			`sites.json:2: trees[0].dependentOn[2]: unknown tree "c"`,
			`sites.json:2: trees[0].dependentOn[3]: tree "c" listed twice`,
		}},
		{"cycle", `{"settings": {"startTimeperiod": "2024010100"}, "trees": [
			{"name": "a", "dependentOn": ["b"], "levels": [{"process": "p", "qualifier": "daily"}]},
			{"name": "b", "dependentOn": ["c"], "levels": [{"process": "q", "qualifier": "daily"}]},
			{"name": "c", "dependentOn": ["a"], "levels": [{"process": "r", "qualifier": "daily"}]}]}`, Options{},
			[]string{`sites.json:4: trees[2].dependentOn[0]: cyclic dependentOn: a → b → c → a`}},
		{"cycle through another file", `{"settings": {"startTimeperiod": "2024010100"}, "trees": [
			{"name": "a", "dependentOn": ["x"], "levels": [{"process": "p", "qualifier": "daily"}]}]}`,
			Options{TreeFunc: func(n string) (string, []string, bool) {
				if n == "x" {
					return "other.json", []string{"a"}, true
				}
				return "", nil, false
			}},
			[]string{`sites.json:2: trees[0].dependentOn: cyclic dependentOn: a → x → a`}},
		{"tree elsewhere", `{"settings": {"startTimeperiod": "2024010100"}, "trees": [
			{"name": "x", "levels": [{"process": "p", "qualifier": "daily"}]}]}`,
			Options{
				TreeFunc:    func(n string) (string, []string, bool) { return "other.json", nil, n == "x" },
				ProcessFunc: func(n string) (string, string, bool) { return "y", "other.json", n == "p" },
			}, []string{
				`sites.json:2: trees[0].levels[0].process: process "p" is already defined in tree "y" of other.json`,
				`sites.json:2: trees[0].name: tree "x" is already defined in other.json`,
			}},
		{"many, sorted by path", `{"settings": {"startTimeperiod": "x"}, "trees": [
			{"name": "a", "levels": [{"process": "p", "qualifier": "weekly"}]},
			{"name": "b", "levels": [{"process": "q", "qualifier": "daily", "blocking": 1}]},
			{"name": "c"}, {"name": "d"}, {"name": "e"}, {"name": "f"}, {"name": "g"}, {"name": "h"}, {"name": "i"},
			{"name": "j", "levels": [{"process": "r", "qualifier": "daily", "oops": true}]}]}`, Options{}, []string{
			`sites.json:1: settings.startTimeperiod: bad timeperiod key "x": want ten digits YYYYMMDDHH`,
			`sites.json:2: trees[0].levels[0].qualifier: unknown qualifier "weekly" (want hourly, daily, monthly or yearly)`,
			`sites.json:2: trees[0].settings.startTimeperiod: missing: set it in the tree's settings or the file's`,
			`sites.json:3: trees[1].levels[0].blocking: expected a string, not a number`,
			`sites.json:3: trees[1].settings.startTimeperiod: missing: set it in the tree's settings or the file's`,
			`sites.json:4: trees[2].levels: missing`,
			`sites.json:4: trees[2].settings.startTimeperiod: missing: set it in the tree's settings or the file's`,
			`sites.json:4: trees[3].levels: missing`,
			`sites.json:4: trees[3].settings.startTimeperiod: missing: set it in the tree's settings or the file's`,
			`sites.json:4: trees[4].levels: missing`,
			`sites.json:4: trees[4].settings.startTimeperiod: missing: set it in the tree's settings or the file's`,
			`sites.json:4: trees[5].levels: missing`,
			`sites.json:4: trees[5].settings.startTimeperiod: missing: set it in the tree's settings or the file's`,
			`sites.json:4: trees[6].levels: missing`,
			`sites.json:4: trees[6].settings.startTimeperiod: missing: set it in the tree's settings or the file's`,
			`sites.json:4: trees[7].levels: missing`,
			`sites.json:4: trees[7].settings.startTimeperiod: missing: set it in the tree's settings or the file's`,
			`sites.json:4: trees[8].levels: missing`,
			`sites.json:4: trees[8].settings.startTimeperiod: missing: set it in the tree's settings or the file's`,
			`sites.json:5: trees[9].levels[0].oops: unknown key (want one of process, qualifier, stateMachine, blocking, command, owner, function, every, alertOn, alertTo)`,
			`sites.json:5: trees[9].settings.startTimeperiod: missing: set it in the tree's settings or the file's`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := problems(t, tt.text, tt.opts)
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("problems (-want +got):\n%s", d)
			}
		})
	}
}

func TestComparePaths(t *testing.T) {
	t.Parallel()
	ordered := []string{"", "settings", "settings.lagMinutes", "trees", "trees[2]", "trees[2].levels[9]", "trees[2].levels[10]", "trees[10]"}
	for i := range ordered {
		for j := range ordered {
			got := comparePaths(ordered[i], ordered[j])
			if (i < j && got >= 0) || (i > j && got <= 0) || (i == j && got != 0) {
				t.Errorf("comparePaths(%q, %q) = %d", ordered[i], ordered[j], got)
			}
		}
	}
}

// FuzzParse checks that Parse never panics and that any file it accepts
// formats to a file that parses to the same value.
func FuzzParse(f *testing.F) {
	f.Add([]byte(sitesJSON))
	f.Add([]byte(`{"trees": []}`))
	f.Add([]byte(`{"settings": {"startTimeperiod": "2024010100"}, "trees": [{"name": "a", "levels": [{"process": "p", "qualifier": "hourly", "command": "id -u", "owner": "batch:staff"}, {"process": "q", "qualifier": "daily", "owner": "0"}]}]}`))
	f.Add([]byte(`{"settings": {"startTimeperiod": "2024010100"}, "trees": [{"name": "a", "levels": [{"process": "p", "qualifier": "hourly", "alertOn": ["success", "failure"], "alertTo": ["ops@example.com", "a.b+c@d.example"]}]}]}`))
	f.Add([]byte(`{"settings": {"startTimeperiod": "2024010100"}, "trees": [{"name": "a", "levels": [{"process": "p", "qualifier": "hourly", "alertOn": ["failure", "failure"], "alertTo": ["Ops <ops@example.com>"]}]}]}`))
	f.Add([]byte(`{"settings": {"startTimeperiod": "2024022923", "maxFailures": 0}, "trees": [{"name": "y", "levels": [{"process": "y_yearly", "qualifier": "yearly", "stateMachine": "continuous"}]}]}`))
	f.Add([]byte(`{"settings": {"startTimeperiod": "2024010100"}, "trees": [{"name": "t", "levels": [{"process": "h", "qualifier": "hourly"}, {"process": "y", "qualifier": "yearly"}, {"process": "d", "qualifier": "daily"}]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Parse("fuzz.json", data, Options{})
		if err != nil {
			var ps Problems
			if !errors.As(err, &ps) || len(ps) == 0 {
				t.Fatalf("error is not a non-empty Problems: %v", err)
			}
			return
		}
		text := Format(file)
		for _, r := range string(text) {
			if r != '\n' && termsafe.Unsafe(r) {
				t.Fatalf("Format wrote %U:\n%s", r, text)
			}
		}
		back, err := Parse("fuzz.json", text, Options{})
		if err != nil {
			t.Fatalf("Parse(Format(x)): %v\n%s", err, text)
		}
		if !reflect.DeepEqual(file, back) {
			t.Fatalf("round trip differs:\n%s", cmp.Diff(file, back))
		}
		if again := Format(back); string(again) != string(text) {
			t.Fatalf("Format is not stable:\n%s\n%s", text, again)
		}
		if plan := planRoundTrip(t, file); !reflect.DeepEqual(file, plan) {
			t.Fatalf("the plan's JSON decodes differently:\n%s", cmp.Diff(file, plan))
		}
	})
}

// Levels may be listed in any order: they are ordered by qualifier,
// coarsest first.
func TestParseLevelsAnyOrder(t *testing.T) {
	t.Parallel()
	f, err := Parse("sites.json", []byte(`{"settings": {"startTimeperiod": "2024010100"}, "trees": [{"name": "t", "levels": [
		{"process": "h", "qualifier": "hourly"}, {"process": "y", "qualifier": "yearly"},
		{"process": "d", "qualifier": "daily"}, {"process": "m", "qualifier": "monthly"}]}]}`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range f.Trees[0].Levels {
		got = append(got, l.Process+":"+l.Qualifier.String())
	}
	if want := []string{"y:yearly", "m:monthly", "d:daily", "h:hourly"}; !reflect.DeepEqual(got, want) {
		t.Errorf("levels %v, want %v", got, want)
	}
}
