package web_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/gnomon-sched/gnomon"
	"github.com/gnomon-sched/gnomon/auth"
)

// TestTimelineScroll: the timeline's rows after its first page come as
// the link to them scrolls into view, page after page, until the last;
// rows grouped by label open and close by their headings, with the
// keyboard too; every page of it stays accessible.
func TestTimelineScroll(t *testing.T) {
	ctx := context.Background()
	s := started(t, gnomon.Config{DataDir: t.TempDir()})
	// 450 tasks fired hourly from 2030 on: each has planned fires in a
	// range then, and none runs while the test does.
	var defs strings.Builder
	for i := range 450 {
		fmt.Fprintf(&defs, "insert_task: w_%03d\ntype: callable\nfunction: log\nstart_date: 2030-01-01 00:00\ninterval: 1 hours\n", i)
		if i%3 == 0 {
			fmt.Fprintf(&defs, "label: part %d\n", i%2)
		}
		defs.WriteString("\n")
	}
	if err := s.Apply(ctx, "w.def", defs.String()); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler(gnomon.HandlerConfig{Version: "test"}))
	t.Cleanup(srv.Close)
	d := &demo{s: s, url: srv.URL}
	var err error
	if d.admin, err = s.NewToken(ctx, auth.Request{Name: "ada", Role: auth.Admin}); err != nil {
		t.Fatal(err)
	}
	bctx := browser(t)
	d.signIn(t, bctx, d.admin)
	range2030 := "/timeline?span=6h&from=2030-01-01T00%3A00%3A00Z"

	rows := func() int {
		var n int
		run(t, bctx, chromedp.Evaluate(`document.querySelectorAll("svg.timeline text.rowlabel").length`, &n))
		return n
	}
	// waitRows waits for the page to draw n rows.
	waitRows := func(n int) {
		t.Helper()
		if err := waitFor(bctx, fmt.Sprintf(`document.querySelectorAll("svg.timeline text.rowlabel").length === %d`, n), time.Minute); err != nil {
			t.Fatalf("waiting for %d rows: %v (%d drawn)", n, err, rows())
		}
	}

	t.Run("rows come as they scroll into view", func(t *testing.T) {
		run(t, bctx, chromedp.Navigate(srv.URL+range2030), chromedp.WaitVisible("main h1", chromedp.ByQuery))
		if n := rows(); n != 200 {
			t.Fatalf("%d rows on the first page, want 200", n)
		}
		for _, want := range []int{400, 450} {
			run(t, bctx, chromedp.ScrollIntoView(`#tlmore a[rel="next"]`, chromedp.ByQuery))
			waitRows(want)
		}
		var next int
		run(t, bctx, chromedp.Evaluate(`document.querySelectorAll('#tlmore a[rel="next"]').length`, &next))
		if next != 0 {
			t.Errorf("after the last row, %d links to more", next)
		}
		var text string
		run(t, bctx, chromedp.Text("main", &text, chromedp.ByQuery))
		for _, want := range []string{"Rows 201–400", "Rows 401–450"} {
			if !strings.Contains(text, want) {
				t.Errorf("the appended rows do not say %q", want)
			}
		}
		checkAccessibility(t, bctx, range2030+" scrolled")
	})
	t.Run("the link to the next rows works without scrolling", func(t *testing.T) {
		// Followed as a link (by the keyboard, or without scripts), it
		// loads the next page.
		var loc string
		run(t, bctx, chromedp.Navigate(srv.URL+range2030), chromedp.WaitVisible("main h1", chromedp.ByQuery),
			chromedp.Evaluate(`location.assign(document.querySelector('#tlmore a[rel="next"]').href)`, nil),
			chromedp.WaitVisible(`#rows-201`, chromedp.ByQuery), chromedp.Location(&loc))
		if !strings.Contains(loc, "after=w_199") || !strings.Contains(loc, "row=201") {
			t.Errorf("the next rows' link goes to %s", loc)
		}
	})
	t.Run("groups open and close", func(t *testing.T) {
		run(t, bctx, chromedp.Navigate(srv.URL+range2030+"&group=label"), chromedp.WaitVisible("main h1", chromedp.ByQuery))
		var headings []string
		run(t, bctx, chromedp.Evaluate(`Array.from(document.querySelectorAll("#live details.tlgroup > summary")).map(s => s.textContent.trim())`, &headings))
		if len(headings) != 3 || !strings.HasPrefix(headings[0], "Label part 0") || !strings.HasPrefix(headings[2], "No label") {
			t.Fatalf("groups: %q, want part 0, part 1, no label", headings)
		}
		checkAccessibility(t, bctx, range2030+"&group=label")
		var open bool
		run(t, bctx,
			chromedp.Focus(`#live details.tlgroup > summary`, chromedp.ByQuery),
			chromedp.KeyEvent("\r"),
			chromedp.Evaluate(`document.querySelector("#live details.tlgroup").open`, &open))
		if open {
			t.Errorf("the first group is still open after Enter on its heading")
		}
	})
}
