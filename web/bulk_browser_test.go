package web_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/gnomon-sched/gnomon"
	"github.com/gnomon-sched/gnomon/job"
)

// TestBulkActionsOnTheTaskList selects tasks on the task list, keeps the
// selection across a live update, freezes them (the confirmation names
// them), resets them, and reruns the failed ones of a selection: only
// those start, the others are named as left alone.
func TestBulkActionsOnTheTaskList(t *testing.T) {
	d := startDemo(t)
	ctx := browser(t)
	d.signIn(t, ctx, d.admin)
	bg := context.Background()
	status := func(name string) job.Status {
		t.Helper()
		js, err := d.s.Job(bg, name)
		if err != nil {
			t.Fatal(err)
		}
		return js.Status
	}
	waitFor := func(name string, want job.Status) {
		t.Helper()
		for deadline := time.Now().Add(time.Minute); status(name) != want; time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s is %s, want %s", name, status(name), want)
			}
		}
	}
	run(t, ctx,
		chromedp.Navigate(d.url+"/tasks?q=demo_"),
		chromedp.WaitVisible(`input[data-select="demo_cleanup"]`, chromedp.ByQuery),
		chromedp.WaitReady(`html[data-live="open"]`, chromedp.ByQuery),
	)
	clickNow(t, ctx, `input[data-select="demo_cleanup"]`)
	clickNow(t, ctx, `input[data-select="demo_report"]`)
	// A change elsewhere draws the list again: the selection stays.
	if err := d.s.Send(bg, "demo_alarm", gnomon.Action(job.ActRed)); err != nil {
		t.Fatal(err)
	}
	var said string
	run(t, ctx,
		chromedp.WaitVisible(`//tr[.//a[.="demo_alarm"]]//span[contains(@class, "badge")][.="failure"]`, chromedp.BySearch),
		chromedp.Text("[data-selected]", &said, chromedp.ByQuery),
	)
	if said != "2 selected" {
		t.Errorf("after a live update the list says %q", said)
	}
	clickNow(t, ctx, `button[data-bulk="freeze"]`)
	var words string
	run(t, ctx,
		chromedp.WaitVisible("#confirm[open]", chromedp.ByQuery),
		chromedp.Text("#confirm-body", &words, chromedp.ByQuery),
	)
	if !strings.Contains(words, "Freeze 2 tasks: demo_cleanup, demo_report.") {
		t.Errorf("the freeze's confirmation says %q", words)
	}
	clickNow(t, ctx, "#confirm-ok")
	waitFor("demo_cleanup", job.Frozen)
	waitFor("demo_report", job.Frozen)
	// Once every request is answered the page says so and lets the
	// selection go.
	run(t, ctx,
		chromedp.WaitVisible(`//div[@id="toast"][contains(., "froze 2 tasks")]`, chromedp.BySearch),
		chromedp.WaitVisible(`//*[@data-selected][.="none selected"]`, chromedp.BySearch),
		chromedp.WaitVisible(`//tr[.//a[.="demo_cleanup"]]//span[contains(@class, "badge")][.="frozen"]`, chromedp.BySearch),
	)

	// Rerun the failed of a selection: demo_alarm failed, demo_cleanup is
	// frozen and is left alone.
	clickNow(t, ctx, `input[data-select="demo_cleanup"]`)
	clickNow(t, ctx, `input[data-select="demo_alarm"]`)
	clickNow(t, ctx, `button[data-bulk="rerun"]`)
	run(t, ctx,
		chromedp.WaitVisible("#confirm[open]", chromedp.ByQuery),
		chromedp.Text("#confirm-body", &words, chromedp.ByQuery),
	)
	if !strings.Contains(words, "Start 1 task: demo_alarm.") || !strings.Contains(words, "Left alone: demo_cleanup (it is frozen, not failed).") {
		t.Errorf("the rerun's confirmation says %q", words)
	}
	clickNow(t, ctx, "#confirm-ok")
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		runs, err := d.s.Runs(bg, "demo_alarm", 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(runs) > 0 {
			if runs[0].Trigger != "start" || runs[0].By != "ada" {
				t.Errorf("the rerun is %+v", runs[0])
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("demo_alarm did not run within a minute")
		}
	}
	if s := status("demo_cleanup"); s != job.Frozen {
		t.Errorf("demo_cleanup, left alone, is %s", s)
	}

	// Reset every task shown that is frozen: select all, then reset.
	run(t, ctx, chromedp.WaitVisible(`//*[@data-selected][.="none selected"]`, chromedp.BySearch))
	clickNow(t, ctx, `input[data-select-all]`)
	clickNow(t, ctx, `button[data-bulk="reset"]`)
	run(t, ctx, chromedp.WaitVisible("#confirm[open]", chromedp.ByQuery))
	clickNow(t, ctx, "#confirm-ok")
	waitFor("demo_cleanup", job.Idle)
	waitFor("demo_report", job.Idle)
}
