package web_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestBackfillFromTheTaskPage asks for a backfill of a range in the task
// page's dialog, reads its preview (the API's dry run: each occurrence
// and what the backfill does with it), confirms, and finds the backfill's
// runs recorded.
func TestBackfillFromTheTaskPage(t *testing.T) {
	d := startDemo(t)
	ctx := browser(t)
	d.signIn(t, ctx, d.admin)
	// Two hours ago to one hour ago, in the server's zone: 13 occurrences
	// of an every-5-minutes cron, before the server kept its ledger.
	now := d.s.Now().In(time.Local).Truncate(5 * time.Minute)
	from, to := now.Add(-2*time.Hour).Format("2006-01-02T15:04"), now.Add(-time.Hour).Format("2006-01-02T15:04")
	run(t, ctx,
		chromedp.Navigate(d.url+"/tasks/demo_heartbeat"),
		chromedp.WaitVisible(`button[data-backfill]`, chromedp.ByQuery),
	)
	clickNow(t, ctx, `button[data-backfill]`)
	var text string
	run(t, ctx,
		chromedp.WaitVisible("#confirm[open] input[name=from]", chromedp.ByQuery),
		chromedp.SetValue(`#confirm input[name=from]`, from, chromedp.ByQuery),
		chromedp.SetValue(`#confirm input[name=to]`, to, chromedp.ByQuery),
		chromedp.Text("#confirm-ok", &text, chromedp.ByQuery),
	)
	if text != "Preview" {
		t.Errorf("the range's button says %q", text)
	}
	clickNow(t, ctx, "#confirm-ok")
	var preview string
	run(t, ctx,
		chromedp.WaitVisible(`#confirm[open] #confirm-body table`, chromedp.ByQuery),
		chromedp.Text("#confirm-body", &preview, chromedp.ByQuery),
		chromedp.Text("#confirm-ok", &text, chromedp.ByQuery),
	)
	if !strings.Contains(preview, "13 would run") || strings.Count(preview, "runs") < 13 || text != "Run 13 occurrences" {
		t.Fatalf("the preview says:\n%s\nand its button %q", preview, text)
	}
	checkAccessibility(t, ctx, "/tasks/demo_heartbeat with the backfill's preview open")
	// The task's own schedule (every 5 minutes, on the wall clock) may
	// start it meanwhile: only the backfill's runs count.
	backfilled := func() int {
		t.Helper()
		got, err := d.s.Runs(context.Background(), "demo_heartbeat", 0)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, r := range got {
			if r.Trigger == "backfill" {
				n++
			}
		}
		return n
	}
	if n := backfilled(); n != 0 {
		t.Fatalf("%d backfill runs before the confirmation", n)
	}
	clickNow(t, ctx, "#confirm-ok")
	run(t, ctx, chromedp.WaitVisible(`//div[@id="toast"][contains(., "13 queued")]`, chromedp.BySearch))
	// The backfill runs them one at a time: wait for the first.
	for deadline := time.Now().Add(time.Minute); backfilled() == 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no backfill run within a minute of the confirmation")
		}
	}
}
