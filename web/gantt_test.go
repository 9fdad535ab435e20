package web

import (
	"slices"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/job"
)

// The Gantt chart puts each run of a bundle run on one axis, and marks
// the chain of runs that waited for each other up to the last to end.
func TestGantt(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 28, 2, 0, 0, 0, time.UTC)
	run := func(id int64, task string, from, to time.Duration) job.Run {
		return job.Run{ID: id, Task: task, Status: job.Success, Start: t0.Add(from), End: t0.Add(to)}
	}
	kids := []job.Run{
		run(2, "extract", 0, 10*time.Minute),
		run(3, "audit", 0, 5*time.Minute),
		run(4, "transform", 10*time.Minute, 30*time.Minute),
		run(5, "load", 30*time.Minute, 40*time.Minute),
	}
	conds := map[string]string{"transform": "su(extract)", "load": "su(transform) & su(audit)"}
	bundle := job.Run{ID: 1, Task: "flow", Status: job.Success, Start: t0, End: t0.Add(40 * time.Minute)}
	d := gantt(bundle, kids, bundle.End, func(task string) string { return conds[task] })
	if !slices.Equal(d.Critical, []string{"extract", "transform", "load"}) {
		t.Errorf("critical path %v, want extract, transform, load", d.Critical)
	}
	if len(d.Rows) != 4 || d.Rows[1].Critical || !d.Rows[0].Critical {
		t.Errorf("rows %+v", d.Rows)
	}
	// The axis runs 40 minutes over gnWidth: transform starts a quarter
	// of the way and takes half of it.
	if r := d.Rows[2]; r.X != gnLeft+gnWidth/4 || r.W != gnWidth/2 || r.Took != "20m" {
		t.Errorf("transform at %.1f, %.1f wide, took %s", r.X, r.W, r.Took)
	}
	if d.Took != "40m" || d.From != "2026-11-28 02:00:00" || d.To != "2026-11-28 02:40:00" {
		t.Errorf("axis %s to %s, %s", d.From, d.To, d.Took)
	}

	// While load runs, its bar reaches now, and it is on the path.
	kids[3].Status, kids[3].End = job.Running, time.Time{}
	now := t0.Add(50 * time.Minute)
	d = gantt(job.Run{ID: 1, Task: "flow", Status: job.Running, Start: t0}, kids, now, func(task string) string { return conds[task] })
	if r := d.Rows[3]; r.X+r.W != gnLeft+gnWidth || !r.Critical || r.Took != "20m" {
		t.Errorf("running load: %+v", r)
	}
	if gantt(bundle, nil, now, nil) != nil {
		t.Error("a chart of no run")
	}
}
