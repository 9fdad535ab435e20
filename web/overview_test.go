package web

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/auth"
	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/store"
)

// TestOverviewCounts: a task that failed nine times today shows nine, with
// a link to its failed runs and to its latest one's log; the failed tasks
// cut from the list are counted, with a link to them all.
func TestOverviewCounts(t *testing.T) {
	t.Parallel()
	var defs strings.Builder
	for i := range 25 {
		fmt.Fprintf(&defs, "insert_task: f%02d\ntype: callable\nfunction: log\n\n", i)
	}
	now := time.Now()
	var nineID int64
	_, u := withHistory(t, defs.String(), func(last int64) store.Batch {
		var b store.Batch
		id := last
		for i := range 25 {
			name := fmt.Sprintf("f%02d", i)
			times := 1
			if i == 0 {
				times = 9
			}
			var end time.Time
			for k := range times {
				id++
				start := now.Add(-time.Duration(20-k) * time.Hour).Add(time.Duration(i) * time.Second)
				end = start.Add(time.Minute)
				b.Runs = append(b.Runs, job.Run{ID: id, Task: name, Status: job.Failure, Start: start, End: end, ExitCode: 1})
			}
			if i == 0 {
				nineID = id
			}
			// An older failure, outside the 24 hours.
			id++
			b.Runs = append(b.Runs, job.Run{ID: id, Task: name, Status: job.Failure, Start: now.Add(-30 * time.Hour), End: now.Add(-30 * time.Hour)})
			b.States = append(b.States, store.TaskState{Name: name, State: job.State{Status: job.Failure, Start: job.At(end.Add(-time.Minute)), End: job.At(end)}})
		}
		return b
	})
	_, data, err := u.overview(asRole("/", auth.Viewer))
	if err != nil {
		t.Fatal(err)
	}
	d := data.(overviewData)
	if d.Failures != 9+24 || d.FailedTasks != 25 || d.FailuresCut {
		t.Errorf("%d failures of %d tasks (cut %v), want 33 of 25", d.Failures, d.FailedTasks, d.FailuresCut)
	}
	var f00 *failedRow
	for i := range d.Failed {
		if d.Failed[i].Name == "f00" {
			f00 = &d.Failed[i]
		}
	}
	if f00 == nil || f00.Times != 9 || f00.Run != nineID {
		t.Fatalf("f00 in the failed list: %+v, want 9 times, latest run %d", f00, nineID)
	}
	w := httptest.NewRecorder()
	u.ServeHTTP(w, asRole("/", auth.Viewer))
	body := w.Body.String()
	for _, want := range []string{
		`33 failed or aborted runs of 25 tasks`,
		`<a href="/runs?status=failure">5 more tasks failed</a>`,
		`<a href="/runs?task=f00&amp;status=failure" aria-label="9 runs of f00 failure">9</a>`,
		fmt.Sprintf(`<a href="/runs/%d#log"`, nineID),
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the overview does not hold %q:\n%s", want, body)
		}
	}
}

// TestOverviewOutcomes: the overview's chart counts the runs of each of
// the last 24 hours by outcome, the hour in progress last, and totals
// the last 7 days; a run older than a week is not counted; the page says the totals in words and draws each outcome with
// its own pattern.
func TestOverviewOutcomes(t *testing.T) {
	t.Parallel()
	now := time.Now()
	_, u := withHistory(t, historyDefs, func(last int64) store.Batch {
		var b store.Batch
		id := last
		add := func(ago time.Duration, st job.Status) {
			id++
			start := now.Add(-ago)
			b.Runs = append(b.Runs, job.Run{ID: id, Task: "a", Status: st, Start: start, End: start.Add(time.Second)})
		}
		add(time.Minute, job.Success)
		add(2*time.Minute, job.Failure)
		add(5*time.Hour, job.Aborted)
		add(3*24*time.Hour, job.Failure) // in the week only
		add(8*24*time.Hour, job.Success) // in neither
		return b
	})
	_, data, err := u.overview(asRole("/", auth.Viewer))
	if err != nil {
		t.Fatal(err)
	}
	oc := data.(overviewData).Outcomes
	if len(oc.Hours) != 24 {
		t.Fatalf("%d hours, want 24", len(oc.Hours))
	}
	// The runs of a minute or two ago are in the hour in progress, unless
	// it began since.
	if got, want := oc.Hours[23].Totals, (outcomeTotals{Success: 1, Failure: 1}); got != want && now.In(time.UTC).Minute() >= 2 {
		t.Errorf("the hour in progress: %+v, want %+v", got, want)
	}
	if want := (outcomeTotals{Success: 1, Failure: 1, Aborted: 1}); oc.Day != want {
		t.Errorf("24 hours: %+v, want %+v", oc.Day, want)
	}
	if want := (outcomeTotals{Success: 1, Failure: 2, Aborted: 1}); oc.Week != want {
		t.Errorf("7 days: %+v, want %+v", oc.Week, want)
	}
	if oc.Max < 1 || oc.Max > 2 {
		t.Errorf("the most in an hour: %d", oc.Max)
	}
	w := httptest.NewRecorder()
	u.ServeHTTP(w, asRole("/", auth.Viewer))
	body := w.Body.String()
	for _, want := range []string{"Last 24 hours: 1 succeeded, 1 failed, 1 aborted.", "Last 7 days: 1 succeeded, 2 failed, 1 aborted.",
		`class="oc oc-failure"`, `class="oc oc-aborted"`, "failed (striped)", "aborted (dotted)"} {
		if !strings.Contains(body, want) {
			t.Errorf("the overview does not show %q", want)
		}
	}
}
