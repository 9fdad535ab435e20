package eventdep

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/gnomon-sched/gnomon/job"
)

func TestParseConfigsExample(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("../examples/configurations.json")
	if err != nil {
		t.Fatal(err)
	}
	cfgs, errs := ParseConfigs(src)
	if errs != nil {
		t.Fatal(errs)
	}
	if len(cfgs) != 3 {
		t.Fatalf("%d configurations", len(cfgs))
	}
	want := []job.DataDep{{Type: job.File, Resource: "/scheduling_configuraiton_1/directory/path/", Life: 3600}, {Type: job.TimeBased, Resource: "cron", Life: 0}}
	if diff := cmp.Diff(want, cfgs[0].Deps); diff != "" || cfgs[0].Name != "SCHEDULING_CONFIGURATION_1" || cfgs[0].Line != 2 {
		t.Errorf("first configuration %+v: %s", cfgs[0], diff)
	}
}

func TestParseConfigs(t *testing.T) {
	t.Parallel()
	one, errs := ParseConfigs([]byte(`{"name": "A", "dependencies": [{"type": "TIME_BASED_CRON", "resourceId": "cron", "lifeDuration": 0}], "command": "echo hi", "out_log_file": "/tmp/o", "err_log_file": "/tmp/e", "priority": 2}`))
	if errs != nil {
		t.Fatal(errs)
	}
	if one[0].Deps[0].Type != job.TimeBased || len(one[0].Attrs) != 4 {
		t.Errorf("got %+v", one[0])
	}
	bad := map[string]string{
		``:         "no configurations found",
		`[]`:       "no configurations found",
		`{"name":`: "line 1: invalid JSON",
		`[{}, 3]`:  "line 1: name: required",
		"[\n{\"name\": \"A\", \"dependencies\": []}\n]":                                                                                                                                                                "line 2: configuration A: dependencies: at least one dependency is required",
		`{"name": "", "dependencies": [{"type":"FILE","resourceId":"/a","lifeDuration":1}]}`:                                                                                                                           "name: must not be empty",
		`{"name": 5, "dependencies": [{"type":"FILE","resourceId":"/a","lifeDuration":1}]}`:                                                                                                                            "name: expected a string, got a number",
		`{"name": "A", "dependencies": {"type":"FILE"}}`:                                                                                                                                                               "dependencies: expected an array, got an object",
		`{"name": "A", "dependencies": [{"type":"DIR","resourceId":"/a","lifeDuration":1}]}`:                                                                                                                           `dependencies[0].type: "DIR" is not one of`,
		`{"name": "A", "dependencies": [{"type":"TIME BASED","resourceId":"/a","lifeDuration":1}]}`:                                                                                                                    `dependencies[0].type: "TIME BASED" is not one of`,
		`{"name": "A", "dependencies": [{"type":"FILE","resourceId":"","lifeDuration":1}]}`:                                                                                                                            "dependencies[0].resourceId: must not be empty",
		`{"name": "A", "dependencies": [{"type":"FILE","lifeDuration":1}]}`:                                                                                                                                            "dependencies[0].resourceId: required",
		`{"name": "A", "dependencies": [{"type":"FILE","resourceId":"/a"}]}`:                                                                                                                                           "dependencies[0].lifeDuration: required",
		`{"name": "A", "dependencies": [{"type":"FILE","resourceId":"/a","lifeDuration":-1}]}`:                                                                                                                         "dependencies[0].lifeDuration: -1 is negative",
		`{"name": "A", "dependencies": [{"type":"FILE","resourceId":"/a","lifeDuration":"-1"}]}`:                                                                                                                       "dependencies[0].lifeDuration: -1 is negative",
		`{"name": "A", "dependencies": [{"type":"FILE","resourceId":"/a","lifeDuration":1.5}]}`:                                                                                                                        `dependencies[0].lifeDuration: "1.5" is not a whole number`,
		`{"name": "A", "dependencies": [{"type":"FILE","resourceId":"/a","lifeDuration":"3600.0"}]}`:                                                                                                                   `"3600.0" is not a whole number`,
		`{"name": "A", "dependencies": [{"type":"FILE","resourceId":"/a","lifeDuration":1e3}]}`:                                                                                                                        `"1e3" is not a whole number`,
		`{"name": "A", "dependencies": [{"type":"FILE","resourceId":"/a","lifeDuration":""}]}`:                                                                                                                         "lifeDuration: empty string",
		`{"name": "A", "dependencies": [{"type":"FILE","resourceId":"/a","lifeDuration":" 1"}]}`:                                                                                                                       `" 1" is not a whole number`,
		`{"name": "A", "dependencies": [{"type":"FILE","resourceId":"/a","lifeDuration":true}]}`:                                                                                                                       "lifeDuration: expected whole seconds as a number or a string of digits, got a boolean",
		`{"name": "A", "dependencies": [{"type":"FILE","resourceId":"/a","lifeDuration":99999999999999999999}]}`:                                                                                                       "is too large",
		`{"name": "A", "dependencies": [{"type":"FILE","resourceId":"/a","lifeDuration":1,"x":1}]}`:                                                                                                                    "dependencies[0].x: unknown field",
		`{"name": "A", "dependencies": [{"type":"FILE","resourceId":"/a/","lifeDuration":1},{"type":"FILE","resourceId":"/a","lifeDuration":2}]}`:                                                                      "dependencies[1]: repeats dependencies[0]",
		`{"name": "A", "dependencies": [{"type":"FILE","resourceId":"/a","lifeDuration":1}], "Command": "x"}`:                                                                                                          "Command: unknown field",
		"[{\"name\": \"A\", \"dependencies\": [{\"type\":\"FILE\",\"resourceId\":\"/a\",\"lifeDuration\":1}]},\n {\"name\": \"A\", \"dependencies\": [{\"type\":\"FILE\",\"resourceId\":\"/a\",\"lifeDuration\":1}]}]": "line 2: configuration A: defined more than once (first on line 1)",
		`{"name": "A", "dependencies": [{"type":"FILE","resourceId":"/a","lifeDuration":1}]} {}`:                                                                                                                       "data after the configurations",
		// What encoding/json would read without a word.
		"[\n{\"name\": \"A\", \"dependencies\": [{\"type\":\"FILE\",\"resourceId\":\"/a\",\"lifeDuration\":1}],\n \"command\": \"echo \xe9t\xe9\"}]": "line 3: not UTF-8: byte 0xe9 (column 19)",
		`{"name": "A\u0000", "dependencies": [{"type":"FILE","resourceId":"/a","lifeDuration":1}]}`:                                                  `name: holds a NUL character`,
		`{"name": "A", "dependencies": [{"type":"FILE","resourceId":"/a\u0000","lifeDuration":1}]}`:                                                  `configuration A: dependencies[0].resourceId: holds a NUL character`,
		`{"name": "A", "dependencies": [{"type":"FILE","resourceId":"/a\udbff","lifeDuration":1}]}`:                                                  `dependencies[0].resourceId: holds \udbff, half of a surrogate pair`,
		`{"name": "A", "dependencies": [{"type":"FILE","resourceId":"/a","lifeDuration":1}], "command": "rm -rf /x\u0000"}`:                          `configuration A: command: holds a NUL character`,
		`{"name": "A", "dependencies": [{"type":"FILE","resourceId":"/a","lifeDuration":1}], "label": "\ud800"}`:                                     `configuration A: label: holds \ud800`,
	}
	for in, want := range bad {
		_, errs := ParseConfigs([]byte(in))
		var all []string
		for _, e := range errs {
			all = append(all, "line "+strconv.Itoa(e.Line)+": "+e.Error())
		}
		if !strings.Contains(strings.Join(all, "\n"), want) {
			t.Errorf("%s:\n got %q\nwant one containing %q", in, all, want)
		}
	}
}

