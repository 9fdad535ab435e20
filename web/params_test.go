package web_test

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/gnomon-sched/gnomon/job"
)

// The start dialog of a task with parameters has a field for each,
// holding its default; the run gets the values typed, and the runs
// table shows them.
func TestStartDialogParameters(t *testing.T) {
	d := startDemo(t)
	if err := d.s.Apply(context.Background(), "params.def", `insert_task: load_region
type: callable
command: echo "loading $REGION for $DAY"
out_log_file: load_region.out
err_log_file: load_region.err
params: REGION=eu, DAY=today
`); err != nil {
		t.Fatal(err)
	}
	ctx := browser(t)
	d.signIn(t, ctx, d.admin)
	var region, day string
	run(t, ctx,
		chromedp.Navigate(d.url+"/tasks/load_region"),
		chromedp.WaitVisible(`button[data-action="start"]`, chromedp.ByQuery),
	)
	// The task's part of the page is replaced by live updates: the
	// button is clicked in one step in the page.
	clickNow(t, ctx, `button[data-action="start"]`)
	run(t, ctx,
		chromedp.WaitVisible(`#confirm[open] input[data-param="REGION"]`, chromedp.ByQuery),
		chromedp.Value(`input[data-param="REGION"]`, &region, chromedp.ByQuery),
		chromedp.Value(`input[data-param="DAY"]`, &day, chromedp.ByQuery),
	)
	if region != "eu" || day != "today" {
		t.Fatalf("the fields hold %q and %q, want the defaults eu and today", region, day)
	}
	run(t, ctx,
		chromedp.SetValue(`input[data-param="REGION"]`, "us, west", chromedp.ByQuery),
		chromedp.Click("#confirm-ok", chromedp.ByID),
		chromedp.WaitNotPresent("#confirm[open]", chromedp.ByQuery),
	)
	runSwapped(t, ctx, chromedp.WaitVisible(`#live .badge.st-success`, chromedp.ByQuery))
	runs, err := d.s.Runs(context.Background(), "load_region", 0)
	want := []job.Var{{Name: "DAY", Value: "today"}, {Name: "REGION", Value: "us, west"}}
	if err != nil || len(runs) != 1 || len(runs[0].Params) != 2 || runs[0].Params[0] != want[0] || runs[0].Params[1] != want[1] {
		t.Fatalf("runs after the start: %+v, %v; want one with %v", runs, err, want)
	}
	// The run's row arrives with a live update of its own, which may
	// follow the status's.
	waitTrue(t, ctx, `(document.querySelector('section[aria-labelledby="h-runs"]') || {innerText: ""}).innerText.includes("DAY=today")`)
	// Read in one step of the page's script: a live update may replace
	// the section between two steps of the protocol.
	var runsText string
	run(t, ctx, chromedp.Evaluate(`document.querySelector('section[aria-labelledby="h-runs"]').innerText`, &runsText))
	if !strings.Contains(runsText, `DAY=today, REGION="us, west"`) {
		t.Errorf("the runs table does not show the parameters:\n%s", runsText)
	}
}
