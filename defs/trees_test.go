package defs

import (
	"errors"
	"testing"

	"github.com/gnomon-sched/gnomon/periods"
)

// TestPlanTrees checks that a tree file is planned against what lies
// outside it, each refusal naming the file, line and path: a task's name,
// an unregistered function, an owner the server refuses, a tree or a
// process of another tree file; and that a dependency on another file's
// tree is known.
func TestPlanTrees(t *testing.T) {
	t.Parallel()
	level := func(process, more string) string {
		return `{"settings": {"startTimeperiod": "2024010100"}, "trees": [{"name": "site", "dependentOn": ["other"],
  "levels": [{"process": "` + process + `", "qualifier": "hourly"` + more + `}]}]}`
	}
	env := TreeEnv{
		Task:     func(name string) bool { return name == "report" },
		Function: func(name string) bool { return name == "rollup" },
		Tree: func(name string) (string, []string, bool) {
			return "other.json", nil, name == "other"
		},
		Process: func(name string) (string, string, bool) { return "other", "other.json", name == "other_hourly" },
	}
	srv := Server{Owner: func(o string) error {
		if o != "batch" {
			return errors.New("not allowed")
		}
		return nil
	}}
	plan, err := PlanTrees("site.json", level("site_hourly", `, "command": "true", "owner": "batch"`), env, srv)
	if err != nil || len(plan.Trees) != 1 || plan.Trees[0].Levels[0].Owner != "batch" {
		t.Fatalf("a good file: %+v, %v", plan, err)
	}
	for _, tt := range []struct{ name, text, want string }{
		{"task", level("report", ""), `site.json:2: trees[0].levels[0].process: name "report" is already taken by another job`},
		{"function", level("site_hourly", `, "function": "nope"`), `site.json:2: trees[0].levels[0].function: function "nope" is not registered`},
		{"owner", level("site_hourly", `, "command": "true", "owner": "root"`), `site.json:2: trees[0].levels[0].owner: owner: not allowed`},
		{"process", level("other_hourly", ""), `site.json:2: trees[0].levels[0].process: process "other_hourly" is already defined in tree "other" of other.json`},
		{"tree", `{"settings": {"startTimeperiod": "2024010100"}, "trees": [{"name": "other", "levels": [{"process": "p", "qualifier": "hourly"}]}]}`,
			`site.json:1: trees[0].name: tree "other" is already defined in other.json`},
	} {
		_, err := PlanTrees("site.json", tt.text, env, srv)
		var ps periods.Problems
		if !errors.As(err, &ps) || err.Error() != tt.want {
			t.Errorf("%s: %v\nwant %s", tt.name, err, tt.want)
		}
	}
}