// FuzzParseConfigs checks that any input gives configurations or errors,
// never both, never neither, and never a panic; accepted dependencies are
// valid.
func FuzzParseConfigs(f *testing.F) {
	src, _ := os.ReadFile("../examples/configurations.json")
	f.Add(src)
	f.Add([]byte(`{"name":"A","dependencies":[{"type":"FILE","resourceId":"/a","lifeDuration":"1"}]}`))
	f.Add([]byte(`[{"name":"A","dependencies":[{"type":"X"}]}`))
	f.Add([]byte("[{\"name\":\"A\",\"dependencies\":[{\"type\":\"FILE\",\"resourceId\":\"/\xff\",\"lifeDuration\":1}]}]"))
	f.Add([]byte(`{"name":"A","dependencies":[{"type":"FILE","resourceId":"/a","lifeDuration":1}],"command":"id -u","out_log_file":"o","err_log_file":"e","owner":"batch:staff"}`))
	f.Add([]byte(`{"name":"A\u001b","dependencies":[{"type":"FILE","resourceId":"/\u0000\ud800\u001b","lifeDuration":1}],"command":"\u0000"}`))
	f.Fuzz(func(t *testing.T, src []byte) {
		cfgs, errs := ParseConfigs(src)
		if (cfgs == nil) == (errs == nil) {
			t.Fatalf("configurations %v and errors %v", cfgs, errs)
		}
		for _, c := range cfgs {
			if c.Name == "" || len(c.Deps) == 0 || c.Line < 1 || strings.Contains(c.Name, "\x00") {
				t.Fatalf("accepted %+v", c)
			}
			for _, d := range c.Deps {
				if _, ok := job.ParseDataType(string(d.Type)); !ok || d.Resource == "" || d.Life < 0 || d.Life > MaxLife || strings.Contains(d.Resource, "\x00") {
					t.Fatalf("accepted dependency %+v", d)
				}
			}
			for _, kv := range c.Attrs {
				if strings.Contains(kv[1], "\x00") {
					t.Fatalf("accepted %s %q", kv[0], kv[1])
				}
			}
		}
		if cfgs != nil && !utf8.Valid(src) {
			t.Fatalf("accepted a file that is not UTF-8")
		}
	})
}
