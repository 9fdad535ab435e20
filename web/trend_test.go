package web

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/auth"
	"github.com/gnomon-sched/gnomon/job"
)

// The trend draws the ended runs oldest first, each bar as tall as its
// run took against the longest (or the alarm above it), and leaves out a
// run in flight.
func TestTrend(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	run := func(id int64, took time.Duration, st job.Status) job.Run {
		start := t0.Add(time.Duration(id) * time.Hour)
		return job.Run{ID: id, Task: "a", Status: st, Start: start, End: start.Add(took)}
	}
	// Newest first, as the store lists them.
	runs := []job.Run{
		{ID: 5, Task: "a", Status: job.Running, Start: t0.Add(5 * time.Hour)},
		run(4, 30*time.Second, job.Success),
		run(3, 2*time.Minute, job.Failure),
		run(2, 60*time.Second, job.Aborted),
		run(1, 500*time.Millisecond, job.Success),
	}
	if trend(runs[:1], job.Policy{}) != nil {
		t.Error("a trend of no ended run")
	}
	d := trend(runs, job.Policy{MaxRunAlarm: job.Duration(4 * time.Minute), MinRunAlarm: job.Duration(time.Second)})
	if len(d.Bars) != 4 {
		t.Fatalf("%d bars, want the 4 ended runs", len(d.Bars))
	}
	var ids []int64
	for i, b := range d.Bars {
		ids = append(ids, b.Run)
		if i > 0 && b.X <= d.Bars[i-1].X {
			t.Errorf("bar %d at %.1f, left of the one before", b.Run, b.X)
		}
		if bottom := b.Y + b.H; bottom != float64(d.Base) {
			t.Errorf("bar %d ends at %.1f, not on the axis at %d", b.Run, bottom, d.Base)
		}
	}
	if got := ids; got[0] != 1 || got[3] != 4 {
		t.Errorf("bars of runs %v, want oldest first", got)
	}
	// The axis goes up to the max_run_alarm, 4 minutes: the run of 2
	// minutes is half as tall as the chart.
	if h := d.Bars[2].H; h != trHeight/2 {
		t.Errorf("a run of 2 minutes under an axis of 4 is %.1f tall, want %d", h, trHeight/2)
	}
	if d.Max != "4m" || len(d.Lines) != 2 || d.Lines[0].Name != "max_run_alarm" || d.Lines[0].Y != float64(trTop) || d.Lines[1].Took != "1s" {
		t.Errorf("axis %s, lines %+v", d.Max, d.Lines)
	}
	if want := "the last 4 ended runs took from 500ms to 2m, 1m at the median"; d.Text != want {
		t.Errorf("text %q, want %q", d.Text, want)
	}
	if d.Bars[0].Status != "success" || d.Bars[1].Status != "aborted" || d.Bars[2].Status != "failure" {
		t.Errorf("statuses %q, %q, %q", d.Bars[0].Status, d.Bars[1].Status, d.Bars[2].Status)
	}
	if d.Bars[0].Took != "500ms" || d.Bars[3].Took != "30s" {
		t.Errorf("took %q, %q", d.Bars[0].Took, d.Bars[3].Took)
	}
}

// A task's page draws the trend of its runs, each bar a link to its run.
func TestTaskPageTrend(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	_, u := withHistory(t, historyDefs, historyRuns(t0))
	w := httptest.NewRecorder()
	u.ServeHTTP(w, asRole("/tasks/a", auth.Viewer))
	body := w.Body.String()
	if w.Code != http.StatusOK {
		t.Fatalf("%d\n%s", w.Code, body)
	}
	if !strings.Contains(body, "How long its runs took") || !strings.Contains(body, "the last 50 ended runs took from 1m to 7m") {
		t.Errorf("no trend of 50 runs:\n%s", body)
	}
	if n := strings.Count(body, `<rect class="oc oc-`); n < 50 {
		t.Errorf("%d bars, want 50", n)
	}
	// The runs table still lists 20.
	if n := strings.Count(body, `<td><a href="/runs/`); n != taskRuns {
		t.Errorf("%d runs listed, want %d", n, taskRuns)
	}
}
