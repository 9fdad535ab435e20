package web_test

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/gnomon-sched/gnomon"
	"github.com/gnomon-sched/gnomon/auth"
	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/store"
	"github.com/gnomon-sched/gnomon/store/sqlite"
)

// TestOverviewChart draws the overview's chart of outcomes over a day of
// runs of every outcome: each outcome has its pattern, the legend says
// which, the counts are in a table too, and the page stays accessible.
func TestOverviewChart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := gnomon.New(gnomon.Config{DataDir: dir, Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Apply(ctx, "a.def", "insert_task: a\ntype: callable\nfunction: log\n"); err != nil {
		t.Fatal(err)
	}
	if err := s.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	// A day of runs, written behind the stopped scheduler's back.
	st, err := sqlite.Open(ctx, filepath.Join(dir, "gnomon.db"))
	if err != nil {
		t.Fatal(err)
	}
	snap, err := st.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var b store.Batch
	now := time.Now()
	for i := range 200 {
		start := now.Add(-time.Duration(i) * 7 * time.Minute)
		r := job.Run{ID: snap.LastRun + 1 + int64(i), Task: "a", Status: job.Success, Start: start, End: start.Add(time.Second)}
		switch {
		case i%5 == 0:
			r.Status = job.Failure
		case i%9 == 0:
			r.Status = job.Aborted
		}
		b.Runs = append(b.Runs, r)
	}
	if err := st.Commit(ctx, &b); err != nil {
		t.Fatal(err)
	}
	st.Close()
	s = started(t, gnomon.Config{DataDir: dir})
	srv := httptest.NewServer(s.Handler(gnomon.HandlerConfig{Version: "test"}))
	t.Cleanup(srv.Close)
	d := &demo{s: s, url: srv.URL}
	if d.admin, err = s.NewToken(ctx, auth.Request{Name: "ada", Role: auth.Admin}); err != nil {
		t.Fatal(err)
	}
	bctx := browser(t)
	d.signIn(t, bctx, d.admin)
	var (
		fills []string
		text  string
		shot  []byte
	)
	run(t, bctx, chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible("svg.outcomes", chromedp.ByQuery),
		chromedp.Evaluate(`["success", "failure", "aborted"].map(s => { const r = document.querySelector("svg.outcomes rect.oc-" + s); return r ? getComputedStyle(r).fill : "none" })`, &fills),
		chromedp.Text("#h-outcomes + p", &text, chromedp.ByQuery),
		chromedp.FullScreenshot(&shot, 100))
	if len(fills) != 3 || !strings.HasPrefix(fills[0], "rgb(") || !strings.Contains(fills[1], "#oc-stripes") || !strings.Contains(fills[2], "#oc-dots") {
		t.Errorf("the outcomes are filled %q, want a colour, stripes and dots", fills)
	}
	if !strings.Contains(text, "Last 24 hours:") || !strings.Contains(text, "Last 7 days:") {
		t.Errorf("the chart's totals: %q", text)
	}
	shots := os.Getenv("GNOMON_SCREENSHOTS")
	if shots == "" {
		shots = filepath.Join(os.TempDir(), "gnomon-screenshots")
	}
	if err := os.MkdirAll(shots, 0o755); err == nil {
		os.WriteFile(filepath.Join(shots, "desktop-overview_chart.png"), shot, 0o644)
	}
	checkAccessibility(t, bctx, "/ with runs")
}
