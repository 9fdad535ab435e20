package periods

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// planRoundTrip encodes a file as the journal keeps a plan and decodes it
// again.
func planRoundTrip(t testing.TB, f *File) *File {
	t.Helper()
	b, err := json.Marshal(f)
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	var back File
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatalf("decode: %v\n%s", err, b)
	}
	return &back
}

// corpusFile reads one value of a native fuzz corpus file holding a
// []byte.
func corpusFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 2 || lines[0] != "go test fuzz v1" {
		t.Fatalf("%s: not a corpus file of one value", path)
	}
	lit, ok := strings.CutPrefix(lines[1], "[]byte(")
	lit, ok2 := strings.CutSuffix(lit, ")")
	if !ok || !ok2 {
		t.Fatalf("%s: not a []byte", path)
	}
	s, err := strconv.Unquote(lit)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return []byte(s)
}

// TestFileJSON checks that a parsed file, encoded as the journal keeps a
// plan (Define.Plan), decodes to an equal File: every file of the parser's
// corpus that parses, and the example tree file.
func TestFileJSON(t *testing.T) {
	t.Parallel()
	texts := map[string][]byte{}
	paths, err := filepath.Glob("testdata/fuzz/FuzzParse/*")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		texts[p] = corpusFile(t, p)
	}
	ex, err := os.ReadFile("../examples/trees.json")
	if err != nil {
		t.Fatal(err)
	}
	texts["examples/trees.json"] = ex
	texts["sites.json"] = []byte(sitesJSON)
	parsed := 0
	for name, text := range texts {
		f, err := Parse(name, text, Options{})
		if err != nil {
			continue // the corpus holds bad files too
		}
		parsed++
		if back := planRoundTrip(t, f); !reflect.DeepEqual(f, back) {
			t.Errorf("%s: the plan decodes differently (-encoded +decoded):\n%s", name, cmp.Diff(f, back))
		}
	}
	if parsed < 5 {
		t.Fatalf("only %d files parsed", parsed)
	}
}

// TestFileJSONForm pins the journal's form of a plan with every field set:
// an entry written by one build is read by the next, so a field renamed
// here is a journal no longer read.
func TestFileJSONForm(t *testing.T) {
	t.Parallel()
	zero, three := 0, 3
	f := &File{
		Settings: Settings{StartTimeperiod: 2024010100, LagMinutes: &zero, MaxFailures: &three, Timezone: "UTC"},
		Trees: []Tree{{
			Name: "site",
			Levels: []Level{
				{Process: "site_daily", Qualifier: Daily, Blocking: Children, Command: "agg", Owner: "batch:staff",
					AlertOn: []string{"failure"}, AlertTo: []string{"ops@example.com"}},
				{Process: "site_hourly", Qualifier: Hourly, Function: "rollup"},
			},
		}, {
			Name:        "client",
			DependentOn: []string{"site"},
			Settings:    Settings{StartTimeperiod: 2024020100, LagMinutes: &three},
			Levels: []Level{{Process: "client_daily", Qualifier: Daily, StateMachine: Continuous, Blocking: Dependencies,
				Every: 90 * time.Second}},
		}},
	}
	want := `{"settings":{"start_timeperiod":"2024010100","lag_minutes":0,"max_failures":3,"timezone":"UTC"},"trees":[` +
		`{"name":"site","levels":[` +
		`{"process":"site_daily","qualifier":"daily","state_machine":"discrete","blocking":"children","command":"agg","owner":"batch:staff","alert_on":["failure"],"alert_to":["ops@example.com"]},` +
		`{"process":"site_hourly","qualifier":"hourly","state_machine":"discrete","blocking":"normal","function":"rollup"}]},` +
		`{"name":"client","dependent_on":["site"],"settings":{"start_timeperiod":"2024020100","lag_minutes":3},"levels":[` +
		`{"process":"client_daily","qualifier":"daily","state_machine":"continuous","blocking":"dependencies","every":90000000000}]}]}`
	b, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != want {
		t.Errorf("encoded:\n%s\nwant:\n%s", b, want)
	}
	if back := planRoundTrip(t, f); !reflect.DeepEqual(f, back) {
		t.Errorf("round trip (-encoded +decoded):\n%s", cmp.Diff(f, back))
	}
	// A file without settings or trees leaves the settings out.
	if b, _ := json.Marshal(&File{}); string(b) != `{"trees":null}` {
		t.Errorf("empty file: %s", b)
	}
}
