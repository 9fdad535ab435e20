package api

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/gnomon-sched/gnomon/calendar"
	"github.com/gnomon-sched/gnomon/engine"
	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/store"
)

// WhyResponse explains why a task is not running now, or what became of
// one of its occurrences (?at=).
type WhyResponse struct {
	Task string    `json:"task"`
	Now  time.Time `json:"now"`
	// Reasons is the chain, from the engine's own state: each reason's
	// Depth nests it under the clause that led to it.
	Reasons []Reason `json:"reasons"`
	// At, when asked, is an instant; Occurrence says what the fire ledger
	// recorded of the task's time trigger there, and Fire is that record.
	At         time.Time `json:"at,omitzero"`
	Occurrence string    `json:"occurrence,omitempty"`
	Fire       *job.Fire `json:"fire,omitempty"`
	// Failed, when the task's status is failure or aborted, is the run
	// that ended so, with the last whyTail lines of its output.
	Failed *RunResponse `json:"failed_run,omitempty"`
}

// whyTail is how many lines of each log of a failed run why shows.
const whyTail = 10

func (s *Server) why(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	now := s.sched.Now()
	resp := WhyResponse{Task: name, Now: s.local(now), Reasons: []Reason{}}
	x, found, err := s.sched.Why(r.Context(), name, now)
	if err != nil {
		return err
	}
	if !found {
		return notFound(name)
	}
	resp.Reasons = append(resp.Reasons, reasonsOf(x.Reasons)...)
	if def, st, ok := s.sched.View().Task(name); ok && def.Extras().Watching() != nil {
		text, ok := s.sched.Watching(name)
		if !ok {
			text = "waits for a file matching " + def.Extras().Watch.File
		}
		resp.Reasons = append(resp.Reasons, Reason{Kind: string(engine.WhyWatch), Task: name, Status: st.Status, Text: text})
	}
	if _, st, ok := s.sched.View().Task(name); ok && (st.Status == job.Failure || st.Status == job.Aborted) {
		runs, err := s.sched.Store().Runs(r.Context(), store.RunQuery{Task: name, Done: true, Limit: 1})
		if err != nil {
			return err
		}
		if len(runs) == 1 && runs[0].Status == st.Status {
			if resp.Failed, err = s.runOf(r, name, runs[0].ID, whyTail); err != nil {
				return err
			}
		}
	}
	if v := r.URL.Query().Get("at"); v != "" {
		at, err := calendar.ParseInstant(v, s.loc)
		if err != nil {
			return badRequest("at: %v", err)
		}
		resp.At = s.local(at)
		if resp.Occurrence, resp.Fire, err = Occurrence(r.Context(), s.sched.Store(), s.sched.Now(), s.loc, name, at, x.Schedule); err != nil {
			return err
		}
	}
	return writeJSON(w, http.StatusOK, resp)
}

// Occurrence says what became of a task's occurrence at an instant (to
// the minute), as of now: the fire ledger's record, the run it started, or
// that the task's trigger (sched, nil when it has none) has no occurrence
// then. Instants are written in loc.
func Occurrence(ctx context.Context, st store.Store, now time.Time, loc *time.Location, name string, at time.Time, sched calendar.Schedule) (string, *job.Fire, error) {
	from := at.Truncate(time.Minute)
	fires, err := st.Fires(ctx, store.FireQuery{Task: name, From: from, To: from.Add(time.Minute), Limit: 1})
	if err != nil {
		return "", nil, err
	}
	local := func(t time.Time) time.Time {
		if t.IsZero() {
			return t
		}
		return t.In(loc)
	}
	when := func(t time.Time) string { return local(t).Format(time.RFC3339) }
	if len(fires) == 0 {
		if sched == nil {
			return fmt.Sprintf("%s has no time trigger: nothing was planned at %s", name, when(at)), nil, nil
		}
		if next, ok := sched.Next(from.Add(-time.Nanosecond)); ok && next.Before(from.Add(time.Minute)) {
			if next.After(now) {
				text := fmt.Sprintf("the occurrence at %s is still to come", when(next))
				if f, ok := sched.(*calendar.Filtered); ok && f.Excluded(next) != "" {
					text += fmt.Sprintf("; it is outside its calendar: %s is a day of calendar %s (exclude_calendar), and it will be recorded skipped",
						calendar.DateOf(next, f.Location()), f.Excluded(next))
				}
				return text, nil, nil
			}
			return fmt.Sprintf("the occurrence at %s is in no record: it came before the ledger was kept, or was not yet handled", when(next)), nil, nil
		}
		if f, ok := sched.(*calendar.Filtered); ok {
			if run, _ := f.Calendars(); run != nil && !run.Has(calendar.DateOf(at, f.Location())) {
				return fmt.Sprintf("%s's time trigger has no occurrence at %s: it is outside its calendar, %s is not a day of its run_calendar %s",
					name, when(at), calendar.DateOf(at, f.Location()), run.Name()), nil, nil
			}
		}
		return fmt.Sprintf("%s's time trigger has no occurrence at %s", name, when(at)), nil, nil
	}
	f := fires[0]
	f.Scheduled, f.At = local(f.Scheduled), local(f.At)
	switch f.Fate {
	case job.FateRan, job.FateBackfilled:
		text := fmt.Sprintf("the occurrence at %s ran", when(f.Scheduled))
		if f.Fate == job.FateBackfilled {
			text = fmt.Sprintf("the occurrence at %s was backfilled (%s)", when(f.Scheduled), f.Reason)
		}
		if f.RunID != 0 {
			runs, err := st.Runs(ctx, store.RunQuery{Task: name, Before: f.RunID + 1, Limit: 1})
			if err != nil {
				return "", nil, err
			}
			if len(runs) == 1 && runs[0].ID == f.RunID {
				text += fmt.Sprintf(": run %d, %s", f.RunID, runs[0].Status)
			}
		}
		return text, &f, nil
	case job.FateMissed:
		return fmt.Sprintf("the occurrence at %s was missed: %s", when(f.Scheduled), cmp.Or(f.Reason, "the scheduler was not running then")), &f, nil
	}
	return fmt.Sprintf("the occurrence at %s was %s: %s", when(f.Scheduled), f.Fate, cmp.Or(f.Reason, "no reason recorded")), &f, nil
}

// Why explains why a task is not running now; with at (an instant, or a
// local time in the server's zone), also what became of its occurrence
// then.
func (c *Client) Why(ctx context.Context, name, at string) (*WhyResponse, error) {
	path := "/api/v1/tasks/" + url.PathEscape(name) + "/why"
	if at != "" {
		path += "?at=" + url.QueryEscape(at)
	}
	var v WhyResponse
	return &v, c.do(ctx, http.MethodGet, path, nil, &v)
}
