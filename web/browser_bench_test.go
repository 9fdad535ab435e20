package web_test

import (
	"net/http/httptest"
	"slices"
	"strconv"
	"testing"

	"github.com/chromedp/chromedp"
)

// BenchmarkBrowserLoad loads pages in headless Chromium from the server
// of BenchmarkPage (benchTasks tasks, benchRuns runs of history), signed
// in, and reports each load as the browser counts it: from the start of
// the navigation to the end of the page's load event, so the server's
// time, the transfer, parsing, styles and the page's scripts. The goal is
// on the slowest: p99 and the worst.
func BenchmarkBrowserLoad(b *testing.B) {
	h, _ := largeScheduler(b)
	srv := httptest.NewServer(h)
	ctx := browser(b)
	defer func() {
		// The pages hold their stream of live updates open.
		run(b, ctx, chromedp.Navigate("about:blank"))
		srv.CloseClientConnections()
		srv.Close()
	}()
	run(b, ctx,
		chromedp.Navigate(srv.URL+"/login"),
		chromedp.WaitVisible("#token", chromedp.ByID),
		chromedp.SetValue("#token", large.token, chromedp.ByID),
		chromedp.Click(`form.login button[type="submit"]`, chromedp.ByQuery),
		chromedp.WaitVisible("main", chromedp.ByQuery),
	)
	mid := func() string { return strconv.FormatInt(large.midRun, 10) }
	for _, page := range []struct {
		name string
		path func() string
	}{
		{"overview", func() string { return "/" }},
		{"tasks", func() string { return "/tasks" }},
		{"task", func() string { return "/tasks/" + taskName(benchTasks/2+1) }},
		{"runs", func() string { return "/runs" }},
		{"runs_failure", func() string { return "/runs?status=failure" }},
		{"run", func() string { return "/runs/" + mid() }},
		{"timeline", func() string { return "/timeline" }},
		{"graph", func() string { return "/graph?task=" + taskName(benchTasks/2) }},
		{"calendars", func() string { return "/calendars" }},
		{"audit", func() string { return "/audit" }},
	} {
		b.Run(page.name, func(b *testing.B) {
			url := srv.URL + page.path()
			var took []float64
			for b.Loop() {
				var ms float64
				run(b, ctx,
					chromedp.Navigate(url),
					chromedp.Evaluate(`new Promise(done => {
						const look = () => {
							const n = performance.getEntriesByType("navigation")[0];
							if (n && n.loadEventEnd > 0) { done(n.loadEventEnd - n.startTime); } else { setTimeout(look, 5); }
						};
						look();
					})`, &ms, awaitPromise),
				)
				took = append(took, ms)
			}
			slices.Sort(took)
			b.ReportMetric(took[(len(took)-1)*99/100], "ms-p99")
			b.ReportMetric(took[len(took)-1], "ms-max")
		})
	}
}
