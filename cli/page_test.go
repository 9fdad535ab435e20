package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gnomon-sched/gnomon/api"
	"github.com/gnomon-sched/gnomon/internal/smtptest"
)

// TestPaging checks that every list of history pages: a cursor goes on
// where an answer stopped, items added meanwhile do not shift the pages,
// and the pages put together are the whole list.
func TestPaging(t *testing.T) {
	t.Parallel()
	mb := smtptest.Start(t, "127.0.0.1:0")
	f := setup(t, simulateFrom("2026-06-01T09:00:00Z"), func(c *ServerConfig) {
		c.SMTP.Addr, c.SMTP.From = mb.Addr, "gnomon@example.com"
	})
	f.mustRun("schd_def", "-f", f.file("tick.def", `insert_task: tick
type: callable
command: true
out_log_file: @DIR@/tick.out
err_log_file: @DIR@/tick.err
cron: * * * * *
alert_on: success
alert_to: ops@example.com

insert_task: tock
type: callable
command: true
out_log_file: @DIR@/tock.out
err_log_file: @DIR@/tock.err
cron: * * * * *
`))
	f.mustRun("gnomon", "clock", "advance", "--to", "2026-06-01T09:07:00Z") // 09:00 to 09:07
	mb.Wait(t, 8)
	ctx := context.Background()
	c := f.client

	// Runs, newest first, three at a time; a run that starts between two
	// pages does not shift them.
	var runs []int64
	cursor := ""
	for page := 0; ; page++ {
		rs, err := c.ListRuns(ctx, api.RunsQuery{Task: "tick", Count: 3, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rs.Runs {
			runs = append(runs, r.ID)
		}
		if page == 0 {
			f.mustRun("schd_event", "-j", "tick", "-e", "start")
		}
		if rs.Next == "" {
			break
		}
		cursor = rs.Next
	}
	if len(runs) != 8 || !slices.IsSortedFunc(runs, func(a, b int64) int { return int(b - a) }) || len(slices.Compact(slices.Clone(runs))) != 8 {
		t.Errorf("runs paged as %v", runs)
	}

	// The run started between two pages has ended and is alerted on.
	f.waitFor("the run started by hand", func() bool {
		rs, err := c.ListRuns(ctx, api.RunsQuery{Task: "tick", Count: 1, Done: true})
		return err == nil && len(rs.Runs) == 1 && rs.Runs[0].ID > runs[0]
	})
	mb.Wait(t, 9)

	// Fires, newest first.
	var fires []string
	cursor = ""
	for {
		fs, err := c.ListFires(ctx, "tock", 3, "", cursor)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range fs.Fires {
			fires = append(fires, f.Scheduled.UTC().Format("15:04"))
		}
		if cursor = fs.Next; cursor == "" {
			break
		}
	}
	if got := strings.Join(fires, " "); got != "09:07 09:06 09:05 09:04 09:03 09:02 09:01 09:00" {
		t.Errorf("fires paged as %s", got)
	}

	// Alerts, newest first; audit records, oldest first.
	var alerts []int64
	cursor = ""
	for {
		as, err := c.ListAlerts(ctx, "tick", 3, cursor)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range as.Alerts {
			alerts = append(alerts, a.ID)
		}
		if cursor = as.Next; cursor == "" {
			break
		}
	}
	if len(alerts) != 9 || !slices.IsSortedFunc(alerts, func(a, b int64) int { return int(b - a) }) || len(slices.Compact(slices.Clone(alerts))) != len(alerts) {
		t.Errorf("alerts paged as %v", alerts)
	}
	all, err := c.Audit(ctx, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var audit []int64
	cursor = ""
	for {
		as, err := c.ListAudit(ctx, 0, 4, cursor)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range as.Records {
			audit = append(audit, a.Seq)
		}
		if cursor = as.Next; cursor == "" {
			break
		}
	}
	var want []int64
	for _, a := range all.Records {
		want = append(want, a.Seq)
	}
	if len(want) != 17 || !slices.Equal(audit, want) || all.Next != "" {
		t.Errorf("audit paged as %v, in one answer %v (next %q)", audit, want, all.Next)
	}
	out, errs, code := f.run("gnomon", "audit", "-n", "3")
	if code != 0 || strings.Count(out, "\n") != 3 || errs != fmt.Sprintf("more audit records follow: gnomon audit --after %d\n", want[2]) {
		t.Errorf("audit -n 3: exit %d\n%s%s", code, out, errs)
	}

	// Task names, two at a time; all of them without a count.
	names, err := c.Tasks(ctx)
	if err != nil || !slices.Equal(names, []string{"tick", "tock"}) {
		t.Errorf("tasks %v, %v", names, err)
	}
	tp, err := c.ListTasks(ctx, 1, "")
	if err != nil || !slices.Equal(tp.Tasks, []string{"tick"}) || tp.Next == "" {
		t.Fatalf("first page of tasks %+v, %v", tp, err)
	}
	if tp, err = c.ListTasks(ctx, 1, tp.Next); err != nil || !slices.Equal(tp.Tasks, []string{"tock"}) || tp.Next != "" {
		t.Errorf("second page of tasks %+v, %v", tp, err)
	}

	// A forecast in pages of 3 is the forecast in one answer, ties at one
	// instant included.
	whole, err := c.ListForecast(ctx, "", "2026-06-01T10:00:00Z", "2026-06-01T10:05:00Z", 100, "")
	if err != nil || len(whole.Fires) != 10 || whole.Truncated || whole.Next != "" {
		t.Fatalf("forecast %+v, %v", whole, err)
	}
	var paged []string
	cursor = ""
	for {
		fc, err := c.ListForecast(ctx, "", "2026-06-01T10:00:00Z", "2026-06-01T10:05:00Z", 3, cursor)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range fc.Fires {
			paged = append(paged, p.At.Format("15:04")+" "+p.Task)
		}
		if (fc.Next != "") != fc.Truncated {
			t.Errorf("forecast page: truncated %v, next %q", fc.Truncated, fc.Next)
		}
		if cursor = fc.Next; cursor == "" {
			break
		}
	}
	var one []string
	for _, p := range whole.Fires {
		one = append(one, p.At.Format("15:04")+" "+p.Task)
	}
	if !slices.Equal(paged, one) {
		t.Errorf("forecast in pages:\n%v\nin one answer:\n%v", paged, one)
	}

	// A cursor is only taken where it was given, with the same parameters.
	rs, _ := c.ListRuns(ctx, api.RunsQuery{Task: "tick", Count: 1})
	for _, tt := range []struct{ path, err string }{
		{"/api/v1/tasks/tick/runs?cursor=bogus", `cursor: "bogus" is not a cursor`},
		{"/api/v1/tasks/tock/runs?cursor=" + rs.Next, "cursor: the cursor is one of another list"},
		{"/api/v1/tasks/tick/fires?cursor=" + rs.Next, "cursor: the cursor is one of another list"},
		{"/api/v1/tasks/tick/runs?date=2026-06-01&cursor=" + rs.Next, "cursor: the cursor was given for other parameters (date, done)"},
		{"/api/v1/tasks/tick/runs?done=maybe", `done must be true or false, got "maybe"`},
	} {
		resp, err := testHTTP.Get(c.Base + tt.path)
		if err != nil {
			t.Fatal(err)
		}
		var er api.ErrorResponse
		err = json.NewDecoder(resp.Body).Decode(&er)
		resp.Body.Close()
		if resp.StatusCode != 400 || err != nil || !strings.Contains(er.Error, tt.err) {
			t.Errorf("%s: %d %q; want 400 with %q", tt.path, resp.StatusCode, er.Error, tt.err)
		}
	}
}

// TestEventsBeyondOnePage checks that the list of received events is not
// cut at the most one answer holds: the answer says more exist, the next
// page has them, and gnomon events follows the pages.
func TestEventsBeyondOnePage(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.mustRun("schd_def", "-f", f.file("cfg.json", `[{"name": "landing", "dependencies": [{"type": "FILE", "resourceId": "/in/", "lifeDuration": 60}]}]`))
	const n = api.MaxPage + 57
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		wg.Go(func() {
			for i := w; i < n; i += 8 {
				resource := "/elsewhere/x"
				if i%100 == 0 {
					resource = "/in/x" // landing stores those that are not too late
				}
				if _, err := f.client.PostEvent(ctx, "FILE", resource, fmt.Sprintf("2026-01-01T00:00:%02d.%06dZ", i/1_000_000, i%1_000_000)); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	first, err := f.client.Received(ctx, "", 10_000_000)
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Events) != api.MaxPage || first.Next == "" {
		t.Fatalf("%d events and next %q in the first answer", len(first.Events), first.Next)
	}
	rest, err := f.client.ListReceived(ctx, "", 10_000_000, first.Next)
	if err != nil {
		t.Fatal(err)
	}
	if len(rest.Events) != n-api.MaxPage || rest.Next != "" {
		t.Fatalf("%d events and next %q in the second answer", len(rest.Events), rest.Next)
	}
	seen := map[string]bool{}
	for _, e := range append(first.Events, rest.Events...) {
		seen[e.TS.String()] = true
	}
	if len(seen) != n {
		t.Errorf("%d distinct events in the pages, want %d", len(seen), n)
	}

	out := f.mustRun("gnomon", "events", "-n", "10000000")
	if lines := strings.Count(out, "\n"); lines != n+1 {
		t.Errorf("gnomon events -n 10000000 printed %d lines, want %d events and the header", lines, n)
	}
	// Small pages of the events a configuration stored.
	var stored []string
	cursor := ""
	for {
		page, err := f.client.ListReceived(ctx, "landing", 7, cursor)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range page.Events {
			stored = append(stored, e.TS.String())
		}
		if cursor = page.Next; cursor == "" {
			break
		}
	}
	one, err := f.client.Received(ctx, "landing", 1000)
	if err != nil {
		t.Fatal(err)
	}
	var whole []string
	for _, e := range one.Events {
		whole = append(whole, e.TS.String())
	}
	if len(whole) < 8 || !slices.Equal(stored, whole) {
		t.Errorf("events of landing in pages of 7:\n%v\nin one answer:\n%v", stored, whole)
	}
	_, stderr, _ := f.run("gnomon", "events", "-j", "landing", "-n", "5")
	if stderr != "more events were received than the 5 shown: raise -n to see them\n" {
		t.Errorf("events -n 5: stderr %q", stderr)
	}
}
