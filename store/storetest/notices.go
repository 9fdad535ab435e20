package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/store"
)

// testNotices checks alerts and audit records.
func testNotices(t *testing.T, open Open) {
	ctx := context.Background()
	t.Run("alerts", func(t *testing.T) {
		t.Parallel()
		s, reopen := open(t)
		run := job.Run{ID: 3, Task: "a", Status: job.Failure, Start: t0, End: t0.Add(time.Second), ExitCode: 1,
			Result: job.ResultNormal, Message: "disk full", Data: map[string]string{"rows": "12"}}
		a := job.Alert{Task: "a", Outcome: job.OutcomeFailure, RunID: 3, Created: t0, To: []string{"x@example.com", "y@example.com"},
			Sources: []string{"a", "g"}, Start: run.Start, End: run.End, ExitCode: 1, Message: "disk full", Data: run.Data, State: job.AlertPending}
		b := job.Alert{Task: "b", Outcome: job.OutcomeNotStarted, Created: t0, To: []string{"z@example.com"}, Sources: []string{"b"},
			Template: "/t.tmpl", State: job.AlertPending, NextAt: t0.Add(time.Hour)}
		batch := &store.Batch{Runs: []job.Run{run}, Alerts: []job.Alert{a, b}}
		if err := s.Commit(ctx, batch); err != nil {
			t.Fatal(err)
		}
		if batch.Alerts[0].ID == 0 || batch.Alerts[1].ID <= batch.Alerts[0].ID {
			t.Fatalf("alert ids %d, %d", batch.Alerts[0].ID, batch.Alerts[1].ID)
		}
		a.ID, b.ID = batch.Alerts[0].ID, batch.Alerts[1].ID
		due, err := s.PendingAlerts(ctx, t0, 10)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]job.Alert{a}, due); diff != "" {
			t.Errorf("PendingAlerts at t0 (-want +got):\n%s", diff)
		}
		if due, _ := s.PendingAlerts(ctx, t0.Add(time.Hour), 10); len(due) != 2 {
			t.Errorf("PendingAlerts an hour later = %d alerts, want 2", len(due))
		}
		// A failed attempt, then a successful one.
		a.Attempts, a.LastError, a.NextAt = 1, "dial tcp: connection refused", t0.Add(time.Minute)
		if err := s.RecordAttempt(ctx, &a, job.Attempt{Alert: a.ID, At: t0, Error: a.LastError}); err != nil {
			t.Fatal(err)
		}
		if due, _ := s.PendingAlerts(ctx, t0, 10); len(due) != 0 {
			t.Errorf("an alert to retry later is due now: %+v", due)
		}
		a.Attempts, a.LastError, a.State, a.SentAt, a.NextAt = 2, "", job.AlertSent, t0.Add(time.Minute), time.Time{}
		if err := s.RecordAttempt(ctx, &a, job.Attempt{Alert: a.ID, At: t0.Add(time.Minute)}); err != nil {
			t.Fatal(err)
		}
		if err := s.RecordAttempt(ctx, &job.Alert{ID: 999}, job.Attempt{Alert: 999, At: t0}); err == nil {
			t.Error("an attempt at an unknown alert was recorded")
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		s = reopen()
		all, err := s.Alerts(ctx, store.AlertQuery{})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]job.Alert{b, a}, all); diff != "" {
			t.Errorf("Alerts after reopen (-want +got):\n%s", diff)
		}
		if got, _ := s.Alerts(ctx, store.AlertQuery{Task: "a", Limit: 5}); len(got) != 1 || got[0].ID != a.ID {
			t.Errorf("Alerts of a = %+v", got)
		}
		if got, _ := s.Alerts(ctx, store.AlertQuery{Before: b.ID}); len(got) != 1 || got[0].ID != a.ID {
			t.Errorf("Alerts before %d = %+v, want alert %d", b.ID, got, a.ID)
		}
		att, err := s.Attempts(ctx, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		want := []job.Attempt{{Alert: a.ID, At: t0, Error: "dial tcp: connection refused"}, {Alert: a.ID, At: t0.Add(time.Minute)}}
		if diff := cmp.Diff(want, att); diff != "" {
			t.Errorf("Attempts (-want +got):\n%s", diff)
		}
		rs, _ := s.Runs(ctx, store.RunQuery{Task: "a"})
		if len(rs) != 1 || rs[0].Data["rows"] != "12" {
			t.Errorf("run data did not survive: %+v", rs)
		}
	})
	t.Run("audit", func(t *testing.T) {
		t.Parallel()
		s, _ := open(t)
		recs := []job.AuditRecord{
			{Task: "a", RunID: 1, Launch: t0, Stop: t0.Add(time.Second), Result: job.ResultNormal, Status: job.Success, Data: map[string]string{"rows": "3"}},
			{Task: "b", RunID: 2, Launch: t0, Stop: t0, Result: job.ResultKilled, Status: job.Aborted, Message: "signal: killed", By: "alice", EndedBy: "bob"},
		}
		b := &store.Batch{Audit: recs}
		if err := s.Commit(ctx, b); err != nil {
			t.Fatal(err)
		}
		if b.Audit[0].Seq == 0 || b.Audit[1].Seq <= b.Audit[0].Seq {
			t.Fatalf("audit sequence numbers %d, %d", b.Audit[0].Seq, b.Audit[1].Seq)
		}
		got, err := s.Audit(ctx, 0, 10)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(b.Audit, got); diff != "" {
			t.Errorf("Audit (-want +got):\n%s", diff)
		}
		if got, _ := s.Audit(ctx, b.Audit[0].Seq, 10); len(got) != 1 || got[0].Task != "b" {
			t.Errorf("Audit after the first = %+v", got)
		}
		if v, err := s.Cursor(ctx, "audit.log"); err != nil || v != 0 {
			t.Errorf("unset cursor = %d, %v", v, err)
		}
		for _, v := range []int64{5, 9} {
			if err := s.SetCursors(ctx, map[string]int64{"audit.log": v, "audit.log size": v * 100}); err != nil {
				t.Fatal(err)
			}
		}
		if v, err := s.Cursor(ctx, "audit.log"); err != nil || v != 9 {
			t.Errorf("cursor = %d, %v; want 9", v, err)
		}
		if v, err := s.Cursor(ctx, "audit.log size"); err != nil || v != 900 {
			t.Errorf("cursor = %d, %v; want 900", v, err)
		}
		// 0 forgets a cursor, beside one set in the same call.
		if err := s.SetCursors(ctx, map[string]int64{"audit.log size": 0, "other": 3}); err != nil {
			t.Fatal(err)
		}
		if v, err := s.Cursor(ctx, "audit.log size"); err != nil || v != 0 {
			t.Errorf("forgotten cursor = %d, %v; want 0", v, err)
		}
		if v, err := s.Cursor(ctx, "other"); err != nil || v != 3 {
			t.Errorf("cursor = %d, %v; want 3", v, err)
		}
		// A file watcher's memory names a path after a NUL byte, and a
		// path need not be UTF-8.
		odd := "watch\x00task\x00/in/caf\xe9.csv"
		if err := s.SetCursors(ctx, map[string]int64{odd: 7}); err != nil {
			t.Fatal(err)
		}
		if v, err := s.Cursor(ctx, odd); err != nil || v != 7 {
			t.Errorf("cursor %q = %d, %v; want 7", odd, v, err)
		}
		if all, ok := s.(interface {
			Cursors(context.Context) (map[string]int64, error)
		}); ok {
			if m, err := all.Cursors(ctx); err != nil || m[odd] != 7 {
				t.Errorf("Cursors = %v, %v; want %q at 7", m, err, odd)
			}
		}
		if err := s.SetCursors(ctx, map[string]int64{odd: 0}); err != nil {
			t.Fatal(err)
		}
		if v, err := s.Cursor(ctx, odd); err != nil || v != 0 {
			t.Errorf("forgotten cursor %q = %d, %v; want 0", odd, v, err)
		}
	})

	t.Run("audit pages", func(t *testing.T) {
		t.Parallel()
		s, _ := open(t)
		var recs []job.AuditRecord
		for i := range 30 {
			recs = append(recs, job.AuditRecord{Task: string(rune('a' + i%3)), RunID: int64(i + 1), Launch: t0, Stop: t0.Add(time.Duration(i) * time.Minute),
				Result: job.ResultNormal, Status: []job.Status{job.Success, job.Failure}[i%2]})
		}
		b := &store.Batch{Audit: recs}
		if err := s.Commit(ctx, b); err != nil {
			t.Fatal(err)
		}
		seqs := func(q store.AuditQuery) []int64 {
			t.Helper()
			got, err := s.AuditPage(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			var out []int64
			for _, a := range got {
				out = append(out, a.Seq)
			}
			return out
		}
		want := func(pick func(a job.AuditRecord) bool, from, n int) []int64 {
			var out []int64
			for i := len(b.Audit) - 1; i >= 0; i-- {
				if a := b.Audit[i]; pick(a) {
					out = append(out, a.Seq)
				}
			}
			return out[from:min(from+n, len(out))]
		}
		every := func(job.AuditRecord) bool { return true }
		seq := func(i int) int64 { return b.Audit[i].Seq }
		if diff := cmp.Diff(want(every, 0, 4), seqs(store.AuditQuery{Limit: 4})); diff != "" {
			t.Errorf("newest first (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(want(every, 4, 4), seqs(store.AuditQuery{Before: seq(26), Limit: 4})); diff != "" {
			t.Errorf("the next page (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(want(every, 0, 4), seqs(store.AuditQuery{After: seq(25), Limit: 4})); diff != "" {
			t.Errorf("the page before (-want +got):\n%s", diff)
		}
		ofB := func(a job.AuditRecord) bool { return a.Task == "b" && a.Status == job.Failure }
		if diff := cmp.Diff(want(ofB, 1, 3), seqs(store.AuditQuery{Task: "b", Statuses: []job.Status{job.Failure}, Before: want(ofB, 0, 1)[0], Limit: 3})); diff != "" {
			t.Errorf("a task's failures, the next page (-want +got):\n%s", diff)
		}
		if got, err := s.AuditPage(ctx, store.AuditQuery{Limit: 1}); err != nil || len(got) != 1 || !cmp.Equal(got[0], b.Audit[29]) {
			t.Errorf("the newest record: %+v, %v; want %+v", got, err, b.Audit[29])
		}
		// The records of some tasks: a few, and more than a store may
		// merge task by task.
		ofAC := func(a job.AuditRecord) bool { return a.Task == "a" || a.Task == "c" }
		if diff := cmp.Diff(want(ofAC, 0, 4), seqs(store.AuditQuery{Tasks: []string{"a", "c"}, Limit: 4})); diff != "" {
			t.Errorf("two tasks' records (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(want(ofAC, 4, 4), seqs(store.AuditQuery{Tasks: []string{"c", "a"}, Before: want(ofAC, 3, 1)[0], Limit: 4})); diff != "" {
			t.Errorf("two tasks' records, the next page (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(want(ofAC, 2, 4), seqs(store.AuditQuery{Tasks: []string{"a", "c"}, After: want(ofAC, 6, 1)[0], Limit: 4})); diff != "" {
			t.Errorf("two tasks' records, the page before (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(want(ofB, 0, 20), seqs(store.AuditQuery{Tasks: []string{"a", "b"}, Task: "b", Statuses: []job.Status{job.Failure}})); diff != "" {
			t.Errorf("a task of the tasks (-want +got):\n%s", diff)
		}
		many := []string{"b"}
		for i := range 80 {
			many = append(many, fmt.Sprintf("none%d", i))
		}
		ofBAll := func(a job.AuditRecord) bool { return a.Task == "b" }
		if diff := cmp.Diff(want(ofBAll, 2, 3), seqs(store.AuditQuery{Tasks: many, Before: want(ofBAll, 1, 1)[0], Limit: 3})); diff != "" {
			t.Errorf("many tasks' records, the next page (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(want(ofBAll, 0, 3), seqs(store.AuditQuery{Tasks: many, After: want(ofBAll, 3, 1)[0], Limit: 3})); diff != "" {
			t.Errorf("many tasks' records, the page before (-want +got):\n%s", diff)
		}
		// A range of stop times: records written out of the order of
		// their stops, in the range and out of it, count by their stop.
		late := &store.Batch{Audit: []job.AuditRecord{
			{Task: "c", RunID: 31, Launch: t0, Stop: t0.Add(15*time.Minute + 30*time.Second), Result: job.ResultNormal, Status: job.Failure},
			{Task: "a", RunID: 32, Launch: t0, Stop: t0.Add(5 * time.Minute), Result: job.ResultNormal, Status: job.Failure},
		}}
		if err := s.Commit(ctx, late); err != nil {
			t.Fatal(err)
		}
		from, to := t0.Add(10*time.Minute), t0.Add(20*time.Minute)
		var inRange []int64 // newest first
		inRange = append(inRange, late.Audit[0].Seq)
		for i := 19; i >= 10; i-- {
			inRange = append(inRange, seq(i))
		}
		if diff := cmp.Diff(inRange[:4], seqs(store.AuditQuery{From: from, To: to, Limit: 4})); diff != "" {
			t.Errorf("a range of stops (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(inRange[4:8], seqs(store.AuditQuery{From: from, To: to, Before: inRange[3], Limit: 4})); diff != "" {
			t.Errorf("a range of stops, the next page (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(inRange[8:], seqs(store.AuditQuery{From: from, To: to, Before: inRange[7], Limit: 4})); diff != "" {
			t.Errorf("a range of stops, the last page (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(inRange[1:5], seqs(store.AuditQuery{From: from, To: to, After: inRange[5], Limit: 4})); diff != "" {
			t.Errorf("a range of stops, the page before (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]int64{late.Audit[0].Seq, seq(19), seq(17), seq(15), seq(13), seq(11)}, seqs(store.AuditQuery{From: from, To: to, Statuses: []job.Status{job.Failure}})); diff != "" {
			t.Errorf("the failures of a range of stops (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]int64{seq(18), seq(15), seq(12)}, seqs(store.AuditQuery{From: from, To: to, Task: "a"})); diff != "" {
			t.Errorf("a task's records in a range of stops (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]int64{late.Audit[1].Seq, seq(5), seq(4)}, seqs(store.AuditQuery{To: t0.Add(6 * time.Minute), Limit: 3})); diff != "" {
			t.Errorf("the records stopped before a time (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]int64{seq(29), seq(28)}, seqs(store.AuditQuery{From: t0.Add(28 * time.Minute)})); diff != "" {
			t.Errorf("the records stopped from a time (-want +got):\n%s", diff)
		}
		if got := seqs(store.AuditQuery{From: t0.Add(time.Hour)}); len(got) != 0 {
			t.Errorf("records past the last stop: %v", got)
		}
	})
}
